#!/usr/bin/env bash
# A torch.compile'd model under nanprof (tests/integration/compiled_fault.py,
# inductor on the CPU).  The forward hook must stay out of the compiled
# code: a hook dynamo cannot trace breaks the graph, and a loop with a
# break falls back to eager, which changes both speed and rounding.  So:
# the losses are bit-identical with and without nanprof, dynamo says
# nothing about nanprof's hook, and the origin is the compiled region
# (OptimizedModule), with the hint; with TORCH_COMPILE_DISABLE=1 it is
# the module itself, named as the user's model names it (no _orig_mod).
# A weight set to inf outside the optimizer is named by its path inside
# the compiled model (blocks.1.lin.weight).
# Needs root (BPF, ptrace) and a torch with torch.compile (2.x).
set -u
. "$(dirname "$0")/lib.sh" compile

if [ "$(id -u)" -ne 0 ]; then
	skp "torch.compile tests" "need root for bpf and ptrace"
	finish
	exit 0
fi
export OMP_NUM_THREADS=1

for PY in python3 /usr/bin/python3; do
	tag=$(py_tag "$PY")
	if [ -z "$tag" ]; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	if ! "$PY" -c 'import sys, torch; sys.exit(not hasattr(torch, "compile"))' 2>/dev/null; then
		skp "$tag torch.compile" "this torch has no torch.compile"
		continue
	fi
	# the compile itself (a C++ compiler run) is cached for the runs after it
	if ! timeout 300 "$PY" $IT/compiled_fault.py > "$T/$tag-plain.out" 2> "$T/$tag-plain.err"; then
		skp "$tag torch.compile" "the job does not compile here: $(tail -n 1 "$T/$tag-plain.err")"
		continue
	fi
	timeout 300 $NP run -o "$T/$tag-np" -- "$PY" $IT/compiled_fault.py \
		> "$T/$tag-np.out" 2> "$T/$tag-np.err"
	if cmp -s "$T/$tag-plain.out" "$T/$tag-np.out" && grep -q "step 9 loss nan" "$T/$tag-np.out" &&
	   ! grep -q "nanprof_forward_hook" "$T/$tag-np.err"; then
		ok "$tag: the compiled model's losses are bit-identical under nanprof; no graph break"
	else
		diff "$T/$tag-plain.out" "$T/$tag-np.out" > "$T/chk"
		grep -m 5 "nanprof_forward_hook\|Graph break" "$T/$tag-np.err" >> "$T/chk"
		bad "$tag: nanprof changed the compiled job" "$T/chk"
	fi
	if $PY $IT/check_origin.py "$T/$tag-np/events.jsonl" --origin forward "" output \
		--module-type OptimizedModule --step 6 > "$T/chk" 2>&1 &&
	   grep -q "torch.compile'd region" "$T/$tag-np.err"; then
		ok "$tag: the origin is the compiled region, step 6, forward, with the hint"
	else
		cat "$T/$tag-np.err" >> "$T/chk"
		bad "$tag: origin in a compiled model" "$T/chk"
	fi
	TORCH_COMPILE_DISABLE=1 timeout 300 $NP run -q -o "$T/$tag-eager" -- "$PY" \
		$IT/compiled_fault.py > /dev/null 2> "$T/$tag-eager.err"
	if $PY $IT/check_origin.py "$T/$tag-eager/events.jsonl" --origin forward blocks.1.lin \
		output --module-type Linear --op addmm --step 6 > "$T/chk" 2>&1; then
		ok "$tag: TORCH_COMPILE_DISABLE=1: blocks.1.lin, as the model names it (no _orig_mod)"
	else
		cat "$T/$tag-eager.err" >> "$T/chk"
		bad "$tag: origin with the compile disabled" "$T/chk"
	fi
	timeout 300 $NP run -q -o "$T/$tag-w" -- "$PY" $IT/compiled_fault.py --fault inf-weight \
		> /dev/null 2> "$T/$tag-w.err"
	if $PY $IT/check_origin.py "$T/$tag-w/events.jsonl" --origin forward "" param \
		--param blocks.1.lin.weight --module-type OptimizedModule --only-index 1 0 \
		--step 6 > "$T/chk" 2>&1; then
		ok "$tag: a weight set to inf outside the optimizer: blocks.1.lin.weight in the compiled region"
	else
		cat "$T/$tag-w.err" >> "$T/chk"
		bad "$tag: a weight set to inf in a compiled model" "$T/chk"
	fi
	# attached to a live compiled job: dynamo compiled it with no global
	# hook; adding nanprof's (and taking it out) must not recompile it
	rm -f "$T/ready"
	exe=$("$PY" -c 'import sys; print(sys.executable)')   # not a shim: attach needs python's pid
	TORCH_LOGS=recompiles "$exe" $IT/compiled_fault.py --at -1 --steps 150 \
		--sleep 0.02 --ready-file "$T/ready" > "$T/$tag-live.out" 2> "$T/$tag-live.err" &
	job=$!
	for _ in $(seq 600); do [ -s "$T/ready" ] && break; sleep 0.1; done
	$NP attach -q -o "$T/$tag-att" --duration 2 $job 2> "$T/$tag-att.err"
	rc=$?
	wait $job
	jrc=$?
	if [ $rc -eq 0 ] && [ $jrc -eq 0 ] && grep -q "step 149 loss" "$T/$tag-live.out" &&
	   ! grep -qi "recompil" "$T/$tag-live.err" &&
	   grep -q '"state":"detached"' "$T/$tag-att/events.jsonl" &&
	   grep -q '"module_calls":[1-9]' "$T/$tag-att/events.jsonl"; then
		ok "$tag: attached to a live compiled job and detached: no recompilation"
	else
		echo "nanprof rc=$rc job rc=$jrc" >> "$T/chk"
		grep -i -m 5 "recompil" "$T/$tag-live.err" >> "$T/chk"
		cat "$T/$tag-att.err" >> "$T/chk"
		bad "$tag: attach to a compiled job" "$T/chk"
	fi
done
finish
