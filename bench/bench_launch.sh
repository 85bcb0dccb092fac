#!/usr/bin/env bash
# bench_launch.sh - the agent's host work per kernel launch, on the fake
# CUDA driver: bench_launch (bench/bench_launch.c) without the agent, with
# it preloaded, and with it preloaded but cuBLAS's and cuDNN's calls left
# to the generic tier (NANPROF_GPU_BLAS=0), in interleaved rounds; the median of each pattern's
# rounds, and the difference: what the launch callback costs the
# launching thread.  The fake counts the agent's check launches and runs
# none of them (FAKE_CUDA_DISCARD_CHECKS): running them would add its
# worker's wake-ups, which a GPU does not have, to the launching thread.
# `make bench-launch` builds and runs it.
#   ROUNDS (default 7), ITERS (default 20000) from the environment.
set -eu
cd "$(dirname "$0")/.."
F=.output/fakecuda
ROUNDS=${ROUNDS:-7}
ITERS=${ITERS:-20000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$ROUNDS"); do
	LD_LIBRARY_PATH=$F $F/bench_launch "$ITERS" > "$out/plain.$r"
	for blas in 1 0; do
		NANPROF_GPU_BLAS=$blas FAKE_CUDA_DISCARD_CHECKS=1 \
			LD_PRELOAD=$PWD/libnanprof_agent.so NANPROF_AGENT_RECORDS="$out/rec$blas.$r" \
			NANPROF_CUPTI=$PWD/$F/libcupti.so.13 LD_LIBRARY_PATH=$F \
			$F/bench_launch "$ITERS" > "$out/agent$blas.$r"
	done
	# checks deferred into lists (cupti/defer.h)
	NANPROF_GPU_DEFER=8 FAKE_CUDA_DISCARD_CHECKS=1 \
		LD_PRELOAD=$PWD/libnanprof_agent.so NANPROF_AGENT_RECORDS="$out/recd.$r" \
		NANPROF_CUPTI=$PWD/$F/libcupti.so.13 LD_LIBRARY_PATH=$F \
		$F/bench_launch "$ITERS" > "$out/agentd.$r"
done
python3 - "$out" "$ROUNDS" "$ITERS" << 'PY'
import statistics, sys
d, rounds, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def runs(cfg):
    got = {}
    for r in range(1, rounds + 1):
        for line in open("%s/%s.%d" % (d, cfg, r)):
            k, v = line.split()
            got.setdefault(k, []).append(float(v))
    return got
plain, agent, noblas = runs("plain"), runs("agent1"), runs("agent0")
print("%d rounds of %d iterations; the launching thread's CPU ns per iteration, "
      "median of rounds (min-max)" % (rounds, iters))
print("| pattern | launches | without the agent | with it | the agent's work | "
      "with it, NANPROF_GPU_BLAS=0 | the agent's work |")
print("|---|---|---|---|---|---|---|")
PATTERNS = ("decoded", "undecoded", "generic", "gemm", "conv", "chain", "layer", "cnn")
launches = {"decoded": 1, "undecoded": 1, "generic": 2, "gemm": 2, "conv": 2, "chain": 1,
            "layer": 2, "cnn": 2}
med = statistics.median
for k in PATTERNS:
    p, a, n = plain[k], agent[k], noblas[k]
    print("| %s | %d | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.0f | %.0f (%.0f-%.0f) | %.0f |" % (
        k, launches[k], med(p), min(p), max(p), med(a), min(a), max(a), med(a) - med(p),
        med(n), min(n), max(n), med(n) - med(p)))
print("check launches the agent made (last round, not run): %d" % int(agent["checks"][-1]))
# deferred: chain's checks share list launches; decoded's cannot (each
# launch writes what the last one's check reads), so it shows the cost
# of the launch-entry decoding that deferring adds
defer = runs("agentd")
print()
print("NANPROF_GPU_DEFER=8: | pattern | with the agent | deferred | the agent's work, deferred "
      "| check launches (last round), at once and deferred |")
print("|---|---|---|---|---|")
for k in ("decoded", "chain", "generic", "gemm", "layer", "conv", "cnn"):
    a, n = agent[k], defer[k]
    print("| %s | %.0f | %.0f (%.0f-%.0f) | %.0f | %d, %d |" % (
        k, med(a), med(n), min(n), max(n), med(n) - med(plain[k]),
        int(agent["launches-" + k][-1]), int(defer["launches-" + k][-1])))
print("check launches, deferred (last round, not run): %d" % int(defer["checks"][-1]))
# the agent's own sampled estimate of its callbacks' time (cupti/host_cost.h),
# against what the patterns measured: the callbacks are most of the
# agent's work but not all (the gemm and conv patterns' call wrappers
# run outside them; CUPTI's dispatch around them is the fake's here)
sys.path.insert(0, "tests/integration")
import read_records
for cfg, work in (("1", agent), ("0", noblas)):
    est = []
    for r in range(1, rounds + 1):
        h = [x for x in read_records.read("%s/rec%s.%d" % (d, cfg, r))
             if x.get("status") == "gpu_host_cost"]
        if h and h[-1]["timed"]:
            h = h[-1]
            # each pattern: 200 warm-up iterations and iters timed
            est.append(h["timed_ns"] * h["every"] / (len(PATTERNS) * (iters + 200)))
    measured = statistics.mean(med(work[k]) - med(plain[k]) for k in PATTERNS)
    if est:
        print("NANPROF_GPU_BLAS=%s: the agent's estimate of its callbacks' time, per "
              "iteration of a pattern: %.0f ns (rounds %.0f-%.0f); the patterns' measured "
              "work, their mean: %.0f ns" % (cfg, med(est), min(est), max(est), measured))
PY
