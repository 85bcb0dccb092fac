/* module_paths.h - module names that outlive the process.
 *
 * nanprof names a module call from the caller's _modules dicts, read out
 * of the live process when the call's event reaches its collector
 * ("layers.1" under the model).  A short job on a busy machine may have
 * freed its model, or exited, by then: the read fails and the module is
 * named by its class ("<Linear>").  So at a module's first return the
 * agent also reports the paths to its descendants, as deep as nanprof
 * searches (NP_MODULE_PATH_DEPTH levels), one MODULE_PATH record each:
 * later calls are named from them when the read fails.  Records are
 * bounded per process; those beyond are counted as table overflow.
 * Under the GIL, like every hook. */
#ifndef NP_MODULE_PATHS_H
#define NP_MODULE_PATHS_H

#include <stdint.h>
#include "pyapi.h"

#define NP_MODULE_PATH_DEPTH 3       /* as nanprof's np_py_module_path search */
#define NP_MODULE_PATHS_MAX 16384    /* records per process */

/* module has just returned for the first time: report its descendants. */
void np_module_paths_report(PyObject *module);

/* Paths not reported for the bound (the agent's overflow counter). */
uint64_t np_module_paths_dropped(void);

#endif
