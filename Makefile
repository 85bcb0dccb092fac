# nanprof - build the CLI (BPF skeletons embedded), the agent and the tests.
#
#   make            build ./nanprof and ./libnanprof_agent.so
#   make static     build ./nanprof-static (libbpf, libelf, zlib linked in)
#   make test       build and run every test (unit, then integration)
#   make unit       Criterion unit tests only
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
AGENT_LIB_SRCS := agent/cpu_check.c
# the GPU agent's logic that needs no GPU: kernel-argument decoding, the
# allocation map, clean->dirty tracking (cupti/README.md)
AGENT_LIB_SRCS += $(wildcard cupti/intervals.c cupti/kdecode.c cupti/dirty.c)
AGENT_LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(AGENT_LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

.PHONY: all static test unit integration clean bench-check
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
# CPython is looked up at run time (agent/pyapi.c), never linked.
AGENT_SRCS := agent/agent.c agent/control.c agent/hooks.c agent/tensor.c agent/pyapi.c \
	      agent/report.c $(AGENT_LIB_SRCS)
libnanprof_agent.so: $(AGENT_SRCS) $(wildcard agent/*.h) kernels/finite.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden $(AGENT_SRCS) -ldl -lpthread -lm -o $@

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
	$(Q)$(CC) $(CFLAGS) -Itests/unit $^ $(LDLIBS) -lcriterion -o $@

unit: $(UNIT_BINS)
	$(Q)bash tests/run_unit.sh $(UNIT_BINS)

integration: all static
	$(Q)bash tests/run_integration.sh

test: all static unit integration

# throughput of the agent's CPU finite check (docs/benchmarks.md)
bench-check: $(OUTPUT)/bench_cpu_check
	$(Q)$<

$(OUTPUT)/bench_cpu_check: bench/bench_cpu_check.c $(AGENT_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

clean:
	rm -rf $(OUTPUT) nanprof nanprof-static libnanprof_agent.so
