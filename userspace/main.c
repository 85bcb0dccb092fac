/* main.c - the command table and its dispatcher. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "log.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct cmd cmds[] = {
	{ "run", np_cmd_run },
	{ "attach", np_cmd_attach },
	{ "merge", np_cmd_merge },
	{ "compare", np_cmd_compare },
};

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		np_usage_main();
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	np_err("unknown command '%s' (try: nanprof --help)", argv[1]);
	return 2;
}
