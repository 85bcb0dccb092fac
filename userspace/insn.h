/* insn.h - facts about libtorch read out of its machine code, where no
 * symbol or header states them.
 *
 * 1. Where a thread-local variable lives.  libtorch keeps the autograd sequence counter (at::sequence_number) in a
 * thread_local.  Reading it from BPF at module entry and exit brackets the
 * sequence numbers of the autograd nodes each module creates, with no probe
 * on node creation.  Its location comes from the machine code of
 * at::sequence_number::peek(), which is, in every build seen:
 *
 *     sub $8,%rsp
 *     [66] lea TLS_INDEX(%rip),%rdi        general-dynamic TLS access
 *     [66 66 48] call __tls_get_addr
 *     mov DISP(%rax),%rax                  the variable, DISP into the block
 *
 * The tls_index {module id, offset} is filled in by the dynamic linker, so
 * it is read from the live process.
 */
#ifndef NP_INSN_H
#define NP_INSN_H

#include <stddef.h>
#include <stdint.h>

struct np_tls_ref {
	uint64_t tls_index_vaddr;  /* the GOT entry {ti_module, ti_offset} */
	int64_t disp;              /* added to the address __tls_get_addr returns */
};

/* Decodes the code of a function like peek() at vaddr.  0, or -ENOEXEC
 * when it does not have the expected shape. */
int np_tls_decode(const uint8_t *code, size_t len, uint64_t vaddr, struct np_tls_ref *out);

/* 2. The offset of Node::sequence_nr_, from libtorch_python's
 * THPCppFunction_sequence_nr(self, _), which is
 *     mov 0x10(%rdi),%rax     self->cdata (the Node*)
 *     mov OFF(%rax),%rdi      node->sequence_nr_
 *     jmp PyLong_FromUnsignedLongLong
 * Returns OFF, or -ENOEXEC when the code has another shape. */
int np_seq_offset_decode(const uint8_t *code, size_t len);

/* 3. Where a torch::autograd::PyNode (the node of a Python
 * autograd.Function) keeps its Python object, from libtorch_python's
 * PyNode::is_traceable(), which begins (after taking the GIL) with
 * PyObject_GetAttrString(obj, "_forward_cls"):
 *     mov OFF(%reg),%rdi      this->obj (disp8 or disp32)
 *     lea STR(%rip),%rsi      "_forward_cls"
 *     call PyObject_GetAttrString
 * The first such sequence in code (at vaddr) gives OFF, and *str the
 * vaddr of the string, for the caller to check.  -ENOEXEC if none. */
int np_pynode_obj_decode(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t *str);

#endif
