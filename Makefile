# nanprof - build the CLI (BPF skeletons embedded), the agent and the tests.
#
#   make            build ./nanprof and ./libnanprof_agent.so
#   make static     build ./nanprof-static (libbpf, libelf, zlib linked in)
#   make test       build and run every test (unit, then integration)
#   make unit       Criterion unit tests only
#   make sanitize   the agent's decoding and tracking tests again, under
#                   AddressSanitizer and UndefinedBehaviorSanitizer
#   V=1             show full commands

OUTPUT  := .output
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH    := x86

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror=implicit-function-declaration \
	   -Wno-unused-parameter -I$(OUTPUT) -Ibpf -Iuserspace -Iviz
LDLIBS  := -lbpf -lelf -lz -lm
STATIC_LDLIBS := -static -l:libbpf.a -l:libelf.a -l:libz.a -lzstd -lpthread -lm

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

USER_SRCS := $(wildcard userspace/*.c) $(wildcard viz/*.c)
LIB_SRCS  := $(filter-out userspace/main.c,$(USER_SRCS))
LIB_OBJS  := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
MAIN_OBJ  := $(OUTPUT)/userspace/main.o
# the agent's checks: built into the agent, and unit-tested like the rest
AGENT_LIB_SRCS := agent/cpu_check.c agent/bad_spread.c
# the GPU agent's logic that needs no GPU: kernel-argument decoding, the
# allocation map, clean->dirty tracking (cupti/README.md)
AGENT_LIB_SRCS += $(wildcard cupti/intervals.c cupti/kdecode.c cupti/kdecode_cat.c \
			    cupti/kdecode_lambda.c cupti/kdecode_reduce.c cupti/dirty.c \
			    cupti/inflight.c cupti/kfunc.c cupti/writers.c cupti/outmax.c \
			    cupti/generic.c cupti/kdecode_flash.c cupti/kdecode_index.c \
			    cupti/kdecode_memeff.c cupti/gemm.c cupti/gotpatch.c \
			    cupti/kname.c cupti/kdecode_elementwise.c cupti/kdecode_mta.c \
			    cupti/kdecode_rows.c cupti/kdecode_acc.c cupti/kdecode_attn.c \
			    cupti/triton.c cupti/dnn.c cupti/dnn_graph.c cupti/dnn_ops.c \
			    cupti/param_owners.c cupti/fft.c cupti/host_cost.c \
			    cupti/defer_set.c cupti/blas_workspace.c cupti/wide_inputs.c \
			    cupti/write_queue.c)
AGENT_LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(AGENT_LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

.PHONY: all static test unit sanitize san-run integration clean bench-check
.DELETE_ON_ERROR:
# keep the generated skeleton and BPF object between builds
.SECONDARY:

all: nanprof libnanprof_agent.so

$(OUTPUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(OUTPUT)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c bpf/nanprof.h $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -Ibpf -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/%.o: %.c $(OUTPUT)/tracer.skel.h $(wildcard userspace/*.h viz/*.h bpf/nanprof.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

nanprof: $(LIB_OBJS) $(MAIN_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

static: nanprof-static
nanprof-static: $(LIB_OBJS) $(MAIN_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(STATIC_LDLIBS) -o $@

# The agent is preloaded into the training process: no dependencies
# beyond libc, so it loads anywhere (see agent/agent.c).
# CPython is looked up at run time (agent/pyapi.c), never linked; so are
# libcuda and libcupti (cupti/cuda_api.c), whose headers come from the
# CUDA toolkit at build time.  Without the toolkit the agent is built
# without its GPU side, and says so.
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(if $(shell command -v nvcc 2>/dev/null),nvcc,$(CUDA_HOME)/bin/nvcc)
HAVE_CUDA := $(if $(and $(wildcard $(CUDA_HOME)/include/cupti.h),$(shell command -v $(NVCC) 2>/dev/null)),1)
AGENT_SRCS := agent/agent.c agent/control.c agent/hooks.c agent/tensor.c agent/pyapi.c \
	      agent/gpu_norms.c agent/scaler.c agent/triton_plan.c agent/birth_op.c \
	      agent/update_cause.c agent/report.c agent/module_paths.c $(AGENT_LIB_SRCS)
ifeq ($(HAVE_CUDA),1)
AGENT_SRCS += cupti/cuda_api.c cupti/gpu_ctx.c cupti/drain.c cupti/subscriber.c cupti/modules.c \
	      cupti/copy_calls.c cupti/check_launch.c cupti/defer.c \
	      cupti/driver_args.c cupti/driver_writes.c cupti/allocations.c \
	      cupti/blas.c cupti/dnn_calls.c cupti/fft_calls.c cupti/grad_mode.c
AGENT_GPU_OBJS := $(OUTPUT)/kernels/fatbin.o
AGENT_CFLAGS := -I$(CUDA_HOME)/include
else
AGENT_SRCS += cupti/gpu_stub.c
$(warning no CUDA toolkit in $(CUDA_HOME) (cupti.h, nvcc): the agent is built without GPU checks)
endif
# cupti/driver_writes.c reads CUPTI's parameter structs: its test needs
# the toolkit's headers, and is left out without them
ifeq ($(HAVE_CUDA),1)
$(OUTPUT)/tests/test_driver_writes: CFLAGS += -I$(CUDA_HOME)/include
$(OUTPUT)/tests/test_driver_writes: cupti/driver_writes.c cupti/driver_writes.h
else
UNIT_BINS := $(filter-out $(OUTPUT)/tests/test_driver_writes,$(UNIT_BINS))
endif
# Python the agent runs, kept as .py files (testable as they are) and
# embedded as C strings: each line quoted, backslashes and quotes escaped
$(OUTPUT)/agent/%_py.h: agent/%.py
	$(call msg,EMBED,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q){ echo '/* generated from $< by the Makefile: do not edit */'; \
	      echo 'static const char np_$*_py[] ='; \
	      sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	      echo ';'; } > $@.tmp && mv $@.tmp $@

libnanprof_agent.so: $(AGENT_SRCS) $(AGENT_GPU_OBJS) $(wildcard agent/*.h cupti/*.h kernels/*.h) \
		     $(OUTPUT)/agent/triton_jit_py.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(AGENT_CFLAGS) -I$(OUTPUT)/agent -fPIC -shared -fvisibility=hidden $(AGENT_SRCS) \
		$(AGENT_GPU_OBJS) -ldl -lpthread -lm -o $@

$(OUTPUT)/agent/%.o: agent/%.c agent/cpu_check.h kernels/finite.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(OUTPUT)/cupti/%.o: cupti/%.c $(wildcard cupti/*.h kernels/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(OUTPUT)/tests/test_%: tests/unit/test_%.c $(LIB_OBJS) $(AGENT_LIB_OBJS)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit $(filter-out %.h,$^) $(LDLIBS) -lcriterion -o $@

# a library the loader takes a while to relocate (4096 imports, -z now:
# its GOT in RELRO), for test_gotpatch's walk during a dlopen; order-only:
# the test dlopens it, never links it
$(OUTPUT)/tests/libgpprovider.so: tests/unit/race/provider.c tests/unit/race/many.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O0 -fPIC -shared $< -o $@
$(OUTPUT)/tests/libgpvictim.so: tests/unit/race/victim.c tests/unit/race/many.h \
				$(OUTPUT)/tests/libgpprovider.so
	$(call msg,CC,$@)
	$(Q)$(CC) -O0 -fPIC -shared -Wl,-z,now -Wl,-z,relro $< -L$(OUTPUT)/tests \
		-l:libgpprovider.so -lm -Wl,-rpath,'$$ORIGIN' -o $@
$(OUTPUT)/tests/test_gotpatch $(OUTPUT)/san/test_gotpatch: | $(OUTPUT)/tests/libgpvictim.so

unit: $(UNIT_BINS)
	$(Q)bash tests/run_unit.sh $(UNIT_BINS)

# The agent's GPU-side logic runs inside the training job on every
# launch, and its tensor walks on the job's memory: their tests again
# under ASan and UBSan (any report aborts the test), the decoders' fuzz
# test among them.  Skipped, visibly, where the
# compiler cannot link a sanitized program.
SAN_TESTS := kdecode kdecode_cat kdecode_flash kdecode_fuzz kdecode_index kdecode_lambda \
	     kdecode_memeff kdecode_mta kdecode_norm kdecode_norm_cleanup kdecode_reduce generic \
	     intervals dirty dirty_model inflight writers kfunc outmax gemm fft host_cost gotpatch triton dnn \
	     dnn_graph bad_spread defer_set blas_workspace wide_inputs
SAN_BINS := $(patsubst %,$(OUTPUT)/san/test_%,$(SAN_TESTS))
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	     -fno-omit-frame-pointer
SAN_AGENT_SRCS := $(filter cupti/% agent/%,$(AGENT_LIB_SRCS))

$(OUTPUT)/san/test_%: tests/unit/test_%.c $(SAN_AGENT_SRCS) $(wildcard cupti/*.h tests/unit/*.h)
	$(call msg,SAN-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(filter-out -O2,$(CFLAGS)) $(SAN_FLAGS) -Itests/unit $< $(SAN_AGENT_SRCS) \
		-lcriterion -lm -o $@

sanitize:
	$(Q)if echo 'int main(void){return 0;}' | $(CC) $(SAN_FLAGS) -x c - -o $(OUTPUT)/san-probe \
		2>/dev/null; then $(MAKE) --no-print-directory san-run; \
	else echo "SKIP sanitized unit tests: $(CC) cannot link -fsanitize=address,undefined"; fi

san-run: $(SAN_BINS)
	$(Q)ASAN_OPTIONS=detect_leaks=0 bash -c 'set -o pipefail; bash tests/run_unit.sh "$$@" | \
		sed "\$$s/^/sanitized (ASan, UBSan): /"' san $(SAN_BINS)

integration: all static
	$(Q)bash tests/run_integration.sh

test: all static unit sanitize integration

# throughput of the agent's CPU finite check (docs/benchmarks.md)
bench-check: $(OUTPUT)/bench_cpu_check
	$(Q)$<

$(OUTPUT)/bench_cpu_check: bench/bench_cpu_check.c $(AGENT_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

# The GPU finite-check kernels (kernels/finite_check.cu): SASS for sm_80
# and sm_90, and sm_90 PTX for newer GPUs to JIT, in one fatbin that
# kernels/fatbin.S embeds for the agent to load (cuModuleLoadData).
NVCC_GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
		-gencode arch=compute_90,code=compute_90
CHECK_KERNEL_HDRS := kernels/finite.h kernels/check_abi.h kernels/check_accum.h \
		     kernels/gpu_ring.h kernels/np_atomic.h

$(OUTPUT)/finite_check.fatbin: kernels/finite_check.cu $(CHECK_KERNEL_HDRS)
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) -fatbin $(NVCC_GENCODE) -O3 $< -o $@

# .incbin is invisible to make: the fatbin is a prerequisite by hand
$(OUTPUT)/kernels/fatbin.o: kernels/fatbin.S $(OUTPUT)/finite_check.fatbin
	$(call msg,AS,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -c -DNP_FATBIN_PATH='"$(OUTPUT)/finite_check.fatbin"' $< -o $@

# the ring test runs producers and a consumer on threads
$(OUTPUT)/tests/test_check_kernels: LDLIBS += -lpthread
$(OUTPUT)/tests/test_check_kernels: tests/check_emu.h

# A fake CUDA driver (libcuda.so.1) and CUPTI (libcupti.so.13) that run
# kernels on the host, and a job on them with real torch kernel names:
# the agent's CUDA side runs for real without a GPU
# (tests/integration/test_gpu_fake.sh).  Built with the toolkit's headers,
# so only where the agent has its GPU side.
FAKECUDA := $(OUTPUT)/fakecuda
FAKECUDA_BINS := $(FAKECUDA)/libcuda.so.1 $(FAKECUDA)/libcupti.so.13 $(FAKECUDA)/fake_job \
		 $(FAKECUDA)/libfakeops.so $(FAKECUDA)/libcublas.so.13 $(FAKECUDA)/libcublasLt.so.13 \
		 $(FAKECUDA)/libcudnn.so.9 $(FAKECUDA)/libfakednn.so $(FAKECUDA)/libcufft.so.12 \
		 $(FAKECUDA)/fake_devices $(FAKECUDA)/fake_writes
FAKECUDA_CFLAGS := $(CFLAGS) -I$(CUDA_HOME)/include
FAKECUDA_HDRS := tests/fakecuda/fake.h tests/check_emu.h $(CHECK_KERNEL_HDRS)
.PHONY: fakecuda
fakecuda: $(FAKECUDA_BINS)

$(FAKECUDA)/libcuda.so.1: tests/fakecuda/fake_cuda.c $(FAKECUDA_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 $< -lpthread -o $@

$(FAKECUDA)/libcupti.so.13: tests/fakecuda/fake_cupti.c $(FAKECUDA)/libcuda.so.1 $(FAKECUDA_HDRS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -Wl,-soname,libcupti.so.13 $< \
		-L$(FAKECUDA) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lpthread -o $@

# libstdc++ as in a torch process: the agent demangles with its __cxa_demangle
$(FAKECUDA)/fake_job: tests/fakecuda/fake_job.c $(FAKECUDA)/libcuda.so.1 $(FAKECUDA_HDRS) \
		      agent/agent_report.h tests/fakecuda/fake_cublas.h $(FAKECUDA)/libcublas.so.13 \
		      tests/fakecuda/fake_conv_graph.h $(FAKECUDA)/libcudnn.so.9 \
		      tests/fakecuda/fake_cufft.h $(FAKECUDA)/libcufft.so.12
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) $< -L$(FAKECUDA) -l:libcublas.so.13 -l:libcublasLt.so.13 \
		-l:libcudnn.so.9 -l:libcufft.so.12 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' \
		-Wl,--no-as-needed -lstdc++ -Wl,--as-needed -lm -o $@

# two devices, a thread each (FAKE_CUDA_DEVICES=2)
$(FAKECUDA)/fake_devices: tests/fakecuda/fake_devices.c $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h \
			 tests/fakecuda/fake_elementwise.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) $< -L$(FAKECUDA) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' \
		-lpthread -lm -o $@
# copies and memsets the agent does not check (cupti/driver_writes.h)
$(FAKECUDA)/fake_writes: tests/fakecuda/fake_writes.c $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h \
			 tests/fakecuda/fake_elementwise.h tests/fakecuda/fake_reduce.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) $< -L$(FAKECUDA) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lm -o $@

# a fake cuBLAS: cublasLt runs every multiply, cublas calls it (as cuBLAS does)
$(FAKECUDA)/libcublasLt.so.13: tests/fakecuda/fake_cublas.c tests/fakecuda/fake_cublas.h \
			       $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -DFAKE_LT -fPIC -shared -Wl,-soname,libcublasLt.so.13 $< \
		-L$(FAKECUDA) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lpthread -lm -o $@

$(FAKECUDA)/libcublas.so.13: tests/fakecuda/fake_cublas.c tests/fakecuda/fake_cublas.h \
			     $(FAKECUDA)/libcublasLt.so.13
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -Wl,-soname,libcublas.so.13 $< \
		-L$(FAKECUDA) -l:libcublasLt.so.13 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -o $@

# a fake cuDNN: tensor descriptors, batch norms, convolutions (legacy and
# backend API); libcuda opened at cudnnCreate, as the real one does
$(FAKECUDA)/libcudnn.so.9: tests/fakecuda/fake_cudnn.c tests/fakecuda/fake_cudnn.h \
			   $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -Wl,-soname,libcudnn.so.9 $< \
		-Wl,-rpath,'$$ORIGIN' -ldl -lpthread -lm -o $@

# a fake cuFFT: plans and transforms whose kernels' parameters are opaque
$(FAKECUDA)/libcufft.so.12: tests/fakecuda/fake_cufft.c tests/fakecuda/fake_cufft.h \
			    $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -Wl,-soname,libcufft.so.12 $< \
		-L$(FAKECUDA) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lpthread -o $@

# a library that, like libtorch_cuda.so, imports cuDNN and is loaded with
# torch, before libcuda: its first convolution's plan is built at once
# after the handle's creation loads libcuda (fake_gpu_job.py --conv-early);
# and a plan built through cuDNN's own symbols, unseen (--conv-unseen)
$(FAKECUDA)/libfakednn.so: tests/fakecuda/fake_dnn_user.c tests/fakecuda/fake_dnn_hidden.c \
			   tests/fakecuda/fake_cudnn.h tests/fakecuda/fake_conv_graph.h \
			   $(FAKECUDA)/libcudnn.so.9
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared $(filter %.c,$^) -L$(FAKECUDA) -l:libcudnn.so.9 \
		-Wl,-rpath,'$$ORIGIN' -o $@

# ops a Python job calls through ctypes (tests/integration/fake_gpu_job.py);
# its matmuls, batch norm and FFTs call cuBLAS, cuDNN and cuFFT through
# its own imports, as libtorch_cuda.so does
$(FAKECUDA)/libfakeops.so: tests/fakecuda/fake_ops.c $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h \
			   tests/fakecuda/fake_elementwise.h tests/fakecuda/fake_reduce.h \
			   tests/fakecuda/fake_cublas.h tests/fakecuda/fake_cudnn.h \
			   tests/fakecuda/fake_conv_graph.h tests/fakecuda/fake_cufft.h \
			   tests/unit/memeff_params.h $(FAKECUDA)/libcublas.so.13 \
			   $(FAKECUDA)/libcublasLt.so.13 $(FAKECUDA)/libcudnn.so.9 \
			   $(FAKECUDA)/libcufft.so.12
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared $< -L$(FAKECUDA) -l:libcublas.so.13 \
		-l:libcublasLt.so.13 -l:libcudnn.so.9 -l:libcufft.so.12 -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -lm -o $@

ifeq ($(HAVE_CUDA),1)
integration: $(FAKECUDA_BINS)
endif

# the agent's host work per kernel launch, on the fake driver
# (docs/benchmarks.md): make bench-launch
$(FAKECUDA)/bench_launch: bench/bench_launch.c $(FAKECUDA)/libcuda.so.1 tests/fakecuda/fake.h \
			  tests/fakecuda/fake_cublas.h $(FAKECUDA)/libcublas.so.13 \
			  tests/fakecuda/fake_conv_graph.h $(FAKECUDA)/libcudnn.so.9
	$(call msg,CC,$@)
	$(Q)$(CC) $(FAKECUDA_CFLAGS) $< -L$(FAKECUDA) -l:libcublas.so.13 -l:libcublasLt.so.13 \
		-l:libcudnn.so.9 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' \
		-Wl,--no-as-needed -lstdc++ -Wl,--as-needed -o $@
.PHONY: bench-launch bench-triton
bench-launch: $(FAKECUDA)/bench_launch $(FAKECUDA)/libcupti.so.13 libnanprof_agent.so
	$(Q)bash bench/bench_launch.sh
# a Triton launch through Inductor's run() (KIND=jit: a user's kernel through
# Triton's JITFunction.run), wrapped or not
bench-triton: $(FAKECUDA_BINS) libnanprof_agent.so
	$(Q)bash bench/bench_triton.sh

# The GPU verification (docs/gpu-results.md), on an NVIDIA host, from a
# copy of the build directory: it builds nothing (that host has no clang,
# bpftool or libbpf), so it depends on no target.  make gpu-check OUT=DIR
OUT ?= gpu-results
.PHONY: gpu-check
gpu-check:
	$(Q)bash scripts/gpu_check.sh $(OUT)

clean:
	rm -rf $(OUTPUT) nanprof nanprof-static libnanprof_agent.so
