#!/usr/bin/env python3
"""What the agent's GPU records of one job say, for scripts/gpu_check.sh.

The agent preloaded alone (no nanprof, no BPF) appends its records to
NANPROF_AGENT_RECORDS; tests/integration/read_records.py decodes them.
This applies nanprof's GPU origin rule to them as far as records without
BPF allow (userspace/gpu_findings.c also asks that the propagation be
outside the birth's module or phase, which only BPF knows: here a birth
becomes the origin as soon as its value is reported to have propagated
into another kernel's output; everything after the origin is
propagation) and places each record in a training step by its
launch time, from the job's --step-times file (CLOCK_MONOTONIC, the clock
the agent stamps launches with).

  gpu_records.py smoke FILE
      one line: "ok DETAIL", "rebuild WHY" (the agent cannot run its check
      kernels: rebuilding it on this host may help) or "off WHY"
  gpu_records.py verdict FILE --job NAME --fault F [--at N] [--times T]
                 [--graph] --results TSV [--kernels TSV]
      appends one row per check to TSV (job, check, PASS/FAIL/CHECK/INFO,
      detail), and for faults the expected and observed kernel to --kernels
      --soft: a job that only informs, whose FAIL rows are written as CHECK
      --clean REC: the clean job's records; births that look like its births
      (same kernel, size and kinds of value: the -inf mask) are not taken
      for the fault's
  gpu_records.py counters FILE
      the last GPU counters, one line (for the benchmark's table)
  gpu_records.py writes FILE...
      one line: copies and memsets told to the origin tracker in all the
      files' jobs (the last gpu_tracker STATUS of each), device copies that
      carried a non-finite source, those lost
  gpu_records.py per-launch FILE...
      each file's checks per check launch, one line (deferred checks;
      with them on, why the lists went out when they did)
  gpu_records.py origin EVENTS
      nanprof's nan_origin in an events.jsonl, one line

Python 3.8+.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import read_records  # noqa: E402

# What the first kernel to hold the fault's non-finite value should be
# called, as case-insensitive substrings of its demangled name, and why.
# A loose expectation: a mismatch is shown as CHECK (by hand), not FAIL.
EXPECTED = {
    "forward": (["exp"], "Gate computes exp(x * 1e4): the exp kernel's output is +inf"),
    "reduction": (["reduce_kernel"], "Gate sums 32 terms of up to 3e38: the sum's reduce_kernel "
                                     "output is +inf (read from its ReduceOp)"),
    "broadcast": (["native::elementwise_kernel<"],
                  "Gate's output times a per-channel 3e38 broadcast over batch and sequence: "
                  "the strided elementwise mul kernel (read from its lambda)"),
    "backward": (["div", "sqrt", "pow", "reciprocal"],
                 "SqrtBackward0 is grad / (2 * result) with result 0: the div kernel"),
    "functional": (["gemm", "nvjet", "cutlass", "xmma", "sm90", "addmm", "cublas"],
                   "MHA applies out_proj (+-3e38) with F.linear: a cuBLAS GEMM overflows"),
    "optimizer": (["multi_tensor", "foreach", "sgd", "add", "mul"],
                  "SGD's foreach update with lr=inf: a multi_tensor_apply kernel"),
    "input": (["add"], "the NaN is copied in from the host; embed(tokens) + noise is the "
                       "first kernel that holds it"),
    "loss": (["log"], "log(0) = -inf in the loss, outside any module"),
    "ignored": (["nll_loss"], "cross_entropy over targets all ignore_index: nll_loss's kernel "
                              "divides 0 by a total weight of 0"),
    "graph-forward": (["exp"], "ExpAct's exp() of the huge input, inside the replayed graph"),
    "graph-backward": (["div", "sqrt", "pow", "reciprocal"],
                       "SqrtAbs's backward, grad / (2 * sqrt(0)), inside the replayed graph"),
    "bn": (["batch_norm"], "bn's weight 3e38: its transform kernel's output overflows "
                           "(batch_norm_transform_input[_channels_last]_kernel)"),
    "flash": (["flash_fwd_kernel"], "queries and keys of at least 1e20 in bf16: every fp32 "
                                    "score is +inf, FlashAttention-2's softmax makes NaN "
                                    "(read from Flash_fwd_params)"),
    "memeff": (["fmha_cutlassF"], "the same in fp32, on SDPA's memory-efficient kernel "
                                  "(read from its AttentionKernel Params)"),
    "cudnn-attn": (["sdpa", "fmha", "flash", "fprop", "cudnn"],
                   "the same in bf16 on cuDNN's fused attention, checked at its "
                   "cudnnBackendExecute: O and its statistics, the graph's two outputs"),
    "chain": (["gemm", "nvjet", "cutlass", "xmma", "sm90", "cublas"],
              "down's weights +-3e38: its matmul overflows in cuBLAS, seen at the call; "
              "up's matmul reads it next"),
    "bn-cudnn": (["bn_fw", "batchnorm", "bn_"], "bn's weight 3e38 with cuDNN on: cuDNN's "
                                                 "batch norm kernel, seen at its call"),
    "conv-cudnn": (["conv", "fprop", "xmma", "implicit", "winograd", "gemm", "sm90", "sm80"],
                   "conv's weight 3e38 with cuDNN on: cuDNN's convolution kernel, checked "
                   "at its cudnnBackendExecute, or as the batch norm call reads its output "
                   "(no guards)"),
    "compile": (["triton"], "gain 1e4 in a torch.compile'd region: exp overflows in "
                            "Inductor's Triton kernel that computes it"),
    "jit": (["scaled_exp_kernel"], "gain 1e4 in a user's @triton.jit kernel: exp overflows in "
                                   "it, its outputs read from its source"),
    "solve": (["trsm"], "a zero on the triangle's diagonal: cuBLAS's triangular solve "
                        "divides by it, seen at the call (cublasStrsm_v2)"),
    "rope": (["mulfunctor<c10::complex<float>", "complex"],
             "freqs_cis of 3e38 + 3e38i: q times it overflows in torch's complex64 multiply "
             "(strided, freqs_cis broadcast), checked as its real view"),
    "catwide": (["exp"], "branch 18's gain of 1e4: its exp overflows; a torch.cat of 20 "
                         "branches along dim -1 carries it, its inputs past the 16th kept "
                         "beside its check"),
    "spectral": (["gemm", "cutlass", "nvjet", "xmma", "sm90", "sm80", "cublas"],
                 "the Fourier layer's complex weights of 3e38: the einsum's complex GEMM "
                 "overflows in cuBLAS, seen at its cublasCgemm call, checked as its real view"),
}


def load(path):
    """Records, tolerating a file cut mid-record (a job killed while writing)."""
    try:
        data = open(path, "rb").read()
    except OSError:
        return []
    return read_records.decode_all(data)


def load_times(path):
    """[(step, start_ns)], sorted, from 'step N NS' lines; [] if none."""
    out = []
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0] == "step":
            out.append((int(f[1]), int(f[2])))
    return sorted(out, key=lambda x: x[1])


def step_of(times, ns):
    """The step whose start is the last one at or before ns; -1 before the
    first step (set-up, warm-up, a graph's capture); None without times."""
    if not times:
        return None
    s = -1
    for step, start in times:
        if start <= ns:
            s = step
    return s


def gpu_status(recs):
    """('on'|'off'|None, text) from the agent's last GPU status."""
    st = [r for r in recs if r["kind"] == "status" and r["status"] in ("gpu_on", "gpu_off")]
    if not st:
        return None, "no GPU status record"
    return st[-1]["status"][4:], st[-1]["what"]


def counters(recs):
    c = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_counters"]
    return c[-1] if c else None


def launches(c):
    try:
        return int(c["what"].split()[-1])
    except (ValueError, IndexError, TypeError):
        return -1


def host_cost_us(recs):
    """(microseconds of host time in the agent's callbacks per kernel
    launch, per check launch) from its last gpu_host_cost record, as
    userspace's np_gpu_host_ns_per_launch() estimates them; None for
    what was not timed."""
    c = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_host_cost"]
    if not c:
        return None, None
    h = c[-1]
    # each timed callback stands for `every` of them
    per_launch = (h["timed_ns"] * h["every"] / h["launches"] / 1e3
                  if h["timed"] and h["launches"] else None)
    per_check = h["check_ns"] / h["checks_timed"] / 1e3 if h["checks_timed"] else None
    return per_launch, per_check


def launch_counters(recs):
    """The last launch counters, with the origin tracker's drops
    (forgotten) from the last tracker record."""
    c = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_launches"]
    if not c:
        return None
    lc = dict(c[-1])
    t = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_tracker"]
    if t:
        lc["forgotten"] = t[-1]["evicted"] + t[-1]["forgotten"]
    return lc


def undecoded(recs):
    """The kernels the agent reported as not checked at launch, with their
    launches in its last report, most first."""
    last = {}
    for r in recs:
        if r["kind"] == "status" and r["status"] == "gpu_undecoded":
            last[r["kernel"]] = r["launches"]
    return sorted(last.items(), key=lambda kv: -kv[1])


def counters_text(c, lc=None):
    if not c:
        return "no GPU counters record"
    text = ("%d checks, %s, %d undecoded, %d results lost, %d over limits or unready" %
            (c["checked"], c["what"] or "launches ?", c["skipped"], c["dropped"], c["overflow"]))
    if lc:   # how many check launches, what the guards and sampling did
        text += ("; %d check launches, guards %d checked %d skipped, %d sampled out, "
                 "%d generic checks, %d cuBLAS calls checked, %d Triton launches planned, "
                 "%d reports over the bounds, %d tracked ranges forgotten" %
                 (lc["check_launches"], lc["guard_checks"], lc["guard_skips"],
                  lc["sampled_out"], lc.get("generic_checks", 0), lc.get("gemm_checks", 0),
                  lc.get("triton_checks", 0), lc.get("over_budget", 0),
                  lc.get("forgotten", 0)))
    return text


def origin(recs):
    """nanprof's rule over the records in arrival order: (birth, the first
    record that propagated it), or (None, None)."""
    cand = {}
    for r in recs:
        if r["kind"] != "gpu_check":
            continue
        if not r["propagated"]:
            cand.setdefault(r["birth"], r)
        elif r["birth"] in cand:
            return cand[r["birth"]], r
    return None, None


def short(name, n=110):
    return name if len(name) <= n else name[:n - 3] + "..."


def describe(r, times):
    s = step_of(times, r["launch_ns"])
    where = "" if s is None else (" at step %d" % s if s >= 0 else " before step 0")
    return "%s%s (%s, %d nan, %d +inf, %d -inf%s)" % (
        short(r["kernel"]), where, r["dtype"], r["nan"], r["posinf"], r["neginf"],
        ", graph" if r["graph"] else "")


def signature(r):
    """What makes a birth look like another: kernel, size, kinds of value."""
    return (r["kernel"], r["numel"], r["nan"] > 0, r["posinf"] > 0, r["neginf"] > 0)


def name_matches(kernel, subs):
    k = kernel.lower()
    return any(s in k for s in subs)


# ---- subcommands ----

def cmd_smoke(a):
    recs = load(a.file)
    state, what = gpu_status(recs)
    c = counters(recs)
    if state is None:
        print("off %s (%d records)" % (what, len(recs)))
    elif state == "off":
        # a stub agent, or one whose fatbin does not load here
        rebuild = "without CUDA" in what or "kernel" in what
        print("%s %s" % ("rebuild" if rebuild else "off", what))
    elif c and c["checked"] == 0 and c["overflow"] > 0:
        # launches skipped as "not ready": the per-context set-up (check
        # kernels, pinned ring) failed; the kernels are what a rebuild fixes
        print("rebuild checks on (%s) but none ran: %s" % (what, counters_text(c)))
    elif c and c["checked"] == 0 and launches(c) > 0:
        # no launch decoded: a rebuild would not change that
        print("off checks on (%s) but no launch checked: %s" % (what, counters_text(c)))
    else:
        print("ok checks on (%s): %s" % (what, counters_text(c, launch_counters(recs))))


class Rows:
    def __init__(self, path, job, soft=False):
        self.path, self.job, self.soft = path, job, soft
        self.failed = False

    def add(self, check, status, detail):
        if self.soft and status == "FAIL":
            status = "CHECK"
        detail = " ".join(str(detail).split())   # one TSV line
        with open(self.path, "a") as f:
            f.write("%s\t%s\t%s\t%s\n" % (self.job, check, status, detail))
        print("  %-5s %s: %s: %s" % (status, self.job, check, detail))
        self.failed |= status == "FAIL"


def cmd_verdict(a):
    recs = load(a.file)
    times = load_times(a.times)
    rows = Rows(a.results, a.job, a.soft)
    state, what = gpu_status(recs)
    rows.add("GPU checks on", "PASS" if state == "on" else "FAIL",
             "gpu_%s: %s" % (state, what) if state else what)
    c = counters(recs)
    rows.add("GPU check counters", "INFO", counters_text(c, launch_counters(recs)))
    und = undecoded(recs)
    if und:   # what a decoder would have to read next (cupti/README.md)
        rows.add("kernels not checked at launch (launches)", "INFO",
                 "; ".join("%s %d" % (short(k, 70), n) for k, n in und))
    checks = [r for r in recs if r["kind"] == "gpu_check"]
    births = [r for r in checks if not r["propagated"]]
    born, into = origin(recs)
    if a.fault == "none":
        if born is None:
            kinds = sorted(set(short(b["kernel"], 60) for b in births))
            rows.add("no birth propagates (the -inf mask stays contained)", "PASS",
                     "%d births, none propagated%s" % (
                         len(births), (": " + "; ".join(kinds[:3])) if kinds else ""))
        else:
            rows.add("no birth propagates (the -inf mask stays contained)", "FAIL",
                     "born in %s, propagated into %s" % (describe(born, times),
                                                         describe(into, times)))
        return rows
    if a.graph:
        gb = [b for b in births if b["graph"]]
        rows.add("a birth inside the replayed CUDA graph (graph=true)",
                 "PASS" if gb else "FAIL",
                 describe(gb[0], times) if gb else
                 "%d births, none from a graph; %d records" % (len(births), len(recs)))
        first = gb[0] if gb else None
        prop = first is not None and any(r["propagated"] and r["birth"] == first["birth"]
                                         for r in checks)
        if first is not None:
            rows.add("the graph birth propagated", "PASS" if prop else "CHECK",
                     "yes" if prop else "no propagation reported (by hand: consumer "
                     "kernels undecoded?)")
    else:
        clean = set(signature(r) for r in load(a.clean) if r["kind"] == "gpu_check"
                    and not r["propagated"]) if a.clean else set()
        step = [b for b in births if step_of(times, b["launch_ns"]) in (a.at, None)]
        at = [b for b in step if signature(b) not in clean]
        rows.add("a GPU birth in step %d (the fault's)" % a.at, "PASS" if at else "FAIL",
                 describe(at[0], times) if at else
                 "%d births, %d in step %d, %d of them like the clean job's%s" % (
                     len(births), len(step), a.at, len(step) - len(at),
                     (": first " + describe(births[0], times)) if births else ""))
        check = "origin (first birth seen to propagate) in step %d" % a.at
        if born is None:
            rows.add(check, "FAIL", "no birth propagated (%d births)" % len(births))
        else:
            s = step_of(times, born["launch_ns"])
            ok = s is None or s == a.at
            rows.add(check, "PASS" if ok else "FAIL",
                     "%s, into %s%s%s" % (describe(born, times), short(into["kernel"], 60),
                                          "" if times else " (no step times)",
                                          "; the clean job has this birth too"
                                          if signature(born) in clean else ""))
        first = born if born is not None else (at[0] if at else None)
    if a.kernels:
        subs, why = EXPECTED.get("graph-" + a.fault if a.graph else a.fault, ([], ""))
        observed = first["kernel"] if first is not None else "(none)"
        verdict = ("PASS" if first is not None and name_matches(observed, subs)
                   else "CHECK")
        rows.add("kernel name of the birth", verdict,
                 "expected ~%s, observed %s" % ("|".join(subs), short(observed)))
        with open(a.kernels, "a") as f:
            f.write("%s\t%s\t%s\t%s\t%s\n" % (a.job, "|".join(subs), why,
                                              observed.replace("\t", " "), verdict))
    return rows


def cmd_origin(a):
    try:
        ev = [json.loads(line) for line in open(a.events)]
    except (OSError, ValueError) as e:
        print("no events: %s" % e)
        return
    o = [e for e in ev if e.get("type") == "nan_origin"]
    if not o:
        print("no nan_origin")
        return
    o = o[0]
    # the device, as the GPU run's evidence that each result carries its
    # context's (one device there: cuda:0)
    print("step %s, %s, module %r, op %s%s%s" % (
        o.get("step"), o.get("phase"), o.get("module"), short(str(o.get("op")), 90),
        ", in a CUDA graph" if o.get("cuda_graph") else "",
        ", on cuda:%d" % o["cuda_device"] if "cuda_device" in o else ""))


def cmd_counters(a):
    recs = load(a.file)
    state, what = gpu_status(recs)
    c = counters(recs)
    lc = launch_counters(recs)
    print(json.dumps({"gpu": state, "what": what,
                      "checks": c["checked"] if c else None,
                      "launches": launches(c) if c else None,
                      "check_launches": lc["check_launches"] if lc else None,
                      "guard_checks": lc["guard_checks"] if lc else None,
                      "generic_checks": lc.get("generic_checks") if lc else None,
                      "gemm_checks": lc.get("gemm_checks") if lc else None,
                      "triton_checks": lc.get("triton_checks") if lc else None}))


def defer_text(recs):
    """The agent's last word on deferred checks (STATUS GPU_DEFER): how many
    waited, in how many lists, and the flushes by why; None without it."""
    d = [r for r in recs if r["kind"] == "status" and r["status"] == "gpu_defer"]
    if not d:
        return None
    d = d[-1]
    return ("%d deferred in %d lists; flushed %d at the window, %d at a write, "
            "%d at unknown writes, %d at a memory call, %d at a sync or event, "
            "%d at a check at once, %d lists full" % (
                d["checks"], d["launches"], d["window"], d["write"], d["unknown"],
                d["memory"], d["order"], d["now"], d["full"]))


def cmd_per_launch(a):
    """One line: each file's checks, check launches, and checks per launch
    (a list launch carries several: cupti/defer.h)."""
    out = []
    for path in a.files:
        recs = load(path)
        c, lc = counters(recs), launch_counters(recs)
        n, k = (c["checked"] if c else 0), (lc["check_launches"] if lc else 0)
        text = "%s: %d checks in %d launches (%.2f each)" % (os.path.basename(path), n, k,
                                                             n / k if k else 0.0)
        d = defer_text(recs)
        if d:   # why the lists went out when they did
            text += " [%s]" % d
        out.append(text)
    print("; ".join(out))


def cmd_writes(a):
    """One line: the unchecked copies and memsets the jobs' trackers were
    told of (cupti/write_queue.h), summed over the files."""
    told = carried = lost = jobs = 0
    for path in a.files:
        t = [r for r in load(path) if r["kind"] == "status" and r["status"] == "gpu_tracker"]
        if t:
            jobs += 1
            told += t[-1]["writes"]
            carried += t[-1]["copies"]
            lost += t[-1]["writes_lost"]
    print("%d told in %d jobs (%d device copies of a non-finite value), %d lost" % (
        told, jobs, carried, lost))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("smoke")
    p.add_argument("file")
    p = sub.add_parser("verdict")
    p.add_argument("file")
    p.add_argument("--job", required=True)
    p.add_argument("--fault", required=True)
    p.add_argument("--at", type=int, default=6)
    p.add_argument("--times")
    p.add_argument("--graph", action="store_true")
    p.add_argument("--results", required=True)
    p.add_argument("--kernels")
    p.add_argument("--soft", action="store_true")
    p.add_argument("--clean")
    p = sub.add_parser("origin")
    p.add_argument("events")
    p = sub.add_parser("counters")
    p.add_argument("file")
    p = sub.add_parser("writes")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("per-launch")
    p.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "smoke":
        cmd_smoke(a)
    elif a.cmd == "verdict":
        sys.exit(1 if cmd_verdict(a).failed else 0)
    elif a.cmd == "origin":
        cmd_origin(a)
    elif a.cmd == "counters":
        cmd_counters(a)
    elif a.cmd == "writes":
        cmd_writes(a)
    elif a.cmd == "per-launch":
        cmd_per_launch(a)
    else:
        ap.print_help()
        sys.exit(2)


if __name__ == "__main__":
    main()
