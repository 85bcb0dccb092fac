/* report.h - sending records to nanprof (see agent_report.h). */
#ifndef NP_REPORT_H
#define NP_REPORT_H

#include "agent_report.h"

/* Numbers the record and hands it to np_agent_report(). */
void np_report_send(struct np_agent_rec *r);

/* The same for records of the GPU checks' drain thread, which runs
 * without the GIL: numbered in a sequence of their own (GPU_CHECK,
 * GPU_NAME and the GPU_* STATUS records), so that records of two threads
 * racing into the ring are not taken for lost ones. */
void np_report_send_gpu(struct np_agent_rec *r);

/* A step's statistics, n entries (at most NP_AGENT_BULK_STATS), in one
 * trap (copied first to a page nanprof's probe can always read).  Under
 * the GIL, like every caller. */
void np_report_stats(const struct np_arec_stat *st, uint32_t n);

/* Whether records also go to NANPROF_AGENT_RECORDS (the agent alone). */
int np_report_to_file(void);

/* A STATUS record with a short text. */
void np_report_status(enum np_arec_status st, const char *what);
/* The same, numbered as the GPU side's records are. */
void np_report_status_gpu(enum np_arec_status st, const char *what);

#endif
