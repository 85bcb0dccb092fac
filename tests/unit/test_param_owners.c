/* test_param_owners.c - cupti/param_owners.c: which module owns the CUDA
 * parameter a birth's checked range starts at. */
#include <criterion/criterion.h>
#include <string.h>
#include "../../cupti/param_owners.h"

TestSuite(param_owners, .init = np_param_owners_reset);

#define W 0x7f0000200000ull
#define B 0x7f0000200400ull

Test(param_owners, a_noted_parameter_is_found_by_its_start_only)
{
	uint64_t owner = 0;
	char name[NP_PARAM_NAME];
	np_param_owner_note(W, 0x5555aaaa0000ull, "weight");
	cr_assert_eq(np_param_owner_of(W, &owner, name), 1);
	cr_expect_eq(owner, 0x5555aaaa0000ull);
	cr_expect_str_eq(name, "weight");
	cr_expect_eq(np_param_owner_of(W + 16, &owner, name), 0, "inside the weight: not its start");
	cr_expect_eq(np_param_owner_of(B, &owner, name), 0, "never noted");
	cr_expect_eq(np_param_owner_of(0, &owner, name), 0);
}

Test(param_owners, a_later_note_replaces_the_owner)
{
	uint64_t owner = 0;
	char name[NP_PARAM_NAME];
	np_param_owner_note(W, 1, "weight");
	np_param_owner_note(W, 2, "bias");   /* memory reused by another parameter */
	cr_assert_eq(np_param_owner_of(W, &owner, name), 1);
	cr_expect_eq(owner, 2);
	cr_expect_str_eq(name, "bias");
	cr_expect_eq(np_param_owners_displaced(), 0, "the same pointer: nothing displaced");
}

Test(param_owners, long_names_are_cut_and_terminated)
{
	uint64_t owner = 0;
	char name[NP_PARAM_NAME];
	np_param_owner_note(W, 1, "a_parameter_name_longer_than_the_record_keeps");
	cr_assert_eq(np_param_owner_of(W, &owner, name), 1);
	cr_expect_eq(strlen(name), NP_PARAM_NAME - 1);
	cr_expect_eq(strncmp(name, "a_parameter_name_longer", NP_PARAM_NAME - 1), 0);
}

Test(param_owners, the_table_is_bounded_and_counts_what_it_forgets)
{
	uint64_t owner = 0;
	char name[NP_PARAM_NAME];
	/* more pointers than slots: some must be displaced, the newest kept */
	for (uint64_t i = 0; i < 2 * NP_PARAM_OWNER_SLOTS; i++)
		np_param_owner_note(W + i * 512, i + 1, "w");
	cr_expect_gt(np_param_owners_displaced(), 0);
	uint64_t last = W + (2 * NP_PARAM_OWNER_SLOTS - 1) * 512;
	cr_assert_eq(np_param_owner_of(last, &owner, name), 1);
	cr_expect_eq(owner, 2 * NP_PARAM_OWNER_SLOTS);
}
