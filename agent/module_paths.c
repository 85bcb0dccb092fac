/* module_paths.c - a module's descendants and their paths, for nanprof
 * (module_paths.h). */
#include <stdio.h>
#include <string.h>
#include "module_paths.h"
#include "report.h"
#include "tensor.h"

#define PATH_LEN sizeof(((struct np_agent_rec *)0)->mp.path)

static uint32_t sent;
static uint64_t dropped;

static void send_path(PyObject *top, PyObject *child, const char *path)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_MODULE_PATH;
	r.module = (uint64_t)(uintptr_t)top;
	r.mp.child = (uint64_t)(uintptr_t)child;
	snprintf(r.mp.path, sizeof(r.mp.path), "%s", path);
	np_report_send(&r);
}

/* Every descendant of `module` within depth levels, as path (len bytes
 * used so far) extended by its keys, reported as reached from top. */
static void walk(PyObject *top, PyObject *module, char *path, size_t len, int depth)
{
	PyObject *d = np_py_dict_attr(module, np_n._modules), *k, *v;
	ptrdiff_t pos = 0;
	while (d && np_py.Dict_Next(d, &pos, &k, &v)) {
		if (v == np_py.None)
			continue;
		const char *key = np_py.Unicode_AsUTF8(k);
		if (!key) {
			np_py_err_clear();
			continue;
		}
		int w = snprintf(path + len, PATH_LEN - len, "%s%s", len ? "." : "", key);
		if (w < 0 || len + (size_t)w >= PATH_LEN) {
			/* too long to send: nanprof's own read, or the class */
		} else if (sent >= NP_MODULE_PATHS_MAX) {
			dropped++;
		} else {
			sent++;
			send_path(top, v, path);
			if (depth > 1)
				walk(top, v, path, len + (size_t)w, depth - 1);
		}
		path[len] = 0;
	}
	np_py_xdecref(d);
}

void np_module_paths_report(PyObject *module)
{
	char path[PATH_LEN] = "";
	walk(module, module, path, 0, NP_MODULE_PATH_DEPTH);
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

uint64_t np_module_paths_dropped(void)
{
	return dropped;
}
