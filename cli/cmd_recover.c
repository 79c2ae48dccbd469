// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream recover: removes, under rpm's lock for the root, the temp files an interrupted install left. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "imastream/installer.h"

static const struct cli_use recover_options[] = {
	{ CLI_OPT_ROOT, "the root an install was interrupted in (required)" },
	{ CLI_OPT_NO_WAIT },
	{ CLI_OPT_DBPATH },
	{ CLI_OPT_QUIET, "no summary line" },
	{ CLI_OPT_VERBOSE, "name every file removed" },
	{ CLI_OPT_FORMAT, "text (default) or json: the summary as a JSON object on\n"
	  "standard output" },
	{ CLI_OPT_HELP },
	{ 0 },
};

static const struct cli_spec recover_spec = {
	.cmd = "recover",
	.synopsis =
	"Usage: imastream recover --root DIR [--no-wait] [--dbpath DB] [--quiet] [-v]\n"
	"                         [--format FORMAT]\n"
	"\n"
	"Refuses a DIR that is not an installed root (no rpm database and no\n"
	"DIR/var/lib/imastream), creating nothing in it. Takes rpm's transaction lock\n"
	"for DIR (waiting while an rpm or imastream transaction holds it). If an\n"
	"install was killed while renaming a package's files into place, completes\n"
	"that package from its intent journal (DIR/var/lib/imastream/journal): its\n"
	"remaining files, then its record. Then\n"
	"removes every .imastream-tmp-* file below DIR whose writer is no longer\n"
	"running: what an 'imastream install' killed or cut off by a crash left. No other\n"
	"file at a final name is touched, nor the temp files of a process still alive.\n"
	"A journal that is corrupt is refused in one line, and nothing is changed.\n"
	"'imastream install' does the same by itself when it finds that the last\n"
	"install into DIR did not end.\n",
	.uses = recover_options,
	.epilog =
	"Exit status: 0 when nothing is left to remove, 1 if a file could not be removed\n"
	"or the lock not taken (one line says why), 2 for a usage error.\n",
};

int cmd_recover(int argc, char **argv)
{
	struct imastream_recover_stats st = { .size = sizeof(st) };
	const char *root = NULL, *dbpath = NULL;
	char *root_abs = NULL;
	unsigned int flags = 0;
	bool quiet = false, json = false;
	struct cli_json out = { 0 };
	struct timespec t0;
	struct cli_parser p;
	int c, verbose = 0, rootfd, err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cli_parse_start(&p, &recover_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_ROOT:
			root = p.arg;
			break;
		case CLI_OPT_NO_WAIT:
			flags |= IMASTREAM_ROOT_NO_WAIT;
			break;
		case CLI_OPT_DBPATH:
			dbpath = p.arg;
			break;
		case CLI_OPT_FORMAT:
			if (cli_format_option("recover", p.spelled, p.arg, &json) != CLI_OK)
				return CLI_USAGE;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			if (!cli_say_option(c, &quiet, &verbose))
				return CLI_USAGE;
		}
	}
	if (!root)
		return cli_usage_error("recover", "no --root given");
	if (cli_parse_operands(&p) < argc)
		return cli_usage_error("recover", "unexpected argument '%s'",
				       argv[cli_parse_operands(&p)]);
	/* -v names each file removed (the library says so at debug level). */
	cli_set_verbose(verbose ? 2 : 0);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	root_abs = rootfd < 0 ? NULL : realpath(root, NULL);
	if (!root_abs) {
		cli_say("recover", "%s: %s", root, strerror(errno));
		if (rootfd >= 0)
			close(rootfd);
		return CLI_FAILED;
	}
	err = dbpath ? imastream_rpm_set_dbpath(dbpath, &cli_log) : 0;
	if (!err)
		err = imastream_root_recover(rootfd, root_abs, flags, &cli_log, &st);
	close(rootfd);
	if (json && !err) {
		cli_json_begin(&out, "summary");
		cli_json_str(&out, "command", "recover");
		cli_json_str(&out, "root", root);
		cli_json_uint(&out, "journals", st.journals);
		cli_json_uint(&out, "completed", st.completed);
		cli_json_uint(&out, "removed", st.removed);
		cli_json_uint(&out, "bytes", st.bytes);
		cli_json_uint(&out, "kept", st.kept);
		cli_json_seconds(&out, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, &t0));
		if (cli_json_put(&out, stdout) || fflush(stdout) == EOF)
			err = -EIO;
		cli_json_free(&out);
	} else if (!quiet && !err) {
		char size[32];

		cli_say("recover", "%s: removed %lu temp files (%s)%s, %.2f s", root, st.removed,
			cli_human_size(st.bytes, size, sizeof(size)),
			st.kept ? ", kept those of running processes" : "",
			cli_seconds_since(CLOCK_MONOTONIC, &t0));
	}
	free(root_abs);
	return err ? CLI_FAILED : CLI_OK;
}
