#!/usr/bin/env bash
# Loss scaling (torch.amp.GradScaler) under nanprof, with real scalers on
# the CPU (tests/integration/faults.py --scaler): the iterations a scaler
# skips for inf/NaN gradients are loss-scale overflows, expected, not
# origins; gradients non-finite at every scale are; a forward fault is
# found as without a scaler; and nothing changes the job's numbers.
# Needs root (BPF, ptrace) and a torch whose GradScaler runs on the CPU.
set -u
. "$(dirname "$0")/lib.sh" scaler

if [ "$(id -u)" -ne 0 ]; then
	skp "GradScaler tests" "need root for bpf and ptrace"
	finish
	exit 0
fi
export OMP_NUM_THREADS=1

# what nanprof said of the scaler, against what the job's own scale did
# overflows DIR JOB_OUTPUT INIT_SCALE [STEP,PHASE,MODULE of the first]
overflows() {
	python3 - "$1/events.jsonl" "$2" "$3" "${4:-}" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
checks = [e for e in ev if e["type"] == "checks" and e["state"] == "on"]
first = [e for e in ev if e["type"] == "loss_scale_overflow"]
origins = [e for e in ev if e["type"] == "nan_origin"]
# the job prints its scale after each update(): a skip halves it
scales = [float(l.split()[-1]) for l in open(sys.argv[2]) if " scale " in l]
drops = sum(b < a for a, b in zip([float(sys.argv[3])] + scales, scales))
print("checks:", checks, "\nfirst overflow:", first, "\norigins:", origins, "\nscale drops:", drops)
ok = (len(checks) == 1 and checks[0].get("grad_scaler_skipped") == drops >= 1 and
      checks[0]["grad_scaler_iterations"] == len(scales) and not origins and len(first) == 1)
if ok and sys.argv[4]:
    want = sys.argv[4].split(",")   # step,phase,module
    got = [str(first[0]["step"]), first[0]["phase"], first[0]["module"]]
    ok = got == want
    print("first overflow at", got, "want", want)
sys.exit(0 if ok else 1)
PY
}

for PY in python3 /usr/bin/python3; do
	tag=$(py_tag "$PY")
	if [ -z "$tag" ]; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	if ! "$PY" -c 'import sys, torch; sys.exit(not hasattr(getattr(torch, "amp", None), "GradScaler"))' \
		2>/dev/null; then
		skp "$tag GradScaler" "this torch's GradScaler needs CUDA (torch.amp.GradScaler: 2.3+)"
		continue
	fi
	J="$PY $IT/faults.py --steps 12"
	# a scale so large that the scaled gradients overflow: the scaler
	# skips an iteration and halves it, as mixed precision's does
	$J --scaler 3e38 > "$T/$tag-plain.out" 2>&1
	$NP run -q -o "$T/$tag-ovf" -- $J --scaler 3e38 > "$T/$tag-ovf.out" 2> "$T/$tag-ovf.err"
	if overflows "$T/$tag-ovf" "$T/$tag-ovf.out" 3e38 > "$T/chk" 2>&1 &&
	   cmp -s "$T/$tag-plain.out" "$T/$tag-ovf.out" &&
	   $PY $IT/check_trace.py "$T/$tag-ovf/trace.json" --require-instant loss_scale_overflow \
		>> "$T/chk" 2>&1; then
		ok "$tag: loss-scale overflows counted as the job's scale dropped, no origin, same losses"
	else
		diff "$T/$tag-plain.out" "$T/$tag-ovf.out" >> "$T/chk"
		cat "$T/$tag-ovf.err" >> "$T/chk"
		bad "$tag: loss-scale overflow" "$T/chk"
	fi
	# gradient accumulation: two scaled backward passes per update(); the
	# backward fault's +inf in the first is the iteration's as much as in
	# the second (the scaled part opens at the first scale())
	$J --scaler 65536 --fault backward --accum 2 > "$T/$tag-acc-plain.out" 2>&1
	$NP run -q -o "$T/$tag-acc" -- $J --scaler 65536 --fault backward --accum 2 \
		> "$T/$tag-acc.out" 2> "$T/$tag-acc.err"
	if overflows "$T/$tag-acc" "$T/$tag-acc.out" 65536 6,backward,blocks.0.root > "$T/chk" 2>&1 &&
	   cmp -s "$T/$tag-acc-plain.out" "$T/$tag-acc.out"; then
		ok "$tag: gradient accumulation under a scaler: the overflow counted, no origin, same losses"
	else
		cat "$T/$tag-acc.err" >> "$T/chk"
		bad "$tag: loss-scale overflow with gradient accumulation" "$T/chk"
	fi
	# sqrt(0)'s +inf gradient in one iteration: the scaler skips it too
	$NP run -q -o "$T/$tag-once" -- $J --scaler 65536 --fault backward \
		> "$T/$tag-once.out" 2> "$T/$tag-once.err"
	if overflows "$T/$tag-once" "$T/$tag-once.out" 65536 6,backward,blocks.0.root > "$T/chk" 2>&1; then
		ok "$tag: a backward fault the scaler skips once: an overflow at step 6 in blocks.0.root"
	else
		cat "$T/$tag-once.err" >> "$T/chk"
		bad "$tag: one skipped backward fault" "$T/chk"
	fi
	# ... every iteration from step 6 on: non-finite at every scale; from
	# 256 the scaler halves it down to 1 in 9 skipped iterations
	$NP run -q -o "$T/$tag-persist" -- $J --steps 20 --scaler 256 --fault backward --persist \
		> /dev/null 2> "$T/$tag-persist.err"
	if $PY $IT/check_origin.py "$T/$tag-persist/events.jsonl" --origin backward blocks.0.root \
		grad --op SqrtBackward0 --step 6 > "$T/chk" 2>&1 &&
	   python3 -c 'import json, sys; sys.exit(not any(e.get("grad_scaler_skips_in_row") == 9
	       for e in map(json.loads, open(sys.argv[1]))))' "$T/$tag-persist/events.jsonl" &&
	   grep -q "skipped 9 iterations in a row from here on, down to a loss scale of 1" \
		"$T/$tag-persist.err"; then
		ok "$tag: non-finite down to a loss scale of 1: the origin, blocks.0.root at step 6"
	else
		cat "$T/$tag-persist.err" >> "$T/chk"
		bad "$tag: persistent backward fault under a scaler" "$T/chk"
	fi
	# the forward is not scaled: its fault is found as without a scaler
	$NP run -q -o "$T/$tag-fwd" -- $J --scaler 65536 --fault forward > /dev/null 2> "$T/$tag-fwd.err"
	if $PY $IT/check_origin.py "$T/$tag-fwd/events.jsonl" --origin forward blocks.1.gate output \
		$(gate_op $PY) --step 6 > "$T/chk" 2>&1; then
		ok "$tag: a forward fault under a scaler: blocks.1.gate, step 6, at once"
	else
		cat "$T/$tag-fwd.err" >> "$T/chk"
		bad "$tag: forward fault under a scaler" "$T/chk"
	fi
	# attached to a live job: its fault at every scale from step 30 on is
	# found, and detaching takes the scaler's wrappers out with the rest
	rm -f "$T/ready"
	$PY $IT/faults.py --scaler 256 --fault backward --persist --at 30 --steps 150 \
		--sleep 0.04 --ready-file "$T/ready" --report-hooks > "$T/$tag-live.out" 2>&1 &
	job=$!
	for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
	$NP attach -q -o "$T/$tag-att" --duration 4 $job 2> "$T/$tag-att.err"
	rc=$?
	wait $job
	jrc=$?
	if [ $rc -eq 0 ] && [ $jrc -eq 0 ] && grep -q "nanprof hooks left: 0" "$T/$tag-live.out" &&
	   $PY $IT/check_origin.py "$T/$tag-att/events.jsonl" --origin backward blocks.0.root grad \
		--op SqrtBackward0 --min-scaler-skips 9 > "$T/chk" 2>&1; then
		ok "$tag: attached: the fault at every scale named, the scaler's wrappers gone at detach"
	else
		echo "nanprof rc=$rc job rc=$jrc" >> "$T/chk"
		cat "$T/$tag-att.err" >> "$T/chk"
		tail -n 3 "$T/$tag-live.out" >> "$T/chk"
		bad "$tag: attach to a job with a GradScaler" "$T/chk"
	fi
done
finish
