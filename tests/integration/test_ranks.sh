#!/usr/bin/env bash
# Integration tests of the multi-rank verdict: real gloo jobs on CPU with
# the fault on a rank other than 0, whose gradients reach every rank
# through the all-reduce in the same step.  nanprof must name the rank
# where it was born, and say how the others received it, in one session
# (`run` following a launcher) and across sessions (`merge`).
# Needs root; skips visibly without it or without torch.distributed.
set -u
. "$(dirname "$0")/lib.sh" ranks

if [ "$(id -u)" -ne 0 ]; then
	skp "all rank tests" "need root for bpf"
	finish
	exit 0
fi
export OMP_NUM_THREADS=1

for PY in python3 /usr/bin/python3; do
	if ! $PY -c 'import torch.distributed as d; assert d.is_available()' 2>/dev/null; then
		skp "$PY" "no torch.distributed for $PY"
		continue
	fi
	PY=$($PY -c 'import sys; print(sys.executable)')
	tag=$(basename "$PY")-$($PY -c 'import torch;print(torch.__version__)')

	# hand-written data parallel: dist.all_reduce of every .grad
	if $NP run -q -o "$T/manual" -- $PY $IT/dist_launcher.py 2 --dist manual --fault backward \
		--fault-rank 1 --at 4 --steps 8 > "$T/job.out" 2> "$T/np.err" &&
	   grep -q "received it through all_reduce" "$T/manual/summary.txt" &&
	   grep -q "came in through all_reduce at step 4" "$T/np.err" &&
	   $PY $IT/check_verdict.py "$T/manual/events.jsonl" 1 backward blocks.0.root \
		0:all_reduce > "$T/chk" 2>&1; then
		ok "$tag 2 ranks, all_reduce: born on rank 1 in backward, rank 0 received it"
	else
		cat "$T/np.err" >> "$T/chk"; bad "$tag manual all_reduce" "$T/chk"
	fi

	# --on-nan signal:TERM: the launcher and both ranks get it, once, at
	# the first NaN (rank 1's), and none trains on to its end
	$NP run -q --on-nan signal:TERM -o "$T/term" -- $PY $IT/dist_launcher.py 2 --dist manual \
		--fault backward --fault-rank 1 --at 4 --steps 60 --sleep 0.05 \
		> "$T/job.out" 2> "$T/np.err"
	rc=$?
	# the most steps a rank began (its stdout dies unflushed with it)
	last=$($PY -c 'import json, sys, collections
n = collections.Counter(e["pid"] for e in map(json.loads, open(sys.argv[1])) if e["type"] == "step")
print(max(n.values()) if n else 0)' "$T/term/events.jsonl" 2>/dev/null)
	if [ $rc -ne 0 ] && [ "${last:-99}" -ge 5 ] && [ "${last:-99}" -le 20 ] &&
	   grep -q '"type":"on_nan_action","signal":"SIGTERM",.*"processes_signalled":3,' \
		"$T/term/events.jsonl" &&
	   grep -q -- "--on-nan: sent SIGTERM to 3 processes" "$T/np.err"; then
		ok "$tag --on-nan signal:TERM stops the launcher and both ranks ($last steps of 60)"
	else
		echo "exit $rc, last step $last" | cat - "$T/np.err" > "$T/chk"
		grep on_nan "$T/term/events.jsonl" >> "$T/chk" 2>/dev/null
		bad "$tag --on-nan signal:TERM across ranks" "$T/chk"
	fi

	# DDP: its all-reduce runs in C++; the verdict still names rank 2
	if $NP run -q -o "$T/ddp" -- $PY $IT/dist_launcher.py 3 --dist ddp --fault forward \
		--fault-rank 2 --at 4 --steps 8 > "$T/job.out" 2> "$T/np.err" &&
	   $PY $IT/check_verdict.py "$T/ddp/events.jsonl" 2 forward module.blocks.1.gate \
		"0:gradient all-reduce" "1:gradient all-reduce" > "$T/chk" 2>&1 &&
	   # ranks 0 and 1 see a .grad go bad with every gradient of their
	   # own backward finite: only rank 2's paragraph says "born here"
	   [ "$(grep -c "the .grad became non-finite after it" "$T/np.err")" = 2 ] &&
	   [ "$(grep -c "born here" "$T/np.err")" = 1 ]; then
		ok "$tag 3 ranks, DDP: born on rank 2 in forward, ranks 0 and 1 received it"
	else
		cat "$T/np.err" >> "$T/chk"; bad "$tag DDP" "$T/chk"
	fi

	# one nanprof per "machine": merge makes one verdict of the two
	port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	for r in 0 1; do
		RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			$NP run -q -o "$T/node$r" -- $PY $IT/faults.py --dist manual --fault optimizer \
			--fault-rank 1 --at 3 --steps 6 > "$T/node$r.out" 2> "$T/node$r.err" &
	done
	wait
	if $NP merge -o "$T/merged" "$T/node0" "$T/node1" > "$T/merge.out" 2>&1 &&
	   grep -q "merged verdict: born on rank 1" "$T/merge.out" &&
	   $PY $IT/check_verdict.py "$T/merged/events.jsonl" 1 optimizer head \
		0:all_reduce > "$T/chk" 2>&1; then
		ok "$tag merge of two sessions: one verdict, rank 1's optimizer"
	else
		cat "$T/merge.out" "$T/node0.err" "$T/node1.err" >> "$T/chk"
		bad "$tag merge verdict" "$T/chk"
	fi
done

finish
