/* report_html.h - report.html: one self-contained page (no network) with
 * the origin in one sentence, a module x step heatmap of max |x| of
 * outputs and of gradient norms with the origin marked, the total
 * gradient norm per step with explosion warnings, step times, and the
 * comparison with anomaly mode when `nanprof compare` left compare.json
 * in the directory.  Written next to trace.json. */
#ifndef NP_REPORT_HTML_H
#define NP_REPORT_HTML_H

#include "output.h"

/* 0 or -errno.  compare_json: path of a compare.json to embed, or NULL. */
int np_write_report(const struct np_collector *c, const struct np_session_info *s,
		    const char *path, const char *compare_json);

#endif
