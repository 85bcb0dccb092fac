/* report.h - sending records to nanprof (see agent_report.h). */
#ifndef NP_REPORT_H
#define NP_REPORT_H

#include "agent_report.h"

/* Numbers the record and hands it to np_agent_report(). */
void np_report_send(struct np_agent_rec *r);

/* A step's statistics, n entries (at most NP_AGENT_BULK_STATS) at the
 * start of a buffer of NP_AGENT_BULK_BYTES. */
void np_report_stats(const struct np_arec_stat *st, uint32_t n);

/* A STATUS record with a short text. */
void np_report_status(enum np_arec_status st, const char *what);

#endif
