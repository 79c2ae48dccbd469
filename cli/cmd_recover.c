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
#include "imastream/audit.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/root.h"
#include "imastream/rpmdb.h"

static const struct cli_use recover_options[] = {
	{ CLI_OPT_ROOT, "the root an install was interrupted in (required)" },
	{ CLI_OPT_RPMDB, "then remove the labelled rpm temp files\n"
			 "(NAME;XXXXXXXX) a killed rpm left, and take\n"
			 "security.ima and security.evm off every other\n"
			 "labelled file no installed package owns" },
	{ CLI_OPT_DRY_RUN, "with --rpmdb: name them and change nothing" },
	{ CLI_OPT_TRUST, "with --rpmdb: certificates (file or directory;\n"
			 "repeatable): an rpm temp file beside no package's\n"
			 "file is removed if its signature verifies with\n"
			 "them (a killed rpm -i's), else unlabelled" },
	{ CLI_OPT_XATTR_USER, "with --rpmdb: user.ima and user.evm" },
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
		"       imastream recover --root DIR --rpmdb [-n] [-t PATH...] [--xattr-user]\n"
		"                         [--no-wait] [--dbpath DB] [--quiet] [-v]\n"
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
		"file at a final name is touched, nor the temp files of a process still alive\n"
		"or of a name imastream does not write: those are named, and recover fails.\n"
		"A journal that is corrupt is refused in one line, and nothing is changed.\n"
		"'imastream install' does the same by itself when it finds that the last\n"
		"install into DIR did not end. Without --rpmdb, in a root with an rpm\n"
		"database, labelled files no package owns (rpm's leftovers) are counted in one\n"
		"line that says --rpmdb mends them, and recover fails.\n"
		"With --rpmdb, then, still under the lock, the orphans 'imastream verify\n"
		"--root DIR --rpmdb' reports: labelled regular files no package lists, of\n"
		"rpm's temp name (NAME;XXXXXXXX) anywhere, others with a signature in and\n"
		"below the directories packages list (%dir), or at a %ghost path. rpm's temp\n"
		"files beside a file a package lists (or, with --trust, whose signature\n"
		"verifies) are removed; any other orphan keeps its content and loses its\n"
		"security.ima and security.evm, so that the kernel no longer appraises it as\n"
		"sound, unless its inode has another name that is no orphan (a package's file,\n"
		"one outside the root): that one is named and left, and recover fails. One\n"
		"line per orphan. With -n, nothing is locked, recovered or changed: the\n"
		"orphans are only named.\n",
	.uses = recover_options,
	.epilog =
		"Exit status: 0 when nothing is left to remove, 1 if a file could not be removed\n"
		"or was kept, orphans are left, or the lock not taken (one line says why), or\n"
		"with -n when there are orphans, 2 for a usage error.\n",
};

struct orphan_job {
	const char *root;
	bool dry_run;
	struct cli_json *json; /* --format json: a record per orphan here */
	unsigned long found, removed, unlabelled, failed, left;
};

/* What happens to an orphan of @kind: "removed" or "unlabelled". */
static const char *orphan_fate(int kind)
{
	return kind == IMASTREAM_ORPHAN_RPM_TEMP || kind == IMASTREAM_ORPHAN_INSTALL_TEMP ?
		       "removed" :
		       "unlabelled";
}

/* An orphan left labelled: its inode has other names, not orphans, which keep its labels. */
static bool orphan_shared(const struct imastream_orphan *f)
{
	return f->shared > 0;
}

/* An orphan's record: its path as the root's own system names it (imastream(1), PATHS). */
static void orphan_json(struct orphan_job *job, const struct imastream_orphan *f)
{
	cli_json_begin(job->json, "file");
	cli_json_str(job->json, "path", f->path);
	cli_json_str(job->json, "kind", cli_orphan_kind(f->kind));
	cli_json_str(job->json, "result",
		     job->dry_run ? "found" :
		     f->fixed < 0 ? "fail" :
		     f->fixed > 0 ? orphan_fate(f->kind) :
				    "kept");
	if (f->fixed < 0)
		cli_json_str(job->json, "reason", strerror(-f->fixed));
	else if (orphan_shared(f))
		cli_json_uint(job->json, "shared", f->shared);
	cli_json_put(job->json, stdout);
}

/* "PATH: KIND: FATE" on standard output, the path escaped (imastream(1)). */
static void orphan_line(const struct imastream_orphan *f, const char *fate)
{
	struct cli_line l = { 0 };

	cli_line_name(&l, f->path);
	cli_line_text(&l, ": ");
	cli_line_text(&l, cli_orphan_kind(f->kind));
	cli_line_text(&l, ": ");
	cli_line_text(&l, fate);
	cli_line_put(&l, stdout);
	cli_line_free(&l);
}

static void orphan_fixed(void *arg, const struct imastream_orphan *f)
{
	struct orphan_job *job = arg;

	job->found++;
	if (!job->dry_run && f->fixed > 0) {
		if (f->kind == IMASTREAM_ORPHAN_RPM_TEMP)
			job->removed++;
		else
			job->unlabelled++;
	} else if (!job->dry_run && f->fixed < 0) {
		job->failed++;
	} else if (!job->dry_run && orphan_shared(f)) {
		job->left++;
	}
	if (job->json) {
		orphan_json(job, f);
		return;
	}
	if (orphan_shared(f) && f->fixed >= 0) {
		/* Unlabelling it would unlabel its other names, a package's file maybe. */
		char fate[192];

		snprintf(fate, sizeof(fate),
			 "%s labelled: its inode has %lu other names that are no orphans (a "
			 "package's file, one outside the root): remove this name if it is not "
			 "wanted",
			 job->dry_run ? "would be left" : "left", f->shared);
		orphan_line(f, fate);
	} else if (job->dry_run) {
		orphan_line(f, f->kind == IMASTREAM_ORPHAN_RPM_TEMP ?
				       "would be removed" :
			       f->kind == IMASTREAM_ORPHAN_INSTALL_TEMP ?
				       "would be removed once its writer is gone" :
				       "would be unlabelled");
	} else if (f->fixed == -EPERM && f->kind != IMASTREAM_ORPHAN_RPM_TEMP) {
		/* Found by power cuts of an rpm -U between its renames and its database commit. */
		cli_say("recover",
			"%s: %s: cannot be unlabelled: the kernel refuses (EVM keeps a portable "
			"signature, or the file is immutable): run the transaction that left it "
			"again, or remove the file",
			f->path, cli_orphan_kind(f->kind));
	} else if (f->fixed < 0) {
		cli_say("recover", "%s: %s: cannot be %s: %s", f->path, cli_orphan_kind(f->kind),
			f->kind == IMASTREAM_ORPHAN_RPM_TEMP ? "removed" : "unlabelled",
			strerror(-f->fixed));
	} else if (f->fixed > 0) {
		orphan_line(f, f->kind == IMASTREAM_ORPHAN_RPM_TEMP ? "removed" : "unlabelled");
	}
}

/* --rpmdb: the orphans, under rpm's lock unless only named. */
static int recover_orphans(int rootfd, struct orphan_job *job, unsigned int root_flags,
			   unsigned int flags, struct imastream_verifier *v, bool quiet)
{
	const char *root = job->root;
	bool dry_run = job->dry_run;
	struct imastream_root_txn *t = NULL;
	int err;

	if (!dry_run) {
		err = imastream_root_txn_begin(rootfd, root, root_flags, &cli_log, NULL, &t);
		if (err)
			return err;
		flags |= IMASTREAM_ORPHANS_FIX;
	}
	err = imastream_orphans_rpmdb_trusted(root, flags, v, orphan_fixed, job, &cli_log);
	imastream_root_txn_end(t, err);
	if (fflush(stdout) == EOF)
		err = -EIO;
	if (err)
		return err;
	if (!quiet && dry_run)
		cli_say("recover", "%s: %lu labelled files no package owns", root, job->found);
	else if (!quiet && job->left)
		cli_say("recover",
			"%s: %lu rpm temp files removed, %lu unowned files unlabelled, %lu left "
			"(named above)",
			root, job->removed, job->unlabelled, job->left);
	else if (!quiet)
		cli_say("recover", "%s: %lu rpm temp files removed, %lu unowned files unlabelled",
			root, job->removed, job->unlabelled);
	return job->failed || job->left || (dry_run && job->found) ? -EAGAIN : 0;
}

static void orphan_counted(void *arg, const struct imastream_orphan *f)
{
	(void)f;
	++*(unsigned long *)arg;
}

/*
 * Without --rpmdb, in a root with an rpm database: the orphans rpm left are not this
 * run's, but nor is the root whole; one line says so.  Return: 0, or -EAGAIN with some.
 */
static int orphans_left(const char *root)
{
	unsigned long n = 0;

	/* No rpm database (imastream's state only): nothing of rpm's to look for. */
	if (imastream_orphans_rpmdb(root, 0, orphan_counted, &n, NULL) || !n)
		return 0;
	cli_say("recover",
		"%s: %lu labelled files no package owns (rpm's leftovers): "
		"'imastream recover --root %s --rpmdb' mends them",
		root, n, root);
	return -EAGAIN;
}

/* What the command line asks for. */
struct recover_opts {
	struct cli_root where;
	struct cli_say say;
	unsigned int flags; /* IMASTREAM_ROOT_ */
	bool rpmdb, dry_run;
	unsigned int orphan_flags;
	const char *trust_paths[64];
	unsigned int n_trust;
};

/* The command line into @o: -1 to go on, or the exit status (--help, a usage error). */
static int parse_options(struct recover_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	int c, taken;

	cli_parse_start(&p, &recover_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_RPMDB:
			o->rpmdb = true;
			break;
		case CLI_OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case CLI_OPT_XATTR_USER:
			o->orphan_flags |= IMASTREAM_ORPHANS_XATTR_USER;
			break;
		case CLI_OPT_TRUST:
			if (o->n_trust == sizeof(o->trust_paths) / sizeof(o->trust_paths[0]))
				return cli_usage_error("recover", "more than %u certificate paths",
						       o->n_trust);
			o->trust_paths[o->n_trust++] = p.arg;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			taken = cli_root_option(&p, c, &o->where);
			if (!taken)
				taken = cli_say_option(&p, c, &o->say);
			if (taken <= 0)
				return CLI_USAGE;
		}
	}
	if (o->where.no_wait)
		o->flags |= IMASTREAM_ROOT_NO_WAIT;
	if (!o->where.dir)
		return cli_usage_error("recover", "no --root given");
	if ((o->dry_run || o->orphan_flags || o->n_trust) && !o->rpmdb)
		return cli_usage_error("recover", "%s is for --rpmdb",
				       o->dry_run ? "--dry-run" :
				       o->n_trust ? "--trust" :
						    "--xattr-user");
	if (cli_parse_operands(&p) < argc)
		return cli_usage_error("recover", "unexpected argument '%s'",
				       argv[cli_parse_operands(&p)]);
	return -1;
}

/* The --trust certificates, for --rpmdb's temp files: CLI_OK, or the exit status. */
static int load_trust(const struct recover_opts *o, struct imastream_trust **trust,
		      struct imastream_verifier **v)
{
	if (!o->n_trust)
		return CLI_OK;
	if (imastream_trust_new(&cli_log, trust) || imastream_verifier_new(*trust, &cli_log, v))
		return CLI_FAILED;
	for (unsigned int i = 0; i < o->n_trust; i++)
		if (imastream_trust_add_path(*trust, o->trust_paths[i]))
			return CLI_USAGE; /* the store said why */
	return CLI_OK;
}

/* The --format json summary, which also closes a run that failed late: its counts say
 * how far it got.  @err, or -EIO if it could not be written. */
static int put_summary(struct cli_json *out, const char *root, bool rpmdb,
		       const struct imastream_recover_stats *st, const struct orphan_job *job,
		       const struct timespec *t0, int err)
{
	cli_json_begin(out, "summary");
	cli_json_str(out, "command", "recover");
	cli_json_str(out, "root", root);
	cli_json_uint(out, "journals", st->journals);
	cli_json_uint(out, "completed", st->completed);
	cli_json_uint(out, "removed", st->removed);
	cli_json_uint(out, "bytes", st->bytes);
	cli_json_uint(out, "kept", st->kept);
	if (rpmdb) {
		cli_json_uint(out, "orphans", job->found);
		cli_json_uint(out, "orphans_removed", job->removed);
		cli_json_uint(out, "orphans_unlabelled", job->unlabelled);
		cli_json_uint(out, "failed", job->failed);
	}
	cli_json_seconds(out, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, t0));
	if (cli_json_put(out, stdout) || fflush(stdout) == EOF)
		return err ? err : -EIO;
	return err;
}

int cmd_recover(int argc, char **argv)
{
	struct imastream_recover_stats st = { .size = sizeof(st) };
	struct recover_opts o = { .say = CLI_SAY_INIT };
	struct orphan_job job = { 0 };
	struct cli_json out = { 0 };
	struct imastream_trust *trust = NULL;
	struct imastream_verifier *v = NULL;
	const char *root;
	char *root_abs;
	bool dry_run;
	struct timespec t0;
	int rootfd, err, ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = parse_options(&o, argc, argv);
	if (ret >= 0)
		return ret;
	root = o.where.dir;
	dry_run = o.dry_run;
	/* -v names each file removed (the library says so at debug level). */
	cli_set_verbose(o.say.verbose ? 2 : 0);
	ret = load_trust(&o, &trust, &v);
	if (ret != CLI_OK) {
		imastream_verifier_free(v);
		imastream_trust_free(trust);
		return ret;
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	root_abs = rootfd < 0 ? NULL : realpath(root, NULL);
	if (!root_abs) {
		cli_say("recover", "%s: %s", root, strerror(errno));
		if (rootfd >= 0)
			close(rootfd);
		return CLI_FAILED;
	}
	err = o.where.dbpath ? imastream_rpm_set_dbpath(o.where.dbpath, &cli_log) : 0;
	if (!err && !dry_run)
		err = imastream_root_recover(rootfd, root_abs, o.flags, &cli_log, &st);
	if (!err && !o.say.quiet && !o.say.json && !dry_run) {
		char size[32];

		cli_say("recover", "%s: removed %lu temp files (%s)%s, %.2f s", root_abs,
			st.removed, cli_human_size(st.bytes, size, sizeof(size)),
			st.kept ? "; the others, named above, are kept" : "",
			cli_seconds_since(CLOCK_MONOTONIC, &t0));
	}
	job.root = root_abs;
	job.dry_run = dry_run;
	job.json = o.say.json ? &out : NULL;
	if (!err && o.rpmdb)
		err = recover_orphans(rootfd, &job, o.flags, o.orphan_flags, v,
				      o.say.quiet || o.say.json);
	else if (!err && !dry_run)
		err = orphans_left(root_abs);
	/* Temp files kept (a live writer's pid, a name imastream does not write): not whole. */
	if (!err && st.kept && !dry_run)
		err = -EAGAIN;
	close(rootfd);
	if (o.say.json && err != -EINVAL)
		err = put_summary(&out, root_abs, o.rpmdb, &st, &job, &t0, err);
	cli_json_free(&out);
	imastream_verifier_free(v);
	imastream_trust_free(trust);
	free(root_abs);
	return err ? CLI_FAILED : CLI_OK;
}
