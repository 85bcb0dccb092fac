/* agentlink.h - nanprof's end of the agent (libnanprof_agent.so).
 *
 * The agent's checks are on while nanprof holds a connection to it
 * (agent/control.h).  `run` accepts the connection each preloaded agent
 * makes; `attach` injects the agent if the process does not have it yet
 * and connects to it.  Either way the uprobe on the agent's report
 * function is attached first, so no record is missed, and the
 * connections are closed when the session ends: the agent takes its
 * hooks out and the job goes on as before. */
#ifndef NP_AGENTLINK_H
#define NP_AGENTLINK_H

#include <stddef.h>
#include <sys/types.h>

struct np_session;

/* Path of libnanprof_agent.so: $NANPROF_AGENT or next to nanprof. */
int np_agent_path(char *buf, size_t len);

/* run: an agent connected on fd asking for checks.  0: fd is kept (the
 * session closes it); -1: not traced or no probe, the caller closes it. */
int np_agent_accept(struct np_session *s, pid_t pid, int fd);

/* attach: checks on in a traced process (injecting the agent).  0 or
 * -errno; a one-line warning says why not (tracing goes on without). */
int np_agent_attach(struct np_session *s, pid_t pid);

/* Ends every connection and waits (bounded) for the agents to report
 * that their hooks are out. */
void np_agent_detach_all(struct np_session *s);

#endif
