#!/usr/bin/env bash
# test_gpu_check.sh - what of `make gpu-check` can run without a GPU: its
# verdict logic on made-up records (tests/gpu/test_gpu_records.py), and
# the entry point itself on a host with no CUDA device, which must print
# its facts and stop with status 2 ("nothing to verify"), never 0.
set -u
. "$(dirname "$0")/lib.sh" gpu-check

if python3 tests/gpu/test_gpu_records.py > "$T/chk" 2>&1; then
	ok "gpu-check verdicts on made-up records"
else
	bad "gpu-check verdicts on made-up records" "$T/chk"
fi

if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L > /dev/null 2>&1; then
	skp "gpu-check without a GPU" "this host has one: run make gpu-check"
else
	GPU_CHECK_BUDGET=120 timeout 300 bash scripts/gpu_check.sh "$T/gc" > "$T/out" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q "no CUDA device" "$T/out" && [ -s "$T/gc/facts.txt" ]; then
		ok "gpu-check without a GPU: facts written, exit 2 (nothing to verify)"
	else
		echo "exit $rc" >> "$T/out"
		bad "gpu-check without a GPU" "$T/out"
	fi
fi
finish
