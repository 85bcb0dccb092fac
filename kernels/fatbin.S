/* fatbin.S - the finite-check kernels' fatbin (kernels/finite_check.cu,
 * built by nvcc) embedded as read-only data, for the agent to hand to
 * cuModuleLoadData at run time: no separate file to find or ship.
 *
 * The Makefile passes the fatbin's path as NP_FATBIN_PATH, a quoted
 * string.  Hidden symbols: they are the agent's own, never exported
 * from libnanprof_agent.so into the job.
 */
#ifndef NP_FATBIN_PATH
#error "NP_FATBIN_PATH (the fatbin's path, quoted) is not defined"
#endif

	.section .rodata.np_check_fatbin, "a", @progbits
	/* the fatbin header is read as 64-bit words */
	.balign 16
	.globl np_check_fatbin
	.hidden np_check_fatbin
	.type np_check_fatbin, @object
np_check_fatbin:
	.incbin NP_FATBIN_PATH
	.globl np_check_fatbin_end
	.hidden np_check_fatbin_end
	.type np_check_fatbin_end, @object
np_check_fatbin_end:
	.size np_check_fatbin, np_check_fatbin_end - np_check_fatbin
	.size np_check_fatbin_end, 0

	/* no executable stack for whatever links this in */
	.section .note.GNU-stack, "", @progbits
