/* test_insn.c - the machine-code readers in userspace/insn.c, on the
 * exact bytes of the libtorch builds seen here. */
#include <criterion/criterion.h>
#include <errno.h>
#include "insn.h"

/* at::sequence_number::peek() in pip torch 2.13 (libtorch_cpu.so @0x1967480) */
static const uint8_t peek_213[] = {
	0x48, 0x83, 0xec, 0x08,                   /* sub $8,%rsp */
	0x48, 0x8d, 0x3d, 0xed, 0x86, 0xf0, 0x12, /* lea 0x12f086ed(%rip),%rdi */
	0xe8, 0x40, 0x55, 0x65, 0xff,             /* call __tls_get_addr */
	0x48, 0x8b, 0x80, 0x70, 0x01, 0x00, 0x00, /* mov 0x170(%rax),%rax */
	0x48, 0x83, 0xc4, 0x08, 0xc3,
};

/* the same in Debian's torch 1.13 (@0xd90460): padded GD sequence */
static const uint8_t peek_113[] = {
	0x48, 0x83, 0xec, 0x08,
	0x66, 0x48, 0x8d, 0x3d, 0x5c, 0x26, 0x4b, 0x06, /* data16 lea ... */
	0x66, 0x66, 0x48, 0xe8, 0x7c, 0xee, 0xa9, 0xff, /* data16 data16 rex.W call */
	0x48, 0x8b, 0x00,                               /* mov (%rax),%rax */
	0x48, 0x83, 0xc4, 0x08, 0xc3,
};

Test(insn, tls_index_of_torch_2_13)
{
	struct np_tls_ref r;
	cr_assert_eq(np_tls_decode(peek_213, sizeof(peek_213), 0x1967480, &r), 0);
	/* objdump: lea ... # 1486fb78 */
	cr_assert_eq(r.tls_index_vaddr, 0x1486fb78);
	cr_assert_eq(r.disp, 0x170);
}

Test(insn, tls_index_of_torch_1_13)
{
	struct np_tls_ref r;
	cr_assert_eq(np_tls_decode(peek_113, sizeof(peek_113), 0xd90460, &r), 0);
	cr_assert_eq(r.tls_index_vaddr, 0x7242ac8);
	cr_assert_eq(r.disp, 0);
}

Test(insn, tls_disp8_and_other_register)
{
	uint8_t code[] = { 0x48, 0x8d, 0x3d, 0x10, 0x00, 0x00, 0x00, 0xe8, 0, 0, 0, 0,
			   0x4c, 0x8b, 0x40, 0xf8 };   /* mov -8(%rax),%r8 */
	struct np_tls_ref r;
	cr_assert_eq(np_tls_decode(code, sizeof(code), 0x1000, &r), 0);
	cr_assert_eq(r.tls_index_vaddr, 0x1000 + 7 + 0x10);
	cr_assert_eq(r.disp, -8);
}

Test(insn, tls_rejects_other_shapes)
{
	struct np_tls_ref r;
	uint8_t no_lea[] = { 0x48, 0x83, 0xec, 0x08, 0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90 };
	cr_assert_eq(np_tls_decode(no_lea, sizeof(no_lea), 0, &r), -ENOEXEC);
	uint8_t no_call[sizeof(peek_213)];
	memcpy(no_call, peek_213, sizeof(no_call));
	no_call[11] = 0x90;   /* the call becomes a nop */
	cr_assert_eq(np_tls_decode(no_call, sizeof(no_call), 0, &r), -ENOEXEC);
	uint8_t sib[sizeof(peek_213)];
	memcpy(sib, peek_213, sizeof(sib));
	sib[18] = 0x84;       /* rm = 100: a SIB byte follows, not handled */
	cr_assert_eq(np_tls_decode(sib, sizeof(sib), 0, &r), -ENOEXEC);
	cr_assert_eq(np_tls_decode(peek_213, 12, 0, &r), -ENOEXEC);   /* cut short */
}

/* THPCppFunction_sequence_nr in pip torch 2.13's libtorch_python */
Test(insn, sequence_nr_offset_of_torch_2_13)
{
	uint8_t code[] = { 0x48, 0x8b, 0x47, 0x10, 0x48, 0x8b, 0x78, 0x10, 0xe9, 0, 0, 0 };
	cr_assert_eq(np_seq_offset_decode(code, sizeof(code)), 16);
	code[7] = 0x18;
	cr_assert_eq(np_seq_offset_decode(code, sizeof(code)), 24);
}

Test(insn, sequence_nr_offset_rejects_other_shapes)
{
	uint8_t code[] = { 0x48, 0x8b, 0x47, 0x18, 0x48, 0x8b, 0x78, 0x10 };
	cr_assert_eq(np_seq_offset_decode(code, sizeof(code)), -ENOEXEC);   /* cdata elsewhere */
	uint8_t code2[] = { 0x48, 0x8b, 0x47, 0x10, 0x48, 0x8b, 0xb8, 0x10, 0, 0, 0 };
	cr_assert_eq(np_seq_offset_decode(code2, sizeof(code2)), -ENOEXEC); /* disp32 form */
	cr_assert_eq(np_seq_offset_decode(code, 4), -ENOEXEC);
}
