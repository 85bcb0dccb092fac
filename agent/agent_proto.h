/* agent_proto.h - the handshake between libnanprof_agent.so (preloaded
 * into every process `nanprof run` starts) and the nanprof CLI.
 *
 * The agent connects to the unix socket named by NANPROF_SOCK, sends one
 * message and waits for a one-byte reply, so that the probes are attached
 * before the process goes on.  The wait is bounded (NANPROF_WAIT_MS,
 * default 10000): a nanprof that died or hangs never holds the job.
 */
#ifndef NP_AGENT_PROTO_H
#define NP_AGENT_PROTO_H

#include <stdint.h>

#define NP_AGENT_MAGIC 0x6e616e70u   /* "nanp" */
#define NP_AGENT_ENV_SOCK "NANPROF_SOCK"
#define NP_AGENT_ENV_WAIT "NANPROF_WAIT_MS"
#define NP_AGENT_DEFAULT_WAIT_MS 10000
#define NP_AGENT_ENV_RECORDS "NANPROF_AGENT_RECORDS" /* agent alone: records to this file */
#define NP_AGENT_ENV_CHECKS "NANPROF_CHECKS"   /* "0": tracer only, no checks */
/* nanprof compare: which run this is ("plain", "nanprof", "anomaly"),
 * how many optimizer steps to time before the process exits, and where
 * the agent writes their end times (JSON) */
#define NP_AGENT_ENV_COMPARE "NANPROF_COMPARE"
#define NP_AGENT_ENV_COMPARE_STEPS "NANPROF_COMPARE_STEPS"
#define NP_AGENT_ENV_COMPARE_OUT "NANPROF_COMPARE_OUT"
/* attach: the injected agent listens here (abstract namespace) */
#define NP_AGENT_ATTACH_FMT "nanprof-agent-%d"

enum np_agent_msg_kind {
	NP_AGENT_HELLO = 1,   /* before main(): all startup libraries mapped */
	NP_AGENT_LIBTORCH,    /* libtorch (and its Python bindings) just loaded */
	NP_AGENT_CHECKS,      /* the agent asks for checks (run) or is asked (attach);
			       * the connection stays open while they are on */
};

#define NP_AGENT_GPU_MODE_LEN 24
#define NP_AGENT_GPU_DEFER_MAX 64   /* --gpu-defer's largest window: cupti/defer.h's */
struct np_agent_msg {
	uint32_t magic;
	uint32_t kind;
	uint32_t pid;
	/* CHECKS from `nanprof attach --gpu-defer N`: N + 1 (1: off); 0:
	 * the process's own NANPROF_GPU_DEFER.  Read when the agent first
	 * subscribes to CUPTI only (cupti/gpu.h) */
	uint32_t gpu_defer;
	/* CHECKS from `nanprof attach --gpu MODE`: how CUDA work is checked
	 * (a NANPROF_GPU_MODE value, NUL-terminated); empty: the process's
	 * own NANPROF_GPU_MODE */
	char gpu_mode[NP_AGENT_GPU_MODE_LEN];
};

#endif
