/* report.h - sending records to nanprof (see agent_report.h). */
#ifndef NP_REPORT_H
#define NP_REPORT_H

#include "agent_report.h"

/* Numbers the record and hands it to np_agent_report(). */
void np_report_send(struct np_agent_rec *r);

/* A STATUS record with a short text. */
void np_report_status(enum np_arec_status st, const char *what);

#endif
