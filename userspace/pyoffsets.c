#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pyoffsets.h"

/* PyObject/PyTypeObject/PyTupleObject fields have not moved since 3.8:
 * ob_type 8, tp_name 24, tp_base 256, tp_dictoffset 288, ob_item 24. */
#define TYPE_FIELDS .obj_type = 8, .type_name = 24, .type_base = 256, .tuple_item = 24

static const struct np_pyver table[] = {
	{ 3, 10, 1,
	  { .frame_code = 32, .frame_localsplus = 352, .code_name = 112,
	    .str_ascii_data = 48, TYPE_FIELDS },
	  .managed_dict = 0, .type_dictoffset = 288, .dict_keys = 32, .dict_values = 40,
	  .keys_layout = 310, .str_state = 32, .str_length = 16 },
	{ 3, 11, 1,
	  { .frame_code = 32, .frame_localsplus = 72, .code_name = 120,
	    .str_ascii_data = 48, TYPE_FIELDS },
	  .managed_dict = 1, .type_dictoffset = 288, .dict_keys = 32, .dict_values = 40,
	  .keys_layout = 311, .str_state = 32, .str_length = 16 },
	{ 3, 12, 1,
	  { .frame_code = 0, .frame_localsplus = 72, .code_name = 120,
	    .str_ascii_data = 40, TYPE_FIELDS },
	  .managed_dict = 1, .dict_values_tagged = 1, .type_dictoffset = 288,
	  .dict_keys = 32, .dict_values = 40, .keys_layout = 311, .str_state = 32,
	  .str_length = 16 },
	{ 3, 13, 1,
	  { .frame_code = 0, .frame_localsplus = 72, .code_name = 120,
	    .str_ascii_data = 40, TYPE_FIELDS },
	  .managed_dict = 1, .type_dictoffset = 288, .dict_keys = 32, .dict_values = 40, .dict_values_header = 8,
	  .keys_layout = 311, .str_state = 32, .str_length = 16 },
};

const struct np_pyver *np_pyver_find(int major, int minor)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].major == major && table[i].minor == minor)
			return &table[i];
	return NULL;
}

int np_pyver_from_name(const char *path, int *major, int *minor)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *p = strstr(base, "python");
	if (!p)
		return -EINVAL;
	int ma, mi, n = 0;
	if (sscanf(p + 6, "%d.%d%n", &ma, &mi, &n) != 2 || n == 0)
		return -EINVAL;
	*major = ma;
	*minor = mi;
	return 0;
}

const char *np_pyver_known(void)
{
	return "3.10 3.11 3.12 3.13";
}
