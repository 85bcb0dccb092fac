#!/usr/bin/env bash
# Integration tests: real PyTorch training under `nanprof run` and
# `nanprof attach`, on both Pythons of the machine, and the bad-input paths.
# Needs root (BPF); skips visibly, never passes, when something is missing.
set -u
cd "$(dirname "$0")/../.."
NP=./nanprof
IT=tests/integration
T=$(mktemp -d /tmp/nanprof-it.XXXXXX)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null' EXIT
pass=0 fail=0 skip=0

# each test writes its checks' output to $T/chk, emptied after every verdict
ok()   { pass=$((pass + 1)); echo "PASS $1"; rm -f "$T/chk"; }
bad()  { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -n 25; rm -f "$T/chk"; }
skp()  { skip=$((skip + 1)); echo "SKIP $1: $2"; }
# one line on stderr, that line mentions $2, and the exit status is $3
one_line_error() {
	local name=$1 want=$2 rc=$3 log=$4
	if [ "$rc" -ne 0 ] && [ "$(wc -l < "$log")" -eq 1 ] && grep -q "$want" "$log"; then
		ok "$name"
	else
		echo "    rc=$rc"; bad "$name" "$log"
	fi
}

if [ "$(id -u)" -ne 0 ]; then
	skp "all integration tests" "need root for bpf"
	echo "0 passed, 0 failed, $((skip)) skipped"
	exit 0
fi

# the job's output and exit status with and without nanprof must agree
for PY in python3 /usr/bin/python3; do
	tag=$(basename "$(readlink -f "$(command -v $PY)")")-$($PY -c 'import torch;print(torch.__version__)' 2>/dev/null)
	if ! $PY -c 'import torch' 2>/dev/null; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	export OMP_NUM_THREADS=1

	# run: every step, module, phase, and backward attributed to modules
	out=$T/run-$tag
	if $NP run -q -o "$out" -- $PY $IT/workload.py --steps 6 --sleep 0.02 > "$T/job.out" 2> "$T/np.err" &&
	   grep -q "finished 6 steps" "$T/job.out" &&
	   $PY $IT/check_events.py "$out/events.jsonl" --mode run --steps 6 --batches 1 \
		--module "" --module inp --module layers.0 --module layers.1.norm --module head \
		--backward-module layers.1.fc --backward-module inp > "$T/chk" 2>&1 &&
	   $PY $IT/check_trace.py "$out/trace.json" --require-name layers.1.norm \
		--require-name "layers.0.fc (backward)" --require-name "AddmmBackward0" \
		--require-name "ClipBackward" --require-cat step --require-cat phase --require-cat autograd >> "$T/chk" 2>&1; then
		ok "run $tag: steps, modules, phases, backward, trace"
	else
		cat "$T/np.err" >> "$T/chk"; bad "run $tag" "$T/chk"
	fi

	# the fast Python probe was found: by symbol on pyenv's libpython, in
	# CPython's slotdefs table on Debian's stripped python3.11
	if grep -q '"probes":\["slot_tp_call"' "$out/events.jsonl"; then
		ok "run $tag: slot_tp_call found and used"
	else grep '"type":"process"' "$out/events.jsonl" > "$T/d"; bad "run $tag: slot_tp_call" "$T/d"; fi

	# the general Python probe gives the same picture
	out=$T/eval-$tag
	if $NP run -q --python-probe eval -o "$out" -- $PY $IT/workload.py --steps 3 --accum 2 --sleep 0.02 > /dev/null 2> "$T/np.err" &&
	   grep -q '"probes":\["_PyEval_EvalFrameDefault"' "$out/events.jsonl" &&
	   $PY $IT/check_events.py "$out/events.jsonl" --mode run --steps 3 --batches 2 \
		--module layers.1.norm --backward-module layers.1.fc --backward-module inp > "$T/chk" 2>&1; then
		ok "run $tag --python-probe eval: same steps, modules, backward"
	else cat "$T/np.err" >> "$T/chk"; bad "run $tag --python-probe eval" "$T/chk"; fi

	# the job prints the same loss with and without nanprof
	$PY $IT/workload.py --steps 6 --sleep 0.02 > "$T/plain.out" 2>/dev/null
	if cmp -s "$T/plain.out" "$T/job.out"; then ok "run $tag: job output unchanged"
	else diff "$T/plain.out" "$T/job.out" > "$T/d"; bad "run $tag: job output unchanged" "$T/d"; fi

	# gradient accumulation: two batches in each step
	out=$T/accum-$tag
	if $NP run -q -o "$out" -- $PY $IT/workload.py --steps 3 --accum 2 --sleep 0.02 > /dev/null 2> "$T/np.err" &&
	   $PY $IT/check_events.py "$out/events.jsonl" --steps 3 --batches 2 > "$T/chk" 2>&1; then
		ok "run $tag: gradient accumulation gives batch 0 and 1"
	else cat "$T/np.err" >> "$T/chk"; bad "run $tag: accumulation" "$T/chk"; fi

	# a gradient penalty's autograd.grad is a backward pass inside the
	# batch (it writes no .grad): the forward after it is no new batch
	out=$T/penalty-$tag
	if $NP run -q -o "$out" -- $PY $IT/workload.py --steps 3 --accum 2 --grad-penalty \
		> /dev/null 2> "$T/np.err" &&
	   $PY $IT/check_events.py "$out/events.jsonl" --steps 3 --batches 2 > "$T/chk" 2>&1; then
		ok "run $tag: autograd.grad (a gradient penalty) inside a batch starts no new one"
	else cat "$T/np.err" >> "$T/chk"; bad "run $tag: gradient penalty batches" "$T/chk"; fi

	# exit status of the command is nanprof's
	$NP run -q -o "$T/rc" -- $PY -c 'import sys; sys.exit(3)' 2> "$T/np.err"
	rc=$?
	if [ $rc -eq 3 ]; then ok "run $tag: exit status passed through"
	else echo "rc=$rc" >> "$T/np.err"; bad "run $tag: exit status" "$T/np.err"; fi

	# attach to a live job, detach after --duration; the job finishes normally
	rm -f "$T/ready"
	$PY $IT/workload.py --steps 150 --sleep 0.02 --ready-file "$T/ready" > "$T/live.out" 2>&1 &
	job=$!
	for _ in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
	out=$T/attach-$tag
	$NP attach -q -o "$out" --duration 1.5 $job 2> "$T/np.err"
	rc=$?
	wait $job
	jrc=$?
	if [ $rc -eq 0 ] && [ $jrc -eq 0 ] && grep -q "finished 150 steps" "$T/live.out" &&
	   $PY $IT/check_events.py "$out/events.jsonl" --mode attach --min-steps 10 --batches 1 \
		--every-phase --module layers.1.norm --module head --backward-module layers.0.fc > "$T/chk" 2>&1 &&
	   $PY $IT/check_trace.py "$out/trace.json" --require-name layers.1.norm \
		--require-name ClipBackward >> "$T/chk" 2>&1; then
		ok "attach $tag: live job traced, then runs on to the end"
	else
		echo "nanprof rc=$rc job rc=$jrc" >> "$T/chk"; cat "$T/np.err" "$T/live.out" >> "$T/chk"
		bad "attach $tag" "$T/chk"
	fi

	# nanprof held up (stopped) while a short job runs, frees its model
	# and exits: nothing left to read its module names from; the agent's
	# module paths name them (the NaN input batch 7's Linear got: "0")
	hold=$T/hold-$tag
	rm -rf "$hold" && mkdir -p "$hold"
	$NP run -q -o "$hold/out" -- $PY $IT/infer_job.py --no-grad --hold "$hold" \
		> "$hold/job.out" 2> "$hold/np.err" &
	np=$!
	for _ in $(seq 300); do [ -e "$hold/ready" ] && break; sleep 0.1; done
	kill -STOP $np
	touch "$hold/go"
	for _ in $(seq 300); do [ -e "$hold/done" ] && break; sleep 0.1; done
	sleep 0.5   # the job's exit
	kill -CONT $np
	wait $np
	rc=$?
	if [ $rc -eq 0 ] && [ -e "$hold/done" ] &&
	   $PY $IT/check_origin.py "$hold/out/events.jsonl" --origin forward "" input \
		--received-by 0 --only-index 0 2 --step 0 --grad-mode no_grad > "$T/chk" 2>&1; then
		ok "run $tag: a job gone before nanprof read its events: modules named from the agent's paths"
	else
		echo "nanprof rc=$rc" >> "$T/chk"; cat "$hold/np.err" "$hold/job.out" >> "$T/chk"
		bad "run $tag: names of a job gone before nanprof read it" "$T/chk"
	fi
done

PY=python3
$PY -c 'import torch' 2>/dev/null || PY=/usr/bin/python3
if $PY -c 'import torch' 2>/dev/null; then
	export OMP_NUM_THREADS=1
	# a launcher and its ranks: every process followed, ranks named
	# (ranks share stdout: count occurrences, not lines)
	out=$T/ranks
	if $NP run -q -o "$out" -- $PY $IT/launcher.py 2 > "$T/job.out" 2> "$T/np.err" &&
	   [ "$(grep -o 'finished 4 steps' "$T/job.out" | wc -l)" -eq 2 ] &&
	   $PY $IT/check_events.py "$out/events.jsonl" --steps 4 --ranks 0,1 \
		--module layers.1.norm > "$T/chk" 2>&1 &&
	   grep -q '"name":"rank 1 (pid' "$out/trace.json"; then
		ok "run follows a launcher's rank processes"
	else
		$PY $IT/check_events.py "$out/events.jsonl" --steps 4 --ranks 0,1 --module layers.1.norm >> "$T/chk" 2>&1
		cat "$T/np.err" "$T/job.out" >> "$T/chk"; bad "run follows ranks" "$T/chk"
	fi

	# attach to every rank of a running launcher, and to pids named one by one
	rm -f "$T/chk"
	$PY $IT/launcher.py 2 100 > "$T/job.out" 2>&1 &
	launcher=$!
	sleep 3
	if $NP attach -q -o "$T/children" --children $launcher 2> "$T/np.err" &&
	   wait $launcher && [ "$(grep -o 'finished 100 steps' "$T/job.out" | wc -l)" -eq 2 ] &&
	   grep -q "targets exited" "$T/np.err" &&
	   $PY $IT/check_events.py "$T/children/events.jsonl" --mode attach --min-steps 3 \
		--ranks 0,1 --module layers.1.norm --backward-module layers.1.fc > "$T/chk" 2>&1; then
		ok "attach --children: every rank of a launcher, until they exit"
	else cat "$T/np.err" "$T/job.out" >> "$T/chk"; bad "attach --children" "$T/chk"; fi
	rm -f "$T/chk"
	$PY $IT/launcher.py 2 100 > "$T/job.out" 2>&1 &
	launcher=$!
	sleep 3
	ranks=$(pgrep -f "workload.py --steps 100" | tr '\n' ' ')
	if $NP attach -q -o "$T/pids" --duration 1.5 $ranks 2> "$T/np.err" &&
	   wait $launcher && [ "$(grep -o 'finished 100 steps' "$T/job.out" | wc -l)" -eq 2 ] &&
	   $PY $IT/check_events.py "$T/pids/events.jsonl" --mode attach --min-steps 3 \
		--ranks 0,1 --module layers.1.norm > "$T/chk" 2>&1; then
		ok "attach PID PID: both ranks traced, then run on to the end"
	else echo "ranks: $ranks" >> "$T/chk"; cat "$T/np.err" "$T/job.out" >> "$T/chk"; bad "attach PID PID" "$T/chk"; fi

	# one run per "machine", merged: aligned by step, pids kept apart
	if RANK=0 $NP run -q -o "$T/m0" -- $PY $IT/workload.py --steps 5 --sleep 0.02 > /dev/null 2>&1 &&
	   sleep 1 && RANK=1 $NP run -q -o "$T/m1" -- $PY $IT/workload.py --steps 5 --sleep 0.02 > /dev/null 2>&1 &&
	   $NP merge -o "$T/merged" "$T/m0" "$T/m1" 2> "$T/np.err" &&
	   grep -q "aligned at the start of step 0" "$T/np.err" &&
	   $PY $IT/check_events.py "$T/merged/events.jsonl" --sessions 2 --steps 5 --ranks 0,1 \
		--module layers.1.norm --backward-module layers.1.fc > "$T/chk" 2>&1 &&
	   $PY $IT/check_trace.py "$T/merged/trace.json" --require-name layers.1.norm >> "$T/chk" 2>&1 &&
	   [ "$(grep '"name":"step 0"' "$T/merged/trace.json" | grep -o '"ts":[0-9.]*' | sort -u | wc -l)" -eq 1 ] &&
	   $NP merge -o "$T/twice" "$T/m0" "$T/m0" 2>> "$T/np.err" &&
	   [ "$(grep -o '"type":"process","pid":[0-9]*' "$T/twice/events.jsonl" | sort -u | wc -l)" -eq 2 ]; then
		ok "merge: two runs in one trace, step 0 aligned, clashing pids renumbered"
	else cat "$T/np.err" >> "$T/chk"; bad "merge" "$T/chk"; fi
	$NP merge -o "$T/x" "$T/nonexistent" 2> "$T/e"; one_line_error "merge: missing input" "cannot read" $? "$T/e"

	# the fallback for kernels without uprobe sessions gives the same picture
	out=$T/nosession
	if $NP run -q --no-session -o "$out" -- $PY $IT/workload.py --steps 3 --accum 2 --sleep 0.02 > /dev/null 2> "$T/np.err" &&
	   grep -q '"probe_mode":"uprobe+uretprobe"' "$out/events.jsonl" &&
	   $PY $IT/check_events.py "$out/events.jsonl" --mode run --steps 3 --batches 2 \
		--module layers.1.norm --backward-module layers.1.fc > "$T/chk" 2>&1; then
		ok "run --no-session: entry+return probes give the same steps and modules"
	else cat "$T/np.err" >> "$T/chk"; bad "run --no-session" "$T/chk"; fi

	# errors torch raises inside its autograd engine reach the job's
	# Python (not std::terminate), with sessions and with entry+return
	# probes; the job goes on, its steps and phases traced, and anomaly
	# mode's step names the birth (SqrtBackward0)
	for EPY in python3 /usr/bin/python3; do
		if ! $EPY -c 'import torch' 2>/dev/null; then
			skp "torch's errors in backward with $EPY" "no torch for $EPY"
			continue
		fi
		etag=$(basename "$(readlink -f "$(command -v $EPY)")")-$($EPY -c 'import torch;print(torch.__version__)')
		$EPY $IT/engine_error_job.py > "$T/alone.out" 2> /dev/null
		for how in session no-session; do
			out=$T/engine-$how
			flag=; [ $how = no-session ] && flag=--no-session
			$NP run -q $flag -o "$out" -- $EPY $IT/engine_error_job.py > "$T/job.out" 2> "$T/np.err"
			rc=$?
			if [ $rc -eq 0 ] && cmp -s "$T/job.out" "$T/alone.out" &&
			   grep -q "caught 3 errors, finished 6 steps" "$T/job.out" &&
			   $EPY $IT/check_events.py "$out/events.jsonl" --mode run --steps 6 --every-phase \
				> "$T/chk" 2>&1 &&
			   $EPY $IT/check_origin.py "$out/events.jsonl" --origin backward "<none>" grad \
				--op SqrtBackward0 --step 3 >> "$T/chk" 2>&1; then
				ok "run $etag ($how): torch's errors in backward reach the job, which goes on; SqrtBackward0 at step 3"
			else
				{ echo "rc=$rc"; diff "$T/alone.out" "$T/job.out"; tail -5 "$T/np.err"; } >> "$T/chk"
				bad "run $etag ($how): torch's errors in backward" "$T/chk"
			fi
		done
		# a TorchScript function's autograd.grad runs the engine from
		# C++, with no Python backward() around it: no backward pass
		# (its end would never be seen), every module call in forward
		out=$T/script-grad
		if $NP run -q -o "$out" -- $EPY $IT/script_grad_job.py > "$T/job.out" 2> "$T/np.err" &&
		   grep -q "step 3 loss" "$T/job.out" &&
		   $EPY $IT/check_events.py "$out/events.jsonl" --mode run --steps 4 --every-phase \
			--backward-module 0 > "$T/chk" 2>&1; then
			ok "run $etag: TorchScript's autograd.grad is no backward pass; every step's phases right"
		else
			cat "$T/job.out" "$T/np.err" >> "$T/chk"
			bad "run $etag: TorchScript's autograd.grad" "$T/chk"
		fi
	done

	# the statically linked build (for GPU hosts without libbpf) runs with
	# an empty environment
	if [ -x ./nanprof-static ]; then
		out=$T/static
		if env -i PATH=/usr/bin:/bin ./nanprof-static run -q -o "$out" -- \
			$($PY -c "import sys; print(sys.executable)") $IT/workload.py --steps 3 --sleep 0.02 > /dev/null 2> "$T/np.err" &&
		   $PY $IT/check_events.py "$out/events.jsonl" --mode run --steps 3 \
			--module layers.1.norm --backward-module layers.1.fc > "$T/chk" 2>&1; then
			ok "nanprof-static under env -i: same steps, modules, backward"
		else cat "$T/np.err" >> "$T/chk"; bad "nanprof-static" "$T/chk"; fi
	else
		skp "nanprof-static" "not built (make static)"
	fi

	# nanprof killed with SIGKILL while attached: the job carries on
	rm -f "$T/ready"
	$PY $IT/workload.py --steps 100 --sleep 0.02 --ready-file "$T/ready" > "$T/live.out" 2>&1 &
	job=$!
	for _ in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
	$NP attach -q -o "$T/killed" $job 2>/dev/null &
	npid=$!
	sleep 1.5
	kill -9 $npid
	wait $job
	jrc=$?
	if [ $jrc -eq 0 ] && grep -q "finished 100 steps" "$T/live.out"; then
		ok "attach: nanprof SIGKILLed, the job finishes normally"
	else bad "attach: SIGKILL" "$T/live.out"; fi

	# nanprof killed with SIGKILL during run: the job carries on
	$NP run -q -o "$T/killed2" -- $PY $IT/workload.py --steps 60 --sleep 0.02 > "$T/live.out" 2>&1 &
	npid=$!
	sleep 4
	kill -9 $npid
	for _ in $(seq 100); do grep -q finished "$T/live.out" && break; sleep 0.2; done
	if grep -q "finished 60 steps" "$T/live.out"; then
		ok "run: nanprof SIGKILLed, the job finishes normally"
	else bad "run: SIGKILL" "$T/live.out"; fi

	# the target exits while attached: outputs written, exit 0
	$PY $IT/workload.py --steps 30 --sleep 0.02 > /dev/null 2>&1 &
	job=$!
	sleep 1.5
	$NP attach -q -o "$T/gone" $job 2> "$T/np.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "target exited" "$T/np.err" && [ -s "$T/gone/events.jsonl" ]; then
		ok "attach: target exits mid-run, outputs written"
	else echo "rc=$rc" >> "$T/np.err"; bad "attach: target exits" "$T/np.err"; fi
else
	skp "ranks, SIGKILL, target exit" "no python with torch"
fi

# bad input: one clear line, non-zero exit, target unharmed
$NP attach 2147483647 2> "$T/e"; one_line_error "attach: no such pid" "no such process" $? "$T/e"
sleep 30 & sl=$!
$NP attach -o "$T/x" $sl 2> "$T/e"; one_line_error "attach: not a python process" "not a python process" $? "$T/e"
kill -0 $sl 2>/dev/null && ok "attach: non-python target still running" || bad "non-python target killed"
$NP attach -o /proc/nope $$ 2> "$T/e"; rc=$?
# $$ is bash: refused as not python before the directory is looked at
one_line_error "attach: bash refused" "not a python process" $rc "$T/e"
python3 -c 'import time; time.sleep(30)' & pyj=$!
sleep 0.5
$NP attach -o /proc/nope $pyj 2> "$T/e"; one_line_error "attach: unwritable output directory" "cannot write to output directory" $? "$T/e"
$NP run -o /proc/nope -- true 2> "$T/e"; one_line_error "run: unwritable output directory" "cannot write to output directory" $? "$T/e"
if id nobody > /dev/null 2>&1 && command -v setpriv > /dev/null; then
	cp $NP "$T/np-copy"; cp libnanprof_agent.so "$T/"; chmod 755 "$T" "$T/np-copy"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$T/np-copy" attach $pyj 2> "$T/e"
	one_line_error "attach: another user's process when not root" "belongs to uid 0" $? "$T/e"
	sleep 30 & own=$!   # nobody's own process: refused for lack of bpf rights
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$T/np-copy" run -- true 2> "$T/e"
	one_line_error "run: no permission for bpf" "permission denied" $? "$T/e"
	kill $own 2>/dev/null
else
	skp "non-root cases" "no nobody user or setpriv"
fi
kill -0 $pyj 2>/dev/null && ok "attach: refused targets still running" || bad "refused target killed"
kill $sl $pyj 2>/dev/null
$NP attach abc 2> "$T/e"; one_line_error "attach: pid not a number" "invalid pid" $? "$T/e"
$NP run 2> "$T/e"; one_line_error "run: missing command" "missing command" $? "$T/e"

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
