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

/* The start of PyNode::is_traceable() in pip torch 2.13's libtorch_python
 * (at 0x811750): obj at +0x70 */
static const uint8_t traceable_213[] = {
	0x55, 0x53, 0x48, 0x89, 0xfb, 0x48, 0x83, 0xec, 0x28, 0x48, 0x8d, 0x6c, 0x24, 0x10,
	0x48, 0x89, 0xef, 0xe8, 0x7a, 0x53, 0xbb, 0xff,   /* call gil_scoped_acquire */
	0x48, 0x8b, 0x7b, 0x70,                           /* mov 0x70(%rbx),%rdi */
	0x48, 0x8d, 0x35, 0xd0, 0xd9, 0x9b, 0x00,         /* lea 0x9bd9d0(%rip),%rsi */
	0xe8, 0x5a, 0x6e, 0x98, 0xff,                     /* call PyObject_GetAttrString */
};

/* ... and in Debian's torch 1.13 (at 0x5dbfb0): obj at +0x188, disp32 */
static const uint8_t traceable_113[] = {
	0x55, 0x53, 0x48, 0x89, 0xfb, 0x48, 0x83, 0xec, 0x38,
	0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00,   /* mov %fs:0x28,%rax */
	0x48, 0x89, 0x44, 0x24, 0x28, 0x31, 0xc0, 0x48, 0x8d, 0x6c, 0x24, 0x10,
	0x48, 0x89, 0xef, 0xe8, 0x0a, 0x60, 0xd2, 0xff,
	0x48, 0x8b, 0xbb, 0x88, 0x01, 0x00, 0x00,               /* mov 0x188(%rbx),%rdi */
	0x48, 0x8d, 0x35, 0x28, 0x96, 0x46, 0x00,               /* lea 0x469628(%rip),%rsi */
	0xe8, 0x17, 0x7f, 0xbd, 0xff,
};

Test(insn, pynode_obj_offset_of_torch_2_13_and_1_13)
{
	uint64_t str = 0;
	cr_assert_eq(np_pynode_obj_decode(traceable_213, sizeof(traceable_213), 0x811750, &str),
		     0x70);
	cr_assert_eq(str, 0x11cf141, "the lea's target, as objdump gives it");
	cr_assert_eq(np_pynode_obj_decode(traceable_113, sizeof(traceable_113), 0x5dbfb0, &str),
		     0x188);
	cr_assert_eq(str, 0xa4560c);
}

Test(insn, pynode_obj_offset_rejects_other_shapes)
{
	uint64_t str = 0;
	uint8_t code[sizeof(traceable_213)];
	memcpy(code, traceable_213, sizeof(code));
	code[sizeof(code) - 5] = 0xe9;   /* a jmp, not a call, after the lea */
	cr_assert_eq(np_pynode_obj_decode(code, sizeof(code), 0, &str), -ENOEXEC);
	memcpy(code, traceable_213, sizeof(code));
	code[24] = 0x7c;                 /* ModRM rm = 100: a SIB byte would follow */
	cr_assert_eq(np_pynode_obj_decode(code, sizeof(code), 0, &str), -ENOEXEC);
	memcpy(code, traceable_213, sizeof(code));
	code[24] = 0x73;                 /* mov into %rsi, not %rdi */
	cr_assert_eq(np_pynode_obj_decode(code, sizeof(code), 0, &str), -ENOEXEC);
	memcpy(code, traceable_213, sizeof(code));
	code[25] = 0x74;                 /* an offset no pointer field has */
	cr_assert_eq(np_pynode_obj_decode(code, sizeof(code), 0, &str), -ENOEXEC);
	cr_assert_eq(np_pynode_obj_decode(traceable_213, 30, 0, &str), -ENOEXEC);   /* cut short */
}
