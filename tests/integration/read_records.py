#!/usr/bin/env python3
"""Decode the agent's records from a NANPROF_AGENT_RECORDS file.

The agent preloaded alone (no nanprof, no BPF: `LD_PRELOAD=libnanprof_agent.so
NANPROF_AGENT_RECORDS=FILE python3 job.py`) appends every record it sends
to FILE, 96 bytes each, as agent/agent_report.h lays them out.  This prints
them as JSON lines, kernel names put together, and with --expect checks
what a GPU test needs without BPF:

  read_records.py FILE                      print every record
  read_records.py FILE --summary            counts per kind, GPU status
  read_records.py FILE --expect-birth SUBSTR [--expect-propagated]
      exit 1 unless the first GPU birth's kernel name contains SUBSTR
      (and, with --expect-propagated, that birth propagated)
  read_records.py FILE --expect-cpu-check ROLE
      exit 1 unless there is a CPU check record of that role

and, for the CUDA path (tests/integration/test_gpu_fake.sh; any of them
together, each failing with a line that says why):

  --expect-status STATUS[:TEXT]   a STATUS record (gpu_on, gpu_off, ...)
                                  whose text contains TEXT
  --expect-origin SUBSTR          the first GPU birth (in launch order)
                                  whose value propagated is a kernel
                                  containing SUBSTR
  --expect-contained SUBSTR       a GPU birth in a kernel containing SUBSTR
                                  that never propagated
  --expect-gpu-check SUBSTR[:K=V,...]
                                  a GPU_CHECK record of a kernel containing
                                  SUBSTR with these fields (dtype=float16,
                                  posinf=2, first_bad=7, propagated=false;
                                  spread=true: a birth that propagated)
  --expect-counters K=V[,K=V...]  the last GPU record (but the launch
                                  and tracker counters) is the gpu_counters STATUS, with
                                  these fields (checked=6, what=launches 7)
  --expect-launches K=V[,K=V...]  the last gpu_launches STATUS has these
                                  fields (launches, sampled_out,
                                  guard_checks, guard_skips, check_launches,
                                  generic_checks, gemm_checks, triton_checks,
                                  over_budget)
  --expect-defer K=V[,K=V...]     the last gpu_defer STATUS (deferred checks:
                                  checks, launches, and flushes by why:
                                  window, full, write, unknown, memory,
                                  order, now)
  --expect-tracker K=V[,K=V...]   the last gpu_tracker STATUS (the origin
                                  tracker's drops) has these fields
                                  (evicted, forgotten, wide_lost, writes:
                                  copies and memsets told to it, copies:
                                  those that carried a non-finite source,
                                  writes_lost)
  --expect-undecoded SUBSTR[:K=V,...]
                                  a kernel containing SUBSTR among those
                                  reported as not checked at launch, its
                                  last report with these fields (launches=3)
  --expect-gpu-seq                GPU records numbered 1, 2, ... N: none lost
  --expect-host-cost              the last gpu_host_cost STATUS has timed
                                  callbacks of some time, a sampling period
                                  and launches (and a time for the check
                                  launches it timed, if any)
"""
import argparse
import json
import struct
import sys

REC = 96
KIND = {1: "check", 3: "status", 4: "gpu_check", 5: "gpu_name", 7: "update", 8: "module_path"}
ROLE = {1: "output", 2: "grad", 3: "param", 4: "param_grad", 5: "collective", 6: "input"}
STATUS = {1: "installed", 2: "failed", 3: "disabled", 4: "detached", 5: "counters",
          6: "gpu_on", 7: "gpu_off", 8: "gpu_counters", 9: "gpu_launches",
          10: "scaler_on", 11: "scaler_verdict", 12: "gpu_undecoded", 13: "gpu_tracker",
          14: "optimizer", 15: "gpu_host_cost", 16: "gpu_defer"}
DTYPE = {0: "float32", 1: "float64", 2: "float16", 3: "bfloat16", 4: "float8_e4m3fn",
         5: "float8_e5m2",
         # NP_ADTYPE_PAIRS (0x80): a complex tensor, checked as its real view
         0x80: "complex64", 0x81: "complex128", 0x82: "complex32"}
F_SOURCE_DIRTY, F_GRAPH, F_LAST = 1, 8, 16


def text(b):
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


def decode(buf):
    seq, kind, role, phase, flags, dtype, _, status, _, device = \
        struct.unpack_from("<IBBBBBBHBB", buf, 0)
    module, = struct.unpack_from("<Q", buf, 16)
    body = buf[24:]
    r = {"seq": seq, "kind": KIND.get(kind, kind)}
    if kind == 1:
        numel, nan, pinf, ninf, first, mx = struct.unpack_from("<QQQQqd", body, 0)
        r.update(role=ROLE.get(role, role), phase=phase, flags=flags, dtype=DTYPE.get(dtype, dtype),
                 module=module, numel=numel, nan=nan, posinf=pinf, neginf=ninf, first_bad=first,
                 max_abs=mx, what=text(body[48:72]))
    elif kind == 7:   # why an optimizer's update went non-finite
        eps, lr, at_zero = struct.unpack_from("<ddQ", body, 0)
        r.update(cause={1: "zero_denominator", 2: "learning_rate"}.get(status, status),
                 dtype=DTYPE.get(dtype, dtype), eps=eps, lr=lr, at_zero=at_zero,
                 optimizer=text(body[24:48]), state=text(body[48:64]))
    elif kind == 4:
        numel, nan, pinf, ninf, first, mx, ns, tid, func, birth = \
            struct.unpack_from("<QQQQqdQIIQ", body, 0)
        r.update(dtype=DTYPE.get(dtype, dtype), stream=module, numel=numel, nan=nan, posinf=pinf,
                 neginf=ninf, first_bad=first, max_abs=mx, launch_ns=ns, launch_tid=tid,
                 func=func, birth=birth, propagated=bool(flags & F_SOURCE_DIRTY),
                 graph=bool(flags & F_GRAPH), device=device)
    elif kind == 5:
        r.update(func=module, piece=role, last=bool(flags & F_LAST), text=text(body[:72]))
    elif kind == 8:   # a module's path to a descendant (agent/module_paths.h)
        child, = struct.unpack_from("<Q", body, 0)
        r.update(module=module, child=child, path=text(body[8:72]))
    elif kind == 3 and status == 9:
        launches, sampled, gchecks, gskips, claunches, generic, gemm, triton, over = \
            struct.unpack_from("<QQQQQQQQQ", body, 0)
        r.update(status="gpu_launches", launches=launches, sampled_out=sampled,
                 guard_checks=gchecks, guard_skips=gskips, check_launches=claunches,
                 generic_checks=generic, gemm_checks=gemm, triton_checks=triton,
                 over_budget=over)
    elif kind == 3 and status == 13:
        evicted, forgotten, wide, writes, copies, wlost = struct.unpack_from("<QQQQQQ", body, 0)
        r.update(status="gpu_tracker", evicted=evicted, forgotten=forgotten, wide_lost=wide,
                 writes=writes, copies=copies, writes_lost=wlost)
    elif kind == 3 and status == 16:   # cupti/defer.h
        vals = struct.unpack_from("<QQQQQQQQQ", body, 0)
        r.update(dict(zip(("checks", "launches", "window", "full", "write", "unknown",
                           "memory", "order", "now"), vals)), status="gpu_defer")
    elif kind == 3 and status == 15:   # cupti/host_cost.h
        launches, timed, timed_ns, ctimed, cns, every = struct.unpack_from("<QQQQQQ", body, 0)
        r.update(status="gpu_host_cost", launches=launches, timed=timed, timed_ns=timed_ns,
                 checks_timed=ctimed, check_ns=cns, every=every)
    elif kind == 3 and status == 12:
        func, rank, launches = struct.unpack_from("<IIQ", body, 0)
        r.update(status="gpu_undecoded", func=func, rank=rank, launches=launches)
    elif kind == 3:
        checked, nbytes, skipped, dropped, overflow = struct.unpack_from("<QQQQQ", body, 0)
        r.update(status=STATUS.get(status, status), what=text(body[40:72]), checked=checked,
                 bytes=nbytes, skipped=skipped, dropped=dropped, overflow=overflow)
    return r


def read(path):
    data = open(path, "rb").read()
    if len(data) % REC:
        sys.exit("%s: %d bytes is not a whole number of %d-byte records" % (path, len(data), REC))
    return decode_all(data)


def decode_all(data):
    """Every whole record of data, kernel names put together."""
    recs = [decode(data[i:i + REC]) for i in range(0, len(data) - REC + 1, REC)]
    names, partial = {}, {}
    for r in recs:
        if r["kind"] == "gpu_name":
            partial[r["func"]] = (partial.get(r["func"], "") if r["piece"] else "") + r["text"]
            if r["last"]:
                names[r["func"]] = partial.pop(r["func"])
    for r in recs:
        if r["kind"] == "gpu_check" or r.get("status") == "gpu_undecoded":
            r["kernel"] = names.get(r["func"], "?")
    return recs


GPU_STATUS = ("gpu_on", "gpu_off", "gpu_counters", "gpu_launches", "gpu_undecoded",
              "gpu_tracker", "gpu_host_cost", "gpu_defer")


def is_gpu(r):
    return r["kind"] in ("gpu_check", "gpu_name") or \
        (r["kind"] == "status" and r["status"] in GPU_STATUS)


def fields(spec):
    """Parses "a=1,b=x" into {"a": "1", "b": "x"}."""
    return dict(kv.split("=", 1) for kv in spec.split(",") if kv) if spec else {}


def mismatches(r, want):
    """The fields of r that differ from want's (compared as text)."""
    bad = []
    for k, v in want.items():
        have = r.get(k, "<none>")
        text = str(have).lower() if isinstance(have, bool) else str(have)
        if text != v:
            bad.append("%s=%s (want %s)" % (k, have, v))
    return bad


def births(recs):
    """GPU births, each with whether its value propagated."""
    prop = {r["birth"] for r in recs if r["kind"] == "gpu_check" and r["propagated"]}
    out = [r for r in recs if r["kind"] == "gpu_check" and not r["propagated"]]
    for b in out:
        b["spread"] = b["birth"] in prop
    return out


def expect_gpu(a, recs):
    """The --expect-* checks of the CUDA path; returns the failures."""
    fail = []
    for spec in a.expect_status or []:
        st, _, txt = spec.partition(":")
        if not any(r["kind"] == "status" and r["status"] == st and txt in r["what"] for r in recs):
            seen = ["%s:%s" % (r["status"], r["what"]) for r in recs if r["kind"] == "status"]
            fail.append("no %s status containing %r (saw %s)" % (st, txt, seen))
    births(recs)   # marks each birth record "spread" for the checks below
    if a.expect_origin is not None:
        # first in launch order: results of different streams arrive in any order
        spread = sorted((b for b in births(recs) if b["spread"]), key=lambda b: b["launch_ns"])
        if not spread:
            fail.append("no GPU birth propagated")
        elif a.expect_origin not in spread[0]["kernel"]:
            fail.append("origin is %s, want a kernel containing %r" %
                        (spread[0]["kernel"], a.expect_origin))
    for sub in a.expect_contained or []:
        mine = [b for b in births(recs) if sub in b["kernel"]]
        if not mine:
            fail.append("no GPU birth in a kernel containing %r" % sub)
        elif any(b["spread"] for b in mine):
            fail.append("the birth in %r propagated" % sub)
    for spec in a.expect_gpu_check or []:
        # the kernel may hold "::": the fields follow the last ':'
        sub, _, kv = spec.rpartition(":") if "=" in spec else (spec, "", "")
        want = fields(kv)
        mine = [r for r in recs if r["kind"] == "gpu_check" and sub in r["kernel"]]
        if not mine:
            fail.append("no GPU_CHECK record of a kernel containing %r" % sub)
        elif all(mismatches(r, want) for r in mine):
            fail.append("GPU_CHECK of %r: %s" % (sub, "; ".join(mismatches(mine[0], want))))
    if a.expect_counters is not None:
        # the launch counters and the undecoded kernels (with their
        # names, the first time) follow each counters record
        gpu = [r for r in recs if is_gpu(r)]
        while gpu and (gpu[-1]["kind"] == "gpu_name" or
                       gpu[-1].get("status") in ("gpu_launches", "gpu_tracker",
                                                 "gpu_undecoded", "gpu_host_cost",
                                                 "gpu_defer")):
            gpu.pop()
        last = gpu[-1] if gpu else None
        if not last or last["kind"] != "status" or last["status"] != "gpu_counters":
            fail.append("the last GPU record is not the counters: %s" % (json.dumps(last),))
        else:
            bad = mismatches(last, fields(a.expect_counters))
            if bad:
                fail.append("counters: %s" % "; ".join(bad))
    if a.expect_launches is not None:
        mine = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_launches"]
        if not mine:
            fail.append("no gpu_launches record")
        else:
            bad = mismatches(mine[-1], fields(a.expect_launches))
            if bad:
                fail.append("launch counters: %s" % "; ".join(bad))
    if a.expect_host_cost:
        mine = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_host_cost"]
        h = mine[-1] if mine else None
        if not h:
            fail.append("no gpu_host_cost record")
        elif not (h["timed"] and h["timed_ns"] and h["every"] and h["launches"]):
            fail.append("host cost: %s" % json.dumps(h))
        elif h["checks_timed"] and not h["check_ns"]:
            fail.append("host cost of the check launches: %s" % json.dumps(h))
    if a.expect_defer is not None:
        mine = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_defer"]
        if not mine:
            fail.append("no gpu_defer record")
        else:
            bad = mismatches(mine[-1], fields(a.expect_defer))
            if bad:
                fail.append("deferred checks: %s" % "; ".join(bad))
    if a.expect_tracker is not None:
        mine = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_tracker"]
        if not mine:
            fail.append("no gpu_tracker record")
        else:
            bad = mismatches(mine[-1], fields(a.expect_tracker))
            if bad:
                fail.append("tracker counters: %s" % "; ".join(bad))
    for spec in a.expect_undecoded or []:
        sub, _, kv = spec.rpartition(":") if "=" in spec else (spec, "", "")
        # each counters record sends the list again: the last of each kernel
        last = {}
        for r in recs:
            if r["kind"] == "status" and r["status"] == "gpu_undecoded":
                last[r["kernel"]] = r
        mine = [r for k, r in last.items() if sub in k]
        if not mine:
            fail.append("no gpu_undecoded record of a kernel containing %r (saw %s)" %
                        (sub, sorted(last)))
        elif all(mismatches(r, fields(kv)) for r in mine):
            fail.append("gpu_undecoded of %r: %s" % (sub, "; ".join(mismatches(mine[0],
                                                                           fields(kv)))))
    if a.expect_gpu_seq:
        seqs = [r["seq"] for r in recs if is_gpu(r)]
        if sorted(seqs) != list(range(1, len(seqs) + 1)):
            fail.append("GPU record numbers are not 1..%d: %s" % (len(seqs), seqs))
    return fail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--expect-birth", metavar="SUBSTR")
    ap.add_argument("--expect-propagated", action="store_true")
    ap.add_argument("--expect-cpu-check", metavar="ROLE")
    ap.add_argument("--expect-status", action="append", metavar="STATUS[:TEXT]")
    ap.add_argument("--expect-launches", metavar="K=V,...")
    ap.add_argument("--expect-tracker", metavar="K=V,...")
    ap.add_argument("--expect-defer", metavar="K=V,...")
    ap.add_argument("--expect-undecoded", action="append", metavar="SUBSTR[:K=V,...]")
    ap.add_argument("--expect-origin", metavar="SUBSTR")
    ap.add_argument("--expect-contained", action="append", metavar="SUBSTR")
    ap.add_argument("--expect-gpu-check", action="append", metavar="SUBSTR[:K=V,...]")
    ap.add_argument("--expect-counters", metavar="K=V[,K=V...]")
    ap.add_argument("--expect-gpu-seq", action="store_true")
    ap.add_argument("--expect-host-cost", action="store_true")
    a = ap.parse_args()
    recs = read(a.file)
    gpu_fail = expect_gpu(a, recs)
    for f in gpu_fail:
        print("FAIL: " + f)
    failed = bool(gpu_fail)
    gpu_expect = bool(a.expect_status or a.expect_origin is not None or a.expect_contained or
                      a.expect_gpu_check or a.expect_counters is not None or a.expect_gpu_seq or
                      a.expect_launches is not None or a.expect_tracker is not None or
                      a.expect_defer is not None or
                      a.expect_host_cost)
    if a.expect_birth is not None:
        births = [r for r in recs if r["kind"] == "gpu_check" and not r["propagated"]]
        if not births:
            print("FAIL: no GPU birth reported")
            failed = True
        else:
            b = births[0]
            print("first GPU birth: %s (%s, %d nan, %d +inf, %d -inf)" %
                  (b["kernel"], b["dtype"], b["nan"], b["posinf"], b["neginf"]))
            if a.expect_birth not in b["kernel"]:
                print("FAIL: expected a kernel containing %r" % a.expect_birth)
                failed = True
            prop = [r for r in recs if r["kind"] == "gpu_check" and r["propagated"]
                    and r["birth"] == b["birth"]]
            if a.expect_propagated and not prop:
                print("FAIL: the first birth never propagated")
                failed = True
    if a.expect_cpu_check:
        if not any(r["kind"] == "check" and r["role"] == a.expect_cpu_check for r in recs):
            print("FAIL: no CPU check record with role %s" % a.expect_cpu_check)
            failed = True
    if a.summary:
        kinds = {}
        for r in recs:
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
        print(json.dumps({"records": len(recs), "kinds": kinds}))
        for r in recs:
            if r["kind"] == "status":
                print(json.dumps(r))
    elif a.expect_birth is None and not a.expect_cpu_check and not gpu_expect:
        for r in recs:
            print(json.dumps(r))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
