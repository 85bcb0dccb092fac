#!/usr/bin/env bash
# gpu_check.sh - nanprof's one GPU verification (docs/gpu-results.md).
#
#   make gpu-check OUT=DIR        or        bash scripts/gpu_check.sh DIR
#
# Runs from a copy of the build directory on an NVIDIA host: ./nanprof-static
# and ./libnanprof_agent.so built elsewhere, since the GPU host has no
# clang, bpftool or libbpf.  It compiles nothing, unless the agent cannot
# run its check kernels there: then it rebuilds just the agent with the
# host's nvcc (`make -B libnanprof_agent.so`) and says so.
#
# In order, each job under its own time limit and the whole under
# GPU_CHECK_BUDGET seconds (default 480; a device command may take 600):
#   1. facts: host, GPU, driver, kernel, BTF, torch, libcupti, USDT, and
#      whether nanprof can load BPF here (a `nanprof run` of print(1));
#   2. the agent preloaded alone (no BPF needed), records to a file: every
#      fault of tests/integration/faults.py on CUDA, a clean job (losses
#      bit-identical with and without the agent), CUDA-graph jobs (a
#      forward and a backward fault inside the replayed graph), the
#      forward fault with expandable segments (memory mapped by cuMemMap),
#      a batch-norm overflow on PyTorch's own kernels, NCHW and
#      channels-last (tests/gpu/bn_fault.py), and with cuDNN on: its batch
#      norm overflowing, and a convolution's overflow it reads first (no
#      guards), both seen at cuDNN's batch norm call; and attention whose fused
#      kernel makes the NaN: bf16 on flash, fp32 on the memory-efficient
#      kernel (tests/gpu/flash_fault.py); two cuBLAS matmuls in a row, the
#      first overflowing (tests/gpu/chain_fault.py); a triangular solve by
#      a zero diagonal, beside a gemv and a dot (tests/gpu/solve_fault.py);
#      rotary embeddings as complex numbers overflowing in torch's complex64
#      multiply, checked as its real view (tests/gpu/rope_fault.py), and a
#      Fourier layer's complex GEMM seen at its cublasCgemm call
#      (tests/gpu/spectral_fault.py); a branch's exp overflowing in a block
#      that concatenates 20 branches in one torch.cat, more inputs than
#      a check keeps (tests/gpu/catwide_fault.py);
#      a torch.compile'd model's Triton kernel overflowing
#      (tests/gpu/compile_fault.py), and a user's @triton.jit kernel,
#      eager and compiled (tests/gpu/jit_fault.py; all informative:
#      CHECK, not FAIL);
#   3. if BPF works and we are root: the same jobs under `nanprof run`,
#      the origin's step, phase and module checked as on the CPU, a
#      GradScaler's overflow (no origin) and a fault at every loss scale
#      (the origin), and the forward fault under `nanprof attach` (CUPTI
#      subscribed mid-run);
#   4. the overhead benchmark (tests/gpu/bench_gpu.py);
#   4b. if time is left: the newer decoders' faults under `nanprof run` (a
#      reduction, a strided elementwise kernel, nll_loss's scalars, flash
#      and memory-efficient attention, the matmul chain without guards,
#      the triangular solve;
#      they ran agent-alone in step 2 already), and MHA's cuBLAS overflow
#      without the guards and cuBLAS's calls (the generic tier alone);
#      with two GPUs or more, a model split over two devices whose second
#      part overflows (tests/gpu/split_fault.py: the origin on cuda:1);
#      a NaN brought in by a pitched copy (cuMemcpy2DAsync) over a
#      buffer whose fill's check waits, checks deferred
#      (tests/gpu/pitched_fault.py: its reader named, not the fill);
#   5. if time is left: the forward fault with the agent under
#      compute-sanitizer's memcheck (information: invalid accesses named).
# Steps 3 and 4b run GPU_CHECK_LANES jobs side by side (default 3; 1: one
# by one); the benchmark always runs alone.  GPU_CHECK_SKIP=bench,memcheck
# (any of agent, nanprof, bench, late, memcheck: steps 2, 3, 4, 4b, 5)
# leaves those steps out, each with a SKIP row: a rerun of the checks
# within what is left of a device lease, or the whole split over two
# commands of at most 600 s (GPU_CHECK_SKIP=bench,memcheck, then
# GPU_CHECK_SKIP=agent,nanprof,late).
# GPU_CHECK_BENCH_MODELS=cnn (or transformer,faults,cnn) picks the
# benchmark's models (default: transformer,faults; bench_gpu.py --models).
# PYTHON picks the python (default /opt/torch/.venv/bin/python3, else python3).
# GPU_CHECK_REBUILD=1 rebuilds the agent on the host even if the copied one
# seems to work.  GPU_CHECK_DRY_CPU=1 runs every step on the CPU, to test
# this script's plumbing where there is no GPU: its GPU verdicts then fail,
# by design.
#
# Writes OUT/results.md (printed at the end too), OUT/results.tsv,
# OUT/facts.txt, OUT/gpu-check.log (all it printed), OUT/work/ (every job's
# output, records and nanprof directory) and OUT/gpu-check.tar.gz (work/
# packed without its big files: the device tool brings back 8 files).
# Exit status: 0 every hard check passed, 1 one failed, 2 no CUDA device
# (nothing verified).  Through make, any non-zero status reads as make's 2;
# make's "Error N" line and results.md give the script's.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-gpu-results}
BUDGET=${GPU_CHECK_BUDGET:-480}
START=$(date +%s)
NP=$ROOT/nanprof-static
AGENT=$ROOT/libnanprof_agent.so
FAULTS=$ROOT/tests/integration/faults.py
GPUT=$ROOT/tests/gpu
DRY=${GPU_CHECK_DRY_CPU:-0}
DEV=cuda
[ "$DRY" = 1 ] && DEV=cpu
FARGS=(--device "$DEV" --steps 10 --at 6)   # the fault in step 6 of 10, as on the CPU
FAULT_KINDS=(forward reduction broadcast backward functional optimizer input loss ignored)
# under nanprof before the benchmark: the CPU issue's faults; the faults
# of the newer decoders (a reduction, a strided elementwise kernel,
# nll_loss's scalars) and an evaluation pass's grad mode run after it, if the
# budget has time left
EARLY_KINDS=(forward backward functional optimizer input loss)
LATE_KINDS=(reduction broadcast ignored flash memeff chain solve rope spectral catwide eval split
	pitched)
PY=
BPF_OK=0
BPF_WHY="not tried"
AGENT_NOTE="copied"

# ---- small tools ----

now() { date +%s; }

# seconds left of the whole budget
left() { echo $((START + BUDGET - $(now))); }

# the time a job may take: what it wants, but never past the budget less
# a reserve for writing the results
limit() {
	local want=$1 rest
	rest=$(($(left) - 20))
	if [ "$rest" -lt "$want" ]; then echo "$rest"; else echo "$want"; fi
}

# one verdict: a TSV row (job, check, PASS|FAIL|CHECK|SKIP|INFO, detail)
row() {
	local detail
	detail=$(printf '%s' "$4" | tr '\t\n' '  ' | cut -c1-400)
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$detail" >> "$RES"
	printf '  %-5s %s: %s: %s\n' "$3" "$1" "$2" "$detail"
}

# a fact: KEY, seconds, a shell command; its output (or why there is
# none) goes to facts.txt and the log; failures are facts too
fact() {
	local key=$1 secs=$2 out rc
	out=$(timeout -k 2 "$secs" bash -c "$3" 2>&1 | head -c 1500)
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 124 ] && out="$out (timed out after ${secs}s)"
	[ -z "$out" ] && out="(nothing, exit $rc)"
	printf '%s: %s\n' "$key" "$out" | tee -a "$FACTS"
}

# job NAME SECS [VAR=VALUE...] -- CMD...: runs CMD in the background under
# `timeout`, in ROOT, with stdout, stderr and exit status in work/NAME.*
# (timeout signals the whole process group: a hung job's children go too)
job() {
	local name=$1 secs=$2
	shift 2
	local envs=()
	[ "$secs" -ge 1 ] || secs=1   # timeout 0 would mean none
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	(
		cd "$ROOT" || exit 1
		env ${envs[@]+"${envs[@]}"} timeout -k 5 "$secs" "$@" \
			> "$W/$name.out" 2> "$W/$name.err"
		echo $? > "$W/$name.rc"
	) &
}

# verdict on a job's end: hard FAIL for a crash or a time-out
job_ran() {
	local name=$1 last=$2 rc
	rc=$(cat "$W/$name.rc" 2>/dev/null || echo "?")
	if [ "$rc" = 0 ] && grep -q "^step $last loss" "$W/$name.out"; then
		row "$name" "job ran to its end" PASS "exit 0, step $last printed"
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		row "$name" "job ran to its end" FAIL "timed out; stderr: $(tail -n 2 "$W/$name.err")"
	else
		row "$name" "job ran to its end" FAIL "exit $rc; stderr: $(tail -n 3 "$W/$name.err")"
	fi
}

# ---- 1. facts ----

pick_python() {
	if [ -n "${PYTHON:-}" ]; then
		PY=$PYTHON
	elif [ -x /opt/torch/.venv/bin/python3 ]; then
		PY=/opt/torch/.venv/bin/python3
	else
		PY=python3
	fi
	PY=$(command -v "$PY" || echo "$PY")
	# the interpreter itself, not a shim (pyenv's is a shell script)
	PY=$(timeout 30 "$PY" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$PY")
	export PY GPUT   # for the facts' commands
}

host_facts() {
	fact date 5 "date -u '+%Y-%m-%d %H:%M:%S UTC'"
	fact hostname 5 hostname
	fact kernel 5 "uname -srvm"
	fact uid 5 "id -u"
	fact gpu 15 "nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader"
	fact btf 5 "ls /sys/kernel/btf | head -5 | tr '\n' ' '"
	fact nvcc 10 "nvcc --version | tail -n 2 | tr '\n' ' '"
	fact tools 5 "for t in make gcc readelf git; do printf '%s=%s ' \$t \"\$(command -v \$t || echo none)\"; done"
	# the build that was copied: a stale copy explains odd results
	fact build 10 "cd '$ROOT'; ls -l --time-style=+%F.%T nanprof-static libnanprof_agent.so | awk '{print \$7, \$6, \$5}' | tr '\n' ' '; git rev-parse --short HEAD 2>/dev/null"
	# the stub agent (built without the CUDA toolkit) says so in its strings
	fact agent_gpu_side 5 "grep -q 'agent built without CUDA' '$AGENT' && echo 'none: built without CUDA' || echo 'built with CUDA'"
}

python_facts() {
	fact python 10 "printf '%s = %s, ' \"\$PY\" \"\$(readlink -f \"\$PY\")\"; \"\$PY\" -V"
	# the first import of torch and CUDA's start can be slow on a cold host
	fact torch 90 "\"\$PY\" \"\$GPUT/host_facts.py\" torch"
	fact libcupti 30 "find / \\( -path /proc -o -path /sys \\) -prune -o -name 'libcupti.so*' -print 2>/dev/null | head -n 10 | tr '\n' ' '"
	# USDT probes would be a cheaper way in than uprobes (docs/design.md)
	fact usdt 30 "\"\$PY\" \"\$GPUT/host_facts.py\" usdt"
}

# nanprof needs root, BTF, bpf() and uprobes: one run of print(1) says
# whether this kernel allows them (gVisor, for one, does not)
bpf_smoke() {
	local rc
	(cd "$ROOT" && timeout -k 5 60 "$NP" run -o "$W/bpf-smoke" -- "$PY" -c 'print(1)' \
		> "$W/bpf-smoke.out" 2> "$W/bpf-smoke.err")
	rc=$?
	if [ "$rc" -eq 0 ] && grep -qx 1 "$W/bpf-smoke.out" && [ -s "$W/bpf-smoke/events.jsonl" ]; then
		BPF_OK=1
		BPF_WHY="works (nanprof run of print(1): exit 0, events written)"
	else
		BPF_WHY="no: exit $rc: $(grep -v '^$' "$W/bpf-smoke.err" | head -n 3 | tr '\n' ' ')"
	fi
	printf 'bpf: %s\n' "$BPF_WHY" | tee -a "$FACTS"
}

# 0 if torch saw a CUDA device (the torch fact)
have_cuda() { grep -q '^torch: .*cuda_available=True' "$FACTS"; }

# ---- the agent: does it run its check kernels here? ----

# agent_job NAME SECS CMD...: job NAME with the agent preloaded alone,
# its records in work/NAME.rec, what it does on the job's stderr
agent_job() {
	local name=$1 secs=$2
	shift 2
	job "$name" "$secs" LD_PRELOAD="$AGENT" NANPROF_AGENT_RECORDS="$W/$name.rec" \
		NANPROF_AGENT_DEBUG=1 -- "$@"
}

defer_job() {
	local name=$1 secs=$2
	shift 2
	job "$name" "$secs" LD_PRELOAD="$AGENT" NANPROF_AGENT_RECORDS="$W/$name.rec" \
		NANPROF_AGENT_DEBUG=1 NANPROF_GPU_DEFER=8 -- "$@"
}

# the deferred jobs' rows: the same verdicts as the others', their
# losses, and how many checks a check launch carried with and without
defer_rows() {
	local f a=$W/plain-none-1.out d=$W/agent-defer-none.out
	for f in forward backward optimizer; do
		job_ran "agent-defer-$f" 9
		verdict "agent-defer-$f" --fault "$f" --at 6 --clean "$W/agent-none.rec"
	done
	job_ran agent-defer-graph 9
	verdict agent-defer-graph --fault forward --graph
	job_ran agent-defer-none 9
	verdict agent-defer-none --fault none
	if grep -q '^step 9 loss' "$d" && cmp -s <(grep '^step' "$a") <(grep '^step' "$d"); then
		row agent-defer-none "losses bit-identical with checks deferred" PASS \
			"$(grep '^step 9' "$d")"
	elif ! cmp -s <(grep '^step' "$a") <(grep '^step' "$W/plain-none-2.out"); then
		row agent-defer-none "losses bit-identical with checks deferred" SKIP \
			"two runs without the agent differ already"
	else
		row agent-defer-none "losses bit-identical with checks deferred" FAIL \
			"$(diff <(grep '^step' "$a") <(grep '^step' "$d") | grep '^[<>]' | head -n 2 | tr '\n' ' ')"
	fi
	row agent-defer-forward "checks per check launch, at once vs deferred" INFO \
		"$("$PY" "$GPUT/gpu_records.py" per-launch "$W/agent-forward.rec" \
			"$W/agent-defer-forward.rec" 2>&1 | tail -n 1)"
}

# the 4 steps last over a second: the agent's GPU counters come each second
agent_smoke() {
	local name=$1
	agent_job "$name" "$(limit 90)" "$PY" "$FAULTS" --device "$DEV" --fault none --steps 4 \
		--sleep 0.4
	wait
	"$PY" "$GPUT/gpu_records.py" smoke "$W/$name.rec"
}

# where cupti.h is: the toolkit, its extras, or torch's nvidia wheels
cupti_include() {
	local cuda=$1 d tdir
	tdir=$("$PY" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
	for d in "$cuda/include" "$cuda/extras/CUPTI/include" "$tdir"/../nvidia/*/include; do
		[ -f "$d/cupti.h" ] && { echo "$d"; return 0; }
	done
	return 1
}

# the CUDA toolkit: $CUDA_HOME, /usr/local/cuda, or above the nvcc on PATH
# (which may be a wrapper script elsewhere)
cuda_home() {
	local d
	for d in "${CUDA_HOME:-}" /usr/local/cuda "$(dirname "$(dirname "$(readlink -f \
		"$(command -v nvcc)")")")"; do
		[ -n "$d" ] && [ -x "$d/bin/nvcc" ] && [ -f "$d/include/cuda.h" ] &&
			{ echo "$d"; return 0; }
	done
	return 1
}

# rebuild just the agent (its fatbin included) with this host's nvcc;
# the copied one is kept in work/ and put back if the build fails
rebuild_agent() {
	local nvcc cuda inc rc
	if ! command -v make > /dev/null || ! cuda=$(cuda_home); then
		echo "no make, or no CUDA toolkit (nvcc, cuda.h) here"
		return 1
	fi
	nvcc=$cuda/bin/nvcc
	if ! inc=$(cupti_include "$cuda"); then
		echo "no cupti.h under $cuda or torch's nvidia wheels"
		return 1
	fi
	cp "$AGENT" "$W/libnanprof_agent.so.copied"
	(cd "$ROOT" && timeout -k 5 "$(limit 180)" make -B libnanprof_agent.so CUDA_HOME="$cuda" \
		NVCC="$nvcc" HAVE_CUDA=1 AGENT_CFLAGS="-I$cuda/include -I$inc" > "$W/rebuild.log" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		cp "$W/libnanprof_agent.so.copied" "$AGENT"
		echo "make failed (exit $rc): $(tail -n 3 "$W/rebuild.log" | tr '\n' ' ')"
		return 1
	fi
	echo "rebuilt with $nvcc, cupti.h from $inc"
}

check_agent() {
	local smoke why
	smoke=$(agent_smoke agent-smoke)
	row agent-smoke "agent alone on a clean CUDA job" INFO "$smoke"
	# GPU_CHECK_REBUILD=1: rebuild whatever the smoke says
	[ "${GPU_CHECK_REBUILD:-0}" = 1 ] && smoke="rebuild (GPU_CHECK_REBUILD=1) $smoke"
	case $smoke in
	rebuild*)
		if why=$(rebuild_agent); then
			AGENT_NOTE="rebuilt on this host ($why)"
			smoke=$(agent_smoke agent-smoke2)
			row agent-smoke2 "rebuilt agent on a clean CUDA job" INFO "$why; now: $smoke"
		else
			AGENT_NOTE="copied; a rebuild was needed and failed ($why)"
			row agent-rebuild "rebuild of the agent" INFO "$why"
		fi
		;;
	esac
}

# ---- 2. the agent alone ----

start_agent_jobs() {
	local secs=$1 f
	for f in "${FAULT_KINDS[@]}"; do
		agent_job "agent-$f" "$secs" "$PY" "$FAULTS" "${FARGS[@]}" --fault "$f" \
			--step-times "$W/agent-$f.times"
	done
	# the clean job, deterministic, twice alone and once with the agent
	job plain-none-1 "$secs" -- "$PY" "$FAULTS" "${FARGS[@]}" --fault none --deterministic
	job plain-none-2 "$secs" -- "$PY" "$FAULTS" "${FARGS[@]}" --fault none --deterministic
	agent_job agent-none "$secs" "$PY" "$FAULTS" "${FARGS[@]}" --fault none --deterministic \
		--step-times "$W/agent-none.times"
	# the mask made on the CPU and copied: no kernel makes its -inf
	# (information only: tells a kernel-made mask's verdict from the rest)
	agent_job agent-none-hostmask "$secs" "$PY" "$FAULTS" "${FARGS[@]}" --fault none \
		--mask-from host --step-times "$W/agent-none-hostmask.times"
	agent_job agent-graph "$secs" "$PY" "$GPUT/graph_fault.py" --device "$DEV" --steps 10 --at 6 \
		--step-times "$W/agent-graph.times"
	agent_job agent-graph-backward "$secs" "$PY" "$GPUT/graph_fault.py" --device "$DEV" \
		--steps 10 --at 6 --fault backward --step-times "$W/agent-graph-backward.times"
	# batch norm on PyTorch's own kernels (cuDNN off), NCHW and channels-last:
	# outputs sized from a tensor accessor, and from reduction_size x stride
	agent_job agent-bn "$secs" "$PY" "$GPUT/bn_fault.py" --device "$DEV" --steps 10 --at 6 \
		--step-times "$W/agent-bn.times"
	agent_job agent-bn-cl "$secs" "$PY" "$GPUT/bn_fault.py" --device "$DEV" --steps 10 --at 6 \
		--channels-last --step-times "$W/agent-bn-cl.times"
	# the same with cuDNN on, as torch has it: its batch norm seen at the
	# call (cupti/dnn.h); and a convolution's overflow, named at the
	# convolution's kernel without the guards: seen at its execution
	# (cupti/dnn_graph.h), or as the batch norm reads it
	agent_job agent-bn-cudnn "$secs" "$PY" "$GPUT/bn_fault.py" --device "$DEV" --steps 10 \
		--at 6 --cudnn --step-times "$W/agent-bn-cudnn.times"
	job agent-conv-cudnn "$secs" LD_PRELOAD="$AGENT" NANPROF_AGENT_RECORDS="$W/agent-conv-cudnn.rec" \
		NANPROF_AGENT_DEBUG=1 NANPROF_GPU_GUARD=0 -- "$PY" "$GPUT/bn_fault.py" --device "$DEV" \
		--steps 10 --at 6 --cudnn --fault conv --step-times "$W/agent-conv-cudnn.times"
	# bf16 attention on SDPA's flash kernel, read from its Flash_fwd_params
	agent_job agent-flash "$secs" "$PY" "$GPUT/flash_fault.py" --device "$DEV" --steps 10 \
		--at 6 --step-times "$W/agent-flash.times"
	# fp32 attention on SDPA's memory-efficient kernel, read from its Params
	agent_job agent-memeff "$secs" "$PY" "$GPUT/flash_fault.py" --kernel memeff \
		--device "$DEV" --steps 10 --at 6 --step-times "$W/agent-memeff.times"
	# bf16 attention on cuDNN's (a graph of two outputs: O, its
	# statistics), where this torch and GPU can run it: informs
	agent_job agent-cudnn-attn "$secs" "$PY" "$GPUT/flash_fault.py" --kernel cudnn \
		--device "$DEV" --steps 10 --at 6 --step-times "$W/agent-cudnn-attn.times"
	# two cuBLAS matmuls in a row, the first overflowing: checked at the
	# call (cupti/blas.h); its counters say how many calls were
	agent_job agent-chain "$secs" "$PY" "$GPUT/chain_fault.py" --device "$DEV" --steps 10 \
		--at 6 --step-times "$W/agent-chain.times"
	# cuBLAS's trsm dividing by a zero diagonal, its gemv and dot beside it
	agent_job agent-solve "$secs" "$PY" "$GPUT/solve_fault.py" --device "$DEV" --steps 10 \
		--at 6 --step-times "$W/agent-solve.times"
	# RoPE's x * freqs_cis overflowing in torch's complex64 multiply
	agent_job agent-rope "$secs" "$PY" "$GPUT/rope_fault.py" --device "$DEV" --steps 10 \
		--at 6 --step-times "$W/agent-rope.times"
	# an FNO Fourier layer's complex weights overflowing in cuBLAS's cgemm
	agent_job agent-spectral "$secs" "$PY" "$GPUT/spectral_fault.py" --device "$DEV" \
		--steps 10 --at 6 --step-times "$W/agent-spectral.times"
	# a branch's exp overflowing, carried by a torch.cat of 20 inputs
	# along dim -1 (its inputs past the 16th: cupti/wide_inputs.h)
	agent_job agent-catwide "$secs" "$PY" "$GPUT/catwide_fault.py" --device "$DEV" \
		--steps 10 --at 6 --step-times "$W/agent-catwide.times"
	# torch.compile: Inductor's Triton kernels, their outputs told by the
	# wrapped CachingAutotuner.run (cupti/triton.h); needs Triton's C
	# compiler on the host, so it only informs
	agent_job agent-compile "$secs" "$PY" "$GPUT/compile_fault.py" --device "$DEV" --steps 10 \
		--at 6 --step-times "$W/agent-compile.times"
	# a user's @triton.jit kernel, its outputs read from its source
	# (agent/triton_jit.py): informs, for the same reason
	agent_job agent-jit "$secs" "$PY" "$GPUT/jit_fault.py" --device "$DEV" --steps 10 \
		--at 6 --step-times "$W/agent-jit.times"
	# the same kernel inside a torch.compile'd graph (Inductor's
	# CachingAutotuner with custom_kernel, read from the source too)
	agent_job agent-jit-compile "$secs" "$PY" "$GPUT/jit_fault.py" --compile --device "$DEV" \
		--steps 10 --at 6 --step-times "$W/agent-jit-compile.times"
	# checks deferred into list launches (NANPROF_GPU_DEFER=8,
	# cupti/defer.h): the same origins as each launch's checks at once,
	# the clean job's losses bit for bit
	for f in forward backward optimizer; do
		defer_job "agent-defer-$f" "$secs" "$PY" "$FAULTS" "${FARGS[@]}" --fault "$f" \
			--step-times "$W/agent-defer-$f.times"
	done
	defer_job agent-defer-graph "$secs" "$PY" "$GPUT/graph_fault.py" --device "$DEV" \
		--steps 10 --at 6 --step-times "$W/agent-defer-graph.times"
	defer_job agent-defer-none "$secs" "$PY" "$FAULTS" "${FARGS[@]}" --fault none \
		--deterministic --step-times "$W/agent-defer-none.times"
	# PyTorch's expandable segments: memory mapped into a reserved range
	# chunk by chunk (cuMemMap), which the allocation map must follow
	job agent-forward-expseg "$secs" LD_PRELOAD="$AGENT" \
		NANPROF_AGENT_RECORDS="$W/agent-forward-expseg.rec" NANPROF_AGENT_DEBUG=1 \
		PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- "$PY" "$FAULTS" "${FARGS[@]}" \
		--fault forward --step-times "$W/agent-forward-expseg.times"
}

# the rows of gpu_records.py; a traceback there is a FAIL of its own
verdict() {
	local name=$1
	shift
	"$PY" "$GPUT/gpu_records.py" verdict "$W/$name.rec" --job "$name" --results "$RES" \
		--kernels "$KERN" --times "$W/$name.times" "$@" 2> "$W/$name.verdict.err"
	if grep -q Traceback "$W/$name.verdict.err"; then
		row "$name" "records judged" FAIL "gpu_records.py: $(tail -n 1 "$W/$name.verdict.err")"
	fi
}

# the losses of the clean job: the agent only reads, so bit for bit the
# same; compared only if the job alone is reproducible on this GPU
compare_losses() {
	local a=$W/plain-none-1.out b=$W/plain-none-2.out c=$W/agent-none.out
	if ! grep -q '^step 9 loss' "$a" || ! grep -q '^step 9 loss' "$c"; then
		row agent-none "losses bit-identical with and without the agent" FAIL \
			"a run did not finish (see plain-none-1, agent-none)"
	elif ! cmp -s <(grep '^step' "$a") <(grep '^step' "$b"); then
		row agent-none "losses bit-identical with and without the agent" SKIP \
			"two runs without the agent differ already (non-deterministic here)"
	elif cmp -s <(grep '^step' "$a") <(grep '^step' "$c"); then
		row agent-none "losses bit-identical with and without the agent" PASS \
			"10 steps, deterministic algorithms; last: $(grep '^step 9' "$c")"
	else
		row agent-none "losses bit-identical with and without the agent" FAIL \
			"$(diff <(grep '^step' "$a") <(grep '^step' "$c") | grep '^[<>]' | head -n 2 | tr '\n' ' ')"
	fi
}

step_agent_alone() {
	echo "== 2. the agent alone (LD_PRELOAD, records to a file; no BPF)"
	local secs f
	secs=$(limit 150)
	if [ "$secs" -lt 30 ]; then
		row agent "agent-alone jobs" SKIP "budget spent ($(left) s left)"
		return
	fi
	start_agent_jobs "$secs"
	wait
	for f in "${FAULT_KINDS[@]}"; do
		job_ran "agent-$f" 9
		verdict "agent-$f" --fault "$f" --at 6 --clean "$W/agent-none.rec"
	done
	job_ran agent-forward-expseg 9
	verdict agent-forward-expseg --fault forward --at 6 --clean "$W/agent-none.rec"
	defer_rows
	job_ran plain-none-1 9
	job_ran plain-none-2 9
	job_ran agent-none 9
	verdict agent-none --fault none
	compare_losses
	job_ran agent-none-hostmask 9
	verdict agent-none-hostmask --fault none --soft
	job_ran agent-graph 9
	verdict agent-graph --fault forward --graph
	job_ran agent-graph-backward 9
	verdict agent-graph-backward --fault backward --graph
	job_ran agent-bn 9
	verdict agent-bn --fault bn --at 6
	job_ran agent-bn-cl 9
	verdict agent-bn-cl --fault bn --at 6
	job_ran agent-bn-cudnn 9
	verdict agent-bn-cudnn --fault bn-cudnn --at 6
	job_ran agent-conv-cudnn 9
	verdict agent-conv-cudnn --fault conv-cudnn --at 6
	conv_graph_row
	job_ran agent-flash 9
	verdict agent-flash --fault flash --at 6
	job_ran agent-memeff 9
	verdict agent-memeff --fault memeff --at 6
	cudnn_attn_rows
	job_ran agent-chain 9
	verdict agent-chain --fault chain --at 6
	job_ran agent-solve 9
	verdict agent-solve --fault solve --at 6
	job_ran agent-rope 9
	verdict agent-rope --fault rope --at 6
	job_ran agent-spectral 9
	fft_rows agent-spectral
	verdict agent-spectral --fault spectral --at 6
	job_ran agent-catwide 9
	verdict agent-catwide --fault catwide --at 6
	writes_row
	triton_rows agent-compile compile "Triton outputs told by Inductor's run()" '.*'
	triton_rows agent-jit jit "@triton.jit outputs read from the kernel's source" \
		scaled_exp_kernel
	triton_rows agent-jit-compile jit "@triton.jit in a compiled graph, read from its source" \
		scaled_exp_kernel
}

# whether torch's convolutions were seen at their cudnnBackendExecute
# (cupti/dnn_graph.h) or only through the batch norm's read: informative,
# the origin's verdict is the assertion
conv_graph_row() {
	local name=agent-conv-cudnn what="cuDNN convolutions seen at their execution"
	if grep -q "cuDNN: a graph execution's output" "$W/$name.err"; then
		row "$name" "$what" PASS "$(grep -m1 -o "cuDNN: a graph execution's output.*" "$W/$name.err")"
	else
		row "$name" "$what" CHECK "none planned; $(grep -m1 -o 'cuDNN: a graph execution left.*' \
			"$W/$name.err" || echo 'no cudnnBackendExecute seen')"
	fi
}

# job_ran for a job that only informs: CHECK where job_ran says FAIL
informative_job_ran() {
	local name=$1 rc
	rc=$(cat "$W/$name.rc" 2>/dev/null || echo "?")
	if [ "$rc" = 0 ] && grep -q "^step 9 loss" "$W/$name.out"; then
		row "$name" "job ran to its end" PASS "exit 0, step 9 printed"
	else
		row "$name" "job ran to its end" CHECK "exit $rc; stderr: $(tail -n 3 "$W/$name.err")"
	fi
}

# cuDNN's attention (SDPBackend.CUDNN_ATTENTION): informative, as this
# torch's cuDNN may not run it on this GPU, and its graph (cudnn_frontend
# lowers SDPA to matmuls, pointwise ops and reductions, or, from cuDNN
# 9.13, to one SDPA operation; cupti/dnn_ops.c) may not be planned
# whether the Fourier layer's transforms were seen at their call
# (cupti/fft.h): the agent's log says so once, or why not
fft_rows() {
	local name=$1
	if grep -q "cuFFT: a transform's output (" "$W/$name.err"; then
		row "$name" "cuFFT's transforms checked at the call" PASS \
			"$(grep -m1 -o "cuFFT: a transform's output (.*" "$W/$name.err")"
	else
		row "$name" "cuFFT's transforms checked at the call" CHECK \
			"$(grep -m1 -o "cuFFT: a transform's output and input noted.*" "$W/$name.err" ||
				grep -m1 -o "cuFFT's plans: .*" "$W/$name.err" ||
				echo 'no cuFFT call seen: libcufft not imported, or linked statically?')"
	fi
}

# which copies and memsets the agent does not check torch made in the
# agent-alone jobs (cupti/driver_writes.h; the agent logs each call's
# first): evidence of what the fake driver's pitched and batched copies
# stand in for
writes_row() {
	local seen
	seen=$(cat "$W"/agent-*.err 2>/dev/null | grep -o 'unchecked write: [A-Za-z0-9_]*' |
		sed 's/unchecked write: //' | sort -u | tr '\n' ' ')
	row agent "copies and memsets not checked, by driver call" INFO "${seen:-none seen}"
	# what the origin tracker was told of them (cupti/write_queue.h)
	row agent "copies and memsets told to the origin tracker" INFO \
		"$("$PY" "$GPUT/gpu_records.py" writes "$W"/agent-*.rec 2>&1 | tail -n 1)"
}

cudnn_attn_rows() {
	local name=agent-cudnn-attn
	informative_job_ran "$name"
	if grep -q "cuDNN: a graph execution's outputs" "$W/$name.err"; then
		row "$name" "cuDNN attention's outputs checked at its execution" PASS \
			"$(grep -m1 -o "cuDNN: a graph execution's outputs.*" "$W/$name.err")"
	else
		row "$name" "cuDNN attention's outputs checked at its execution" CHECK \
			"none planned; $(grep -m1 -o 'cuDNN: a graph execution left.*' "$W/$name.err" ||
				echo 'no cudnnBackendExecute seen')"
	fi
	verdict "$name" --fault cudnn-attn --at 6 --soft
}

# a Triton job's rows: informative (CHECK where another job would FAIL),
# as it needs what this script does not control (Triton's C compiler,
# Inductor's version).  triton_rows JOB FAULT WHAT KERNEL: KERNEL a regular
# expression for the kernel whose plan the agent's log must show
triton_rows() {
	local name=$1 fault=$2 what=$3 kernel=$4
	informative_job_ran "$name"
	if grep -Eq "Triton: $kernel's outputs checked as its Python call named them" "$W/$name.err"
	then
		row "$name" "$what" PASS "$(grep -m1 -o 'Triton: .*' "$W/$name.err")"
	else
		row "$name" "$what" CHECK \
			"no Triton launch took a plan (agent log: $(grep -c . "$W/$name.err") lines)"
	fi
	verdict "$name" --fault "$fault" --at 6 --soft
}

# ---- lanes: the nanprof-run jobs side by side ----

# Each `nanprof run` job is one training job of 10-15 s on a 16-core
# host with one GPU busy a few percent: LANES of them at once (default 3,
# GPU_CHECK_LANES) take a third of the device time.  A lane's rows and
# output go to files of its own, joined in the order the jobs were
# started once all are done (par_end), so results.md reads as if they
# had run one by one.  Never around the benchmark: it times.
LANES=${GPU_CHECK_LANES:-3}
SKIP_STEPS=",${GPU_CHECK_SKIP:-},"

# skipped STEP: 0 (and a SKIP row) when GPU_CHECK_SKIP names it
skipped() {
	case $SKIP_STEPS in
	*",$1,"*) row "$1" "step run" SKIP "GPU_CHECK_SKIP=${GPU_CHECK_SKIP:-}"; return 0 ;;
	esac
	return 1
}
PAR_NAMES=()

# par NAME CMD...: CMD in a lane of its own
par() {
	local name=$1
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$LANES" ]; do wait -n; done
	(
		RES=$W/$name.rows
		: > "$RES"
		"$@" > "$W/$name.lane" 2>&1
	) &
	PAR_NAMES+=("$name")
}

par_end() {
	local n
	wait
	for n in "${PAR_NAMES[@]}"; do
		cat "$W/$n.rows" >> "$RES" 2>/dev/null
		cat "$W/$n.lane" 2>/dev/null
	done
	PAR_NAMES=()
}

# ---- 3. under nanprof run ----

# ORIGIN: check_origin.py's expectation for a job, as test_origin.sh has
# it on the CPU (phase, module, step); on CUDA the op is the kernel's name
# and the tensor a kernel's output: neither is asserted ('*').  A graph's
# checks are launched at capture: its step is the capture's, not asserted
set_origin() {
	case $1 in
	forward) ORIGIN=(--origin forward blocks.1.gate '*' --step 6) ;;
	# the sum's own kernel, not the guard at the gate's output
	reduction) ORIGIN=(--origin forward blocks.1.gate '*' --step 6 --op-kernel reduce_kernel) ;;
	# the strided elementwise kernel (not vectorized_ or unrolled_)
	broadcast) ORIGIN=(--origin forward blocks.1.gate '*' --step 6 \
		--op-kernel 'native::elementwise_kernel<') ;;
	backward) ORIGIN=(--origin backward blocks.0.root '*' --step 6) ;;
	functional) ORIGIN=(--origin forward blocks.1.attn '*' --step 6) ;;
	# the foreach update runs outside every module: named by the
	# parameter whose memory it made non-finite (cupti/param_owners.h)
	optimizer) ORIGIN=(--origin optimizer head '*' --step 6) ;;
	input) ORIGIN=(--origin forward '' '*' --step 6) ;;
	loss) ORIGIN=(--outside --step 6) ;;
	# nll_loss's two scalars (loss, total weight) sized by kdecode.c
	ignored) ORIGIN=(--outside --step 6 --op-kernel nll_loss) ;;
	# an evaluation pass under no_grad after step 6's update (step 7's
	# work): the kernel's grad mode, read from c10 at its launch
	eval) ORIGIN=(--origin forward blocks.1.gate '*' --step 7 --grad-mode no_grad) ;;
	none) ORIGIN=(--no-origin --no-warnings) ;;
	# CUDA .grad norms come back a step late (agent/gpu_norms.c)
	explode) ORIGIN=(--warning-before-origin) ;;
	graph) ORIGIN=(--origin forward act '*' --graph) ;;
	graph-backward) ORIGIN=(--origin backward root '*' --graph) ;;
	bn | bn-cl) ORIGIN=(--origin forward bn '*' --step 6) ;;
	# the flash kernel's own output, not out_proj's reader or a guard
	flash) ORIGIN=(--origin forward attn '*' --step 6 --op-kernel flash_fwd_kernel) ;;
	memeff) ORIGIN=(--origin forward attn '*' --step 6 --op-kernel fmha_cutlassF) ;;
	# the first of two matmuls, without guards: only the calls' view
	# names it (the generic tier alone would name up)
	chain) ORIGIN=(--origin forward down '*' --step 6) ;;
	# the solve's trsm kernel, seen at its call, in the module that called it
	solve) ORIGIN=(--origin forward solve '*' --step 6 --op-kernel trsm) ;;
	# the complex64 multiply, read by name, not wo's matmul that reads it
	rope) ORIGIN=(--origin forward attn '*' --step 6 --op-kernel 'c10::complex<float>') ;;
	# the einsum's complex GEMM, seen at its call: complex64, in spectral
	spectral) ORIGIN=(--origin forward spectral '*' --step 6 --dtype complex64) ;;
	# the branch's exp, not the cat that carries it to proj (in mixer)
	catwide) ORIGIN=(--origin forward mixer.branches.18 '*' --step 6 --op-kernel exp) ;;
	# a model split over two devices: second's exp, on cuda:1 (split_row)
	split) ORIGIN=(--origin forward second '*' --step 6 --op-kernel exp) ;;
	# the buffer's NaN came with a 2D copy: its first reader, cache's
	# multiply, not the fill whose deferred check the copy overwrote
	pitched) ORIGIN=(--origin forward cache '*' --step 6 --op-kernel Mul) ;;
	# a GradScaler on CUDA: one skipped iteration is a loss-scale
	# overflow; skipped down to a scale of 1, the origin (agent/scaler.h)
	scaler) ORIGIN=(--no-origin --min-scaler-skips 1) ;;
	scaler-persist) ORIGIN=(--origin backward blocks.0.root '*' --step 6 --min-scaler-skips 9) ;;
	esac
}

# nanprof_job FAULT [MODE]: MODE is a NANPROF_GPU_MODE ("modules": no
# CUPTI, the hooks' CUDA tensors checked at module level; "every+modules":
# both, so that an undecoded kernel's value is caught at its module), or
# "generic": every launch without the guards (NANPROF_GPU_GUARD=0), so
# that an undecoded kernel's value is caught by the generic tier alone
# (cupti/generic.h), at its first decoded reader
nanprof_job() {
	local f=$1 name=run-$1${2:+-$2} secs got label envs=()
	[ -n "${2:-}" ] && envs=(NANPROF_GPU_MODE="$2")
	# the generic tier alone: no guards, cuBLAS's calls not seen
	[ "${2:-}" = generic ] && envs=(NANPROF_GPU_GUARD=0 NANPROF_GPU_BLAS=0)
	secs=$(limit 120)
	if [ "$secs" -lt 30 ]; then
		row "$name" "origin under nanprof run" SKIP "budget spent"
		return
	fi
	if [ "$f" = graph ] || [ "$f" = graph-backward ]; then
		job "$name" "$secs" -- "$NP" run -o "$W/$name" -- "$PY" "$GPUT/graph_fault.py" \
			--device "$DEV" --steps 10 --at 6 --fault "$([ "$f" = graph ] && echo forward ||
			echo backward)"
	elif [ "$f" = flash ] || [ "$f" = memeff ]; then
		job "$name" "$secs" -- "$NP" run -o "$W/$name" -- "$PY" "$GPUT/flash_fault.py" \
			--kernel "$f" --device "$DEV" --steps 10 --at 6
	elif [ "$f" = chain ]; then
		job "$name" "$secs" NANPROF_GPU_GUARD=0 -- "$NP" run -o "$W/$name" -- "$PY" \
			"$GPUT/chain_fault.py" --device "$DEV" --steps 10 --at 6
	elif [ "$f" = solve ]; then
		job "$name" "$secs" -- "$NP" run -o "$W/$name" -- "$PY" "$GPUT/solve_fault.py" \
			--device "$DEV" --steps 10 --at 6
	elif [ "$f" = rope ] || [ "$f" = spectral ] || [ "$f" = catwide ] || [ "$f" = split ]; then
		job "$name" "$secs" -- "$NP" run -o "$W/$name" -- "$PY" "$GPUT/${f}_fault.py" \
			--device "$DEV" --steps 10 --at 6
	elif [ "$f" = pitched ]; then
		job "$name" "$secs" -- "$NP" run --gpu-defer 8 -o "$W/$name" -- "$PY" \
			"$GPUT/pitched_fault.py" --device "$DEV" --steps 10 --at 6
	elif [ "$f" = bn ] || [ "$f" = bn-cl ]; then
		local cl=()
		[ "$f" = bn-cl ] && cl=(--channels-last)
		job "$name" "$secs" -- "$NP" run -o "$W/$name" -- "$PY" "$GPUT/bn_fault.py" \
			--device "$DEV" --steps 10 --at 6 ${cl[@]+"${cl[@]}"}
	elif [ "$f" = scaler ] || [ "$f" = scaler-persist ]; then
		local scaler=(--scaler 65536)
		[ "$f" = scaler-persist ] && scaler=(--scaler 256 --persist --steps 20)
		job "$name" "$secs" -- "$NP" run -o "$W/$name" -- "$PY" "$FAULTS" "${FARGS[@]}" \
			--fault backward "${scaler[@]}"
	else
		job "$name" "$secs" ${envs[@]+"${envs[@]}"} -- "$NP" run -o "$W/$name" -- \
			"$PY" "$FAULTS" "${FARGS[@]}" --fault "$f"
	fi
	wait
	job_ran "$name" 9
	set_origin "$f"
	label=$(printf '%s ' "${ORIGIN[@]}" | sed "s/  / '' /")
	got=$("$PY" "$GPUT/gpu_records.py" origin "$W/$name/events.jsonl")
	if "$PY" "$ROOT/tests/integration/check_origin.py" "$W/$name/events.jsonl" --cuda \
		"${ORIGIN[@]}" > "$W/$name.check" 2>&1; then
		row "$name" "origin: $label" PASS "$got"
	else
		row "$name" "origin: $label" FAIL \
			"$(grep ERROR "$W/$name.check" | head -n 3 | cut -c1-200 | tr '\n' ' ') got: $got"
	fi
	# split: the origin says the second device's ordinal
	if [ "$f" = split ]; then
		if grep -q '"type":"nan_origin".*"cuda_device":1,' "$W/$name/events.jsonl" 2>/dev/null
		then
			row "$name" "origin on cuda:1" PASS "$got"
		else
			row "$name" "origin on cuda:1" FAIL "$got"
		fi
	fi
}

# attach-forward: `nanprof attach` to a CUDA job whose context, memory
# and model exist already (it waits on a file before its loop): CUPTI is
# subscribed mid-run, and allocations made before it are found by
# cuMemGetAddressRange; the forward fault must still be named.
attach_job() {
	local name=attach-forward secs
	secs=$(limit 120)
	if [ "$secs" -lt 40 ]; then
		row "$name" "origin under nanprof attach" SKIP "budget spent"
		return
	fi
	attach_run "$name" "$secs" "$PY" "$FAULTS" "${FARGS[@]}" --fault forward \
		--wait-file "$W/$name.go"
	attach_verdict "$name" blocks.1.gate "origin: forward blocks.1.gate, attached mid-run"
}

# attach-conv, attach-spectral: the same, after two steps, to jobs whose
# library plans torch caches before the agent comes, so that no call of
# theirs can be planned: bn_fault.py's CNN with cuDNN on (each
# execution's variant pack, built per call, names its tensors:
# cupti/dnn_graph.h, np_dg_plan_noted) and spectral_fault.py's Fourier
# layer (cuFFT's plans: each transform's addresses noted, cupti/fft.h).
# The guards off (in the job's environment), the overflow is named in
# its module only when a later call or kernel reads the noted address;
# the agent's log says whether the notes were made (informative).
attach_conv_job() {
	attach_cached_job attach-conv conv "its variant pack's addresses noted" \
		"cached cuDNN plans: variant packs noted" 'cuDNN: a graph execution.*' \
		"$GPUT/bn_fault.py" --cudnn --fault conv
}

attach_spectral_job() {
	attach_cached_job attach-spectral spectral "cuFFT: a transform's output and input noted" \
		"cached cuFFT plans: transforms noted" "cuFFT[:'].*" "$GPUT/spectral_fault.py"
}

# attach_cached_job NAME MODULE LOG-TEXT ROW-LABEL LOG-REGEX SCRIPT ARGS...
attach_cached_job() {
	local name=$1 module=$2 text=$3 label=$4 regex=$5 secs
	shift 5
	secs=$(limit 120)
	if [ "$secs" -lt 40 ]; then
		row "$name" "origin under nanprof attach" SKIP "budget spent"
		return
	fi
	ATTACH_AFTER="^step 1 loss" attach_run "$name" "$secs" env NANPROF_GPU_GUARD=0 \
		NANPROF_AGENT_DEBUG=1 "$PY" "$@" --device "$DEV" --steps 10 --at 6 \
		--wait-file "$W/$name.go" --wait-at 2
	attach_verdict "$name" "$module" "origin: forward $module (plans cached before attach)"
	if grep -q -- "$text" "$W/$name.err"; then
		row "$name" "$label" PASS "$(grep -m1 -o -- "$text.*" "$W/$name.err")"
	else
		row "$name" "$label" CHECK "$(grep -m1 -o -- "$regex" "$W/$name.err" ||
			echo 'no such call seen')"
	fi
}

# attach_run NAME SECS CMD...: CMD (which waits for $W/NAME.go) in the
# background, `nanprof attach` to it, then the go.  With ATTACH_AFTER
# set, the attach waits (at most 60 s) for a line of the job's output
# matching it: steps the job runs before it waits.
attach_run() {
	local name=$1 secs=$2 sub
	shift 2
	rm -f "$W/$name.go"
	(
		cd "$ROOT" || exit 1
		timeout -k 5 "$secs" "$@" > "$W/$name.out" 2> "$W/$name.err"
		echo $? > "$W/$name.rc"
	) &
	sub=$!
	sleep 2   # the launcher's python is there
	if [ -n "${ATTACH_AFTER:-}" ]; then
		for _ in $(seq 300); do
			grep -q -- "$ATTACH_AFTER" "$W/$name.out" 2>/dev/null && break
			sleep 0.2
		done
	fi
	timeout -k 5 "$secs" "$NP" attach -o "$W/$name" --children "$sub" \
		> "$W/$name.np.out" 2> "$W/$name.np.err" &
	for _ in $(seq 150); do
		grep -q "attached to" "$W/$name.np.err" 2>/dev/null && break
		sleep 0.2
	done
	sleep 1   # the agent subscribes, the hooks go in
	touch "$W/$name.go"
	wait
}

# attach_verdict NAME MODULE WHAT: the job ran to its end, and its origin
# is a forward one in MODULE
attach_verdict() {
	local name=$1 module=$2 what=$3 got
	job_ran "$name" 9
	got=$("$PY" "$GPUT/gpu_records.py" origin "$W/$name/events.jsonl" 2>&1)
	if "$PY" "$ROOT/tests/integration/check_origin.py" "$W/$name/events.jsonl" --cuda \
		--origin forward "$module" '*' > "$W/$name.check" 2>&1; then
		row "$name" "$what" PASS "$got"
	else
		row "$name" "$what" FAIL \
			"$(grep ERROR "$W/$name.check" | head -n 3 | cut -c1-200 | tr '\n' ' ') got: $got; nanprof: $(tail -n 2 "$W/$name.np.err" | tr '\n' ' ')"
	fi
}

step_under_nanprof() {
	echo "== 3. under nanprof run (BPF)"
	local f
	if [ "$BPF_OK" != 1 ] || [ "$(id -u)" != 0 ]; then
		for f in "${EARLY_KINDS[@]}" none graph graph-backward bn scaler scaler-persist \
			forward-modules explode functional-every+modules; do
			row "run-$f" "origin under nanprof run" SKIP "BPF: $BPF_WHY; uid $(id -u)"
		done
		row attach-forward "origin under nanprof attach" SKIP "BPF: $BPF_WHY; uid $(id -u)"
		row attach-conv "origin under nanprof attach" SKIP "BPF: $BPF_WHY; uid $(id -u)"
		row attach-spectral "origin under nanprof attach" SKIP "BPF: $BPF_WHY; uid $(id -u)"
		return
	fi
	for f in "${EARLY_KINDS[@]}" none graph graph-backward bn scaler scaler-persist; do
		par "run-$f" nanprof_job "$f"
	done
	par run-forward-modules nanprof_job forward modules
	# exploding gradients, over 40 steps as on the CPU: warned before the
	# first Inf, from gradient norms read back without a sync (the lane
	# keeps FARGS as it was when it started)
	local fargs=("${FARGS[@]}")
	FARGS=(--device "$DEV" --steps 40 --at 8)
	par run-explode nanprof_job explode
	FARGS=("${fargs[@]}")
	# MHA's out_proj overflows in a cuBLAS kernel no decoder reads: the
	# default run-functional names it through the guards, this one by
	# checking every module's CUDA output
	par run-functional-every+modules nanprof_job functional every+modules
	par attach-forward attach_job
	par attach-conv attach_conv_job
	par attach-spectral attach_spectral_job
	par_end
}

# ---- 4. overhead ----

step_bench() {
	echo "== 4. overhead benchmark"
	local secs rc extra=()
	secs=$(limit 240)
	if [ "$secs" -lt 90 ]; then
		row bench "overhead benchmark" SKIP "budget spent ($(left) s left)"
		return
	fi
	[ "$BPF_OK" = 1 ] && [ "$(id -u)" = 0 ] && extra=(--nanprof "$NP")
	[ -n "${GPU_CHECK_BENCH_MODELS:-}" ] && extra+=(--models "$GPU_CHECK_BENCH_MODELS")
	[ "$DRY" = 1 ] && extra+=(--device cpu --models "${GPU_CHECK_BENCH_MODELS:-faults}" \
		--steps 5 --warmup 2)
	# no new round past --budget (a round is 4-5 processes of about 10 s);
	# each round's table is written at once, so a time-out keeps the last
	timeout -k 5 "$secs" "$PY" "$GPUT/bench_gpu.py" --out "$W/bench" --python "$PY" \
		--agent "$AGENT" ${extra[@]+"${extra[@]}"} --rounds 3 --budget $((secs - 70)) \
		--timeout 90 2>&1 | tee "$W/bench.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then
		row bench "overhead benchmark ran (every process)" PASS "$(bench_ratios)"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		# out of time is the budget's doing, not a crash: the rounds done stay
		row bench "overhead benchmark ran (every process)" CHECK \
			"stopped at its ${secs}s limit; rounds finished: $(bench_ratios)"
	else
		row bench "overhead benchmark ran (every process)" FAIL \
			"exit $rc: $(grep -E 'FAILED|Error' "$W/bench.log" | head -n 3 | tr '\n' ' ')"
	fi
}

bench_ratios() {
	"$PY" - "$W/bench/bench.json" << 'EOF' 2>/dev/null || echo "(no bench.json)"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
# with the agent's host time in its callbacks per launch (cupti/host_cost.h)
print("; ".join("%s %s x%.2f%s" % (r["model"], r["config"], r["ratio"],
                                   " (host %.1f us/launch)" % r["host_us_per_launch"]
                                   if r.get("host_us_per_launch") else "")
                for r in rows if r.get("ratio") and r["config"] != "baseline"))
EOF
}

# ---- results ----

count() { awk -F'\t' -v s="$1" '$3 == s' "$RES" | wc -l; }

write_results() {
	local md=$OUT/results.md pass fail chk skip verdict=$1
	pass=$(count PASS) fail=$(count FAIL) chk=$(count CHECK) skip=$(count SKIP)
	{
		echo "# nanprof GPU check"
		echo
		echo "$verdict"
		echo
		echo "$pass PASS, $fail FAIL, $chk CHECK (by hand), $skip SKIP;" \
			"$(( $(now) - START )) s; agent: $AGENT_NOTE; BPF: $BPF_WHY"
		echo
		echo "Command: \`make gpu-check OUT=$OUT\` (python: $PY)"
		echo
		echo "## Checks"
		echo
		echo "| job | check | result | detail |"
		echo "|---|---|---|---|"
		sed 's/|/\\|/g; s/\t/ | /g; s/^/| /; s/$/ |/' "$RES"
		if [ -s "$KERN" ]; then
			echo
			echo "## Kernel of each fault's birth (agent alone)"
			echo
			echo "| job | expected (substrings) | why | observed | |"
			echo "|---|---|---|---|---|"
			sed 's/|/\\|/g; s/\t/ | /g; s/^/| /; s/$/ |/' "$KERN"
		fi
		if [ -s "$W/bench/bench.md" ]; then
			echo
			echo "## Overhead (median step time; tests/gpu/bench_gpu.py)"
			echo
			cat "$W/bench/bench.md"
		fi
		echo
		echo "## Facts"
		echo
		echo '```'
		cat "$FACTS"
		echo '```'
	} > "$md"
	echo
	cat "$md"
}

# work/ in one file, without what is too big to bring back
pack() {
	(cd "$OUT" && find work -type f -size +4M > "$W/left-out.txt" &&
		timeout 60 tar czf gpu-check.tar.gz --exclude-from="$W/left-out.txt" work) ||
		echo "gpu_check: packing work/ failed"
}

# ---- 4b. the newer decoders under nanprof, after the benchmark ----

step_late_kinds() {
	echo "== 4b. the newer decoders' faults under nanprof run (BPF)"
	local f ngpu=2
	[ "$DRY" = 1 ] || ngpu=$(timeout 60 "$PY" -c \
		'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
	for f in "${LATE_KINDS[@]}" functional-generic; do
		if [ "$BPF_OK" != 1 ] || [ "$(id -u)" != 0 ]; then
			row "run-$f" "origin under nanprof run" SKIP "BPF: $BPF_WHY; uid $(id -u)"
		elif [ "$f" = functional-generic ]; then
			# MHA's out_proj overflows in cuBLAS: without the guards,
			# only the generic tier can name it in blocks.1.attn
			par run-functional-generic nanprof_job functional generic
		elif [ "$f" = split ] && [ "${ngpu:-0}" -lt 2 ] 2>/dev/null; then
			row run-split "origin under nanprof run" SKIP \
				"a model split over two devices: this host has ${ngpu:-0}"
		else
			par "run-$f" nanprof_job "$f"
		fi
	done
	par_end
}

# ---- 5. memcheck ----

# The agent's launches and check kernels under compute-sanitizer's
# memcheck: no check may read outside the memory it was given, or write
# anywhere but its slot and the ring.  Information: a report names the
# kernel, which says whose access it was.
step_memcheck() {
	echo "== 5. compute-sanitizer memcheck (the forward fault, agent alone)"
	local cs secs errs state
	cs=$(command -v compute-sanitizer 2>/dev/null)
	[ -z "$cs" ] && cs=$(cuda_home)/bin/compute-sanitizer
	if [ "$DRY" = 1 ] || [ ! -x "$cs" ]; then
		row memcheck "no invalid access under compute-sanitizer" SKIP \
			"$([ "$DRY" = 1 ] && echo "dry run on the CPU" || echo "no compute-sanitizer")"
		return
	fi
	secs=$(limit 150)
	if [ "$secs" -lt 60 ]; then
		row memcheck "no invalid access under compute-sanitizer" SKIP "budget spent ($(left) s left)"
		return
	fi
	# only the python gets the agent, not the sanitizer's own front end
	job memcheck "$secs" -- "$cs" --tool memcheck --target-processes all --print-limit 20 \
		env LD_PRELOAD="$AGENT" NANPROF_AGENT_RECORDS="$W/memcheck.rec" \
		"$PY" "$FAULTS" --device "$DEV" --steps 8 --at 6 --fault forward
	wait
	errs=$(grep -ho 'ERROR SUMMARY: [0-9]* error' "$W/memcheck.out" "$W/memcheck.err" |
		awk '{ n += $3 } END { print n + 0 }')
	state=$("$PY" "$GPUT/gpu_records.py" smoke "$W/memcheck.rec" 2>&1 | head -n 1)
	if ! grep -q 'ERROR SUMMARY' "$W/memcheck.out" "$W/memcheck.err"; then
		row memcheck "no invalid access under compute-sanitizer" CHECK \
			"no summary (exit $(cat "$W/memcheck.rc" 2>/dev/null)); agent: $state"
	elif [ "$errs" -eq 0 ]; then
		row memcheck "no invalid access under compute-sanitizer" PASS "0 errors; agent: $state"
	else
		row memcheck "no invalid access under compute-sanitizer" CHECK \
			"$errs errors, first: $(grep -h -m 3 -E 'Invalid|Address|kernel' "$W/memcheck.out" \
				"$W/memcheck.err" | tr -s ' ' | head -n 3 | tr '\n' ' ')"
	fi
}

main() {
	pick_python
	echo "== 1. facts (budget ${BUDGET}s)"
	host_facts
	python_facts
	bpf_smoke
	if [ "$DRY" != 1 ] && ! have_cuda; then
		row facts "CUDA device" SKIP "torch in $PY sees none"
		echo "gpu_check: no CUDA device: nothing to verify"
		write_results "No CUDA device: nothing to verify (exit 2)."
		pack
		return 2
	fi
	check_agent
	skipped agent || step_agent_alone
	skipped nanprof || step_under_nanprof
	skipped bench || step_bench
	skipped late || step_late_kinds
	skipped memcheck || step_memcheck
	local rc=0 verdict="Every hard check passed (exit 0)."
	if [ "$(count FAIL)" -gt 0 ]; then
		rc=1
		verdict="FAILED: $(count FAIL) hard checks (exit 1)."
	fi
	write_results "$verdict"
	pack
	return "$rc"
}

mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
W=$OUT/work
RES=$OUT/results.tsv
FACTS=$OUT/facts.txt
KERN=$W/kernels.tsv
rm -rf "$W"
rm -f "$RES" "$FACTS" "$OUT/results.md" "$OUT/gpu-check.tar.gz"
mkdir -p "$W"
: > "$RES"
main 2>&1 | tee "$OUT/gpu-check.log"
exit "${PIPESTATUS[0]}"
