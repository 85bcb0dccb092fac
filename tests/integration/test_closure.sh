#!/usr/bin/env bash
# optimizer.step(closure): the closure runs the forward and backward
# inside step() (LBFGS; Lightning steps every optimizer this way).  On
# both Pythons, faults.py --closure under `nanprof run`: each step's
# records have a forward, a backward and an optimizer part one after the
# other, module calls are in the forward phase, the largest outputs are
# there, and each step's gradient norm is the one the job computes after
# that step's backward, not the step before's; a forward and an optimizer
# fault are found where they are without a closure.  The same checks on a
# plain step() tell the checker is fair.  And a step called from inside a
# module (a learner whose forward runs the whole step): its updates are
# still the optimizer's, in their own step (torch 1.x's wrapped step()
# reports after the step is counted, and is put back by that phase).
# Two optimizers stepped back to back (Muon + AdamW, sparse + dense) make
# one step an iteration, with one gradient norm over both, and a fault in
# either is at the job's own iteration.  A GAN's two optimizers, each
# after its own backward, step in turn: two steps an iteration, and the
# origin says which iteration (gan_job.py).
# Needs root (BPF); skips visibly when something is missing.
set -u
. "$(dirname "$0")/lib.sh" closure

if [ "$(id -u)" -ne 0 ]; then
	skp "all closure tests" "need root for bpf"
	finish
	exit 0
fi
export OMP_NUM_THREADS=1

# check NAME 'FAULTS_ARGS' CHECKER ARGS...: faults.py under `nanprof run`
# (its events in $T/out, its output in $T/job.out), then the checker
check() {
	local name=$1 args=$2
	shift 2
	if $NP run -q -o "$T/out" -- $PY $IT/faults.py $args > "$T/job.out" 2> "$T/np.err" &&
	   python3 "$@" > "$T/chk" 2>&1; then
		ok "$tag $name"
	else
		cat "$T/np.err" >> "$T/chk"
		bad "$tag $name" "$T/chk"
	fi
	rm -rf "$T/out"
}

for PY in python3 /usr/bin/python3; do
	if ! $PY -c 'import torch' 2>/dev/null; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	tag=$(basename "$PY")-$($PY -c 'import torch;print(torch.__version__)')
	steps="$IT/check_steps.py $T/out/events.jsonl $T/job.out"
	check "step(): phases in order, statistics and gradient norms of their own step" \
		"--print-grad-norm --steps 8" $steps
	check "step(closure): phases in order, statistics and gradient norms of their own step" \
		"--print-grad-norm --steps 8 --closure" $steps
	check "step(closure): forward fault in blocks.1.gate" "--closure --fault forward" \
		$IT/check_origin.py "$T/out/events.jsonl" \
		--origin forward blocks.1.gate output $(gate_op $PY) --step 6
	check "step(closure): optimizer fault in head.weight" "--closure --fault optimizer" \
		$IT/check_origin.py "$T/out/events.jsonl" \
		--origin optimizer head param --param weight --step 6
	check "step() inside a learner module: phases in order (its forward ends at the backward), gradient norms" \
		"--learner --print-grad-norm --steps 8" $steps
	check "step() inside a learner module: optimizer fault in model.head.weight at step 6" \
		"--learner --fault optimizer" $IT/check_origin.py "$T/out/events.jsonl" \
		--origin optimizer model.head param --param weight --step 6
	check "two optimizers back to back: one step an iteration, gradient norm over both" \
		"--print-grad-norm --steps 8 --optimizers two" $steps --optimizer-calls 2
	check "two optimizers: update fault in the second's head.weight at step 6" \
		"--optimizers two --fault optimizer" $IT/check_origin.py "$T/out/events.jsonl" \
		--origin optimizer head param --param weight --step 6
	check "two optimizers: forward fault in blocks.1.gate at step 6" \
		"--optimizers two --fault forward" $IT/check_origin.py "$T/out/events.jsonl" \
		--origin forward blocks.1.gate output $(gate_op $PY) --step 6
	# a GAN: NaN fed to the discriminator at iteration 6 (step 12); the
	# generator's lr=inf at iteration 4 (its update: step 9)
	gan() {
		local name=$1 args=$2
		shift 2
		if $NP run -q -o "$T/out" -- $PY $IT/gan_job.py $args > "$T/job.out" 2> "$T/np.err" &&
		   python3 $IT/check_origin.py "$T/out/events.jsonl" "$@" > "$T/chk" 2>&1; then
			ok "$tag $name"
		else
			cat "$T/np.err" >> "$T/chk"
			bad "$tag $name" "$T/chk"
		fi
	}
	gan "GAN: NaN fed to the discriminator at iteration 6: step 12, iteration 6" \
		"--fault-at 6 --fault d" --origin forward "" input --step 12 --iteration 6
	if grep -q "step 12 (iteration 6, the 1st of two optimizers stepped in turn)" "$T/np.err"
	then ok "$tag GAN: the iteration on stderr"
	else bad "$tag GAN: the iteration on stderr" "$T/np.err"; fi
	gan "GAN: the generator's lr=inf at iteration 4: its update, step 9" \
		"--fault-at 4 --fault g" --origin optimizer 0 param --param weight --step 9 \
		--iteration 4
	rm -rf "$T/out"
done
finish
