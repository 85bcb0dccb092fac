/* commands.h - the subcommands; each returns the process exit status. */
#ifndef NP_COMMANDS_H
#define NP_COMMANDS_H

int np_cmd_run(int argc, char **argv);
int np_cmd_attach(int argc, char **argv);
int np_cmd_merge(int argc, char **argv);
int np_cmd_compare(int argc, char **argv);

#endif
