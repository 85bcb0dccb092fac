/* report.c - the function nanprof's BPF uprobe reads records from.
 *
 * np_agent_report() does nothing itself: the uprobe on its first
 * instruction copies *rec into nanprof's ring buffer, in order with the
 * tracer's events of the same thread.  It must stay a real, exported,
 * never-inlined function with this name. */
#include <string.h>
#include "report.h"

__attribute__((visibility("default"), noinline, used))
void np_agent_report(const struct np_agent_rec *rec)
{
	__asm__ volatile("" : : "r"(rec) : "memory");
}

/* The same for a step's statistics: nanprof's probe copies bytes of st. */
__attribute__((visibility("default"), noinline, used))
void np_agent_report_bulk(const struct np_arec_stat *st, uint32_t bytes)
{
	__asm__ volatile("" : : "r"(st), "r"(bytes) : "memory");
}

static uint32_t seq;   /* under the GIL, like every caller */

void np_report_send(struct np_agent_rec *r)
{
	r->seq = ++seq;
	np_agent_report(r);
}

void np_report_status(enum np_arec_status st, const char *what)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = (uint16_t)st;
	if (what)
		strncpy(r.cnt.what, what, sizeof(r.cnt.what) - 1);
	np_report_send(&r);
}


void np_report_stats(const struct np_arec_stat *st, uint32_t n)
{
	if (n)
		np_agent_report_bulk(st, n * (uint32_t)sizeof(*st));
}
