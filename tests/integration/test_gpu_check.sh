#!/usr/bin/env bash
# test_gpu_check.sh - what of `make gpu-check` can run without a GPU: its
# verdict logic on made-up records (tests/gpu/test_gpu_records.py), its
# jobs' scripts on the CPU, and the entry point itself on a host with no CUDA device, which must print
# its facts and stop with status 2 ("nothing to verify"), never 0.
set -u
. "$(dirname "$0")/lib.sh" gpu-check

if python3 tests/gpu/test_gpu_records.py > "$T/chk" 2>&1; then
	ok "gpu-check verdicts on made-up records"
else
	bad "gpu-check verdicts on made-up records" "$T/chk"
fi

# the GPU check's own jobs run on the CPU too (--device cpu), so that a
# script the one GPU run depends on cannot rot unseen here
for s in bn_fault "bn_fault --cudnn --fault conv" graph_fault flash_fault \
	"flash_fault --kernel memeff" "flash_fault --kernel cudnn" chain_fault solve_fault \
	compile_fault jit_fault "jit_fault --compile" rope_fault spectral_fault catwide_fault \
	split_fault pitched_fault; do
	read -r script extra <<< "$s"
	f=${s// /_}
	# shellcheck disable=SC2086 # extra: the script's own options, split
	if timeout 120 python3 tests/gpu/$script.py $extra --device cpu --steps 3 --at 1 \
		> "$T/$f.out" 2>&1 && grep -q "^step 2 loss " "$T/$f.out"; then
		ok "tests/gpu/$s runs its steps on the CPU"
	else
		bad "tests/gpu/$s on the CPU" "$T/$f.out"
	fi
done

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
