/* report.c - the function nanprof's BPF uprobe reads records from.
 *
 * np_agent_report() does nothing itself: the uprobe on its first
 * instruction copies *rec into nanprof's ring buffer, in order with the
 * tracer's events of the same thread.  It must stay a real, exported,
 * never-inlined function with this name. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent_proto.h"
#include "report.h"

/* Without nanprof (NANPROF_AGENT_RECORDS=FILE, the agent preloaded
 * alone, as on a GPU host where BPF cannot be loaded), records are also
 * appended to a file: each write() of one record is atomic with
 * O_APPEND, so threads never interleave within one.  Bounded; what does
 * not fit is counted in the last record's place, not written. */
#define RECORDS_FILE_MAX (256u << 20)
static int records_fd = -2;          /* -2: not looked at yet */
static uint32_t records_bytes;

static void to_file(const void *rec, size_t n)
{
	int fd = __atomic_load_n(&records_fd, __ATOMIC_ACQUIRE);
	if (fd == -2) {
		const char *path = getenv(NP_AGENT_ENV_RECORDS);
		int nfd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
					: -1;
		int expect = -2;
		if (!__atomic_compare_exchange_n(&records_fd, &expect, nfd, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			if (nfd >= 0)
				close(nfd);
		}
		fd = __atomic_load_n(&records_fd, __ATOMIC_ACQUIRE);
	}
	if (fd < 0 || __atomic_add_fetch(&records_bytes, (uint32_t)n, __ATOMIC_RELAXED) >
			      RECORDS_FILE_MAX)
		return;
	(void)!write(fd, rec, n);
}

int np_report_to_file(void)
{
	const char *path = getenv(NP_AGENT_ENV_RECORDS);
	return path && *path;
}

/* Each starts with a 5-byte nop, where the uprobe goes: the kernel
 * emulates a nop, and from 6.18 turns a probed nop5 into a call, where
 * a probed `ret` has to be single-stepped, a second trap (about 10 µs
 * in these VMs, once per step for the statistics). */
#define NOP5 ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"

__attribute__((visibility("default"), noinline, used))
void np_agent_report(const struct np_agent_rec *rec)
{
	__asm__ volatile(NOP5 : : "r"(rec) : "memory");
}

/* The same for a step's statistics: nanprof's probe copies bytes of st. */
__attribute__((visibility("default"), noinline, used))
void np_agent_report_bulk(const struct np_arec_stat *st, uint32_t bytes)
{
	__asm__ volatile(NOP5 : : "r"(st), "r"(bytes) : "memory");
}

static uint32_t seq;   /* under the GIL, like every caller */

void np_report_send(struct np_agent_rec *r)
{
	r->seq = ++seq;
	np_agent_report(r);
	to_file(r, sizeof(*r));
}

static uint32_t gpu_seq;   /* mostly the drain thread; atomic for the rest */

void np_report_send_gpu(struct np_agent_rec *r)
{
	r->seq = __atomic_add_fetch(&gpu_seq, 1, __ATOMIC_RELAXED);
	np_agent_report(r);
	to_file(r, sizeof(*r));
}

static void status(struct np_agent_rec *r, enum np_arec_status st, const char *what)
{
	memset(r, 0, sizeof(*r));
	r->kind = NP_AREC_STATUS;
	r->status = (uint16_t)st;
	if (what)
		strncpy(r->cnt.what, what, sizeof(r->cnt.what) - 1);
}

void np_report_status(enum np_arec_status st, const char *what)
{
	struct np_agent_rec r;
	status(&r, st, what);
	np_report_send(&r);
}

void np_report_status_gpu(enum np_arec_status st, const char *what)
{
	struct np_agent_rec r;
	status(&r, st, what);
	np_report_send_gpu(&r);
}


/* nanprof's probe copies NP_AGENT_BULK_BYTES whatever n is, and a BPF
 * probe cannot fault a page in: a byte on a page the process never
 * touched (untouched .bss is not mapped yet) fails the whole copy and
 * the step's statistics are lost.  So they go through one page-aligned
 * page of our own, written from its start right before the trap. */
static union {
	struct np_arec_stat st[NP_AGENT_BULK_STATS];
	uint8_t page[4096];
} stage __attribute__((aligned(4096)));
_Static_assert(NP_AGENT_BULK_BYTES <= sizeof(stage), "the probe reads within one page");

void np_report_stats(const struct np_arec_stat *st, uint32_t n)
{
	if (!n)
		return;
	if (n > NP_AGENT_BULK_STATS)
		n = NP_AGENT_BULK_STATS;
	memcpy(stage.st, st, n * sizeof(*st));
	np_agent_report_bulk(stage.st, n * (uint32_t)sizeof(*st));
}
