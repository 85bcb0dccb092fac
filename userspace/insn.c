#include <errno.h>
#include <string.h>
#include "insn.h"

static int32_t rd32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

int np_tls_decode(const uint8_t *code, size_t len, uint64_t vaddr, struct np_tls_ref *out)
{
	size_t i = 0;
	/* lea disp32(%rip),%rdi: 48 8d 3d, maybe after a 66 prefix, within
	 * the first few instructions */
	for (; i + 7 <= len && i < 16; i++)
		if (code[i] == 0x48 && code[i + 1] == 0x8d && code[i + 2] == 0x3d)
			break;
	if (i + 7 > len || i >= 16)
		return -ENOEXEC;
	out->tls_index_vaddr = vaddr + i + 7 + (int64_t)rd32(code + i + 3);
	i += 7;
	/* call rel32 to __tls_get_addr, with padding prefixes 66 66 48 */
	while (i < len && (code[i] == 0x66 || code[i] == 0x48))
		i++;
	if (i + 5 > len || code[i] != 0xe8)
		return -ENOEXEC;
	i += 5;
	/* mov disp(%rax),%reg: REX.W 8b modrm, rm = rax, no SIB */
	if (i + 3 > len || (code[i] != 0x48 && code[i] != 0x4c) || code[i + 1] != 0x8b)
		return -ENOEXEC;
	uint8_t modrm = code[i + 2], mod = modrm >> 6, rm = modrm & 7;
	if (rm != 0)
		return -ENOEXEC;
	i += 3;
	if (mod == 0)
		out->disp = 0;
	else if (mod == 1 && i + 1 <= len)
		out->disp = (int8_t)code[i];
	else if (mod == 2 && i + 4 <= len)
		out->disp = rd32(code + i);
	else
		return -ENOEXEC;
	return 0;
}

int np_seq_offset_decode(const uint8_t *code, size_t len)
{
	/* 48 8b 47 10: mov 0x10(%rdi),%rax */
	if (len < 8 || code[0] != 0x48 || code[1] != 0x8b || code[2] != 0x47 || code[3] != 0x10)
		return -ENOEXEC;
	/* 48 8b 78 XX: mov XX(%rax),%rdi (disp8) */
	if (code[4] != 0x48 || code[5] != 0x8b || code[6] != 0x78)
		return -ENOEXEC;
	return (int8_t)code[7] >= 0 ? (int8_t)code[7] : -ENOEXEC;
}

int np_pynode_obj_decode(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t *str)
{
	for (size_t i = 0; i + 3 < len; i++) {
		/* REX.W (base r8-r15: REX.B too) 8b, ModRM: reg = rdi, no SIB */
		if ((code[i] != 0x48 && code[i] != 0x49) || code[i + 1] != 0x8b)
			continue;
		uint8_t modrm = code[i + 2];
		if ((modrm & 0x38) != 0x38 || (modrm & 7) == 4)
			continue;
		int64_t off;
		size_t next;
		if ((modrm >> 6) == 1) {
			off = (int8_t)code[i + 3];
			next = i + 4;
		} else if ((modrm >> 6) == 2 && i + 7 <= len) {
			int32_t d;
			memcpy(&d, code + i + 3, 4);
			off = d;
			next = i + 7;
		} else {
			continue;
		}
		/* 48 8d 35 disp32: lea disp32(%rip),%rsi; then e8: call */
		if (next + 8 > len || code[next] != 0x48 || code[next + 1] != 0x8d ||
		    code[next + 2] != 0x35 || code[next + 7] != 0xe8)
			continue;
		if (off <= 0 || off > 4096 || (off & 7))
			return -ENOEXEC;
		int32_t rel;
		memcpy(&rel, code + next + 3, 4);
		*str = vaddr + next + 7 + (int64_t)rel;
		return (int)off;
	}
	return -ENOEXEC;
}
