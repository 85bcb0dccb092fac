/* test_pyoffsets.c - unit tests for userspace/pyoffsets.c.
 *
 * The expected offsets are the ones measured on live interpreters, as
 * recorded in shared/design/facts.md, and CPython's own headers.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "pyoffsets.h"

Test(pyoffsets, known_versions)
{
	for (int minor = 10; minor <= 13; minor++) {
		const struct np_pyver *v = np_pyver_find(3, minor);
		cr_assert_not_null(v, "3.%d missing", minor);
		cr_expect_eq(v->major, 3);
		cr_expect_eq(v->minor, minor);
	}
}

Test(pyoffsets, unknown_versions)
{
	cr_expect_null(np_pyver_find(3, 9));
	cr_expect_null(np_pyver_find(3, 14));
	cr_expect_null(np_pyver_find(2, 7));
	cr_expect_null(np_pyver_find(4, 11));
	cr_expect_null(np_pyver_find(0, 0));
	cr_expect_null(np_pyver_find(-3, 11));
}

Test(pyoffsets, known_list_matches_table)
{
	const char *known = np_pyver_known();

	cr_assert_str_eq(known, "3.10 3.11 3.12 3.13");
}

/* facts.md: "frame -> code 32/0/0, localsplus[0] 72/72/72; code -> co_name
 * 120 (all three); compact ASCII string data at +48/+40/+40". */
Test(pyoffsets, py311_matches_facts)
{
	const struct np_pyver *v = np_pyver_find(3, 11);

	cr_assert_not_null(v);
	cr_expect_eq(v->verified, 1);
	cr_expect_eq(v->bpf.frame_code, 32);
	cr_expect_eq(v->bpf.frame_localsplus, 72);
	cr_expect_eq(v->bpf.code_name, 120);
	cr_expect_eq(v->bpf.str_ascii_data, 48);
	/* PyObject.ob_type, PyTypeObject.tp_name / tp_base / tp_dictoffset */
	cr_expect_eq(v->bpf.obj_type, 8);
	cr_expect_eq(v->bpf.type_name, 24);
	cr_expect_eq(v->bpf.type_base, 256);
	cr_expect_eq(v->type_dictoffset, 288);
	/* dicts, strs and the managed __dict__ of 3.11 */
	cr_expect_eq(v->managed_dict, 1);
	cr_expect_eq(v->dict_values_tagged, 0);
	cr_expect_eq(v->dict_keys, 32);
	cr_expect_eq(v->dict_values, 40);
	cr_expect_eq(v->keys_layout, 311);
	cr_expect_eq(v->str_length, 16);
	cr_expect_eq(v->str_state, 32);
	cr_expect_eq(v->dict_values_header, 0);
	cr_expect_eq(v->bpf.tuple_item, 24);   /* PyTupleObject.ob_item */
}

Test(pyoffsets, py312_py313_match_facts)
{
	for (int minor = 12; minor <= 13; minor++) {
		const struct np_pyver *v = np_pyver_find(3, minor);
		cr_assert_not_null(v);
		cr_expect_eq(v->bpf.frame_code, 0, "3.%d", minor);
		cr_expect_eq(v->bpf.frame_localsplus, 72, "3.%d", minor);
		cr_expect_eq(v->bpf.code_name, 120, "3.%d", minor);
		cr_expect_eq(v->bpf.str_ascii_data, 40, "3.%d", minor);
		cr_expect_eq(v->bpf.obj_type, 8);
		cr_expect_eq(v->bpf.type_name, 24);
		cr_expect_eq(v->managed_dict, 1);
		cr_expect_eq(v->keys_layout, 311);
		cr_expect_eq(v->str_length, 16);
		cr_expect_eq(v->str_state, 32);
	}
	cr_expect_eq(np_pyver_find(3, 12)->dict_values_tagged, 1);
	cr_expect_eq(np_pyver_find(3, 13)->dict_values_tagged, 0);
	/* PyDictValues: values[] at 0 until 3.12, after 4 bytes + padding in 3.13 */
	cr_expect_eq(np_pyver_find(3, 12)->dict_values_header, 0);
	cr_expect_eq(np_pyver_find(3, 13)->dict_values_header, 8);
}

/* 3.10 from Include/cpython/frameobject.h and code.h: f_code 32,
 * f_localsplus after 20 PyTryBlocks at 352; co_name 112; dk_* layout 310. */
Test(pyoffsets, py310_from_headers)
{
	const struct np_pyver *v = np_pyver_find(3, 10);

	cr_assert_not_null(v);
	cr_expect_eq(v->verified, 1);   /* tests/integration/test_pythons.sh */
	cr_expect_eq(v->bpf.frame_code, 32);
	cr_expect_eq(v->bpf.frame_localsplus, 352);
	cr_expect_eq(v->bpf.code_name, 112);
	cr_expect_eq(v->bpf.str_ascii_data, 48);
	cr_expect_eq(v->managed_dict, 0);
	cr_expect_eq(v->keys_layout, 310);
	cr_expect_eq(v->type_dictoffset, 288);
	cr_expect_eq(v->dict_values_header, 0);
}

Test(pyoffsets, find_returns_same_entry)
{
	cr_expect_eq(np_pyver_find(3, 11), np_pyver_find(3, 11));
	cr_expect_neq(np_pyver_find(3, 11), np_pyver_find(3, 12));
}

static void expect_version(const char *name, int major, int minor)
{
	int ma = -1, mi = -1;

	cr_expect_eq(np_pyver_from_name(name, &ma, &mi), 0, "'%s' not parsed", name);
	cr_expect_eq(ma, major, "'%s': major %d", name, ma);
	cr_expect_eq(mi, minor, "'%s': minor %d", name, mi);
}

static void expect_no_version(const char *name)
{
	int ma = -7, mi = -7;

	cr_expect_eq(np_pyver_from_name(name, &ma, &mi), -EINVAL, "'%s' parsed as %d.%d",
		     name, ma, mi);
	cr_expect_eq(ma, -7, "'%s': major written on failure", name);
	cr_expect_eq(mi, -7, "'%s': minor written on failure", name);
}

Test(pyoffsets, from_name)
{
	expect_version("libpython3.11.so.1.0", 3, 11);
	expect_version("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 3, 11);
	expect_version("/usr/bin/python3.11", 3, 11);
	expect_version("python3.12d", 3, 12);
	expect_version("/root/.pyenv/versions/3.11.7/bin/python3.11", 3, 11);
	expect_version("libpython3.13t.so.1.0", 3, 13);
	expect_version("python3.10", 3, 10);
	expect_version("python3.9", 3, 9);   /* parsed; np_pyver_find refuses it */
}

Test(pyoffsets, from_name_failures)
{
	expect_no_version("python");
	expect_no_version("python3");
	expect_no_version("/usr/bin/python3");
	expect_no_version("libfoo.so");
	expect_no_version("libpython3.so");
	expect_no_version("");
	/* the version is in a directory, the file name has none */
	expect_no_version("/usr/lib/python3.11/lib-dynload/_ctypes.so");
	expect_no_version("/opt/python3.11/bin/");
}
