#!/usr/bin/env bash
# test_gpu_fake.sh - the agent's CUDA side end to end without a GPU: the
# real libnanprof_agent.so, preloaded alone, on a fake libcuda.so.1 and
# libcupti.so.13 (tests/fakecuda/) that run kernels on the host and the
# agent's check kernels as the host emulation of finite_check.cu.  The
# fake job launches real torch kernels (names, layouts, arguments): a
# -inf mask nobody reads, then an exp that overflows and an add that
# reads it, a half add, a launch packed in `extra`, a masked softmax
# whose fully masked row is NaN (its output sized from its arguments and
# grid), a kernel whose output cannot be checked, one whose numel lies,
# a CUDA graph replayed twice and a kernel
# reading its output, a fused AdamW step with lr=inf (multi_tensor_apply),
# and a division across two chunks mapped into one reserved range (as
# PyTorch's expandable segments grow), then one chunk unmapped under a
# kernel whose numel still says both.
# The records must name the exp as the origin, the mask as a
# contained birth, follow the graph's NaN out of it, catch the params at
# the optimizer's kernel, and count every check (small outputs of one
# launch are checked in one list launch; without the list kernels, one
# launch each).  Then CUPTI taken by another
# tool; two devices, a thread launching on each, checks deferred
# (fake_devices.c: every check run in its own device's context, the
# birth on device 1 named with its device); copies and memsets the agent
# does not check, of every kind it reads (fake_writes.c: what they write
# launches a check waiting there first, and makes an opaque kernel's
# note stale); and a GPU the agent has no
# check kernels for: GPU checks off, said why, and the job unharmed.
# Needs the agent built with its GPU side (the CUDA toolkit's headers);
# no root, no torch.
set -u
. "$(dirname "$0")/lib.sh" gpu-fake

F=.output/fakecuda
RR="python3 $IT/read_records.py"
# the checks and undecodable kernels fake_job.c launches
# (the fused AdamW: 21 params, exp_avg and exp_avg_sq each)
CHECKS=73 UNDECODED=3 LAUNCHES=14
# in launches: the fused AdamW's 60 small outputs in two list launches
# (48 + 12), its three 70000-float ones alone, the rest one each; the
# fake counts a check at each run: the graph's at both replays
CHECK_LAUNCHES=15 CHECK_RUNS=$((CHECKS + 1))

run_job() {   # records-file out-prefix [env...]
	local rec=$1 out=$2
	shift 2
	env "$@" LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$rec" \
		NANPROF_CUPTI="$PWD/$F/libcupti.so.13" LD_LIBRARY_PATH="$PWD/$F" \
		timeout 60 $F/fake_job > "$out.out" 2> "$out.err"
}

# job_stats NAME RC OUT REGEX [quiet]: the job exited 0 and its stats line
# matches REGEX (with quiet, it wrote nothing on stderr either)
job_stats() {
	local name=$1 rc=$2 out=$3 re=$4 quiet=${5:-}
	if [ "$rc" -eq 0 ] && grep -qE -- "$re" "$out.out" &&
	   { [ -z "$quiet" ] || ! grep -q . "$out.err"; }; then
		ok "$name"
	else
		{ echo "exit $rc"; cat "$out.out" "$out.err"; } > "$T/chk"
		bad "$name" "$T/chk"
	fi
}

# expect NAME ARGS...: one verdict from read_records.py's checks
expect() {
	local name=$1
	shift
	if $RR "$@" > "$T/chk" 2>&1; then ok "$name"; else bad "$name" "$T/chk"; fi
}

# no_check NAME RECORDS KERNEL K=V...: no check of a kernel whose name
# holds KERNEL reported these fields (what a check that waited past a
# later write of its range would have read)
no_check() {
	local name=$1 rec=$2 sub=$3
	shift 3
	if python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import read_records
sub, want = sys.argv[3], dict(kv.split("=", 1) for kv in sys.argv[4:])
bad = [r for r in read_records.read(sys.argv[2]) if r["kind"] == "gpu_check"
       and sub in r.get("kernel", "") and all(str(r.get(k)) == v for k, v in want.items())]
print(bad)
sys.exit(1 if bad else 0)' "$IT" "$rec" "$sub" "$@" > "$T/chk" 2>&1; then
		ok "$name"
	else
		bad "$name" "$T/chk"
	fi
}

if ! grep -qa np_check_f32 libnanprof_agent.so 2>/dev/null; then
	skp "fake GPU tests" "agent built without its GPU side (no CUDA toolkit)"
elif ! make -s fakecuda > "$T/make.out" 2>&1; then
	bad "fake libcuda, libcupti and job build" "$T/make.out"
else
	# --- checks on ---
	run_job "$T/rec" "$T/job"
	rc=$?
	stats=$(grep '^fake_job:' "$T/job.out")
	if [ $rc -eq 0 ] && ! grep -q . "$T/job.err" && [[ $stats == *" faults=0"* ]] &&
	   [[ $stats == *" check_launches=$CHECK_LAUNCHES checks=$CHECK_RUNS "* ]] &&
	   [[ $stats == *" libraries=1 "* ]]; then
		ok "job exits 0; $CHECKS checks in $CHECK_LAUNCHES launches (lists) from the embedded fatbin, no fault"
	else
		{ echo "exit $rc"; cat "$T/job.out" "$T/job.err"; } > "$T/chk"
		bad "job exits 0 with $CHECKS checks in $CHECK_LAUNCHES launches, no fault" "$T/chk"
	fi
	expect "status gpu_on" "$T/rec" --expect-status gpu_on:every
	expect "origin: the exp that overflowed, not the earlier -inf mask" \
		"$T/rec" --expect-origin exp_kernel_cuda
	expect "exp's birth: 3 +inf, first at 1234" "$T/rec" \
		--expect-gpu-check "exp_kernel_cuda:propagated=false,dtype=float32,numel=10000,posinf=3,nan=0,first_bad=1234"
	expect "the add reading it is a propagation of that birth" "$T/rec" \
		--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,posinf=3,first_bad=1234"
	expect "the -inf mask is a birth that never propagated" "$T/rec" \
		--expect-contained "FillFunctor<float>" \
		--expect-gpu-check "FillFunctor<float>:neginf=4096,first_bad=0,max_abs=0.0"
	expect "masked softmax: all 10000 outputs checked, the fully masked row a contained birth" \
		"$T/rec" --expect-contained "softmax_warp_forward" \
		--expect-gpu-check "softmax_warp_forward:propagated=false,dtype=float32,numel=10000,nan=100,first_bad=300"
	expect "half add (unaligned output, launched as a CUkernel) checked" "$T/rec" \
		--expect-gpu-check "CUDAFunctor_add<c10::Half>:dtype=float16,numel=1000,posinf=2,first_bad=7,propagated=false"
	expect "launch with arguments in extra checked" "$T/rec" \
		--expect-gpu-check "DivFunctor<float>:dtype=float32,numel=64,nan=1,first_bad=42"
	expect "CUDA graph: the captured check runs at each replay" "$T/rec" \
		--expect-gpu-check "DivFunctor<float>:graph=true,nan=1,first_bad=5,spread=true"
	expect "CUDA graph: a launch after the replays propagates the graph's birth" "$T/rec" \
		--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,graph=false,nan=1,first_bad=5"
	expect "optimizer.step() with lr=inf: the params are births at the fused AdamW" "$T/rec" \
		--expect-gpu-check "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>:propagated=false,dtype=float32,numel=100,neginf=100,first_bad=0" \
		--expect-gpu-check "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>:propagated=false,numel=70000,neginf=70000"
	expect "expandable segment: a division across two mapped chunks checked whole" "$T/rec" \
		--expect-gpu-check "DivFunctor<float>:dtype=float32,numel=1024,nan=1,first_bad=700,propagated=false"
	expect "counters last: $CHECKS checks in $CHECK_LAUNCHES launches, $UNDECODED undecoded (the masked fill named), nothing dropped" "$T/rec" \
		--expect-counters "checked=$CHECKS,skipped=$UNDECODED,dropped=0,overflow=0,what=launches $LAUNCHES" \
		--expect-launches "launches=$LAUNCHES,sampled_out=0,check_launches=$CHECK_LAUNCHES" \
		--expect-tracker "evicted=0,forgotten=0" \
		--expect-undecoded "masked_fill_kernel:launches=1,rank=0"
	expect "no GPU record lost (numbered 1..N)" "$T/rec" --expect-gpu-seq
	expect "the callbacks' and check launches' host time sampled (one in 31)" "$T/rec" \
		--expect-host-cost

	# --- CUPTI held by another tool ---
	run_job "$T/rec2" "$T/job2" FAKE_CUPTI_TAKEN=1
	job_stats "CUPTI taken: the job exits 0, no check launched (no hook hands it a CUDA tensor)" \
		$? "$T/job2" ' check_launches=0 ' quiet
	expect "CUPTI taken: status gpu_on, at module level because cupti is taken" "$T/rec2" \
		--expect-status "gpu_on:modules: cupti taken"

	# --- sampled: every 2nd launch of each kernel ---
	# add's second launch (c) and div's second (the graph's, i) are
	# skipped; nothing propagates, so sampling never zooms in
	run_job "$T/rec4" "$T/job4" NANPROF_GPU_MODE=sample:2
	job_stats "sample:2: the job exits 0, $((CHECKS - 2)) checks run (two launches sampled out)" \
		$? "$T/job4" " checks=$((CHECKS - 2)) .* faults=0"
	expect "sample:2: mode said, counters agree, 2 launches sampled out" "$T/rec4" --expect-status "gpu_on:sample" \
		--expect-counters "checked=$((CHECKS - 2)),skipped=$UNDECODED,dropped=0,what=launches $LAUNCHES" \
		--expect-launches "launches=$LAUNCHES,sampled_out=2"

	# --- no list check kernels: one launch per check, the same checks ---
	run_job "$T/rec5" "$T/job5" FAKE_CUDA_NO_LIST=1
	job_stats "no list kernels: the job exits 0, $CHECKS checks in as many launches" \
		$? "$T/job5" " check_launches=$CHECKS checks=$CHECK_RUNS .* faults=0"
	expect "no list kernels: the same births" "$T/rec5" --expect-origin exp_kernel_cuda \
		--expect-gpu-check "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>:propagated=false,dtype=float32,numel=100,neginf=100,first_bad=0" \
		--expect-counters "checked=$CHECKS,skipped=$UNDECODED,dropped=0,overflow=0" \
		--expect-launches "check_launches=$CHECKS"

	# --- the benchmark's diagnosis: the same check launches, nothing read ---
	run_job "$T/rec6" "$T/job6" NANPROF_GPU_DIAG=empty-checks
	job_stats "empty checks: the job exits 0, the same $CHECK_LAUNCHES check launches" \
		$? "$T/job6" " check_launches=$CHECK_LAUNCHES checks=$CHECK_RUNS .* faults=0"
	expect "empty checks: said in gpu_on, the same $CHECKS checks counted" "$T/rec6" \
		--expect-status "gpu_on:every, empty checks" \
		--expect-counters "checked=$CHECKS,skipped=$UNDECODED,dropped=0,what=launches $LAUNCHES"
	if python3 -c '
import sys; sys.path.insert(0, sys.argv[2]); import read_records
n = [r for r in read_records.read(sys.argv[1]) if r["kind"] == "gpu_check"]
sys.exit(1 if n else 0)' "$T/rec6" "$IT" 2>"$T/chk"; then
		ok "empty checks: nothing read, so no kernel's result is reported"
	else
		bad "empty checks: nothing read, so no kernel's result is reported" "$T/chk"
	fi

	# --- checks deferred over up to 8 launches, in lists (cupti/defer.h) ---
	# the same checks in fewer launches, the same verdicts, no check
	# reading unmapped memory (the unmap of (n) launches what waits
	# first); and (o), (p): a check waiting for its list when an in-place
	# kernel writes its range is launched before that kernel, or the
	# add would take the div's +inf for its own birth; (q) to (t): a
	# cuBLAS call's kernels launch what waits only when the call writes
	# it (D, or the workspace the handle was given: (q)'s fill would
	# otherwise read (r)'s partial sums), and say what they write
	# (the masked fill (g) and (v), whose max |D| cublasLt writes, are
	# then the launches whose writes are not known; (u)'s check goes
	# before (v)); (w): the fused AdamW's outputs are tested against
	# what waits in turns of 16, its last param's in the last turn, over
	# (w)'s fill; (x), (y): a device copy launches what waits only when
	# it writes a waiting range; (z): a cuDNN convolution's kernel
	# launches what waits only when it writes it (its output, the
	# workspace its variant pack gives: (z)'s fill would otherwise read
	# its scratch); (z2): a cuDNN batch norm's, when it writes it (its
	# saved statistics over the div's +inf: the birth would be lost);
	# (z3): a cuFFT transform's, when it writes it (the work area torch
	# sets: (z3)'s fill would otherwise read its scratch).  Flushes at a
	# write: (k), (p), (r), (l), (y), (z), (z2), (z3); at unknown
	# writes: (g), (q)'s first GEMM (its handle's workspace not set
	# yet), (v); none at an allocation or a copy (memory=0).
	# FAKE_JOB_IN_PLACE adds 19 checks: (o), (p), (q)'s two, (r), (s),
	# (t), (u), (v), (w), (x), (y), (y)'s copy, (z)'s fill and
	# convolution, (z2)'s div and batch norm, (z3)'s fill and
	# transform; all but the captured (i) wait
	run_job "$T/rec8" "$T/job8" FAKE_JOB_IN_PLACE=1
	run_job "$T/rec7" "$T/job7" NANPROF_GPU_DEFER=8 FAKE_JOB_IN_PLACE=1
	rc=$?
	dl=$(sed -n 's/.* check_launches=\([0-9]*\) .*/\1/p' "$T/job7.out")
	nl=$(sed -n 's/.* check_launches=\([0-9]*\) .*/\1/p' "$T/job8.out")
	job_stats "deferred: the job exits 0, $((CHECKS + 19)) checks, no fault" \
		$rc "$T/job7" " checks=$((CHECK_RUNS + 19)) .* faults=0"
	if [ -n "$dl" ] && [ -n "$nl" ] && [ "$dl" -lt $((nl * 3 / 4)) ]; then
		ok "deferred: a quarter fewer check launches at least ($dl; $nl without deferring)"
	else
		echo "check launches: '$dl' deferred, '$nl' at once" > "$T/chk"
		bad "deferred: a quarter fewer check launches at least" "$T/chk"
	fi
	expect "deferred: said in gpu_on; the same births, counters and records" "$T/rec7" \
		--expect-status "gpu_on:every, deferred 8" --expect-origin exp_kernel_cuda \
		--expect-gpu-check "exp_kernel_cuda:propagated=false,dtype=float32,numel=10000,posinf=3,nan=0,first_bad=1234" \
		--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,posinf=3,first_bad=1234" \
		--expect-gpu-check "DivFunctor<float>:graph=true,nan=1,first_bad=5,spread=true" \
		--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,graph=false,nan=1,first_bad=5" \
		--expect-gpu-check "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>:propagated=false,dtype=float32,numel=100,neginf=100,first_bad=0" \
		--expect-gpu-check "DivFunctor<float>:dtype=float32,numel=1024,nan=1,first_bad=700,propagated=false" \
		--expect-counters "checked=$((CHECKS + 19)),skipped=$UNDECODED,dropped=0,overflow=0" \
		--expect-launches "check_launches=$dl" --expect-gpu-seq \
		--expect-defer "checks=$((CHECKS + 18)),unknown=3,write=8,memory=0,full=0"
	expect "deferred: the in-place div is the birth of its +inf" "$T/rec7" \
		--expect-gpu-check "DivFunctor<float>:dtype=float32,numel=64,posinf=1,first_bad=9,propagated=false"
	no_check "deferred: the add's check, waiting, ran before the div wrote its range" \
		"$T/rec7" "CUDAFunctor_add<float>" numel=64 posinf=1 first_bad=9
	expect "deferred: the GEMM (r) is the birth of its row of +inf" "$T/rec7" \
		--expect-gpu-check "cublasLt_splitKreduce_kernel_fake:dtype=float32,numel=1024,posinf=32,first_bad=0,propagated=false"
	no_check "deferred: the fill's check, waiting, ran before cuBLAS wrote its partial sums there" \
		"$T/rec7" "FillFunctor<float>" numel=2048
	no_check "deferred: the add's check, waiting, ran before cublasLt wrote its max |D| there" \
		"$T/rec7" "CUDAFunctor_add<float>" numel=64 posinf=1 first_bad=0
	no_check "deferred: the fill's check, waiting, ran before the AdamW step wrote its range (a later turn)" \
		"$T/rec7" "FillFunctor<float>" numel=64
	no_check "deferred: the add's check, waiting, ran before a device copy wrote its range" \
		"$T/rec7" "CUDAFunctor_add<float>" numel=32
	no_check "deferred: the fill's check, waiting, ran before cuDNN's convolution wrote its workspace" \
		"$T/rec7" "FillFunctor<float>" numel=96
	expect "deferred: the div's check, waiting, ran before cuDNN's batch norm wrote its statistics there" \
		"$T/rec7" \
		--expect-gpu-check "DivFunctor<float>:dtype=float32,numel=8,posinf=1,first_bad=0,propagated=false"
	no_check "deferred: the fill's check, waiting, ran before cuFFT's transform wrote its work area" \
		"$T/rec7" "FillFunctor<float>" numel=80

	# --- two devices, a thread each (nn.DataParallel's replicas), deferred ---
	# each thread's flushes launch the other device's waiting lists too:
	# each in its own context, or the fake refuses it (a fault)
	FAKE_CUDA_DEVICES=2 NANPROF_GPU_DEFER=8 LD_PRELOAD="$PWD/libnanprof_agent.so" \
		NANPROF_AGENT_RECORDS="$T/recdev" NANPROF_CUPTI="$PWD/$F/libcupti.so.13" \
		timeout 60 $F/fake_devices 200 150 > "$T/dev.out" 2> "$T/dev.err"
	job_stats "two devices, a thread each, deferred: all 800 checks run, no fault" \
		$? "$T/dev" ' checks=800 .* faults=0$' quiet
	expect "two devices: the +inf fill on device 1 is the birth" "$T/recdev" \
		--expect-origin "FillFunctor<float>" \
		--expect-gpu-check "FillFunctor<float>:propagated=false,posinf=4096,device=1"
	expect "two devices: the add reading it on device 1 is its propagation" "$T/recdev" \
		--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,posinf=4096,device=1"

	# --- copies and memsets the agent does not check (fake_writes.c) ---
	# (1) a write into a waiting check's range launches it first; (2) one
	# past it (by its pitched offsets) launches nothing; (3) a write over
	# an opaque kernel's output makes its note stale.  Deferred and not.
	run_writes() {   # records-file out-prefix defer kind [elsewhere]
		local rec=$1 out=$2 defer=$3
		shift 3
		NANPROF_GPU_DEFER=$defer LD_PRELOAD="$PWD/libnanprof_agent.so" \
			NANPROF_AGENT_RECORDS="$rec" NANPROF_CUPTI="$PWD/$F/libcupti.so.13" \
			LD_LIBRARY_PATH="$PWD/$F" timeout 60 $F/fake_writes "$@" \
			> "$out.out" 2> "$out.err"
	}
	for kind in htod memset memset2d copy2d copy3d batch batch3d; do
		for defer in 8 0; do
			w="$T/w-$kind-$defer"
			run_writes "$w.rec" "$w" $defer $kind
			job_stats "$kind (defer $defer): 5 checks, no fault" $? "$w" \
				' checks=5 .* faults=0$' quiet
			no_check "$kind (defer $defer): the fill's check read y before the write" \
				"$w.rec" "FillFunctor<float>"
			no_check "$kind (defer $defer): the opaque kernel's note went stale at the write" \
				"$w.rec" nvjet_fake_writes_opaque
			expect "$kind (defer $defer): the adds reading the +inf are its births" "$w.rec" \
				--expect-gpu-check "CUDAFunctor_add<float>:propagated=false,posinf=8,first_bad=68" \
				--expect-gpu-check "CUDAFunctor_add<float>:propagated=false,posinf=16,first_bad=0"
		done
		expect "$kind deferred: a flush at (1)'s write, none at (2)'s" "$T/w-$kind-8.rec" \
			--expect-defer "checks=5,write=1,unknown=1,order=1,memory=0,window=0"
	done
	run_writes "$T/w-host.rec" "$T/w-host" 8 copy2d host
	job_stats "a 2D copy to the host, deferred: no fault" $? "$T/w-host" ' faults=0$' quiet
	expect "a 2D copy to the host launches what waits" "$T/w-host.rec" \
		--expect-defer "checks=5,write=1,unknown=1,order=2,memory=0"
	run_writes "$T/w-many.rec" "$T/w-many" 8 copy2d many
	job_stats "a batch of 20 copies, deferred: no fault" $? "$T/w-many" ' faults=0$' quiet
	expect "a batch of more copies than the agent reads launches what waits" "$T/w-many.rec" \
		--expect-defer "checks=5,write=1,unknown=2,order=1,memory=0"

	# what such writes do to the origin tracker (fake_writes.c (4), (5)):
	# a birth's output written over, then read by a later birth, which is
	# a birth of its own; a copy of a birth's output from device memory,
	# whose reader is that birth's propagation.  Told in launch order,
	# deferred or not.
	# tracker_phase MODE KIND WHAT READER [expect args...]: fake_writes KIND
	# MODE (after:side: after side), deferred and not; the origin f an
	# add's birth (+inf at 0..15), READER the later add's verdict
	tracker_phase() {
		local mode=$1 kind=$2 what=$3 reader=$4 defer w
		shift 4
		for defer in 0 8; do
			w="$T/w${mode/:/-}-$kind-$defer"
			run_writes "$w.rec" "$w" $defer $kind ${mode/:/ }
			job_stats "$kind $what (defer $defer): no fault" $? "$w" ' faults=0$' quiet
			expect "$kind $what (defer $defer): the origin, and the reader" "$w.rec" \
				--expect-gpu-check "CUDAFunctor_add<float>:propagated=false,posinf=16,first_bad=0" \
				--expect-gpu-check "CUDAFunctor_add<float>:$reader" "$@"
		done
	}
	for kind in htod dtod memset memset2d copy2d copy3d batch batch3d; do
		tracker_phase after $kind "over an origin's output, then a later birth reading it" \
			"propagated=false,posinf=8,first_bad=132" --expect-tracker "writes_lost=0"
	done
	for kind in copy2d copy3d batch batch3d; do   # a batch: two copies, both carried
		tracker_phase follow $kind "of an origin's output: its reader propagates it" \
			"propagated=true,posinf=16,first_bad=0" \
			--expect-tracker "copies=$([ $kind = batch ] && echo 2 || echo 1)"
	done
	# a copy whose source starts in a clean tensor and runs into the
	# origin's output (fake_writes.c (6)): its first byte is clean, yet
	# the part copied from the origin carries it, in its place, where the
	# copied tensor's reader finds it
	for kind in dtod copy2d copy3d batch batch3d; do
		tracker_phase slice $kind "across two tensors, into the origin's" \
			"propagated=true,posinf=8,first_bad=0" --expect-tracker "copies=1"
	done
	# readers of whole buffers handed their start, a birth in a slice
	# further in (fake_writes.c (7)): the origin's output itself (an add,
	# a sum), and a copy of it whose dirty part lies past the copy's
	# start; judged over the extents they read, all propagate the origin
	for kind in dtod copy2d copy3d batch batch3d; do
		tracker_phase whole $kind "past the start of what a reader reads" \
			"propagated=true,posinf=16,first_bad=2048" \
			--expect-gpu-check "SumFunctor:propagated=true,posinf=1,numel=1" \
			--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,posinf=8,first_bad=8" \
			--expect-tracker "copies=1"
	done
	# the writes on a side stream with no checked launch after them there
	# (a batch loaded on a copy stream), ordered by the host: told before
	# the main stream's reader of what they wrote, not 50 ms later
	for kind in htod dtod memset copy2d batch3d; do
		tracker_phase after:side $kind "on a side stream, over an origin's output" \
			"propagated=false,posinf=8,first_bad=132" --expect-tracker "writes_lost=0"
	done
	for kind in copy2d batch; do
		tracker_phase follow:side $kind "on a side stream, of an origin's output" \
			"propagated=true,posinf=16,first_bad=0" \
			--expect-tracker "copies=$([ $kind = batch ] && echo 2 || echo 1)"
	done
	# a device copy of one range: checked when its source's writer was
	# (every launch), followed by the tracker when not (sampling)
	for mode in every sample:1; do
		w="$T/wf-dtod-${mode%%:*}"
		NANPROF_GPU_MODE=$mode run_writes "$w.rec" "$w" 0 dtod follow
		job_stats "dtod of an origin's output ($mode): no fault" $? "$w" ' faults=0$' quiet
		expect "dtod of an origin's output ($mode): its reader propagates it" "$w.rec" \
			--expect-gpu-check "CUDAFunctor_add<float>:propagated=false,posinf=16,first_bad=0" \
			--expect-gpu-check "CUDAFunctor_add<float>:propagated=true,posinf=16,first_bad=0"
	done
	expect "dtod, every launch: the copy is checked" "$T/wf-dtod-every.rec" \
		--expect-gpu-check "cuMemcpy device to device:propagated=true,posinf=16"
	no_check "dtod, sampled: the copy is not checked, the tracker follows it" \
		"$T/wf-dtod-sample.rec" "cuMemcpy device to device"
	expect "dtod, sampled: told to the tracker as a copy of a non-finite source" \
		"$T/wf-dtod-sample.rec" --expect-tracker "copies=1"

	# --- no code for this GPU in the agent's fatbin ---
	run_job "$T/rec3" "$T/job3" FAKE_CUDA_NO_IMAGE=1
	job_stats "no check kernel image: the job exits 0, no check launched" \
		$? "$T/job3" ' check_launches=0 ' quiet
	expect "no check kernel image: gpu_off says so after gpu_on" "$T/rec3" \
		--expect-status "gpu_off:cannot load the check kernels" \
		--expect-counters "checked=0,what=launches $LAUNCHES" --expect-gpu-seq
fi
finish
