#!/usr/bin/env bash
# bench_triton.sh - what a torch.compile'd Triton launch (KIND=inductor,
# the default) or a user's @triton.jit launch (KIND=jit: needs triton in
# NANPROF_TEST_TRITON, scripts/setup.sh --tests) costs the launching
# thread under the agent (cupti/triton.h, agent/triton_jit.py), on the
# fake CUDA driver: bench_triton.py without the agent, with it (run() wrapped, the
# launch's plan taken, its output's check enqueued), and with it but
# run() left alone (NANPROF_AGENT_SKIP=triton: the launch callback notes
# the kernel for the generic tier), in interleaved rounds; the median of
# each.  The fake counts the agent's check launches and runs none
# (FAKE_CUDA_DISCARD_CHECKS), as in bench_launch.sh.
# `make bench-triton` builds and runs it.
#   ROUNDS (default 7), ITERS (default 20000) from the environment.
set -eu
cd "$(dirname "$0")/.."
F=.output/fakecuda
ROUNDS=${ROUNDS:-7}
ITERS=${ITERS:-20000}
PY=${PYTHON:-python3}
KIND=${KIND:-inductor}
if [ "$KIND" = jit ]; then
	export PYTHONPATH=${NANPROF_TEST_TRITON:-/opt/nanprof-test/triton}
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
agent() {   # config, then environment for the job
	local cfg=$1 r=$2
	shift 2
	env "$@" FAKE_CUDA_DISCARD_CHECKS=1 LD_PRELOAD="$PWD/libnanprof_agent.so" \
		NANPROF_AGENT_RECORDS="$out/rec.$cfg.$r" NANPROF_CUPTI="$PWD/$F/libcupti.so.13" \
		"$PY" bench/bench_triton.py "$F/libfakeops.so" "$ITERS" \
		"$([ "$cfg" = wrapped ] && echo wrapped || echo plain)" "$KIND" > "$out/$cfg.$r"
}
for r in $(seq "$ROUNDS"); do
	"$PY" bench/bench_triton.py "$F/libfakeops.so" "$ITERS" plain "$KIND" > "$out/plain.$r"
	agent wrapped "$r"
	agent skipped "$r" NANPROF_AGENT_SKIP=triton
done
python3 - "$out" "$ROUNDS" "$ITERS" "$KIND" << 'PY'
import statistics, sys
d, rounds, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
through = ("a user's @triton.jit kernel through Triton's JITFunction.run" if sys.argv[4] == "jit"
           else "CachingAutotuner.run")
def runs(cfg):
    return [float(open("%s/%s.%d" % (d, cfg, r)).read().split()[1]) for r in range(1, rounds + 1)]
print("%d rounds of %d Triton launches, %s; the launching "
      "thread's CPU ns per launch, median of rounds (min-max)" % (rounds, iters, through))
print("| configuration | ns per launch | the agent's work |")
print("|---|---|---|")
plain = runs("plain")
med = statistics.median
for cfg, label in (("plain", "without the agent"), ("skipped", "agent, run() left alone "
                   "(NANPROF_AGENT_SKIP=triton)"), ("wrapped", "agent, run() wrapped")):
    v = runs(cfg)
    print("| %s | %.0f (%.0f-%.0f) | %s |" % (label, med(v), min(v), max(v),
          "" if cfg == "plain" else "%.0f" % (med(v) - med(plain))))
PY
