#!/usr/bin/env python3
"""Self-test of gpu_records.py on made-up agent records (no GPU needed):
  python3 tests/gpu/test_gpu_records.py
Writes records as agent/agent_report.h lays them out, runs the verdicts
and checks each row's status.  Exit 0 when all hold."""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "gpu_records.py")
STEP_NS = 1000000


def status(seq, code, what, checked=0, skipped=0, overflow=0):
    body = struct.pack("<QQQQQ", checked, 0, skipped, 0, overflow) + what.encode()[:32].ljust(32, b"\0")
    return struct.pack("<IBBBBBBHIQ", seq, 3, 0, 0, 0, 0, 0, code, 0, 0) + body


def launch_status(seq, launches, sampled, guard_checks, guard_skips, check_launches):
    """The GPU_LAUNCHES status (agent_report.h's launch struct)."""
    body = struct.pack("<QQQQQ", launches, sampled, guard_checks, guard_skips,
                       check_launches).ljust(72, b"\0")
    return struct.pack("<IBBBBBBHIQ", seq, 3, 0, 0, 0, 0, 0, 9, 0, 0) + body


def host_cost_status(seq, launches, timed, timed_ns, checks_timed, check_ns):
    """A GPU_HOST_COST status (agent_report.h's host struct; one in 32 timed here)."""
    body = struct.pack("<QQQQQQ", launches, timed, timed_ns, checks_timed, check_ns,
                       32).ljust(72, b"\0")
    return struct.pack("<IBBBBBBHIQ", seq, 3, 0, 0, 0, 0, 0, 15, 0, 0) + body


def defer_status(seq, checks, launches, window, full, write, unknown, memory, order, now):
    """A GPU_DEFER status (agent_report.h's dfr struct)."""
    body = struct.pack("<QQQQQQQQQ", checks, launches, window, full, write, unknown, memory,
                       order, now)
    return struct.pack("<IBBBBBBHIQ", seq, 3, 0, 0, 0, 0, 0, 16, 0, 0) + body


def tracker_status(seq, writes, copies, lost):
    """A GPU_TRACKER status (agent_report.h's trk struct)."""
    body = struct.pack("<QQQQQQ", 0, 0, 0, writes, copies, lost).ljust(72, b"\0")
    return struct.pack("<IBBBBBBHIQ", seq, 3, 0, 0, 0, 0, 0, 13, 0, 0) + body


def undecoded_status(seq, func, rank, launches):
    """A GPU_UNDECODED status (agent_report.h's undec struct)."""
    body = struct.pack("<IIQ", func, rank, launches).ljust(72, b"\0")
    return struct.pack("<IBBBBBBHIQ", seq, 3, 0, 0, 0, 0, 0, 12, 0, 0) + body


def name(seq, func, text):
    return struct.pack("<IBBBBBBHIQ", seq, 5, 0, 0, 16, 0, 0, 0, 0, func) + \
        text.encode()[:72].ljust(72, b"\0")


def check(seq, step, func, birth, propagated=False, graph=False):
    """A GPU_CHECK launched in step (-1: before step 0)."""
    flags = (1 if propagated else 0) | (8 if graph else 0)
    body = struct.pack("<QQQQqdQIIQ", 64, 0, 3, 0, 2, 1.0, (step + 1) * STEP_NS + 500, 1, func, birth)
    return struct.pack("<IBBBBBBHIQ", seq, 4, 1, 0, flags, 0, 0, 0, 0, 7) + body


def job(path, recs, times_path):
    with open(path, "wb") as f:
        for r in recs:
            f.write(r)
    with open(times_path, "w") as f:
        for s in range(10):
            f.write("step %d %d\n" % (s, (s + 1) * STEP_NS))


def rows(rec, times, *args):
    res = tempfile.mktemp()
    subprocess.call([sys.executable, TOOL, "verdict", rec, "--times", times, "--job", "j",
                     "--results", res, "--kernels", res + ".k"] + list(args),
                    stdout=subprocess.DEVNULL)
    out = [line.rstrip("\n").split("\t") for line in open(res)]
    os.unlink(res)
    return {r[1].split(" in step")[0]: r[2] for r in out}


def main():
    d = tempfile.mkdtemp()
    rec, times = os.path.join(d, "r"), os.path.join(d, "t")
    fails = []

    def expect(what, got, key, want):
        if got.get(key) != want:
            fails.append("%s: %r is %r, want %r (%s)" % (what, key, got.get(key), want, got))

    on = status(1, 6, "every")
    fill = name(2, 1, "at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>")
    expk = name(3, 2, "at::native::vectorized_elementwise_kernel<4, exp_kernel_cuda>")
    add = name(4, 3, "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>")
    cnt = status(20, 8, "launches 900", checked=800)

    # a clean job: the mask born every step, never propagated
    job(rec, [on, fill] + [check(5 + s, s, 1, 10 + s) for s in range(3)] + [cnt], times)
    got = rows(rec, times, "--fault", "none")
    expect("none", got, "GPU checks on", "PASS")
    expect("none", got, "no birth propagates (the -inf mask stays contained)", "PASS")

    # the mask's birth propagates: a clean job with an origin
    job(rec, [on, fill, check(5, 0, 1, 10), check(6, 0, 1, 10, propagated=True), cnt],
        times)
    got = rows(rec, times, "--fault", "none")
    expect("none propagated", got, "no birth propagates (the -inf mask stays contained)", "FAIL")

    # a forward fault at step 6: born in exp, propagated by add
    job(rec, [on, fill, expk, add, check(5, 0, 1, 10), check(6, 6, 2, 50),
              check(7, 6, 3, 50, propagated=True), cnt], times)
    got = rows(rec, times, "--fault", "forward", "--at", "6")
    expect("forward", got, "a GPU birth", "PASS")
    expect("forward", got, "origin (first birth seen to propagate)", "PASS")
    expect("forward", got, "kernel name of the birth", "PASS")

    # the origin at the wrong step, and a name that does not match
    job(rec, [on, fill, add, check(5, 2, 3, 10), check(6, 2, 3, 10, propagated=True),
              check(7, 6, 3, 50), cnt], times)
    got = rows(rec, times, "--fault", "forward", "--at", "6")
    expect("wrong step", got, "a GPU birth", "PASS")
    expect("wrong step", got, "origin (first birth seen to propagate)", "FAIL")
    expect("wrong step", got, "kernel name of the birth", "CHECK")

    # the only birth in the fault's step is the clean job's mask
    clean = os.path.join(d, "clean")
    job(clean, [on, fill, check(5, 0, 1, 10), check(6, 6, 1, 11), cnt], times)
    job(rec, [on, fill, check(5, 6, 1, 10), cnt], times)
    got = rows(rec, times, "--fault", "forward", "--at", "6", "--clean", clean)
    expect("mask only", got, "a GPU birth", "FAIL")
    job(rec, [on, fill, expk, check(5, 6, 1, 10), check(6, 6, 2, 11), cnt], times)
    got = rows(rec, times, "--fault", "forward", "--at", "6", "--clean", clean)
    expect("mask and fault", got, "a GPU birth", "PASS")

    # GPU checks off
    job(rec, [status(1, 7, "cupti taken by another tool")], times)
    got = rows(rec, times, "--fault", "forward")
    expect("off", got, "GPU checks on", "FAIL")
    expect("off", got, "a GPU birth", "FAIL")

    # a birth from a replayed graph
    job(rec, [on, expk, add, check(5, -1, 2, 9, graph=True),
              check(6, -1, 3, 9, propagated=True, graph=True), cnt], times)
    got = rows(rec, times, "--fault", "forward", "--graph")
    expect("graph", got, "a birth inside the replayed CUDA graph (graph=true)", "PASS")
    expect("graph", got, "the graph birth propagated", "PASS")
    expect("graph", got, "kernel name of the birth", "PASS")

    # smoke: every launch skipped means the kernels did not load
    job(rec, [on, status(2, 8, "launches 900", checked=0, overflow=900)], times)
    out = subprocess.check_output([sys.executable, TOOL, "smoke", rec]).decode()
    if not out.startswith("rebuild"):
        fails.append("smoke with 0 checks: %r" % out)
    job(rec, [status(1, 7, "agent built without CUDA")], times)
    out = subprocess.check_output([sys.executable, TOOL, "smoke", rec]).decode()
    if not out.startswith("rebuild"):
        fails.append("smoke of a stub agent: %r" % out)
    job(rec, [on, status(2, 8, "launches 900", checked=0, skipped=900)], times)
    out = subprocess.check_output([sys.executable, TOOL, "smoke", rec]).decode()
    if not out.startswith("off"):
        fails.append("smoke with no launch decoded: %r" % out)
    job(rec, [on, cnt], times)
    out = subprocess.check_output([sys.executable, TOOL, "smoke", rec]).decode()
    if not out.startswith("ok"):
        fails.append("smoke of a working agent: %r" % out)
    # the launch counters, when the agent sends them, are said too
    job(rec, [on, cnt, launch_status(21, 900, 0, 12, 30, 650)], times)
    out = subprocess.check_output([sys.executable, TOOL, "smoke", rec]).decode()
    if not out.startswith("ok") or "650 check launches, guards 12 checked 30 skipped" not in out:
        fails.append("smoke with launch counters: %r" % out)

    # the host time of the callbacks: the last report's, per launch and
    # per check launch (1.5 us a callback, 64 timed of 2048, over 1000 launches)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_records
    job(rec, [on, host_cost_status(40, 10, 1, 99, 0, 0),
              host_cost_status(41, 1000, 64, 64 * 1500, 10, 10 * 4000)], times)
    got = gpu_records.host_cost_us(gpu_records.load(rec))
    if got != (3.072, 4.0):
        fails.append("host cost: %r, want (3.072, 4.0)" % (got,))
    job(rec, [on, cnt], times)
    if gpu_records.host_cost_us(gpu_records.load(rec)) != (None, None):
        fails.append("host cost without its record: not None")

    # checks per check launch, and with deferring on why its lists went out
    job(rec, [on, status(2, 8, "launches 900", checked=600), launch_status(3, 900, 0, 0, 0, 150),
              defer_status(4, 580, 140, 60, 0, 10, 50, 9, 15, 5)], times)
    out = subprocess.check_output([sys.executable, TOOL, "per-launch", rec]).decode()
    want = ("600 checks in 150 launches (4.00 each) [580 deferred in 140 lists; flushed 60 "
            "at the window, 10 at a write, 50 at unknown writes, 9 at a memory call, 15 at a "
            "sync or event, 5 at a check at once, 0 lists full]")
    if want not in out:
        fails.append("per-launch with deferring: %r, want %r" % (out, want))
    job(rec, [on, status(2, 8, "launches 900", checked=600), launch_status(3, 900, 0, 0, 0, 600)],
        times)
    out = subprocess.check_output([sys.executable, TOOL, "per-launch", rec]).decode()
    if "600 checks in 600 launches (1.00 each)" not in out or "deferred" in out:
        fails.append("per-launch without deferring: %r" % out)

    # unchecked writes told to the tracker: each job's last word, summed
    rec2 = rec + ".2"
    job(rec, [on, tracker_status(2, 3, 0, 0), tracker_status(3, 7, 1, 0)], times)
    job(rec2, [on, tracker_status(2, 5, 2, 4)], times)
    out = subprocess.check_output([sys.executable, TOOL, "writes", rec, rec2]).decode()
    if "12 told in 2 jobs (3 device copies of a non-finite value), 4 lost" not in out:
        fails.append("writes: %r" % out)

    # the kernels not checked at launch: each one's last report, most first
    gemm = name(30, 8, "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN")
    fmha = name(31, 9, "fmha_cutlassF_f32_aligned_64x64_rf_sm80")
    job(rec, [on, expk, check(5, 6, 2, 50), cnt, gemm, undecoded_status(32, 8, 0, 40),
              fmha, undecoded_status(33, 9, 1, 20), cnt, undecoded_status(34, 9, 0, 90),
              undecoded_status(35, 8, 1, 80)], times)
    got = rows(rec, times, "--fault", "forward", "--at", "6")
    want = ("fmha_cutlassF_f32_aligned_64x64_rf_sm80 90; "
            "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN 80")
    expect("undecoded", got, "kernels not checked at launch (launches)", "INFO")
    res = tempfile.mktemp()
    subprocess.call([sys.executable, TOOL, "verdict", rec, "--times", times, "--job", "j",
                     "--results", res, "--fault", "forward"], stdout=subprocess.DEVNULL)
    detail = [line.rstrip("\n").split("\t")[3] for line in open(res)
              if "not checked at launch" in line]
    os.unlink(res)
    if detail != [want]:
        fails.append("undecoded kernels: %r, want [%r]" % (detail, want))

    for f in fails:
        print("FAIL", f)
    print("%s: %d failures" % (os.path.basename(__file__), len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
