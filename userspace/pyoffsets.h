/* pyoffsets.h - CPython object layouts per interpreter version.
 *
 * The BPF side reads frames, code objects and types (struct np_py_offsets);
 * userspace reads dicts and strings to name modules (the rest).  All four
 * are checked on live interpreters here: 3.11 with torch (pyenv 3.11.7,
 * Debian 3.11.2); 3.10.13, 3.12.1 and 3.13.0 (pyenv, no torch) by
 * tests/integration/test_pythons.sh, whose mock_torch.py has the shapes
 * the probes read (module calls, _modules dicts, record_function steps).
 * Split-dict values (dict_values, dict_values_header) are not exercised:
 * module instances have materialised __dict__s.
 */
#ifndef NP_PYOFFSETS_H
#define NP_PYOFFSETS_H

#include <linux/types.h>
#include <stdint.h>
#include "../bpf/nanprof.h"

struct np_pyver {
	int major, minor;
	int verified;                 /* checked on a live interpreter here */
	struct np_py_offsets bpf;
	/* instance __dict__: managed (3.11+: pointer at obj - 24) or at
	 * type->tp_dictoffset (3.10) */
	int managed_dict;
	int dict_values_tagged;       /* 3.12: low bit set = inline values, no dict */
	uint32_t type_dictoffset;     /* PyTypeObject.tp_dictoffset */
	uint32_t dict_keys;           /* PyDictObject.ma_keys */
	uint32_t dict_values;         /* PyDictObject.ma_values */
	uint32_t dict_values_header;  /* bytes before PyDictValues.values[] (3.13: 8) */
	int keys_layout;              /* 310 or 311 (3.11 and later) */
	uint32_t str_state;           /* PyASCIIObject.state */
	uint32_t str_length;          /* PyASCIIObject.length */
};

/* The table entry for major.minor, or NULL if unknown. */
const struct np_pyver *np_pyver_find(int major, int minor);

/* Parses "3.11" out of a file name such as libpython3.11.so.1.0 or
 * python3.11; 0 on success, -EINVAL otherwise. */
int np_pyver_from_name(const char *path, int *major, int *minor);

/* The versions this build knows, as "3.10 3.11 ..." (for messages). */
const char *np_pyver_known(void);

#endif
