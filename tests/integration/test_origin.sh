#!/usr/bin/env bash
# Integration tests of the agent's checks: real training jobs with one
# injected fault each (tests/integration/faults.py), under `nanprof run`
# and `nanprof attach`, on both Pythons of the machine.  Asserts the exact
# step, phase, module and tensor of the origin, explosion warnings before
# it, none on stable training, bit-identical losses with and without
# nanprof, and that attach/detach leaves nothing behind.
# Needs root (BPF, ptrace); skips visibly when something is missing.
set -u
. "$(dirname "$0")/lib.sh" origin

if [ "$(id -u)" -ne 0 ]; then
	skp "all origin tests" "need root for bpf and ptrace"
	finish
	exit 0
fi
export OMP_NUM_THREADS=1

# run one fault under `nanprof run` and check the origin
fault() {
	local name=$1 fault=$2; shift 2
	local out=$T/$tag-$fault
	if $NP run -q -o "$out" -- $PY $IT/faults.py --fault "$fault" $FARGS > "$T/job.out" 2> "$T/np.err" &&
	   $PY $IT/check_origin.py "$out/events.jsonl" "$@" > "$T/chk" 2>&1; then
		ok "$tag $name"
	else
		cat "$T/np.err" >> "$T/chk"; bad "$tag $name" "$T/chk"
	fi
}

for PY in python3 /usr/bin/python3; do
	if ! $PY -c 'import torch' 2>/dev/null; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	PY=$($PY -c 'import sys; print(sys.executable)')   # not a shim: attach needs the pid of python
	tag=$(basename "$PY")-$($PY -c 'import torch;print(torch.__version__)')
	# does the agent look inside modules, at what autograd saved? (lib.sh)
	saved=0; [ "$(gate_op $PY | cut -d" " -f2)" = exp ] && saved=1
	FARGS="--steps 10 --at 6"
	causes=no; [ $saved = 1 ] && causes=yes   # the op search's lines: torch 2
	fault "forward fault: blocks.1.gate, $(gate_op $PY | cut -d" " -f2), exp's overflow said: $causes" \
		forward --origin forward blocks.1.gate output $(gate_op $PY) --step 6 \
		--grad-mode enabled --exp-overflow $causes
	# log(0) inside the gate, before its child proj and the add that makes
	# its output: the log is named where torch shows the saved tensors,
	# and it read x * x * 0, saved by the log itself: finite
	if [ $saved = 1 ]
	then inner="--op log --op-inside yes --op-read-finite yes"
	else inner="--op add --op-inside no"
	fi
	fault "log(0) inside blocks.1.gate: $(echo $inner | cut -d" " -f2), its domain said: $causes" \
		inner --origin forward blocks.1.gate output $inner --step 6 --outside-domain $causes
	# the same under checkpointing by saved-tensor hooks: unpacking the
	# gate's saved tensors would recompute the block (and find the log);
	# the agent leaves them packed, names the add, and the losses are the
	# job's own
	FARGS="--steps 10 --at 6 --checkpoint --checkpoint-mode nonreentrant"
	$PY $IT/faults.py --fault inner $FARGS > "$T/plain-ck.out" 2>&1
	fault "log(0) in blocks.1.gate under non-reentrant checkpointing: add" inner \
		--origin forward blocks.1.gate output --op add --op-inside no --step 6
	if grep -q "step 9 loss nan" "$T/plain-ck.out" && cmp -s "$T/plain-ck.out" "$T/job.out"
	then ok "$tag saved tensors behind checkpoint hooks left packed: losses bit-identical"
	else diff "$T/plain-ck.out" "$T/job.out" > "$T/chk"; bad "$tag losses under checkpointing" "$T/chk"; fi
	FARGS="--steps 10 --at 6"
	# the trace carries the origin and the statistics, and Perfetto can read it
	if $PY $IT/check_trace.py "$T/$tag-forward/trace.json" --require-instant nan_origin \
		--require-counter "gradient norm" --require-counter "non-finite tensors" \
		--require-cat nanprof > "$T/chk" 2>&1; then
		ok "$tag trace.json: nan_origin instant, statistics counters, valid"
	else
		bad "$tag trace.json with findings" "$T/chk"
	fi
	# where in the tensor: one sample of the batch of 8 overflows
	fault "one sample of the batch overflows: only index 5 along dim 0" sample \
		--origin forward blocks.1.gate output --step 6 --only-index 0 5
	if grep -q "spread: 1 of 8 along dim 0 (only index 5)" "$T/np.err" &&
	   grep -q "where in it \[8, 12, 32\]: 1 of 8 along dim 0 (only index 5)" \
		"$T/$tag-sample/summary.txt"
	then ok "$tag stderr and summary.txt say the values lie in sample 5 of 8 only"
	else cat "$T/$tag-sample/summary.txt" >> "$T/np.err"; bad "$tag spread lines" "$T/np.err"; fi
	# the GPU check's reduction and broadcast faults (a sum's kernel and a
	# strided elementwise one on CUDA): on the CPU, the gate's output
	fault "reduction fault: a sum of finite terms overflows in blocks.1.gate" reduction \
		--origin forward blocks.1.gate output --step 6
	fault "broadcast fault: a per-channel scale overflows blocks.1.gate's output" broadcast \
		--origin forward blocks.1.gate output --op mul --op-inside no --step 6
	# sqrt's derivative is infinite at 0: said where the agent can read
	# what the running node saved (torch 2)
	infd=no; [ $saved = 1 ] && infd=yes
	fault "backward-only fault: sqrt(0) in blocks.0.root, its infinite derivative ($infd)" \
		backward --origin backward blocks.0.root grad --op SqrtBackward0 --step 6 \
		--infinite-derivative $infd
	fault "backward-only fault in a Python autograd.Function: named by its class" custom \
		--origin backward blocks.0.root grad --op HandSqrtBackward --step 6 \
		--infinite-derivative no
	# reentrant checkpointing runs blocks.0 again in backward, called by
	# torch's checkpoint code: it is still blocks.0, not the outermost module
	FARGS="--steps 10 --at 6 --checkpoint"
	fault "backward fault in a block recomputed by reentrant checkpointing: blocks.0" \
		block-backward --origin backward blocks.0 grad --op SqrtBackward0 --step 6
	FARGS="--steps 10 --at 6"
	# MHA's output is a transpose of its out-projection: the op named is
	# the projection's addmm, past the transpose and view that cannot
	# overflow; what it read (saved: its input and weight; its bias, a
	# parameter) was finite
	fault "fault through MHA's functional out_proj: blocks.1.attn, op addmm" functional \
		--origin forward blocks.1.attn output --op addmm --op-inside no \
		$([ $saved = 1 ] && echo --op-read-finite yes) --step 6
	fault "optimizer fault: head.weight" optimizer \
		--origin optimizer head param --param weight --step 6
	# a weight written between steps, not by the optimizer: the weight
	# is named (its row 5), not blocks.1.ff.2's output as a birth
	fault "a weight set to inf outside the optimizer: blocks.1.ff.2.weight, row 5" param-edit \
		--origin forward blocks.1.ff.2 param --param weight --only-index 0 5 --step 6
	# the trace's instant and the summary say which parameter, and why
	if $PY -c 'import json, sys
t = json.load(open(sys.argv[1]))
a = [e["args"] for e in t["traceEvents"] if e.get("name") == "nan_origin"]
sys.exit(not (len(a) == 1 and a[0]["param"] == "weight" and a[0]["shape"] == "[32, 64]"
              and "code outside the optimizer wrote it" in a[0]["why"]))' \
		"$T/$tag-param-edit/trace.json" 2> "$T/chk" &&
	   grep -q "in blocks.1.ff.2 (Linear), a parameter of the module, as it ran (weight);" \
		"$T/$tag-param-edit/summary.txt"; then
		ok "$tag trace.json and summary.txt name the parameter written outside the optimizer"
	else
		cat "$T/$tag-param-edit/summary.txt" >> "$T/chk" 2>/dev/null
		bad "$tag the parameter in trace.json and summary.txt" "$T/chk"
	fi
	# the model's own code makes it, between its children, and the model
	# returns a dict subclass (as Hugging Face's ModelOutput is): its
	# output is checked, so the model is named, not the loss after it
	FARGS="--steps 10 --at 6 --output dict"
	fault "the model's own code, its output a dict subclass: the outermost Model" model-code \
		--origin forward "" output --module-type Model --step 6
	# the same returned as a dataclass: its fields are read too
	FARGS="--steps 10 --at 6 --output dataclass"
	fault "the model's own code, its output a dataclass: the outermost Model" model-code \
		--origin forward "" output --module-type Model --step 6
	FARGS="--steps 10 --at 6"
	# -inf only (what a positional attention mask holds, every step):
	# counted, not walked for where
	fault "a -inf input from outside: counted, not located" input-neginf \
		--origin forward "" input --step 6 --received-by blocks.0.attn --numel 3072 --no-shape
	# a corrupt sample from DataLoader workers started with spawn (traced
	# and given the agent too): found as sample 5 of the batch emb got; the
	# workers, which train nothing, fold into one summary line and have no
	# say in a verdict
	if $NP run -q -o "$T/$tag-loader" -- $PY $IT/loader_job.py > "$T/job.out" 2> "$T/np.err" &&
	   $PY $IT/check_origin.py "$T/$tag-loader/events.jsonl" --origin forward "" input \
		--received-by emb --only-index 0 5 --step 20 > "$T/chk" 2>&1 &&
	   grep -Eq "[0-9]+ more python processes without module, backward or optimizer work" \
		"$T/$tag-loader/summary.txt" &&
	   ! grep -q "verdict" "$T/$tag-loader/summary.txt"; then
		ok "$tag a corrupt sample from spawned DataLoader workers: sample 5 of what emb got"
	else
		cat "$T/$tag-loader/summary.txt" "$T/np.err" >> "$T/chk" 2>/dev/null
		bad "$tag a corrupt sample from spawned DataLoader workers" "$T/chk"
	fi
	# an evaluation pass after step 6's update (step 7's work): under
	# no_grad, or inference_mode, which the origin says
	fault "an evaluation pass under no_grad: blocks.1.gate, step 7" eval \
		--origin forward blocks.1.gate output --step 7 --grad-mode no_grad
	fault "an inference pass under inference_mode: blocks.1.gate, step 7" infer \
		--origin forward blocks.1.gate output --step 7 --grad-mode inference_mode
	# an inference-only job (no optimizer step: all is step 0) says which
	# call of the model, batch 7 of 12: the 8th outermost call
	for im in "inference_mode:" "no_grad:--no-grad"; do
		if $NP run -q -o "$T/$tag-infer" -- $PY $IT/infer_job.py ${im#*:} \
			> "$T/job.out" 2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-infer/events.jsonl" --origin forward "" input \
			--received-by 0 --only-index 0 2 --step 0 --grad-mode ${im%%:*} \
			--outermost-call 8 > "$T/chk" 2>&1 &&
		   grep -q "pass under ${im%%:*}, outermost module call 8 of the step" "$T/np.err"; then
			ok "$tag inference only (${im%%:*}): a NaN input in the model's 8th call"
		else
			cat "$T/np.err" >> "$T/chk"
			bad "$tag inference only (${im%%:*})" "$T/chk"
		fi
		rm -rf "$T/$tag-infer"
	done
	# an expanded output (a positional embedding broadcast over the
	# batch, stride 0) is checked by what it stores: pos is named, with
	# its output's own shape and counts
	if $NP run -q -o "$T/$tag-expand" -- $PY $IT/expand_job.py > "$T/job.out" 2> "$T/np.err" &&
	   $PY $IT/check_origin.py "$T/$tag-expand/events.jsonl" --origin forward pos output \
		--step 3 --numel 192 > "$T/chk" 2>&1 &&
	   grep -q "all 4 along dim 0, all 6 along dim 1, all 8 along dim 2" "$T/np.err"; then
		ok "$tag an expanded output (stride 0): pos, [4, 6, 8]"
	else
		cat "$T/np.err" >> "$T/chk"
		bad "$tag an expanded output (stride 0)" "$T/chk"
	fi
	rm -rf "$T/$tag-expand"
	# complex tensors (an FFT's spectrum) are checked as their real view:
	# a NaN made in the spectrum is spec's, not mag's after it (which
	# read it); a NaN gradient born in |sqrt(X)|'s backward at a silent
	# sample is mag's, not spec's (whose real gradient passes it on)
	for sf in "spectrum:forward spec output --numel 144 --only-index 1 4" \
		  "silent:backward mag grad --op SqrtBackward0 --numel 144 --only-index 0 2"; do
		if $NP run -q -o "$T/$tag-spectral" -- $PY $IT/spectral_job.py --fault ${sf%%:*} \
			> "$T/job.out" 2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-spectral/events.jsonl" --origin ${sf#*:} \
			--dtype complex64 --step 4 > "$T/chk" 2>&1; then
			ok "$tag a complex tensor's NaN (${sf%%:*}): ${sf#*:}"
		else
			cat "$T/np.err" >> "$T/chk"
			bad "$tag a complex tensor's NaN (${sf%%:*})" "$T/chk"
		fi
		rm -rf "$T/$tag-spectral"
	done
	# rotary embeddings as complex numbers (LLaMA's reference code,
	# torchtitan; the GPU check's rope_fault.py, run here on the CPU): q
	# times a freqs_cis of 3e38 + 3e38i overflows in the complex multiply;
	# view_as_real after it only moves values, so the op search passes it
	# and names mul (torch 2); without the search, attn's output op, mm
	# and a Fourier layer (FNO's): its complex weights of 3e38 overflow
	# in the einsum's batched complex matmul (torch 2: bmm; without the
	# op search, the layer's output op, irfft's fft_c2_r)
	for rf in "rope:attn:mul:mm" "spectral:spectral:bmm:fft_c2_r"; do
		IFS=: read -r job mod op2 op1 <<< "$rf"
		want=$op1; [ $saved = 1 ] && want=$op2
		if $NP run -q -o "$T/$tag-$job" -- $PY "$IT/../gpu/${job}_fault.py" --device cpu \
			--steps 8 --at 6 > "$T/job.out" 2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-$job/events.jsonl" --origin forward $mod output \
			--step 6 --op $want > "$T/chk" 2>&1; then
			ok "$tag complex numbers overflowing ($job): $want in $mod"
		else
			cat "$T/np.err" >> "$T/chk"
			bad "$tag complex numbers overflowing ($job)" "$T/chk"
		fi
		rm -rf "$T/$tag-$job"
	done
	# a corrupt sample that tanh hides from the model's output, whose
	# backward is NaN (enc's weight gradient, Inf * 0): the input enc
	# received, in the forward pass; a -Inf too, as enc's own backward
	for hv in "inf:--only-index 0 1" "-inf:--no-shape"; do
		if $NP run -q -o "$T/$tag-held" -- $PY $IT/held_job.py --value=${hv%%:*} \
			> "$T/job.out" 2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-held/events.jsonl" --origin forward enc input \
			--step 4 --held ${hv#*:} > "$T/chk" 2>&1; then
			ok "$tag a ${hv%%:*} input tanh kept inside the model: enc's input, not its backward"
		else
			cat "$T/np.err" >> "$T/chk"
			bad "$tag a ${hv%%:*} input tanh kept inside the model" "$T/chk"
		fi
		rm -rf "$T/$tag-held"
	done
	# an LSTM's gates saturate: no module output is ever non-finite, and
	# only its backward node, which saved the input, shows the +Inf
	# (torch._C._current_autograd_node: torch 2)
	if ! $PY -c 'import sys, torch; sys.exit(not hasattr(torch._C, "_current_autograd_node"))'; then
		skp "$tag a +inf input an LSTM keeps inside" "torch $($PY -c 'import torch;print(torch.__version__)') cannot tell the running autograd node: its backward is named"
	elif $NP run -q -o "$T/$tag-held" -- $PY $IT/held_job.py --model lstm > "$T/job.out" 2> "$T/np.err" &&
	     $PY $IT/check_origin.py "$T/$tag-held/events.jsonl" --origin forward rnn input \
		--step 4 --held --only-index 1 1 > "$T/chk" 2>&1; then
		ok "$tag a +inf input an LSTM keeps inside: rnn's input, from what its backward saved"
	else
		cat "$T/np.err" >> "$T/chk"
		bad "$tag a +inf input an LSTM keeps inside" "$T/chk"
	fi
	rm -rf "$T/$tag-held"
	# described as the first module to receive it saw it: noise + the
	# embedding, [8, 12, 32], NaN in sample 2 only (not the model's output)
	fault "non-finite input comes from outside the model: sample 2 of the input blocks.0.attn got" \
		input --origin forward "" input --step 6 --received-by blocks.0.attn --numel 3072 \
		--only-index 0 2
	# the same input as a keyword argument: torch 2's global forward hook
	# gets the kwargs too; torch 1.13's cannot (no with_kwargs)
	if $PY -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)'; then
		FARGS="--steps 10 --at 6 --noise-kw"
		fault "non-finite input passed as a keyword argument: still from outside" input \
			--origin forward "" input --step 6 --received-by blocks.0.attn --only-index 0 2
		FARGS="--steps 10 --at 6"
	else
		skp "$tag non-finite input as a keyword argument" \
			"torch 1.13's global forward hooks get no keyword arguments"
	fi
	fault "loss computed outside modules" loss --outside --step 6
	fault "loss finite, its backward not: SqrtBackward0 of no module" loss-grad \
		--origin backward "<none>" grad --op SqrtBackward0 --step 6 --infinite-derivative $infd
	if [ $infd = no ] || grep -q "derivative: sqrt's derivative is infinite at 0" "$T/np.err"
	then ok "$tag the loss's sqrt(0): its derivative line"
	else bad "$tag the loss's sqrt(0): its derivative line" "$T/np.err"; fi
	if grep -q "where:  outside any module: the backward of an op the training loop ran" "$T/np.err"
	then ok "$tag a backward node of no module is said to be outside any module"
	else bad "$tag backward node of no module on stderr" "$T/np.err"; fi
	# a loss is made by its last op (add, mean); where torch shows the
	# saved tensors, the op before it that made the value is named, its
	# output computed again from the inputs it kept: nll_loss's mean over
	# no targets, the log of a softmax's exact 0 (in sample 5 only)
	if [ $saved = 1 ]; then
		fault "cross-entropy over targets all ignored: 0/0 in nll_loss, outside modules" \
			ignored --outside --op nll_loss --op-inside yes --op-read-finite yes --step 6 \
			--divided-by-zero yes
		if grep -q "divisor: nll_loss's mean divides by the total weight of its targets" \
			"$T/np.err"
		then ok "$tag nll_loss over no target: its divisor line"
		else bad "$tag nll_loss's divisor line" "$T/np.err"; fi
		fault "hand-written cross-entropy: log(0) of sample 5, outside modules" loss-xent \
			--outside --op log --op-inside yes --op-read-finite yes --only-index 0 5 --step 6
		if grep -q "tensor: the op's output, float32 \[8, 2\]" "$T/np.err"
		then ok "$tag the log's own output is described, not the scalar loss"
		else bad "$tag the op's output on stderr" "$T/np.err"; fi
		# a NaN the loss read from a tensor autograd does not track
		fault "a loss weight made without gradient is NaN: what mul read" loss-untracked \
			--outside --op mul --op-inside yes --op-read-finite no --numel 8 --step 6
		if grep -q "tensor: what the op read, which autograd does not track" "$T/np.err" &&
		   grep -q '"tensor":"input".*"op_read_untracked":true' "$T/$tag-loss-untracked/events.jsonl"
		then ok "$tag the untracked tensor is described as what the op read"
		else bad "$tag an untracked input on stderr and in events" "$T/np.err"; fi
	else
		fault "cross-entropy over targets all ignored: 0/0 outside modules" ignored \
			--outside --op add --op-inside no --step 6
		fault "hand-written cross-entropy outside modules: the loss's last op" loss-xent \
			--outside --op sub --op-inside no --step 6
		fault "a loss weight made without gradient is NaN: the loss's last op" \
			loss-untracked --outside --op mean --op-inside no --step 6
		if grep -q "no module's output was non-finite: the training loop's own code made it" \
			"$T/np.err"
		then ok "$tag a loss's NaN of unknown cause is not said to be born from finite values"
		else bad "$tag the outside loss's why" "$T/np.err"; fi
	fi
	FARGS="--steps 40 --at 8"
	fault "exploding gradients warn before the first Inf" explode --warning-before-origin
	FARGS="--steps 40"
	fault "stable training: no origin, no warning (with a -inf attention mask)" none \
		--no-origin --no-warnings

	# RL action masking: the policy's log-probabilities hold -inf every
	# step (a mask, no fault); at step 6 sample 3 has no valid action
	# left and its row goes NaN: that step, that sample, not step 0
	masked() {
		local name=$1 jargs=$2; shift 2
		if $NP run -q -o "$T/$tag-mask" -- $PY $IT/mask_job.py $jargs > "$T/job.out" \
			2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-mask/events.jsonl" "$@" > "$T/chk" 2>&1
		then ok "$tag $name"
		else cat "$T/np.err" >> "$T/chk"; bad "$tag $name" "$T/chk"; fi
	}
	masked "action masks every step, no fault: no origin, 10 masks" "--dead-row-at -1" \
		--no-origin --masked-outputs 10
	rows=no; [ $saved = 1 ] && rows=yes   # the NaN row said, where the result is read
	masked "a fully masked row at step 6: the policy's NaN, sample 3, its whole row" \
		"--dead-row-at 6" --origin forward "" output --module-type Policy --op log_softmax \
		--step 6 --only-index 0 3 --masked-outputs 6 --rows-all-masked $rows
	if grep -q "all 5 along dim 1 (of its NaN; its -inf, as a mask holds, left out)" "$T/np.err"
	then ok "$tag the spread is the NaN's, the mask's -inf left out"
	else bad "$tag spread of the NaN among a mask" "$T/np.err"; fi
	masked "label smoothing over the masked actions: the mask, step 0" "--loss smoothed" \
		--origin forward "" output --module-type Policy --step 0 --masked-outputs 0 \
		--rows-all-masked no
	if grep -q '"mask_made_nonfinite":true' "$T/$tag-mask/events.jsonl" &&
	   grep -q "as a mask holds, but what came next in the step made a NaN or an Inf" "$T/np.err"
	then ok "$tag the mask is said to be one, made non-finite by what came next"
	else bad "$tag a mask made non-finite" "$T/np.err"; fi
	# actor-critic: the critic's call comes between the mask and the loss
	masked "actor-critic, label smoothing: still the mask" "--loss smoothed --critic" \
		--origin forward "" output --module-type Policy --step 0 --masked-outputs 0
	masked "actor-critic, a fully masked row at step 6: the policy's NaN" \
		"--dead-row-at 6 --critic" --origin forward "" output --module-type Policy \
		--op log_softmax --step 6 --only-index 0 3 --masked-outputs 6
	# births elsewhere in a masked step are not the mask's
	masked "a NaN state the critic received at step 4: its input, not the mask" \
		"--critic --nan-state-at 4" --origin forward "" input --module-type Linear \
		--step 4 --only-index 0 5 --masked-outputs 5
	masked "lr=inf at step 4: the update, not the mask, said of the learning rate" \
		"--lr-inf-at 4" --origin optimizer net.0 param --param weight --step 4 \
		--masked-outputs 5 --update-cause learning_rate --optimizer Adam
	masked "lr=inf at step 4, the mask passed through a module: still the update" \
		"--lr-inf-at 4 --pass-on" --origin optimizer net.0 param --param weight --step 4 \
		--masked-outputs 5
	if [ $saved = 1 ]; then
		masked "masked in the loop: log_softmax outside modules, sample 3, its whole row" \
			"--dead-row-at 6 --mask-in loop" --outside --op log_softmax --step 6 \
			--only-index 0 3 --rows-all-masked yes
	fi

	# float16 attention scores that overflow in sample 2 at step 5: the
	# bmm, computed again from q and k, not the softmax that made NaN
	# of them; and what float16 holds
	$NP run -q -o "$T/$tag-half" -- $PY $IT/half_job.py > "$T/job.out" 2> "$T/np.err"
	rc=$?
	if [ $rc = 3 ]; then
		skp "$tag float16 attention overflow" "$(head -n1 "$T/job.out")"
	elif [ $rc = 0 ] && $PY $IT/check_origin.py "$T/$tag-half/events.jsonl" \
		--origin forward attn output --dtype float16 --step 5 --only-index 0 2 \
		$([ $saved = 1 ] && echo --op bmm --op-inside yes --op-read-finite yes) \
		> "$T/chk" 2>&1 &&
	   grep -q "range:  float16 holds finite values up to 65504 only" "$T/np.err" &&
	   grep -q '"range_note":"float16 holds finite values up to 65504' "$T/$tag-half/report.html"
	then ok "$tag float16 attention scores overflow: attn, bmm, sample 2, float16's range"
	else cat "$T/np.err" >> "$T/chk"; bad "$tag float16 attention overflow" "$T/chk"; fi

	# a mean over a padding mask with nothing in it: 0 / 0 at step 4.
	# The division kept its divisor, which holds 0: said where torch lets
	# the agent read saved tensors (with the op search)
	zero=no; [ $saved = 1 ] && zero=yes
	# pooled NAME MODE WORDS CHECK_ORIGIN_ARGS...: WORDS on stderr too
	pooled() {
		local name=$1 mode=$2 words=$3; shift 3
		if $NP run -q -o "$T/$tag-pool" -- $PY $IT/pool_job.py --mean-in $mode \
			> "$T/job.out" 2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-pool/events.jsonl" --step 4 \
			--divided-by-zero $zero "$@" > "$T/chk" 2>&1 &&
		   { [ $zero = no ] || grep -q "$words" "$T/np.err"; }
		then ok "$tag $name"
		else cat "$T/np.err" >> "$T/chk"; bad "$tag $name" "$T/chk"; fi
	}
	made="divisor: a division by a tensor that held 0 made it"
	pooled "mean pooling over an all-padding sample: MeanPool's div, sample 2" model "$made" \
		--origin forward pool output --op div --only-index 0 2
	# the where trap: torch.where(n > 0, s / n, 0) is finite; the
	# division's gradient at n = 0 is NaN in backward, for sample 2
	pooled "the where trap: DivBackward0 in MeanPool's backward, sample 2, divisor 0" where \
		"even where a torch.where or masked_fill dropped the division's value" \
		--origin backward pool grad --op DivBackward0 --only-index 0 2
	# (loss * mask).sum() / mask.sum() + aux: the div's output is kept
	# nowhere; the loss's add is named, and the division said
	pooled "a loss averaged over no valid token, in the loop: the add, a division by 0" loop \
		"$made" --outside --op add --op-inside no
	# the pooled vectors standardised over a batch of one sample: the
	# std of one value divides by n - 1 = 0 (without the op search, the
	# module's own div is named)
	std_op=div; [ $saved = 1 ] && std_op=std
	pooled "the std over a batch of one sample: BatchWhiten's $std_op, n - 1 = 0" whiten \
		"divisor: a std or var over no more values than its correction" \
		--origin forward whiten output --op $std_op

	# CTC: a target longer than its input at step 3 gives +inf in the
	# CTCLoss module (its ctc_loss with the op search, its mean without),
	# and the ctc line says what that takes
	ctc_op=mean; [ $saved = 1 ] && ctc_op=ctc_loss
	if $NP run -q -o "$T/$tag-ctc" -- $PY $IT/ctc_job.py > "$T/job.out" 2> "$T/np.err" &&
	   $PY $IT/check_origin.py "$T/$tag-ctc/events.jsonl" --origin forward ctc output \
		--step 3 --op $ctc_op --ctc-no-alignment yes --divided-by-zero no > "$T/chk" 2>&1 &&
	   grep -q "ctc:    CTC's loss is +inf for a sample whose target no alignment fits" \
		"$T/np.err"
	then ok "$tag CTC's loss +inf for a target longer than its input: ctc, $ctc_op, said why"
	else cat "$T/np.err" >> "$T/chk"; bad "$tag CTC's impossible alignment" "$T/chk"; fi

	# ops that read finite values outside their domain, in sample 2 of
	# step 3: a hand-written variance that rounds below 0 under a sqrt, a
	# cosine that rounds past 1 under an acos, a log of 0, a negative
	# base ** 0.5.  The op search names the op and the domain line says
	# what that takes (torch 2); without it, the module's output op
	for o in "sqrt:div:a square root of a negative value is NaN (what it read was kept nowhere" \
		 "acos:mul:acos and asin of a value past +-1 are NaN: a cosine similarity" \
		 "log:log:a log of exactly 0 is -inf" \
		 "pow:pow:a negative base to a fractional power is NaN"; do
		IFS=: read -r dop out_op words <<< "$o"
		want=$out_op; dom=no; [ $saved = 1 ] && { want=$dop; dom=yes; }
		if $NP run -q -o "$T/$tag-domain" -- $PY $IT/domain_job.py --op $dop \
			> "$T/job.out" 2> "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/$tag-domain/events.jsonl" --origin forward feat \
			output --step 3 --only-index 0 2 --op $want --outside-domain $dom \
			> "$T/chk" 2>&1 &&
		   { [ $dom = no ] || grep -q "domain: $words" "$T/np.err"; }
		then ok "$tag $dop out of its domain in sample 2: $want, domain line $dom"
		else cat "$T/np.err" >> "$T/chk"; bad "$tag $dop out of its domain" "$T/chk"; fi
	done

	# an update that divided by a second moment of 0 with eps = 0 (rows
	# of an embedding never looked up), and by float16's rounding of
	# eps = 1e-8 to 0; a learning-rate schedule run past its end (nan);
	# an update that overflowed, which nanprof has no cause for
	# optim NAME JOB_ARGS WORDS CHECK_ORIGIN_ARGS...: WORDS on stderr too
	optim() {
		local name=$1 args=$2 words=$3; shift 3
		$NP run -q -o "$T/$tag-optim" -- $PY $IT/optim_job.py $args \
			> "$T/job.out" 2> "$T/np.err"
		local rc=$?
		if [ $rc = 3 ]; then
			skp "$tag $name" "$(head -n1 "$T/job.out")"
		elif [ $rc = 0 ] && $PY $IT/check_origin.py "$T/$tag-optim/events.jsonl" \
			--origin optimizer 0 param --param weight "$@" > "$T/chk" 2>&1 &&
		   grep -q "$words" "$T/np.err"
		then ok "$tag $name"
		else cat "$T/np.err" >> "$T/chk"; bad "$tag $name" "$T/chk"; fi
	}
	for o in adam:exp_avg_sq:Adam radam:exp_avg_sq:RAdam rmsprop:square_avg:RMSprop \
		 adagrad:sum:Adagrad adadelta:square_avg:Adadelta adamax:exp_inf:Adamax; do
		IFS=: read -r opt state cls <<< "$o"
		optim "$cls with eps=0 over embedding rows never looked up: 0 / 0, $state" \
			"--fault eps0 --optim $opt --steps 8" \
			"update: $cls divides each update by .*and eps = 0: 20 of the 20 non-finite" \
			--step $([ $opt = radam ] && echo 5 || echo 0) \
			--update-cause zero_denominator --optimizer $cls \
			--optimizer-state $state
	done
	optim "Adam in float16: eps=1e-8 is 0 in float16" "--fault half" \
		"and eps = 1e-08 is 0 in float16: 20 of the 20 non-finite values" \
		--step 0 --dtype float16 --update-cause zero_denominator --optimizer Adam
	optim "a learning-rate schedule run past its end: SGD's lr is nan at step 4" \
		"--fault lr" "update: SGD's learning rate is nan" \
		--step 4 --update-cause learning_rate --optimizer SGD
	optim "an update that overflowed: no cause said" "--fault overflow" \
		"tensor: a parameter after the update" --step 0 --update-cause none

	# --on-nan signal:INT: the job stops at its first NaN, as on Ctrl-C,
	# and everything is still written
	out=$T/$tag-onnan
	$NP run -q --on-nan signal:INT -o "$out" -- $PY $IT/faults.py --fault forward --steps 60 \
		--at 6 --sleep 0.05 > "$T/job.out" 2> "$T/np.err"
	rc=$?
	last=$(awk '/^step /{n=$2} END{print n+0}' "$T/job.out")
	if [ $rc -eq 130 ] && [ "$last" -ge 5 ] && [ "$last" -le 20 ] &&
	   grep -q -- "--on-nan: sent SIGINT to 1 process (pid" "$T/np.err" &&
	   grep -q '"type":"on_nan_action","signal":"SIGINT"' "$out/events.jsonl" &&
	   grep -q -- "--on-nan: sent SIGINT to 1 process at the first non-finite" "$out/summary.txt" &&
	   $PY $IT/check_trace.py "$out/trace.json" --require-instant on_nan_signal \
		--require-instant nan_origin > /dev/null 2>&1 &&
	   $PY $IT/check_origin.py "$out/events.jsonl" --origin forward blocks.1.gate output \
		--step 6 > "$T/chk" 2>&1; then
		ok "$tag --on-nan signal:INT stops the job after step $last of 60 (exit 130), outputs written"
	else
		echo "exit $rc, last step $last" >> "$T/chk"; cat "$T/np.err" >> "$T/chk"
		bad "$tag --on-nan signal:INT" "$T/chk"
	fi
	# Ctrl-C landing while the agent's hook runs Python code (torch
	# registers a node hook through it) is the job's, not swallowed
	$NP run -q -o "$T/ij" -- $PY $IT/interrupt_job.py > "$T/job.out" 2> "$T/np.err"
	rc=$?
	if [ $rc -eq 3 ] && grep -q "^interrupted at step 3$" "$T/job.out"; then
		ok "$tag a KeyboardInterrupt raised inside an agent hook reaches the job"
	else
		echo "exit $rc" | cat - "$T/job.out" "$T/np.err" > "$T/chk"
		bad "$tag KeyboardInterrupt inside an agent hook" "$T/chk"
	fi

	# the job's numbers are nanprof's business only to read: bit for bit
	$PY $IT/faults.py --steps 12 > "$T/plain.out" 2>&1
	if $NP run -q -o "$T/bit" -- $PY $IT/faults.py --steps 12 > "$T/np.out" 2> "$T/np.err" &&
	   grep -q "step 11 loss" "$T/plain.out" && cmp -s "$T/plain.out" "$T/np.out" &&
	   $PY $IT/check_origin.py "$T/bit/events.jsonl" --no-origin > "$T/chk" 2>&1; then
		ok "$tag losses bit-identical with and without nanprof"
	else
		diff "$T/plain.out" "$T/np.out" >> "$T/chk"; cat "$T/np.err" >> "$T/chk"
		bad "$tag bit-identical losses" "$T/chk"
	fi

	# attach to a live job before its fault: the agent is injected, finds
	# the origin, and takes every hook out when nanprof detaches
	rm -f "$T/ready"
	$PY $IT/faults.py --fault forward --at 30 --steps 70 --sleep 0.04 --ready-file "$T/ready" \
		--report-hooks > "$T/live.out" 2>&1 &
	job=$!
	for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
	$NP attach -q -o "$T/att" --duration 2.5 $job 2> "$T/np.err"
	rc=$?
	wait $job
	jrc=$?
	if [ $rc -eq 0 ] && [ $jrc -eq 0 ] && grep -q "step 69 loss" "$T/live.out" &&
	   grep -q "nanprof hooks left: 0" "$T/live.out" &&
	   grep -q "first non-finite value" "$T/np.err" &&
	   $PY $IT/check_origin.py "$T/att/events.jsonl" --origin forward blocks.1.gate output \
		$(gate_op $PY) > "$T/chk" 2>&1; then
		ok "$tag attach: a fault after attaching is found; detach leaves no hook"
	else
		echo "nanprof rc=$rc job rc=$jrc" >> "$T/chk"; cat "$T/np.err" >> "$T/chk"
		tail -3 "$T/live.out" >> "$T/chk"; bad "$tag attach" "$T/chk"
	fi

	# attach --on-nan: a job this script started with '&' ignores SIGINT,
	# so signal:INT would do nothing (nanprof says so); signal:TERM ends it
	for sig in INT TERM; do
		rm -f "$T/ready"
		$PY $IT/faults.py --fault forward --at 20 --steps 70 --sleep 0.04 \
			--ready-file "$T/ready" > "$T/live.out" 2>&1 &
		job=$!
		for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
		$NP attach -q --on-nan signal:$sig -o "$T/att-$sig" --duration 8 $job 2> "$T/np-$sig.err"
		rc=$?
		wait $job
		jrc=$?
		steps=$(grep -c "^step " "$T/live.out")
		if [ "$sig" = INT ] && [ $rc -eq 0 ] && [ $jrc -eq 0 ] && [ "$steps" -eq 70 ] &&
		   grep -q "1 process ignores SIGINT, so it does nothing there" "$T/np-INT.err" &&
		   grep -q '"processes_ignoring":1,' "$T/att-INT/events.jsonl"; then
			ok "$tag attach --on-nan signal:INT to a job that ignores SIGINT: said so"
		elif [ "$sig" = TERM ] && [ $rc -eq 0 ] && [ $jrc -eq 143 ] && [ "$steps" -lt 40 ] &&
		     grep -q "sent SIGTERM to 1 process" "$T/np-TERM.err" &&
		     $PY $IT/check_origin.py "$T/att-TERM/events.jsonl" --origin forward blocks.1.gate \
			output > "$T/chk" 2>&1; then
			ok "$tag attach --on-nan signal:TERM ends the job after $steps of 70 steps"
		else
			echo "signal $sig: nanprof rc=$rc job rc=$jrc steps=$steps" >> "$T/chk"
			cat "$T/np-$sig.err" >> "$T/chk"; bad "$tag attach --on-nan signal:$sig" "$T/chk"
		fi
	done

	# attach while the job is inside the model's forward (asleep in
	# blocks.0): blocks.1 is then first seen as an outermost call, and the
	# names of its children in that partial step must not stick: the
	# fault at step 30 is blocks.1.gate, not "gate"
	rm -f "$T/ready"
	$PY $IT/faults.py --fault forward --at 30 --steps 70 --sleep 0.04 --sleep-at module \
		--ready-file "$T/ready" > "$T/mid.out" 2>&1 &
	job=$!
	for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
	$NP attach -q -o "$T/mid" --duration 3 $job 2> "$T/np.err"
	rc=$?
	wait $job
	if [ $rc -eq 0 ] && $PY $IT/check_origin.py "$T/mid/events.jsonl" --origin forward \
		blocks.1.gate output $(gate_op $PY) > "$T/chk" 2>&1; then
		ok "$tag attach mid-forward: the names of the first, partial step do not stick"
	else
		cat "$T/np.err" >> "$T/chk"; bad "$tag attach mid-forward" "$T/chk"
	fi

	# attach after the job already broke (every parameter is NaN by then):
	# the first thing nanprof sees (the parameters of the first module it
	# sees, or a .grad if it attached mid-step) is reported as born before
	# the attach, not as an origin there
	# between steps, the first thing seen is a parameter; between forward
	# and backward (the job sleeps there), the loss given to backward();
	# inside optimizer.step() (torch 2: its global pre-hook already
	# passed), the parameters after an update whose start it did not see;
	# mid-forward, before a module with no parameters (the last block's
	# root), what it received from the modules that ran before the hooks
	for at in end backward step root; do
		what="the bad parameter"
		[ $at = backward ] && what="the loss, its forward unseen,"
		[ $at = step ] && what="what the optimizer hooks see first"
		[ $at = root ] && what="root's input, made before the hooks,"
		rm -f "$T/ready"
		$PY $IT/faults.py --fault optimizer --at 1 --steps 60 --sleep 0.03 --sleep-at $at \
			--ready-file "$T/ready" > "$T/late.out" 2>&1 &
		job=$!
		for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
		$NP attach -q -o "$T/late" --duration 1 $job 2> "$T/np.err"
		rc=$?
		wait $job
		if [ $rc -eq 0 ] && grep -q "before nanprof attached" "$T/np.err" &&
		   $PY $IT/check_origin.py "$T/late/events.jsonl" --before-attach > "$T/chk" 2>&1 &&
		   grep -q '"before_attach":true' "$T/late/events.jsonl"; then
			ok "$tag attach after the fault (sleeping at $at): $what is reported as born before"
		else
			cat "$T/np.err" >> "$T/chk"
			bad "$tag attach after the fault (sleeping at $at)" "$T/chk"
		fi
	done

	# attach and detach again and again: same losses as a job left alone
	# (the job waits at its end until the last detach is over, then says
	# what of nanprof is left in torch)
	$PY $IT/faults.py --steps 300 --sleep 0.02 > "$T/alone.out" 2>&1
	rm -f "$T/ready" "$T/end"
	$PY $IT/faults.py --steps 300 --sleep 0.02 --ready-file "$T/ready" --report-hooks \
		--end-file "$T/end" > "$T/again.out" 2>&1 &
	job=$!
	for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
	n=0 good=0
	while kill -0 $job 2>/dev/null && [ $n -lt 5 ]; do
		$NP attach -q -o "$T/again" --duration 0.4 $job 2> "$T/np1.err"
		rc=$?
		cat "$T/np1.err" >> "$T/np.err"
		# an attach the job's end cut short proves nothing either way
		grep -q "duration reached" "$T/np1.err" || break
		n=$((n + 1))
		[ $rc -eq 0 ] && $PY $IT/check_origin.py "$T/again/events.jsonl" --no-origin \
			>> "$T/chk" 2>&1 && good=$((good + 1))
	done
	touch "$T/end"
	wait $job
	jrc=$?
	if [ $jrc -eq 0 ] && [ $n -ge 3 ] && [ $good -eq $n ] &&
	   grep -q "nanprof hooks left: 0" "$T/again.out" &&
	   cmp -s "$T/alone.out" <(grep -v "nanprof hooks left" "$T/again.out"); then
		ok "$tag attach/detach $n times: checks on each time, losses bit-identical, no hook left"
	else
		echo "job rc=$jrc attaches=$n good=$good" >> "$T/chk"; cat "$T/np.err" >> "$T/chk"
		diff "$T/alone.out" "$T/again.out" | head -5 >> "$T/chk"; tail -2 "$T/again.out" >> "$T/chk"; echo "n=$n good=$good jrc=$jrc" >> "$T/chk"
		bad "$tag repeated attach/detach" "$T/chk"
	fi
done

finish
