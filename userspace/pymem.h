/* pymem.h - reading Python objects out of another process's memory, to
 * give nn.Module objects the names named_modules() would give them.
 *
 * All reads go through a callback, so the same code runs on a live
 * process (process_vm_readv) and on recorded memory in the unit tests.
 */
#ifndef NP_PYMEM_H
#define NP_PYMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "pyoffsets.h"

/* Reads len bytes at addr into buf: 0 or -errno. */
typedef int (*np_mem_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct np_pymem {
	np_mem_read_fn read;
	void *ctx;
	const struct np_pyver *v;
};

/* A reader over process_vm_readv; ctx is the pid cast with (void *)(intptr_t). */
int np_pymem_read_pid(void *ctx, uint64_t addr, void *buf, size_t len);

/* Copies a str object's text (ASCII strings only) into buf.  0, -EINVAL
 * for a non-ASCII or non-compact string, -errno on a failed read. */
int np_py_str(const struct np_pymem *m, uint64_t str, char *buf, size_t len);

/* Calls fn(key_text, value, arg) for each entry with a str key of the dict
 * (at most limit entries); stops early when fn returns non-zero and
 * returns that value.  0 when all were visited, -errno on a failed read. */
typedef int (*np_dict_visit_fn)(const char *key, uint64_t value, void *arg);
int np_py_dict_each(const struct np_pymem *m, uint64_t dict, size_t limit,
		    np_dict_visit_fn fn, void *arg);

/* The value stored under key in the dict, or 0 (with -ENOENT). */
int np_py_dict_get(const struct np_pymem *m, uint64_t dict, const char *key,
		   uint64_t *value);

/* The instance __dict__ of obj (0 if it has none materialised). */
int np_py_instance_dict(const struct np_pymem *m, uint64_t obj, uint64_t *dict);

/* The dotted path from module `parent` to module `child` through the
 * `_modules` dicts (e.g. "layers.1" when parent iterates a ModuleList),
 * searching at most max_depth levels.  0, or -ENOENT if not found. */
int np_py_module_path(const struct np_pymem *m, uint64_t parent, uint64_t child,
		      int max_depth, char *buf, size_t len);

/* The tp_name of a type object (a C string).  0 or -errno. */
int np_py_type_name(const struct np_pymem *m, uint64_t type, char *buf, size_t len);

/* The class of obj if it derives directly from
 * torch.autograd.function.BackwardCFunction, as every Python
 * autograd.Function's backward class ("HandSqrtBackward") does; else 0. */
uint64_t np_py_function_class(const struct np_pymem *m, uint64_t obj);

/* Where a torch::autograd::PyNode, the one C++ class behind every Python
 * autograd.Function's backward, keeps its Python object: the first of the
 * span bytes at node (at most 1024) that points to an instance of a class
 * derived from BackwardCFunction.  Its offset and that class
 * ("HandSqrtBackward"), or -ENOENT.  The offset depends on the torch
 * build (+112 in 2.13, +392 in 1.13), so it is found on a live node. */
int np_py_find_function_obj(const struct np_pymem *m, uint64_t node, size_t span,
			    uint32_t *off, uint64_t *type);

#endif
