#!/usr/bin/env bash
# What each part of nanprof's checks costs on one model: step time of
# bench/workloads.py plain, under the tracer alone, with every check,
# with each part left out (NANPROF_AGENT_SKIP, docs/checks.md), with
# every hook installed but its body empty (what torch's hook machinery
# costs by itself), and the agent alone without the tracer (preloaded,
# records to a file); interleaved over ROUNDS rounds; medians over rounds.
#   bench/bench_parts.sh [MODEL [ROUNDS [PYTHON]]]    (mlp, 5, python3)
set -eu
cd "$(dirname "$0")/.."
MODEL=${1:-mlp} ROUNDS=${2:-5} PY=${3:-python3}
out=$(mktemp -d /tmp/nanprof-parts.XXXXXX)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$ROUNDS"); do
	for cfg in baseline tracer all bodies agent-alone no-forward no-backward no-optimizer; do
		case $cfg in
		baseline) pre=();;
		tracer) pre=(./nanprof run -q --no-checks -o "$out/np" --);;
		all) pre=(./nanprof run -q -o "$out/np" --);;
		bodies) pre=(env NANPROF_AGENT_SKIP=bodies ./nanprof run -q -o "$out/np" --);;
		agent-alone) pre=(env LD_PRELOAD="$PWD/libnanprof_agent.so"
				  NANPROF_AGENT_RECORDS="$out/records.bin");;
		no-*) pre=(env NANPROF_AGENT_SKIP="${cfg#no-}" ./nanprof run -q -o "$out/np" --);;
		esac
		"${pre[@]}" $PY bench/workloads.py --model "$MODEL" --steps 200 --warmup 40 \
			--threads 1 --out "$out/r.json" > /dev/null 2>&1
		echo "$cfg $($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['median_us'])" "$out/r.json")"
	done
done | $PY -c "
import collections, statistics, sys
d = collections.OrderedDict()
for line in sys.stdin:
    k, v = line.split()
    d.setdefault(k, []).append(float(v))
base = statistics.median(d['baseline'])
print('| config | median step us | ratio | +us vs baseline |')
print('|---|---:|---:|---:|')
for k, v in d.items():
    m = statistics.median(v)
    print('| %s | %.1f | %.3f | %+.1f |' % (k, m, m / base, m - base))
"
