#!/usr/bin/env bash
# test_gpu_fake_nanprof.sh - the whole GPU path under `nanprof run`, on
# the fake CUDA driver and CUPTI (tests/fakecuda/): a PyTorch job whose
# modules launch real torch kernels through ctypes (fake_gpu_job.py).
# BPF sees the module calls, the agent checks every kernel's output and
# reports through its BPF probe, and nanprof must place the overflowing
# exp in blocks.0.gate at step 3, forward, as a CUDA origin, with grad
# enabled (and the same overflow in an evaluation pass under no_grad or
# inference_mode, which the origin says, read from torch's c10 at the
# launch; an overflowing sum there, in torch's reduce_kernel; an overflowing
# complex64 multiply (RoPE), checked as its real view; and when the gate's
# output is cloned by a device-to-device copy, or concatenated by
# torch.cat's kernel, in one launch or in two, or along dim 1 with 19
# other inputs, more than a check keeps, that head reads; the clone
# sampled, which no check reads: the origin tracker follows it); the same
# kernel launched by the backward of a node blocks.0.gate made, in the
# backward phase; and, with no overflow, name nothing, although
# blocks.0.attn's -inf mask spreads into another kernel's output every
# step (it never leaves the module).  Then with CUPTI held by another tool
# (FAKE_CUPTI_TAKEN=1): the agent checks the CUDA tensors its hooks see,
# at module level, and must name blocks.0.gate at step 3 from the gate's
# output alone (the mask never leaves attn; blocks.0 returns the same
# buffer and is no second birth); a CUDA gradient a node of the gate
# makes +inf, in the backward (confirmed by its .grad in the optimizer);
# a CUDA parameter the optimizer step makes +inf, at step 3 in the
# optimizer; with no overflow, nothing.  A model split over two devices
# (--devices 2, FAKE_CUDA_DEVICES=2): the gate's exp on cuda:1 named with
# its device, checked there at launch and, CUPTI taken, at module level,
# while device 0 is current (the fake refuses a check in another
# context, and faults on one reading another device's memory).  Last, the
# gate's exp in a kernel no decoder reads (cuBLAS-like): launch checks
# alone (NANPROF_GPU_GUARD=0 NANPROF_GPU_GENERIC=0) cannot name the gate;
# the generic tier names that kernel, its output checked when head's
# decoded add reads it; the default guards
# (a module-level check of a CUDA output whose last writer went
# unchecked) do, naming the undecoded kernel, and so does
# `nanprof run --gpu every+modules`; with decoded kernels only, the
# guards check nothing twice.  And a .grad that says it is CUDA and
# grows 4x a step: its norm comes back a step late, and the explosion
# warnings are those of the same .grad on the CPU; and so are the
# activation warnings of a CUDA output that grows 4x a step, whose
# largest |x| comes late from its checks' records.  And `nanprof attach
# --gpu sample:3` on a job started without nanprof samples its launches;
# attached again with --gpu every, it checks them all; attached a third
# time by a nanprof that is SIGKILLed, the job runs on to its end.
# And attention (--sdpa): an undecoded projection's overflow in q, k, v
# named in attn.qkv, seen where torch's memory-efficient SDPA kernel
# reads them, also under sample:2 when the projection's launch was
# sampled out (an opaque kernel, or one whose named output no decoder
# sizes); that kernel's own NaN (+inf scores) named in attn.core.
# And clip_grad_norm_ after backward (--clip): gradients whose squares
# overflow in _foreach_norm's LpNormFunctor, a launch no decoder reads,
# named there, seen where lpnorm_cleanup reads its partial sums; and
# gradients +inf from an undecoded kernel in the gate's backward, first
# read by LpNormFunctor, named at that kernel (--clip gemm).  And an
# MLP of cuBLAS calls (--mlp, a fake cuBLAS): fc1's overflow named at
# its call's last kernel in attn.fc1 through each API (the generic tier
# alone, NANPROF_GPU_BLAS=0, names fc2), an undecoded kernel's +inf in
# fc1's input named at that kernel; the attached job calls cuBLAS too.
# And a Fourier layer (--mlp spectral, spectral-legacy, -many: a complex
# product, then irfft through a fake cuFFT, then a multiply): the
# product's overflow named in attn, irfft's output checked at its call;
# of a plan made unseen (spectral-unseen), through the generic tier.
# And a convolution then a GroupNorm (--gn): the convolution's overflow,
# first read by group norm's statistics kernel, named in attn.conv.  And
# a convolution then a BatchNorm through a fake cuDNN (--bn-cudnn): the
# convolution's overflow named in attn.conv.  And two convolutions
# through the fake cuDNN (--conv graph: its backend API; --conv legacy:
# cudnnConvolutionForward; legacy-data, legacy-filter: the first by a
# backward call; --conv attn: an attention graph of two outputs, the
# overflow in its second, and attn-unified: the same as cuDNN's one SDPA
# operation): the first's overflow named at its call in
# attn.conv1 (attn.conv2 without the wrappers), read by the second or by an
# undecodable kernel, and after its buffer was rewritten clean (a late
# generic judgement); and
# a torch.compile'd region (--triton): two Triton kernels launched by
# Inductor's CachingAutotuner.run, the first's overflow named at it, also
# when the second reads it as the 18th of 19 inputs (--triton wide); the
# same as a user's @triton.jit kernels (--triton jit, real Triton's
# JITFunction.run), needing triton in NANPROF_TEST_TRITON.
# Needs root (BPF), torch and the agent's GPU side; skips visibly.
set -u
. "$(dirname "$0")/lib.sh" gpu-fake-nanprof

F=$PWD/.output/fakecuda
TRITON_DIR=${NANPROF_TEST_TRITON:-/opt/nanprof-test/triton}   # scripts/setup.sh --tests
export OMP_NUM_THREADS=1

run_fake() {   # python out-dir args...   (FAKE_ENV: more environment; NP_OPTS: nanprof's)
	local py=$1 out=$2
	shift 2
	timeout 120 $NP run -q ${NP_OPTS:-} -o "$out" -- env NANPROF_CUPTI="$F/libcupti.so.13" ${FAKE_ENV:-} \
		"$py" $IT/fake_gpu_job.py "$F/libfakeops.so" "$@" > "$out.job" 2> "$out.err"
}

one_python() {   # python
	local py=$1 tag
	tag=$(py_tag "$py")${NANPROF_GPU_DEFER:+-deferred$NANPROF_GPU_DEFER}
	if [ -z "${tag%-deferred*}" ]; then
		skp "fake GPU under nanprof with $py" "no torch"
		return
	fi
	run_fake "$py" "$T/$tag-fault" --at 3
	if python3 $IT/check_origin.py "$T/$tag-fault/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 --grad-mode enabled > "$T/chk" 2>&1 &&
	   grep -q '"op":"[^"]*exp_kernel_cuda' "$T/$tag-fault/events.jsonl" &&
	   grep -q '"exp_overflow":true' "$T/$tag-fault/events.jsonl" &&
	   grep -q "exp:    exp of a value above 88.72 is +inf in float32" "$T/$tag-fault.err" &&
	   grep -q '"gpu_propagations_inside":[1-9]' "$T/$tag-fault/events.jsonl" &&
	   grep -q '"gpu_devices":1,' "$T/$tag-fault/events.jsonl"; then
		ok "$tag: the exp kernel in blocks.0.gate, step 3, forward, named through BPF, its overflow said; the mask held inside attn"
	else
		cat "$T/$tag-fault.err" >> "$T/chk"
		bad "$tag: fake GPU origin under nanprof" "$T/chk"
	fi
	# test_gpu_fake_deferred.sh runs this suite with every job deferring
	# its checks: that it did, or the run would test nothing new
	if [ -n "${NANPROF_GPU_DEFER:-}" ]; then
		if grep -q "\"gpu_message\":\"every, deferred $NANPROF_GPU_DEFER\".*\"gpu_deferred_checks\":[1-9]" \
			"$T/$tag-fault/events.jsonl"; then
			ok "$tag: NANPROF_GPU_DEFER=$NANPROF_GPU_DEFER reaches the job: its checks went out in lists"
		else
			grep -h '"type":"checks"' "$T/$tag-fault/events.jsonl" > "$T/chk"
			bad "$tag: NANPROF_GPU_DEFER=$NANPROF_GPU_DEFER: no check deferred" "$T/chk"
		fi
	fi
	# an evaluation pass after step 3's update (step 4's work): the
	# launch callback reads the thread's grad mode from torch's c10
	for mode in no_grad inference_mode; do
		run_fake "$py" "$T/$tag-$mode" --eval $mode --at 3
		if python3 $IT/check_origin.py "$T/$tag-$mode/events.jsonl" --cuda \
			--origin forward blocks.0.gate output --step 4 --grad-mode $mode \
			> "$T/chk" 2>&1 &&
		   grep -q "forward pass under $mode" "$T/$tag-$mode.err"; then
			ok "$tag: an evaluation pass under $mode: the exp kernel in blocks.0.gate, step 4, its grad mode said"
		else
			cat "$T/$tag-$mode.err" >> "$T/chk"
			bad "$tag: fake GPU origin under $mode" "$T/chk"
		fi
	done
	run_fake "$py" "$T/$tag-sum" --sum --at 3
	if python3 $IT/check_origin.py "$T/$tag-sum/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"op":"[^"]*reduce_kernel' "$T/$tag-sum/events.jsonl"; then
		ok "$tag: a sum that overflows: its reduce_kernel in blocks.0.gate, step 3, read from the ReduceOp"
	else
		cat "$T/$tag-sum.err" >> "$T/chk"
		bad "$tag: fake GPU reduction origin under nanprof" "$T/chk"
	fi
	# RoPE's x * freqs_cis in torch's complex64 multiply: read by name,
	# checked as its real view (not left to the generic tier as float32)
	run_fake "$py" "$T/$tag-rope" --rope --at 3
	if python3 $IT/check_origin.py "$T/$tag-rope/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 \
		--op-kernel 'MulFunctor<c10::complex<float>' > "$T/chk" 2>&1 &&
	   grep -q '"type":"nan_origin".*"dtype":"complex64","viewed_as_real":true' \
		"$T/$tag-rope/events.jsonl" &&
	   grep -q '"gpu_launches_undecoded":0' "$T/$tag-rope/events.jsonl" &&
	   grep -q "its output, complex64 viewed as real, 4096 elements: 0 nan, 818 +inf" \
		"$T/$tag-rope.err"; then
		ok "$tag: a complex64 multiply that overflows (RoPE): its kernel in blocks.0.gate, step 3, checked as its real view"
	else
		cat "$T/$tag-rope.err" >> "$T/chk"
		bad "$tag: fake GPU complex origin under nanprof" "$T/chk"
	fi
	# its clone (cuMemcpyAsync) and its torch.cat with x (OpaqueType<8>)
	# hold complex values too: both checked as complex64, propagation
	# (the agent alone, its records read)
	for o in "copy:cuMemcpy device to device:818" "cat:OpaqueType<8u>:409"; do
		IFS=: read -r how kernel pinf <<< "$o"
		LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$T/$tag-rope-$how.rec" \
			NANPROF_CUPTI="$F/libcupti.so.13" timeout 120 "$py" $IT/fake_gpu_job.py \
			"$F/libfakeops.so" --rope $how --at 3 > "$T/$tag-rope-$how.out" 2>&1
		if python3 $IT/read_records.py "$T/$tag-rope-$how.rec" --expect-gpu-check \
			"$kernel:dtype=complex64,propagated=true,numel=4096,posinf=$pinf,first_bad=7" \
			> "$T/chk" 2>&1; then
			ok "$tag: the complex multiply's output moved by $how: checked as complex64, propagation"
		else
			cat "$T/$tag-rope-$how.out" >> "$T/chk"
			bad "$tag: complex values moved by $how" "$T/chk"
		fi
	done
	# the overflow born in a kernel no decoder reads (as cuFFT's spectrum),
	# then multiplied as complex64: the multiply's complex input is
	# offered to the generic tier, which checks it as complex64 and names
	# the undecodable kernel (before: the multiply, "born here")
	run_fake "$py" "$T/$tag-rope-opq" --rope opaque --at 3
	if python3 $IT/check_origin.py "$T/$tag-rope-opq/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 \
		--op-kernel nvjet_fake_exp_64x64_1x1_opaque > "$T/chk" 2>&1 &&
	   grep -q '"type":"nan_origin".*"dtype":"complex64","viewed_as_real":true' \
		"$T/$tag-rope-opq/events.jsonl" &&
	   grep -q '"gpu_generic_checks":[1-9]' "$T/$tag-rope-opq/events.jsonl" &&
	   grep -q "its output, complex64 viewed as real, 4096 elements: 0 nan, 4096 +inf" \
		"$T/$tag-rope-opq.err"; then
		ok "$tag: an undecodable kernel's complex output read by the complex multiply: the undecodable kernel named, complex64"
	else
		cat "$T/$tag-rope-opq.err" >> "$T/chk"
		bad "$tag: fake GPU complex read by the generic tier" "$T/chk"
	fi
	# the exp's value moved without a kernel, or by torch.cat's: the
	# reader in head is propagation, the exp still the origin
	for how in copy cat cat-split cat-wide; do
		run_fake "$py" "$T/$tag-$how" --$how --at 3
		# deferring (test_gpu_fake_deferred.sh), a cat's kernel says
		# what it writes: no list goes out for want of knowing
		if python3 $IT/check_origin.py "$T/$tag-$how/events.jsonl" --cuda \
			--origin forward blocks.0.gate output --step 3 --op-kernel exp_kernel_cuda \
			> "$T/chk" 2>&1 && grep -q '"gpu_launches_undecoded":0' "$T/$tag-$how/events.jsonl" &&
		   { [ -z "${NANPROF_GPU_DEFER:-}" ] ||
		     grep -q '"gpu_deferred_sent_at_unknown_writes":0,' "$T/$tag-$how/events.jsonl"; }
		then
			ok "$tag: the exp's output moved by $how and read by head: still the exp in blocks.0.gate"
		else
			cat "$T/$tag-$how.err" >> "$T/chk"
			grep -ho '"gpu_deferred_sent_at_unknown_writes":[0-9]*' \
				"$T/$tag-$how/events.jsonl" >> "$T/chk"
			bad "$tag: fake GPU origin through $how under nanprof" "$T/chk"
		fi
	done
	# sampled, no copy is checked (no writers are kept): the origin
	# tracker follows the clone (cupti/write_queue.h), so head's add is
	# still the exp's propagation; before, no origin at all
	NP_OPTS="--gpu sample:1" run_fake "$py" "$T/$tag-copy-smp" --copy --at 3
	if python3 $IT/check_origin.py "$T/$tag-copy-smp/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 --op-kernel exp_kernel_cuda \
		> "$T/chk" 2>&1 &&
	   grep -q '"gpu_unchecked_copies_carried":[1-9]' "$T/$tag-copy-smp/events.jsonl" &&
	   grep -q '"gpu_unchecked_writes_lost":0' "$T/$tag-copy-smp/events.jsonl"; then
		ok "$tag: sampled, the exp's output cloned and read by head: the tracker follows the copy, the exp in blocks.0.gate"
	else
		cat "$T/$tag-copy-smp.err" >> "$T/chk"
		bad "$tag: fake GPU origin through an unchecked copy, sampled" "$T/chk"
	fi
	# a model split over two devices: the gate on cuda:1, device 0
	# current between ops (as torch leaves it), its output copied to
	# device 0 as torch copies it (cuMemcpyAsync), or by cuMemcpyPeerAsync
	# (torch's allocator's, between devices without P2P); deferring, the
	# lists of device 1's checks go out at the job's synchronisation on
	# device 0, in device 1's context (the fake refuses any other, as a
	# GPU does)
	for copy in dev2: dev2p:--peer-copy; do
		IFS=: read -r name opt <<< "$copy"
		FAKE_ENV=FAKE_CUDA_DEVICES=2 run_fake "$py" "$T/$tag-$name" --devices 2 $opt --at 3
		if python3 $IT/check_origin.py "$T/$tag-$name/events.jsonl" --cuda \
			--origin forward blocks.0.gate output --step 3 --op-kernel exp_kernel_cuda \
			> "$T/chk" 2>&1 &&
		   grep -q '"type":"nan_origin".*"cuda_device":1,' "$T/$tag-$name/events.jsonl" &&
		   grep -q "^  kernel: .*exp_kernel_cuda.* (on cuda:1)$" "$T/$tag-$name.err" &&
		   grep -q '"gpu_devices":2,' "$T/$tag-$name/events.jsonl" &&
		   grep -q "GPU checks: every launch on 2 devices; " "$T/$tag-$name/summary.txt" &&
		   ! grep -q "FAULT" "$T/$tag-$name.err"; then
			ok "$tag: a model split over two devices (copy: ${opt:-cuMemcpyAsync}): the exp on cuda:1 in blocks.0.gate, its device said"
		else
			cat "$T/$tag-$name.err" "$T/$tag-$name/summary.txt" >> "$T/chk"
			bad "$tag: fake GPU origin on a second device (${opt:-cuMemcpyAsync})" "$T/chk"
		fi
	done
	run_fake "$py" "$T/$tag-bwd" --fault backward --at 3
	if python3 $IT/check_origin.py "$T/$tag-bwd/events.jsonl" --cuda \
		--origin backward blocks.0.gate output --step 3 > "$T/chk" 2>&1; then
		ok "$tag: the exp launched by a backward node of blocks.0.gate, step 3, backward"
	else
		cat "$T/$tag-bwd.err" >> "$T/chk"
		bad "$tag: fake GPU backward origin under nanprof" "$T/chk"
	fi
	run_fake "$py" "$T/$tag-clean" --at -1
	if python3 $IT/check_origin.py "$T/$tag-clean/events.jsonl" --cuda --no-origin \
		> "$T/chk" 2>&1 &&
	   grep -q '"gpu_births":[1-9]' "$T/$tag-clean/events.jsonl"; then
		ok "$tag: no overflow: the spreading -inf mask is no origin"
	else
		cat "$T/$tag-clean.err" >> "$T/chk"
		bad "$tag: fake GPU clean job under nanprof" "$T/chk"
	fi
	FAKE_ENV=FAKE_CUPTI_TAKEN=1 run_fake "$py" "$T/$tag-mod" --modules --at 3
	if python3 $IT/check_origin.py "$T/$tag-mod/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"op":"nanprof module-level check: module output"' "$T/$tag-mod/events.jsonl" &&
	   grep -q '"gpu_message":"modules: cupti taken".*"gpu_births":1,' "$T/$tag-mod/events.jsonl" &&
	   grep -q 'GPU checks: CUDA tensors at module level (CUPTI is taken' "$T/$tag-mod/summary.txt"; then
		ok "$tag: CUPTI taken: the gate's CUDA output, checked at module level, step 3, forward"
	else
		cat "$T/$tag-mod.err" "$T/$tag-mod/summary.txt" >> "$T/chk"
		bad "$tag: module-level GPU origin under nanprof" "$T/chk"
	fi
	# the gate's output a cuda:1 tensor on the default stream, whose
	# handle is every device's, while device 0 is current: checked in
	# device 1's context (in device 0's it would read another device's
	# memory: an illegal address on a GPU without peer access)
	FAKE_ENV="FAKE_CUPTI_TAKEN=1 FAKE_CUDA_DEVICES=2" run_fake "$py" "$T/$tag-moddev2" \
		--modules --devices 2 --at 3
	if python3 $IT/check_origin.py "$T/$tag-moddev2/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"type":"nan_origin".*"cuda_device":1,' "$T/$tag-moddev2/events.jsonl" &&
	   grep -q "CUPTI is taken by another tool) on 2 devices; " "$T/$tag-moddev2/summary.txt" &&
	   ! grep -q "FAULT" "$T/$tag-moddev2.err"; then
		ok "$tag: CUPTI taken: the gate's cuda:1 output checked on its own device, step 3, forward"
	else
		cat "$T/$tag-moddev2.err" >> "$T/chk"
		bad "$tag: module-level GPU origin on a second device" "$T/chk"
	fi
	FAKE_ENV=FAKE_CUPTI_TAKEN=1 run_fake "$py" "$T/$tag-modbwd" --modules --fault backward --at 3
	if python3 $IT/check_origin.py "$T/$tag-modbwd/events.jsonl" --cuda \
		--origin backward blocks.0.gate grad --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"op":"nanprof module-level check: gradient a node produced"' \
		"$T/$tag-modbwd/events.jsonl"; then
		ok "$tag: CUPTI taken: a CUDA gradient a node of blocks.0.gate made, seen again as .grad, step 3, backward"
	else
		cat "$T/$tag-modbwd.err" >> "$T/chk"
		bad "$tag: module-level GPU backward origin under nanprof" "$T/chk"
	fi
	FAKE_ENV=FAKE_CUPTI_TAKEN=1 run_fake "$py" "$T/$tag-modopt" --modules --fault optimizer --at 3
	if python3 $IT/check_origin.py "$T/$tag-modopt/events.jsonl" --cuda \
		--origin optimizer head param --param scale --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"op":"nanprof module-level check: parameter after the step"' \
		"$T/$tag-modopt/events.jsonl"; then
		ok "$tag: CUPTI taken: a CUDA parameter the step made +inf, checked after it, step 3, optimizer, named head.scale by its memory"
	else
		cat "$T/$tag-modopt.err" >> "$T/chk"
		bad "$tag: module-level GPU optimizer origin under nanprof" "$T/chk"
	fi
	FAKE_ENV=FAKE_CUPTI_TAKEN=1 run_fake "$py" "$T/$tag-modclean" --modules --at -1
	if python3 $IT/check_origin.py "$T/$tag-modclean/events.jsonl" --cuda --no-origin \
		> "$T/chk" 2>&1 &&
	   grep -q '"gpu_checks":[1-9][0-9]*,.*"gpu_births":0,' "$T/$tag-modclean/events.jsonl"; then
		ok "$tag: CUPTI taken, no overflow: CUDA tensors checked at module level, nothing born"
	else
		cat "$T/$tag-modclean.err" >> "$T/chk"
		bad "$tag: module-level GPU clean job under nanprof" "$T/chk"
	fi
	# gradient norms of CUDA .grads come back a step late, without a sync:
	# the warnings and the step records' gradient norms must be those of
	# the same .grads on the CPU (the last step's come at the job's exit)
	run_fake "$py" "$T/$tag-exp" --modules --fault explode --at 8 --steps 16
	run_fake "$py" "$T/$tag-expcpu" --modules --fault explode --at 8 --steps 16 --cpu-grads
	if python3 - "$T/$tag-exp/events.jsonl" "$T/$tag-expcpu/events.jsonl" > "$T/chk" 2>&1 <<'PY'
import json, sys
def warned(path):
    return [(e["step"], e["module"], e["metric"]) for e in map(json.loads, open(path))
            if e.get("type") == "explosion_warning"]
def norms(path):
    return [(e["step"], e["grad_norm"] and float("%.6g" % e["grad_norm"]))
            for e in map(json.loads, open(path)) if e.get("type") == "step"]
def same(a, b):   # the CUDA side's norms are float32 ones
    return len(a) == len(b) and all(s == t and x is not None and y is not None and
                                    abs(x - y) <= 1e-5 * y for (s, x), (t, y) in zip(a, b))
gpu, cpu = warned(sys.argv[1]), warned(sys.argv[2])
gn, cn = norms(sys.argv[1]), norms(sys.argv[2])
print("CUDA .grads:", gpu, gn, sep="\n  ")
print("CPU .grads: ", cpu, cn, sep="\n  ")
sys.exit(0 if gpu == cpu and (9, "head", "grad_norm") in gpu and
         any(m == "" for _, m, _ in gpu) and same(gn, cn) and len(gn) == 16 else 1)
PY
	then
		ok "$tag: CUDA .grad norms a step late: the CPU's explosion warnings and step norms"
	else
		cat "$T/$tag-exp.err" >> "$T/chk"
		bad "$tag: late CUDA gradient norms" "$T/chk"
	fi
	# the largest |x| of CUDA module outputs comes from their checks'
	# records, late: the activation warnings must be those of the same
	# values on the CPU, with the launch checks (guards) and with CUPTI taken
	run_fake "$py" "$T/$tag-act" --modules --fault activations --at 8 --steps 16
	FAKE_ENV=FAKE_CUPTI_TAKEN=1 run_fake "$py" "$T/$tag-actmod" --modules --fault activations \
		--at 8 --steps 16
	run_fake "$py" "$T/$tag-actcpu" --modules --fault activations --at 8 --steps 16 --cpu-outputs
	if python3 - "$T/$tag-act/events.jsonl" "$T/$tag-actmod/events.jsonl" \
		"$T/$tag-actcpu/events.jsonl" > "$T/chk" 2>&1 <<'PY'
import json, sys
def warned(path):
    return sorted((e["step"], e["module"], e["metric"], round(e["value"], 3))
                  for e in map(json.loads, open(path))
                  if e.get("type") == "explosion_warning")
def maxima(path):
    return [(e["step"], float("%.6g" % e["output_max_abs"]))
            for e in map(json.loads, open(path)) if e.get("type") == "step"]
launch, modules, cpu = (warned(p) for p in sys.argv[1:])
ml, mm, mc = (maxima(p) for p in sys.argv[1:])
print("CUDA outputs, launch checks:", launch, ml, sep="\n  ")
print("CUDA outputs, module checks:", modules, mm, sep="\n  ")
print("CPU outputs:                ", cpu, mc, sep="\n  ")
sys.exit(0 if launch == modules == cpu and
         (14, "blocks.0.gate", "output_max_abs", 16.384) in launch and
         ml == mm == mc and len(mc) == 16 and mc[-1][1] > 60 else 1)
PY
	then
		ok "$tag: largest |x| of CUDA outputs from their checks, late: the CPU's warnings and step maxima"
	else
		cat "$T/$tag-act.err" >> "$T/chk"
		bad "$tag: late CUDA output maxima" "$T/chk"
	fi
	# sample:K: one optimizer step in 16 runs as `every` does (agent step
	# 16, 32: nanprof's 15, 31), and only those steps' records hold the
	# CUDA outputs' maxima, the same as the CPU twin's
	NP_OPTS="--gpu sample:4" run_fake "$py" "$T/$tag-actsmp" --modules --fault activations \
		--at 8 --steps 40
	run_fake "$py" "$T/$tag-actcpu40" --modules --fault activations --at 8 --steps 40 --cpu-outputs
	if python3 - "$T/$tag-actsmp/events.jsonl" "$T/$tag-actcpu40/events.jsonl" > "$T/chk" 2>&1 <<'PY'
import json, sys
def maxima(path):
    return {e["step"]: e["output_max_abs"] for e in map(json.loads, open(path))
            if e.get("type") == "step"}
smp, cpu = maxima(sys.argv[1]), maxima(sys.argv[2])
# from step 12 on the gate's output is the largest of the step
same = [s for s in range(12, 40) if s in smp and smp[s] == cpu.get(s)]
print("steps whose maxima are the CPU twin's:", same)
print("sampled:", [(s, smp.get(s)) for s in range(12, 40)])
sys.exit(0 if same == [15, 31] else 1)
PY
	then
		ok "$tag: sample:4: the statistics steps (1 in 16) give the CUDA outputs' maxima"
	else
		cat "$T/$tag-actsmp.err" >> "$T/chk"
		bad "$tag: CUDA output maxima when sampling" "$T/chk"
	fi
	# attach --gpu: a job started without nanprof (its own mode: every) is
	# attached with --gpu sample:3 (its own window: none, or the deferred
	# suite's 8), then again with --gpu every --gpu-defer 4 (each attach
	# sets the window; deferring's calls subscribed then, if not before),
	# then a third time by a nanprof that is SIGKILLed: the job runs to
	# its end.
	# Its MLP calls cuBLAS: the imports the agent points at its wrappers
	# once injected are checked while attached, passed through after
	rm -f "$T/ready"
	env NANPROF_CUPTI="$F/libcupti.so.13" "$py" $IT/fake_gpu_job.py "$F/libfakeops.so" \
		--at -1 --steps 300 --mlp gemm --wait-agent 60 --ready-file "$T/ready" \
		> "$T/$tag-att.job" 2>&1 &
	jp=$!
	for _ in $(seq 300); do [ -s "$T/ready" ] && break; sleep 0.1; done
	timeout 60 $NP attach -q --gpu sample:3 -d 3 -o "$T/$tag-att1" $jp \
		> /dev/null 2> "$T/$tag-att1.err"
	timeout 60 $NP attach -q --gpu every --gpu-defer 4 -d 3 -o "$T/$tag-att2" $jp \
		> /dev/null 2> "$T/$tag-att2.err"
	$NP attach -q -o "$T/$tag-att3" $jp > /dev/null 2>&1 &
	npid=$!
	sleep 1.5
	kill -9 $npid 2>/dev/null
	wait $npid 2>/dev/null
	( sleep 60; kill $jp 2>/dev/null ) &
	guard=$!
	wait $jp
	jrc=$?
	kill $guard 2>/dev/null
	if [ $jrc -eq 0 ] && grep -q "^step 299 loss" "$T/$tag-att.job"; then
		ok "$tag: attached three times, the last nanprof SIGKILLed: the CUDA job runs to its end"
	else
		echo "job exit $jrc" >> "$T/$tag-att.job"
		bad "$tag: CUDA job after a SIGKILLed attach" "$T/$tag-att.job"
	fi
	if python3 - "$T/$tag-att1/events.jsonl" "$T/$tag-att2/events.jsonl" > "$T/chk" 2>&1 <<'PY'
import json, os, sys
def checks(path):
    c = [e for e in map(json.loads, open(path)) if e.get("type") == "checks"][0]
    print(path, c.get("gpu_message"), "launches sampled out:", c.get("gpu_launches_sampled_out"),
          "checks:", c.get("gpu_checks"), "cuBLAS calls checked:", c.get("gpu_gemm_checks"),
          "deferred:", c.get("gpu_deferred_checks"))
    return c
own = os.environ.get("NANPROF_GPU_DEFER", "0")   # the job's own window
a, b = checks(sys.argv[1]), checks(sys.argv[2])
sys.exit(0 if a["gpu_message"] == ("sample" if own == "0" else "sample, deferred " + own) and
         a["gpu_launches_sampled_out"] > 0 and
         b["gpu_message"] == "every, deferred 4" and
         b.get("gpu_deferred_checks", 0) > a.get("gpu_deferred_checks", 0) and
         b["gpu_launches_sampled_out"] == a["gpu_launches_sampled_out"]
         and b["gpu_checks"] > a["gpu_checks"] and b["gpu_gemm_checks"] > 0 else 1)
PY
	then
		ok "$tag: attach --gpu sample:3 samples a live job's launches; attached again, --gpu every --gpu-defer 4 checks all, cuBLAS calls too, deferred from then on"
	else
		cat "$T/$tag-att1.err" "$T/$tag-att2.err" "$T/$tag-att.job" >> "$T/chk"
		bad "$tag: attach --gpu" "$T/chk"
	fi
	# the guards: in every mode the hooks' CUDA tensors whose last writer
	# went unchecked get a module-level check, and only those
	run_fake "$py" "$T/$tag-grd" --modules --at 3
	if python3 $IT/check_origin.py "$T/$tag-grd/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"op":"[^"]*exp_kernel_cuda' "$T/$tag-grd/events.jsonl" &&
	   grep -q '"gpu_guard_checks":0,"gpu_guard_skips":[1-9]' "$T/$tag-grd/events.jsonl"; then
		ok "$tag: guards: CUDA outputs of decoded kernels not checked twice, the exp kernel named"
	else
		cat "$T/$tag-grd.err" >> "$T/chk"
		bad "$tag: guards skip what launch checks saw" "$T/chk"
	fi
	run_fake "$py" "$T/$tag-opq" --modules --opaque --at 3
	FAKE_ENV="NANPROF_GPU_GUARD=0 NANPROF_GPU_GENERIC=0" \
		run_fake "$py" "$T/$tag-opqoff" --modules --opaque --at 3
	NP_OPTS="--gpu every+modules" run_fake "$py" "$T/$tag-opqmod" --modules --opaque --at 3
	if ! grep -q '"type":"nan_origin".*"module":"blocks.0.gate"' "$T/$tag-opqoff/events.jsonl" &&
	   grep -q '"gpu_launches_undecoded":[1-9]' "$T/$tag-opqoff/events.jsonl" &&
	   python3 $IT/check_origin.py "$T/$tag-opq/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"op":"nanprof module-level check: module output, after nvjet_fake_exp_64x64_1x1_opaque"' \
		"$T/$tag-opq/events.jsonl" &&
	   grep -q '"gpu_guard_checks":[1-9][0-9]*,"gpu_guard_skips":[1-9]' "$T/$tag-opq/events.jsonl" &&
	   grep -q '"gpu_generic_checks":0,' "$T/$tag-opq/events.jsonl" &&
	   grep -q 'guards: [1-9][0-9]* CUDA tensors checked at module level' "$T/$tag-opq/summary.txt" &&
	   python3 $IT/check_origin.py "$T/$tag-opqmod/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 >> "$T/chk" 2>&1 &&
	   grep -q '"op":"nanprof module-level check: module output, after nvjet_fake_exp_64x64_1x1_opaque"' \
		"$T/$tag-opqmod/events.jsonl" &&
	   grep -q '"gpu_message":"every+modules[",]' "$T/$tag-opqmod/events.jsonl" &&
	   grep -q '"gpu_guard_checks":0,"gpu_guard_skips":0' "$T/$tag-opqmod/events.jsonl" &&
	   grep -q 'GPU checks: every launch and CUDA tensors at module level' \
		"$T/$tag-opqmod/summary.txt"; then
		ok "$tag: undecoded kernel: missed without guards and generic tier, named at blocks.0.gate by the guards and by +modules"
	else
		cat "$T/$tag-opq.err" "$T/$tag-opqoff.err" "$T/$tag-opqmod.err" \
			"$T/$tag-opq/summary.txt" >> "$T/chk"
		grep -h nan_origin "$T/$tag-opqoff/events.jsonl" >> "$T/chk"
		bad "$tag: undecoded kernel: guards and every+modules" "$T/chk"
	fi
	# the generic tier alone (no guards): the undecoded kernel's output is
	# checked when head's decoded add reads it, over the add's N floats,
	# and named as the undecoded kernel's, in the gate at step 3
	FAKE_ENV=NANPROF_GPU_GUARD=0 run_fake "$py" "$T/$tag-gen" --modules --opaque --at 3
	if python3 $IT/check_origin.py "$T/$tag-gen/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 \
		--op-kernel nvjet_fake_exp_64x64_1x1_opaque > "$T/chk" 2>&1 &&
	   grep -q '"gpu_guard_checks":0,"gpu_guard_skips":0,"gpu_generic_checks":[1-9]' \
		"$T/$tag-gen/events.jsonl" &&
	   grep -q '"gpu_undecoded_kernels":\[{"kernel":"nvjet_fake_exp_64x64_1x1_opaque","launches":6}\]' \
		"$T/$tag-gen/events.jsonl" &&
	   grep -q 'kernels not checked at launch (launches): nvjet_fake_exp_64x64_1x1_opaque 6$' \
		"$T/$tag-gen/summary.txt" &&
	   grep -q 'of their outputs checked at a decoded reader' "$T/$tag-gen/summary.txt"; then
		ok "$tag: generic tier: the undecoded kernel named in blocks.0.gate at step 3, checked at head's read"
	else
		cat "$T/$tag-gen.err" "$T/$tag-gen/summary.txt" >> "$T/chk"
		bad "$tag: generic tier" "$T/chk"
	fi
	# the callbacks' host time, sampled in the job and said in the summary
	# (a check launch's own time needs 31 of them on one thread: this
	# job makes 36 in all, so it is not asserted here, and the summary
	# leaves it out when none was timed; the unit tests and
	# test_gpu_records.py hold its sampling and its reading)
	if grep -qE "nanprof's callbacks took ~[0-9.]+ us of host time per kernel launch( \(a check launch ~[0-9.]+ us of it\))?" \
		"$T/$tag-gen/summary.txt" &&
	   grep -q '"gpu_host_ns_per_launch":[1-9][0-9]*,"gpu_check_launch_ns":[0-9]' \
		"$T/$tag-gen/events.jsonl"; then
		ok "$tag: the callbacks' host time per kernel launch and per check launch reported"
	else
		grep -h "GPU checks" "$T/$tag-gen/summary.txt" > "$T/chk"
		grep -o '"gpu_host[^,]*,[^,]*' "$T/$tag-gen/events.jsonl" >> "$T/chk"
		bad "$tag: the callbacks' host time reported" "$T/chk"
	fi
	# the same, but the gate then doubles the undecoded output in place
	# (mul): its first decoded reader overwrites it, so the generic tier
	# checks it at that launch's entry, before it runs (else the multiply
	# is named, tried by hand); or adds x in place (add), the kernel
	# head's read runs too: the propagation out of the gate is reported
	# though the same kernel's inside it was (else nothing is named)
	for ip in mul add; do
		FAKE_ENV=NANPROF_GPU_GUARD=0 run_fake "$py" "$T/$tag-genip-$ip" --modules --opaque \
			--inplace $ip --at 3
		if python3 $IT/check_origin.py "$T/$tag-genip-$ip/events.jsonl" --cuda \
			--origin forward blocks.0.gate output --step 3 \
			--op-kernel nvjet_fake_exp_64x64_1x1_opaque > "$T/chk" 2>&1 &&
		   grep -q '"gpu_generic_checks":[1-9]' "$T/$tag-genip-$ip/events.jsonl"; then
			ok "$tag: generic tier: an undecoded output first read by an in-place $ip, checked before it runs: the undecoded kernel named"
		else
			cat "$T/$tag-genip-$ip.err" >> "$T/chk"
			bad "$tag: generic tier, in-place $ip reader" "$T/chk"
		fi
	done
	# the gate's buffer known -inf from attn's fill just before the
	# undecoded exp overwrites it: still the exp's birth, not propagation
	# of attn's -inf (which nothing read)
	FAKE_ENV=NANPROF_GPU_GUARD=0 run_fake "$py" "$T/$tag-stale" --modules --opaque --stale --at 3
	if python3 $IT/check_origin.py "$T/$tag-stale/events.jsonl" --cuda \
		--origin forward blocks.0.gate output --step 3 \
		--op-kernel nvjet_fake_exp_64x64_1x1_opaque > "$T/chk" 2>&1; then
		ok "$tag: generic tier: a buffer known -inf before the undecoded kernel wrote it is no source"
	else
		cat "$T/$tag-stale.err" "$T/$tag-stale/summary.txt" >> "$T/chk"
		grep -h nan_origin "$T/$tag-stale/events.jsonl" >> "$T/chk"
		bad "$tag: generic tier over a stale -inf" "$T/chk"
	fi
	# attention: an undecoded projection's q, k, v (slices of one output)
	# read first by torch's memory-efficient SDPA kernel.  The projection
	# overflows: the generic tier checks its output over the packed range
	# the attention kernel reads, before that kernel's own check, and
	# names the projection in attn.qkv (without the reads: attn.core)
	run_fake "$py" "$T/$tag-sdqkv" --sdpa qkv --at 3
	if python3 $IT/check_origin.py "$T/$tag-sdqkv/events.jsonl" --cuda \
		--origin forward blocks.0.attn.qkv output --step 3 \
		--op-kernel nvjet_fake_qkv_64x192_1x1_opaque > "$T/chk" 2>&1 &&
	   grep -q '"type":"nan_origin".*"numel":24576' "$T/$tag-sdqkv/events.jsonl"; then
		ok "$tag: generic tier: a projection's overflow named in attn.qkv, seen where SDPA reads q, k, v"
	else
		cat "$T/$tag-sdqkv.err" >> "$T/chk"
		grep -h nan_origin "$T/$tag-sdqkv/events.jsonl" >> "$T/chk"
		bad "$tag: generic tier through an attention kernel's reads" "$T/chk"
	fi
	# sample:2, the projection kernel launched twice a step (attn.pre, then
	# attn.qkv into the same buffer): attn.qkv's launch is always sampled
	# out and must be noted all the same, or the overflow read at step 4
	# (the attention kernel's sampled launch) is named in attn.pre
	NP_OPTS="--gpu sample:2" run_fake "$py" "$T/$tag-sdpre" --sdpa pre --at 4
	if python3 $IT/check_origin.py "$T/$tag-sdpre/events.jsonl" --cuda \
		--origin forward blocks.0.attn.qkv output --step 4 \
		--op-kernel nvjet_fake_qkv_64x192_1x1_opaque > "$T/chk" 2>&1 &&
	   grep -q '[1-9][0-9]* sampled out' "$T/$tag-sdpre/summary.txt"; then
		ok "$tag: sample:2: a sampled-out undecoded launch noted, named in attn.qkv at its reader"
	else
		cat "$T/$tag-sdpre.err" "$T/$tag-sdpre/summary.txt" >> "$T/chk"
		grep -h nan_origin "$T/$tag-sdpre/events.jsonl" >> "$T/chk"
		bad "$tag: sample mode's noting of sampled-out undecoded launches" "$T/chk"
	fi
	# the same with a projection whose signature names its pointers (a
	# known family) though no decoder sizes its output: it too is noted
	# when sampled out, no launch of it having been checked
	NP_OPTS="--gpu sample:2" run_fake "$py" "$T/$tag-sdpren" --sdpa pre-named --at 4
	if python3 $IT/check_origin.py "$T/$tag-sdpren/events.jsonl" --cuda \
		--origin forward blocks.0.attn.qkv output --step 4 \
		--op-kernel fake_qkv_unsized > "$T/chk" 2>&1; then
		ok "$tag: sample:2: a sampled-out launch of a never-sized kernel noted, named in attn.qkv"
	else
		cat "$T/$tag-sdpren.err" "$T/$tag-sdpren/summary.txt" >> "$T/chk"
		grep -h nan_origin "$T/$tag-sdpren/events.jsonl" >> "$T/chk"
		bad "$tag: sample mode's noting of a never-sized kernel's sampled-out launches" "$T/chk"
	fi
	# the projection finite, q and k 1e20: the attention kernel's +inf
	# scores make the NaN, read from its Params
	run_fake "$py" "$T/$tag-sdsc" --sdpa scores --at 3
	if python3 $IT/check_origin.py "$T/$tag-sdsc/events.jsonl" --cuda \
		--origin forward blocks.0.attn.core output --step 3 \
		--op-kernel fmha_cutlassF_f32_aligned_64x64_rf_sm80 > "$T/chk" 2>&1; then
		ok "$tag: memory-efficient attention's NaN named in attn.core at step 3, forward"
	else
		cat "$T/$tag-sdsc.err" >> "$T/chk"
		grep -h nan_origin "$T/$tag-sdsc/events.jsonl" >> "$T/chk"
		bad "$tag: memory-efficient attention origin" "$T/chk"
	fi
	# clip_grad_norm_ after backward: the gradients' squares overflow in
	# _foreach_norm's LpNormFunctor (undecoded), seen where lpnorm_cleanup
	# reads its partial sums, between the passes and outside any module
	run_fake "$py" "$T/$tag-clip" --clip --at 3
	if python3 $IT/check_origin.py "$T/$tag-clip/events.jsonl" --cuda 		--origin none '' output --step 3 --op-kernel LpNormFunctor > "$T/chk" 2>&1 &&
	   grep -q "step 3, between passes" "$T/$tag-clip.err" &&
	   grep -q "where:  outside any module (between module calls)" "$T/$tag-clip.err"; then
		ok "$tag: clip_grad_norm_'s overflowing norm named at _foreach_norm's LpNormFunctor, between passes"
	else
		cat "$T/$tag-clip.err" >> "$T/chk"
		bad "$tag: clip_grad_norm_ origin" "$T/chk"
	fi
	# the gradients +inf from an undecoded kernel in the gate's backward
	# (a weight-gradient GEMM), first read by LpNormFunctor: named there
	run_fake "$py" "$T/$tag-clipg" --clip gemm --at 3
	if python3 $IT/check_origin.py "$T/$tag-clipg/events.jsonl" --cuda \
		--origin backward blocks.0.gate output --step 3 --op-kernel nvjet_fake_exp \
		> "$T/chk" 2>&1; then
		ok "$tag: a gradient's overflow first read by clip_grad_norm_ named at its kernel in the gate's backward"
	else
		cat "$T/$tag-clipg.err" >> "$T/chk"
		bad "$tag: clip_grad_norm_'s reads of undecoded gradients" "$T/chk"
	fi
	# an MLP's two cuBLAS matmuls (opaque kernels): fc1's product
	# overflows, fc2 makes NaN of it.  Seen at the call (cupti/blas.h),
	# fc1's output is checked after its last kernel (split-K's reduction;
	# a dot product's reduction; the solve's one kernel) through every
	# API torch calls
	local api last
	for api in sgemm gemmex batched lt sgemmex gemv dot trsm; do
		case $api in
		dot) last=reduce_1Block_kernel ;;
		trsm) last=trsm_left_kernel ;;
		*) last=splitKreduce ;;
		esac
		run_fake "$py" "$T/$tag-mlp-$api" --mlp gemm --gemm $api --at 3
		if python3 $IT/check_origin.py "$T/$tag-mlp-$api/events.jsonl" --cuda \
			--origin forward blocks.0.attn.fc1 output --step 3 \
			--op-kernel $last > "$T/chk" 2>&1 &&
		   grep -q '"gpu_gemm_checks":[1-9]' "$T/$tag-mlp-$api/events.jsonl"; then
			ok "$tag: a cuBLAS $api call's overflow named at its last kernel in attn.fc1"
		else
			cat "$T/$tag-mlp-$api.err" >> "$T/chk"
			grep -h 'nan_origin\|gpu_gemm' "$T/$tag-mlp-$api/events.jsonl" >> "$T/chk"
			bad "$tag: cuBLAS $api call's output checked at the call" "$T/chk"
		fi
	done
	# the same with checks deferred into lists (cupti/defer.h; nanprof
	# run --gpu-defer 8 sets the job's NANPROF_GPU_DEFER): the
	# call's kernels say what they write (D, the workspace torch set), so
	# no list goes out for want of knowing (every other kernel of the job
	# is decoded); the same origin; the summary says how the lists went out
	for api in sgemm lt; do
		NP_OPTS="--gpu-defer 8" run_fake "$py" "$T/$tag-defer-$api" --mlp gemm --gemm $api --at 3
		if python3 $IT/check_origin.py "$T/$tag-defer-$api/events.jsonl" --cuda \
			--origin forward blocks.0.attn.fc1 output --step 3 \
			--op-kernel splitKreduce > "$T/chk" 2>&1 &&
		   grep -q '"gpu_message":"every, deferred 8".*"gpu_deferred_checks":[1-9]' \
			"$T/$tag-defer-$api/events.jsonl" &&
		   grep -q '"gpu_deferred_sent_at_unknown_writes":0,' "$T/$tag-defer-$api/events.jsonl" &&
		   grep -q 'checks deferred into [0-9]* list launches (flushed: [0-9]* at the end of the window' \
			"$T/$tag-defer-$api/summary.txt"; then
			ok "$tag: checks deferred: a cuBLAS $api call's overflow still named at its last kernel in attn.fc1"
		else
			cat "$T/$tag-defer-$api.err" "$T/$tag-defer-$api/summary.txt" >> "$T/chk"
			grep -h 'nan_origin\|gpu_deferred' "$T/$tag-defer-$api/events.jsonl" >> "$T/chk"
			bad "$tag: checks deferred: cuBLAS $api call's output checked" "$T/chk"
		fi
	done
	# a complex64 product (cublasCgemm_v2: torch's matmul of complex
	# tensors, a spectral layer's einsum): planned at the call, its D
	# checked as its real view after its kernel, in fc1
	run_fake "$py" "$T/$tag-mlp-cgemm" --mlp gemm --gemm cgemm --at 3
	if python3 $IT/check_origin.py "$T/$tag-mlp-cgemm/events.jsonl" --cuda \
		--origin forward blocks.0.attn.fc1 output --step 3 \
		--op-kernel c1688gemm > "$T/chk" 2>&1 &&
	   grep -q '"type":"nan_origin".*"dtype":"complex64","viewed_as_real":true' \
		"$T/$tag-mlp-cgemm/events.jsonl" &&
	   grep -q '"gpu_gemm_checks":[1-9]' "$T/$tag-mlp-cgemm/events.jsonl"; then
		ok "$tag: a cublasCgemm_v2 call's overflow named at its kernel in attn.fc1, complex64 as its real view"
	else
		cat "$T/$tag-mlp-cgemm.err" >> "$T/chk"
		grep -h 'nan_origin\|gpu_gemm' "$T/$tag-mlp-cgemm/events.jsonl" >> "$T/chk"
		bad "$tag: cublasCgemm_v2 call's output checked at the call" "$T/chk"
	fi
	# a Fourier layer's tail (FNO's spectral convolution) in attn: the
	# complex product overflows, irfft carries it through a fake cuFFT
	# whose kernel's parameters are opaque, then irfft's normalisation
	# multiplies in place.  The transform is seen at its call (its plan
	# kept from cufftXtMakePlanMany as torch makes it, cufftPlan1d, or
	# cufftMakePlanMany64 with embeds):
	# its output checked, a propagation, so the product is the origin
	# when head reads it, not the multiply (the H200's run-spectral)
	for m in spectral spectral-legacy spectral-many; do
		run_fake "$py" "$T/$tag-$m" --mlp $m --at 3
		LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$T/$tag-$m.rec" \
			NANPROF_CUPTI="$F/libcupti.so.13" timeout 120 "$py" $IT/fake_gpu_job.py \
			"$F/libfakeops.so" --mlp $m --at 3 > "$T/$tag-$m.out" 2>&1
		if python3 $IT/check_origin.py "$T/$tag-$m/events.jsonl" --cuda \
			--origin forward blocks.0.attn output --step 3 \
			--op-kernel c1688gemm > "$T/chk" 2>&1 &&
		   grep -q '"type":"nan_origin".*"dtype":"complex64","viewed_as_real":true' \
			"$T/$tag-$m/events.jsonl" &&
		   python3 $IT/read_records.py "$T/$tag-$m.rec" --expect-gpu-check \
			"vector_fft_c2r:dtype=float32,propagated=true,numel=480,first_bad=0" \
			>> "$T/chk" 2>&1 &&
		   { [ -z "${NANPROF_GPU_DEFER:-}" ] ||
		     grep -q '"gpu_deferred_sent_at_unknown_writes":0,' "$T/$tag-$m/events.jsonl"; }
		then
			# deferring (test_gpu_fake_deferred.sh), the transform
			# said what it writes (its output, the work area torch
			# set, an irfft's spectrum), the product its D and the
			# workspace: no list went out for want of knowing
			ok "$tag: $m: a complex product's overflow carried by irfft (cuFFT, seen at the call) named at the product in attn, not at irfft's multiply"
		else
			cat "$T/$tag-$m.err" "$T/$tag-$m.out" >> "$T/chk"
			grep -h 'nan_origin\|gpu_gemm\|gpu_deferred_sent_at_unknown' \
				"$T/$tag-$m/events.jsonl" >> "$T/chk"
			bad "$tag: $m: cuFFT's transform checked at the call" "$T/chk"
		fi
	done
	# the same transform of a plan the agent never saw made (torch's
	# cached plans, before `nanprof attach`): its addresses go to the
	# generic tier, and its output is checked as its own before the
	# normalisation overwrites it in place
	run_fake "$py" "$T/$tag-spectral-unseen" --mlp spectral-unseen --at 3
	if python3 $IT/check_origin.py "$T/$tag-spectral-unseen/events.jsonl" --cuda \
		--origin forward blocks.0.attn output --step 3 \
		--op-kernel c1688gemm > "$T/chk" 2>&1 &&
	   grep -q '"gpu_generic_checks":[1-9]' "$T/$tag-spectral-unseen/events.jsonl"; then
		ok "$tag: a transform of a plan made before the agent: its output checked at its reader (generic tier), the complex product named"
	else
		cat "$T/$tag-spectral-unseen.err" >> "$T/chk"
		grep -h 'nan_origin\|gpu_generic' "$T/$tag-spectral-unseen/events.jsonl" >> "$T/chk"
		bad "$tag: cuFFT transform of an unseen plan" "$T/chk"
	fi
	# the dot MLP's fault makes 1024 births in one step: the agent
	# reports 64 a second and counts the rest as held back by its
	# bounds, apart from results lost (none)
	if grep -q '"gpu_results_lost":0,"gpu_reports_over_bounds":[1-9]' \
		"$T/$tag-mlp-dot/events.jsonl"; then
		ok "$tag: births over the per-second bound counted as held back, not as lost results"
	else
		grep -ho '"gpu_results_lost":[0-9]*,"gpu_reports_over_bounds":[0-9]*' \
			"$T/$tag-mlp-dot/events.jsonl" > "$T/chk"
		grep -h "GPU checks" "$T/$tag-mlp-dot/summary.txt" >> "$T/chk"
		bad "$tag: births over the bounds" "$T/chk"
	fi
	# the calls left alone (NANPROF_GPU_BLAS=0): the generic tier names
	# the last undecoded writer before a decoded reader, fc2 -- what the
	# calls' view exists to correct
	FAKE_ENV="NANPROF_GPU_BLAS=0" run_fake "$py" "$T/$tag-mlp-off" --mlp gemm --at 3
	if python3 $IT/check_origin.py "$T/$tag-mlp-off/events.jsonl" --cuda \
		--origin forward blocks.0.attn.fc2 output --step 3 > "$T/chk" 2>&1 &&
	   grep -q '"gpu_gemm_checks":0' "$T/$tag-mlp-off/events.jsonl"; then
		ok "$tag: NANPROF_GPU_BLAS=0 leaves cuBLAS to the generic tier (names fc2)"
	else
		cat "$T/$tag-mlp-off.err" >> "$T/chk"
		bad "$tag: NANPROF_GPU_BLAS=0" "$T/chk"
	fi
	# the MLP's input +inf from an undecodable kernel: fc1's call reads
	# it, and names that kernel, in attn itself; a complex product's
	# input (cuFFT's spectrum before a spectral layer's einsum) is read
	# as complex64 (before: fc1's complex GEMM, "born here")
	for api in lt cgemm; do
		local dtype=float32
		[ $api = cgemm ] && dtype=complex64
		run_fake "$py" "$T/$tag-mlp-in-$api" --mlp input --gemm $api --at 3
		if python3 $IT/check_origin.py "$T/$tag-mlp-in-$api/events.jsonl" --cuda \
			--origin forward blocks.0.attn output --step 3 --op-kernel nvjet_fake_exp \
			--dtype $dtype > "$T/chk" 2>&1; then
			ok "$tag: a cuBLAS $api call's input, made +inf by an undecoded kernel, named at that kernel, $dtype"
		else
			cat "$T/$tag-mlp-in-$api.err" >> "$T/chk"
			grep -h nan_origin "$T/$tag-mlp-in-$api/events.jsonl" >> "$T/chk"
			bad "$tag: cuBLAS $api call's reads for the generic tier" "$T/chk"
		fi
	done
	# a convolution's overflow (an undecodable kernel) first read by
	# GroupNorm's statistics kernel: read as group norm's, it checks the
	# convolution's output, named in attn.conv
	run_fake "$py" "$T/$tag-gn" --gn --at 3
	if python3 $IT/check_origin.py "$T/$tag-gn/events.jsonl" --cuda \
		--origin forward blocks.0.attn.conv output --step 3 --op-kernel nvjet_fake_exp \
		> "$T/chk" 2>&1; then
		ok "$tag: a convolution's overflow read first by GroupNorm's statistics, named in attn.conv"
	else
		cat "$T/$tag-gn.err" >> "$T/chk"
		grep -h nan_origin "$T/$tag-gn/events.jsonl" >> "$T/chk"
		bad "$tag: GroupNorm's statistics as a decoded reader" "$T/chk"
	fi
	# the same convolution, then a BatchNorm through cuDNN (an opaque
	# kernel): seen at its call (cupti/dnn.h), the batch norm reads the
	# convolution's output, which is checked as the convolution's; with
	# the calls left alone (NANPROF_GPU_BLAS=0) the batch norm is named
	run_fake "$py" "$T/$tag-bn" --bn-cudnn --at 3
	FAKE_ENV="NANPROF_GPU_BLAS=0" run_fake "$py" "$T/$tag-bn-off" --bn-cudnn --at 3
	if python3 $IT/check_origin.py "$T/$tag-bn/events.jsonl" --cuda \
		--origin forward blocks.0.attn.conv output --step 3 --op-kernel nvjet_fake_exp \
		> "$T/chk" 2>&1 &&
	   python3 $IT/check_origin.py "$T/$tag-bn-off/events.jsonl" --cuda \
		--origin forward blocks.0.attn.norm output --step 3 --op-kernel bn_fw_tr \
		>> "$T/chk" 2>&1; then
		ok "$tag: a convolution's overflow read by cuDNN's batch norm, named in attn.conv"
	else
		cat "$T/$tag-bn.err" "$T/$tag-bn-off.err" >> "$T/chk"
		bad "$tag: cuDNN batch norm's call" "$T/chk"
	fi
	# two convolutions through cuDNN, the first overflowing, the second
	# reading it: both kernels opaque.  Through the backend API
	# (cupti/dnn_graph.h) the plan torch caches and each call's variant
	# pack name the first one's output; through the legacy call
	# (cudnnConvolutionForward) its descriptors do.  The generic tier
	# alone (NANPROF_GPU_BLAS=0) names the second, the last undecoded
	# kernel handed the address.  The second one's read of its input
	# would name the first too: read by an undecodable kernel instead
	# (--conv-reader opaque), only the first's own plan names it
	# attention through the backend API (--conv attn: cuDNN's SDPA graph
	# cut to its shape) writes two outputs, the statistics and o: the
	# overflow in the second is named at its own call too
	local api kernel
	for api in graph legacy legacy-data legacy-filter attn attn-unified; do
		case $api in
		graph) kernel=xmma_fprop ;;
		attn|attn-unified) kernel=sdpa_sm90_flash_fprop ;;
		legacy) kernel=implicit_convolve_sgemm ;;
		legacy-data) kernel=dgrad_engine ;;
		legacy-filter) kernel=wgrad_alg0_engine ;;
		esac
		# the backward calls' plans are told apart only by the
		# undecodable reader: run with it alone
		case $api in
		graph|legacy|attn|attn-unified)
			run_fake "$py" "$T/$tag-conv-$api" --conv $api --at 3
			FAKE_ENV="NANPROF_GPU_BLAS=0" run_fake "$py" "$T/$tag-conv-$api-off" --conv $api \
				--at 3
			if python3 $IT/check_origin.py "$T/$tag-conv-$api/events.jsonl" --cuda \
				--origin forward blocks.0.attn.conv1 output --step 3 --op-kernel $kernel \
				> "$T/chk" 2>&1 &&
			   [ "$(grep -o '"gpu_gemm_checks":[0-9]*' "$T/$tag-conv-$api/events.jsonl" |
				tail -1)" = '"gpu_gemm_checks":12' ] &&
			   python3 $IT/check_origin.py "$T/$tag-conv-$api-off/events.jsonl" --cuda \
				--origin forward blocks.0.attn.conv2 output --step 3 --op-kernel $kernel \
				>> "$T/chk" 2>&1 &&
			   { [ -z "${NANPROF_GPU_DEFER:-}" ] ||
			     grep -q '"gpu_deferred_sent_at_unknown_writes":0,' \
				"$T/$tag-conv-$api/events.jsonl"; }; then
				# deferring (test_gpu_fake_deferred.sh), the call's
				# kernels said what they write: no list went out
				# for want of knowing (cupti/dnn_calls.c)
				ok "$tag: a cuDNN convolution ($api API) named at its call, not at its reader's"
			else
				cat "$T/$tag-conv-$api.err" "$T/$tag-conv-$api-off.err" >> "$T/chk"
				grep -ho '"gpu_gemm_checks":[0-9]*\|"gpu_deferred_sent_at_unknown_writes":[0-9]*' \
					"$T/$tag-conv-$api/events.jsonl" >> "$T/chk"
				bad "$tag: cuDNN convolutions ($api API)" "$T/chk"
			fi
			;;
		esac
		run_fake "$py" "$T/$tag-conv-$api-op" --conv $api --conv-reader opaque --at 3
		if python3 $IT/check_origin.py "$T/$tag-conv-$api-op/events.jsonl" --cuda \
			--origin forward blocks.0.attn.conv1 output --step 3 --op-kernel $kernel \
			> "$T/chk" 2>&1; then
			ok "$tag: a cuDNN convolution ($api) read by an undecodable kernel, named at its own call"
		else
			cat "$T/$tag-conv-$api-op.err" >> "$T/chk"
			bad "$tag: cuDNN convolution ($api) before an undecodable reader" "$T/chk"
		fi
	done
	# the plan built by a library loaded before libcuda (as torch loads
	# libtorch_cuda.so and cuDNN at its import), at once after its handle
	# loads libcuda: the agent's control thread cannot have polled in
	# between, so only descriptor calls wrapped from cuDNN's load on
	# (blas.h's np_blas_track) know the plan; else the reader is named
	run_fake "$py" "$T/$tag-conv-early" --conv graph --conv-reader opaque --conv-early --at 3
	if python3 $IT/check_origin.py "$T/$tag-conv-early/events.jsonl" --cuda \
		--origin forward blocks.0.attn.conv1 output --step 3 --op-kernel xmma_fprop \
		> "$T/chk" 2>&1; then
		ok "$tag: a cuDNN plan built right after libcuda's load, tracked from cuDNN's load"
	else
		cat "$T/$tag-conv-early.err" >> "$T/chk"
		bad "$tag: a cuDNN plan built right after libcuda's load" "$T/chk"
	fi
	# a plan built before the agent came (torch's cached plans under
	# `nanprof attach`; here through cuDNN's own symbols), its kernel's
	# parameters hiding its tensors (FAKE_CUDNN_OPAQUE), its output read
	# by a decoded add: only each call's variant pack names the
	# addresses, noted for the generic tier, and the add's read of the
	# output names the convolution; without the pack's note the add
	# looks born (in conv2)
	FAKE_ENV="FAKE_CUDNN_OPAQUE=1 NANPROF_AGENT_DEBUG=1" run_fake "$py" "$T/$tag-conv-unseen" \
		--conv graph --conv-unseen --conv-reader decoded --at 3
	if python3 $IT/check_origin.py "$T/$tag-conv-unseen/events.jsonl" --cuda \
		--origin forward blocks.0.attn.conv1 output --step 3 --op-kernel xmma_fprop \
		> "$T/chk" 2>&1 &&
	   grep -q "cuDNN: a graph execution left to the generic tier: the plan not seen built (before the agent came?); its variant pack's addresses noted" \
		"$T/$tag-conv-unseen.err"; then
		ok "$tag: a cuDNN plan built before the agent: its variant pack's addresses noted, the convolution named at a decoded reader"
	else
		grep -h "cuDNN" "$T/$tag-conv-unseen.err" >> "$T/chk"
		bad "$tag: a cuDNN plan built before the agent" "$T/chk"
	fi
	# the same, the first convolution writing e, which the gate rewrites
	# with finite values before the head reads the undecodable reader's
	# output: that reader's check, judged at the head, comes after e's
	# clean result, and must still see e as it was (cupti/dirty.h's late
	# judgements); without that history it names the reader
	run_fake "$py" "$T/$tag-conv-late" --conv graph --conv-reader opaque-late --at 3
	if python3 $IT/check_origin.py "$T/$tag-conv-late/events.jsonl" --cuda \
		--origin forward blocks.0.attn.conv1 output --step 3 --op-kernel xmma_fprop \
		> "$T/chk" 2>&1; then
		ok "$tag: a late generic judgement sees its input as it was before a later clean rewrite"
	else
		cat "$T/$tag-conv-late.err" >> "$T/chk"
		bad "$tag: a late generic judgement after a clean rewrite" "$T/chk"
	fi
	# the same two kernels as a user's @triton.jit kernels, launched by
	# Triton's own JITFunction.run: the plan read from their source
	# (agent/triton_jit.py) names the exp; without it the mul
	if ! PYTHONPATH=$TRITON_DIR "$py" -c 'import triton.runtime.jit' > /dev/null 2>&1; then
		skp "$tag: a user's @triton.jit kernels" "no triton in $TRITON_DIR (bash scripts/setup.sh --tests)"
	else
		FAKE_ENV="PYTHONPATH=$TRITON_DIR" run_fake "$py" "$T/$tag-jit" --triton jit --at 3
		FAKE_ENV="PYTHONPATH=$TRITON_DIR NANPROF_AGENT_SKIP=triton" \
			run_fake "$py" "$T/$tag-jit-off" --triton jit --at 3
		if python3 $IT/check_origin.py "$T/$tag-jit/events.jsonl" --cuda \
			--origin forward blocks.0.attn output --step 3 --op-kernel user_exp_kernel \
			> "$T/chk" 2>&1 &&
		   grep -q '"gpu_triton_checks":[1-9]' "$T/$tag-jit/events.jsonl" &&
		   python3 $IT/check_origin.py "$T/$tag-jit-off/events.jsonl" --cuda \
			--origin forward blocks.0.attn output --step 3 --op-kernel user_mul_kernel \
			>> "$T/chk" 2>&1; then
			ok "$tag: a user's @triton.jit kernel's overflow named at it, its outputs read from its source"
		else
			cat "$T/$tag-jit.err" "$T/$tag-jit-off.err" >> "$T/chk"
			bad "$tag: a user's @triton.jit kernels' outputs from their source" "$T/chk"
		fi
	fi
	# a torch.compile'd region: two Triton kernels in a row, launched by
	# torch's own CachingAutotuner.run (cupti/triton.h), the first
	# overflowing.  Their parameters name no output: only the plan the
	# wrapped run() hands over names the exp; without it
	# (NANPROF_AGENT_SKIP=triton) the generic tier names the mul
	if ! "$py" -c 'import torch._inductor.runtime.triton_heuristics' > /dev/null 2>&1; then
		skp "$tag: torch.compile's Triton kernels" "this torch has no Inductor"
		return
	fi
	run_fake "$py" "$T/$tag-triton" --triton --at 3
	FAKE_ENV="NANPROF_AGENT_SKIP=triton" run_fake "$py" "$T/$tag-triton-off" --triton --at 3
	if python3 $IT/check_origin.py "$T/$tag-triton/events.jsonl" --cuda \
		--origin forward blocks.0.attn output --step 3 --op-kernel triton_poi_fused_exp_0 \
		> "$T/chk" 2>&1 &&
	   grep -q '"gpu_triton_checks":[1-9]' "$T/$tag-triton/events.jsonl" &&
	   grep -q '"gpu_triton_checks":0' "$T/$tag-triton-off/events.jsonl" &&
	   python3 $IT/check_origin.py "$T/$tag-triton-off/events.jsonl" --cuda \
		--origin forward blocks.0.attn output --step 3 --op-kernel triton_poi_fused_mul_1 \
		>> "$T/chk" 2>&1; then
		ok "$tag: a Triton kernel's overflow named at it, not at the Triton kernel that reads it"
	else
		cat "$T/$tag-triton.err" "$T/$tag-triton-off.err" >> "$T/chk"
		bad "$tag: Triton kernels' outputs from their Python call" "$T/chk"
	fi
	# the reader an Inductor kernel fusing 19 reads, the exp's output its
	# 18th: past the 16 a launch entry keeps, so the rest wait beside the
	# check (cupti/wide_inputs.h); judged on 16, the sum was named
	run_fake "$py" "$T/$tag-triton-wide" --triton wide --at 3
	if python3 $IT/check_origin.py "$T/$tag-triton-wide/events.jsonl" --cuda \
		--origin forward blocks.0.attn output --step 3 --op-kernel triton_poi_fused_exp_0 \
		> "$T/chk" 2>&1 &&
	   grep -q '"gpu_wide_inputs_lost":0,' "$T/$tag-triton-wide/events.jsonl"; then
		ok "$tag: a Triton kernel's overflow read as the 18th of 19 inputs: named at it, not at the reader"
	else
		cat "$T/$tag-triton-wide.err" >> "$T/chk"
		bad "$tag: a Triton kernel of 19 inputs reading an overflow" "$T/chk"
	fi
}

if [ "$(id -u)" -ne 0 ]; then
	skp "fake GPU under nanprof" "need root for bpf"
elif ! grep -qa np_check_f32 libnanprof_agent.so 2>/dev/null; then
	skp "fake GPU under nanprof" "agent built without its GPU side (no CUDA toolkit)"
elif ! make -s fakecuda > "$T/make.out" 2>&1; then
	bad "fake libcuda, libcupti and ops build" "$T/make.out"
else
	one_python python3
	if [ -n "${NANPROF_TEST_ONE_PYTHON:-}" ]; then
		skp "fake GPU under nanprof with /usr/bin/python3" "NANPROF_TEST_ONE_PYTHON: pyenv's python only"
	elif [ -x /usr/bin/python3 ]; then
		one_python /usr/bin/python3
	else
		skp "fake GPU under nanprof with /usr/bin/python3" "not installed"
	fi
fi
finish
