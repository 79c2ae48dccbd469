// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream relabel: labels, IMA and EVM on the files of an installed root, from its rpm database. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/settings.h"
#include "imastream/audit.h"
#include "imastream/chain.h"
#include "imastream/relabel.h"
#include "imastream/root.h"
#include "imastream/rpmdb.h"
#include "installed/accepted.h"

/* The file the rpm plugin reads without %_imastream_config: relabel writes what it would. */
#define DEFAULT_CONFIG IMASTREAM_SYSCONFDIR "/imastream.conf"

static const struct cli_use relabel_options[] = {
	{ CLI_OPT_ROOT, "the installed root, whose rpm database is read\n(default /)" },
	{ CLI_OPT_MODE },
	{ CLI_OPT_HASH_ALGO, "IMA digest algorithm (sha256; md5 with --allow-weak)" },
	{ CLI_OPT_ALLOW_WEAK, "accept md5 (as -o weak_algos=allow)" },
	{ CLI_OPT_KEY, "signing key: PEM file, pkcs11: URI or kernel key" },
	{ CLI_OPT_CERT, "its certificate (the key id comes from it); a signature\n"
			"that verifies with it is already right" },
	{ CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE },
	{ CLI_OPT_PASS_ENV },
	{ CLI_OPT_EVM, "portable or none: EVM portable signatures (none)" },
	{ CLI_OPT_PORTABLE },
	/*
	 * These rows are install's too, word for word, but each list stays whole: a shared
	 * group (cli_spec.shared) would only come after the command's own options in --help.
	 */
	{ CLI_OPT_TRUST, "certificates that verify the packages' own file\n"
			 "signatures, and that our signatures must verify with" },
	{ CLI_OPT_PLUGINS },
	{ CLI_OPT_XATTR_USER, "write user.ima and user.evm instead (as -o\n"
			      "xattr_namespace=user)" },
	{ CLI_OPT_SET },
	{ CLI_OPT_CONFIG, "\"key = value\" lines, read before the options above\n"
			  "(default: the rpm plugin's, when it exists; '' reads\n"
			  "none):\n" DEFAULT_CONFIG },
	{ CLI_OPT_MODIFIED_CONFIG },
	{ CLI_OPT_ACCEPT_CONFIG, "accept the administrator's edit of the %config file\n"
				 "PATH (as the packages name it: /etc/foo.conf; may be\n"
				 "given several times): its digest goes to DIR's\n"
				 "accepted-config record, which verify --rpmdb and policy\n"
				 "keylime --rpmdb read, then its package is relabelled\n"
				 "(the file labelled, or signed in sign mode); a PATH no\n"
				 "package marks %config is refused, nothing written" },
	{ CLI_OPT_DRY_RUN, "say what would be written, write nothing" },
	{ CLI_OPT_PENDING, "as real root: write the labels a rootless build left\n"
			   "pending below DIR/var/lib/imastream/pending (checked\n"
			   "against the packages and the files first), nothing else;\n"
			   "exit status 1 if any entry is refused (each named in one\n"
			   "line, the others applied)" },
	{ CLI_OPT_NO_WAIT },
	{ CLI_OPT_DBPATH },
	{ CLI_OPT_SIGN_THREADS },
	{ CLI_OPT_FORMAT, "text (default) or json: a JSON object per file on\n"
			  "standard output, labelled or not, then a summary object" },
	{ CLI_OPT_PROGRESS, "a progress line on stderr, with the percentage and time\n"
			    "left (default: only on a terminal)" },
	{ CLI_OPT_QUIET, "no progress line and no summary" },
	{ CLI_OPT_VERBOSE, "more messages; -v also names each file labelled and\n"
			   "counts the files hashed on worker threads" },
	{ CLI_OPT_HELP },
	{ 0 },
};

static const struct cli_spec relabel_spec = {
	.cmd = "relabel",
	.synopsis =
	"Usage: imastream relabel [--root DIR] [OPTIONS] [PACKAGE...]\n"
	"       imastream relabel [--root DIR] [OPTIONS] --accept-config PATH...\n"
	"\n"
	"Puts labels, security.ima and security.evm on the files of packages already\n"
	"installed in DIR (all of them, or each PACKAGE), as the hook chain of\n"
	"imastream install and the rpm plugin would have at install, without\n"
	"reinstalling: the packages come from DIR's rpm database (rpm's %_dbpath below\n"
	"DIR). Each regular file is opened below DIR without following any symlink, its\n"
	"type, mode, owner, size, capabilities and content digest compared with the\n"
	"header; a file that matches gets the chain's values (only those it does not\n"
	"have already, security.evm last; a directory or a symlink only its labels), a\n"
	"file that does not is left untouched and printed on standard output as\n"
	"rpm -V prints it:\n"
	"  SM5DLUGTP c PATH   S size, M mode, 5 digest, L link target, U owner,\n"
	"                     G group, T mtime, P capabilities differ; c: a\n"
	"                     %config file (a changed mtime alone is labelled)\n"
	"  missing     PATH\n"
	"A progress line on a terminal, and a summary on stderr. rpm's transaction lock\n"
	"for DIR is held throughout (an rpm or imastream install waits, and relabel\n"
	"waits for theirs, or fails with --no-wait); a DIR that is not an installed\n"
	"root is refused.\n",
	.uses = relabel_options,
	.epilog =
	"Exit status: 0 if every file is labelled or already was, 1 if any is modified,\n"
	"missing or failed (the others are still labelled), 2 for a usage error.\n",
};

struct relabel_run {
	int verbose;
	bool dry_run;
	bool progress;
	struct cli_settings *settings;
	const struct imastream_relabel_counts *counts;
	unsigned long total_files; /* what the packages' headers list, for the percentage */
	struct timespec start, last;
	struct cli_json *json; /* --format json: a record per file here */
};

static void relabel_log_fn(void *arg, int level, const char *msg)
{
	struct relabel_run *run = arg;

	if (level > IMASTREAM_LOG_NOTICE + run->verbose)
		return;
	cli_settings_say(run->settings, msg);
}

static void show_progress(struct relabel_run *run, const char *package, bool force)
{
	const struct imastream_relabel_counts *c = run->counts;
	unsigned long done;
	struct timespec now;
	double elapsed;
	char line[512], eta[48];

	if (!run->progress || !c)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* Ten updates a second are plenty, and keep the terminal out of the hot path. */
	if (!force && (double)(now.tv_sec - run->last.tv_sec) +
				      (double)(now.tv_nsec - run->last.tv_nsec) / 1e9 <
			      0.1)
		return;
	run->last = now;
	done = c->labelled + c->correct + c->modified + c->missing + c->failed;
	elapsed = cli_seconds_since(CLOCK_MONOTONIC, &run->start);
	cli_eta((double)done, (double)run->total_files, elapsed, eta, sizeof(eta));
	snprintf(line, sizeof(line),
		 "imastream relabel: %lu of %lu files%s%s, %.1f MiB, %lu package%s done%s%s", done,
		 run->total_files, eta[0] ? ", " : "", eta, (double)c->bytes / (1024.0 * 1024.0),
		 c->packages, c->packages == 1 ? "" : "s", package ? "; now " : "",
		 package ? package : "");
	cli_progress_draw(line);
}

/* The files relabel will report: those of each header it walks that are not ghosts. */
static int count_files(void *arg, void *rpm_header)
{
	struct relabel_run *run = arg;
	rpmfi fi = rpmfiNew(NULL, rpm_header, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);

	/* The same filter as imastream_relabel_header(): a count that cannot match says nothing. */
	while (fi && rpmfiNext(fi) >= 0) {
		mode_t mode = (mode_t)rpmfiFMode(fi);

		if ((S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode)) &&
		    !(rpmfiFFlags(fi) & RPMFILE_GHOST))
			run->total_files++;
	}
	rpmfiFree(fi);
	return 0;
}

/* --format json: every file, whatever its status. */
static void file_record(struct relabel_run *run, const struct imastream_relabel_file *f)
{
	static const char *const status[] = {
		[IMASTREAM_RELABEL_LABELLED] = "labelled",
		[IMASTREAM_RELABEL_CORRECT] = "correct",
		[IMASTREAM_RELABEL_MODIFIED] = "modified",
		[IMASTREAM_RELABEL_MISSING] = "missing",
	};
	bool known = f->status >= 0 && (size_t)f->status < sizeof(status) / sizeof(status[0]) &&
		     status[f->status];

	cli_json_begin(run->json, "file");
	cli_json_str(run->json, "package", f->package);
	cli_json_str(run->json, "path", f->path);
	cli_json_str(run->json, "status", known ? status[f->status] : "failed");
	if (f->status == IMASTREAM_RELABEL_LABELLED)
		cli_json_bool(run->json, "dry_run", run->dry_run);
	cli_json_bool(run->json, "config", f->config);
	if (f->status == IMASTREAM_RELABEL_MODIFIED)
		cli_json_str(run->json, "rpm", f->letters);
	if (f->written && f->status == IMASTREAM_RELABEL_LABELLED)
		cli_json_str(run->json, "written", f->written);
	if (f->why && f->status != IMASTREAM_RELABEL_LABELLED &&
	    f->status != IMASTREAM_RELABEL_CORRECT)
		cli_json_str(run->json, "reason", f->why);
	cli_json_put(run->json, stdout);
}

static void print_file(void *arg, const struct imastream_relabel_file *f)
{
	struct relabel_run *run = arg;
	struct cli_line l = { 0 };
	char head[32];

	if (run->json) {
		file_record(run, f);
		show_progress(run, f->package, false);
		return;
	}

	switch (f->status) {
	case IMASTREAM_RELABEL_CORRECT:
		show_progress(run, f->package, false);
		return;
	case IMASTREAM_RELABEL_LABELLED:
		if (!run->dry_run && run->verbose < 1) {
			show_progress(run, f->package, false);
			return;
		}
		cli_line_text(&l, run->dry_run ? "would label " : "labelled ");
		cli_line_name(&l, f->path);
		cli_line_text(&l, " (");
		cli_line_text(&l, f->written);
		cli_line_text(&l, ")");
		break;
	case IMASTREAM_RELABEL_MODIFIED:
		snprintf(head, sizeof(head), "%s %c ", f->letters, f->config ? 'c' : ' ');
		cli_line_text(&l, head);
		cli_line_name(&l, f->path);
		/* What the letters cannot say: a symlink on the way, another file type. */
		if (f->why && strcmp(f->why, "differs from its header")) {
			cli_line_text(&l, " (");
			cli_line_text(&l, f->why);
			cli_line_text(&l, ")");
		}
		break;
	case IMASTREAM_RELABEL_MISSING:
		snprintf(head, sizeof(head), "missing   %c ", f->config ? 'c' : ' ');
		cli_line_text(&l, head);
		cli_line_name(&l, f->path);
		break;
	default:
		cli_line_text(&l, "failed      ");
		cli_line_name(&l, f->path);
		if (f->why) {
			cli_line_text(&l, " (");
			cli_line_text(&l, f->why);
			cli_line_text(&l, ")");
		}
	}
	cli_progress_clear();
	cli_line_put(&l, stdout);
	cli_line_free(&l);
}

static int relabel_one(void *arg, void *rpm_header)
{
	/* A package the chain refuses fails alone (said); the others go on. */
	imastream_relabel_header(arg, rpm_header);
	return 0;
}

/* What the command line asks for. */
struct relabel_opts {
	struct cli_settings settings;
	unsigned int flags; /* IMASTREAM_RELABEL_* */
	bool pending;
	char *accept[64];
	int n_accept;
	char **names; /* the PACKAGEs, or the accepted files' packages */
	int nnames;
	const char *root;
};

/* The configuration, the chain, the root and its lock: what a run holds until it ends. */
struct relabel_job {
	struct imastream_config cfg;
	bool cfg_ready;
	char *root_abs;
	int rootfd;
	struct imastream_chain *chain;
	struct imastream_root_txn *lock;
	struct imastream_relabel *rl;
	char **owners;
	int err; /* of the relabel itself, for its end and the lock's */
};

/* Parses @argv into @o: -1 to go on, else the exit status. */
static int parse_options(struct relabel_opts *o, int argc, char **argv)
{
	const size_t max_accept = sizeof(o->accept) / sizeof(o->accept[0]);
	struct cli_parser p;
	int ch;

	cli_parse_start(&p, &relabel_spec, argc, argv);
	while ((ch = cli_settings_parse_next(&o->settings, &p)) != CLI_OPT_END) {
		switch (ch) {
		case CLI_OPT_MODIFIED_CONFIG:
			o->flags |= IMASTREAM_RELABEL_MODIFIED_CONFIG;
			break;
		case CLI_OPT_DRY_RUN:
			o->flags |= IMASTREAM_RELABEL_DRY_RUN;
			break;
		case CLI_OPT_PENDING:
			o->pending = true;
			break;
		case CLI_OPT_SIGN_THREADS:
			if (cli_parse_switch(&p, &o->flags, IMASTREAM_RELABEL_NO_SIGN_AHEAD))
				return CLI_USAGE;
			break;
		case CLI_OPT_ACCEPT_CONFIG:
			if ((size_t)o->n_accept == max_accept)
				return cli_usage_error("relabel", "more than %zu --accept-config",
						       max_accept);
			o->accept[o->n_accept++] = p.arg;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (o->n_accept && cli_parse_operands(&p) < argc)
		return cli_usage_error("relabel",
				       "--accept-config relabels the packages of its files: no "
				       "PACKAGE with it");
	if (o->n_accept && (o->flags & IMASTREAM_RELABEL_DRY_RUN))
		return cli_usage_error("relabel", "--accept-config writes: not with --dry-run");
	if (o->n_accept && o->pending)
		return cli_usage_error("relabel", "--accept-config and --pending: one at a time");
	o->names = argv + cli_parse_operands(&p);
	o->nnames = argc - cli_parse_operands(&p);
	o->root = o->settings.root.dir ? o->settings.root.dir : "/";
	return -1;
}

/*
 * The configuration, the chain (keys load here, once, before any file is read) and the
 * root, locked.  0, or -1 once said.
 */
static int open_root(struct relabel_opts *o, struct relabel_job *j, const struct imastream_log *log)
{
	unsigned int root_flags = IMASTREAM_ROOT_LOCK_ONLY;
	int ret;

	if (o->settings.root.no_wait)
		root_flags |= IMASTREAM_ROOT_NO_WAIT;
	ret = cli_settings_config(&o->settings, &j->cfg, log);
	if (ret != CLI_OK)
		return ret;
	j->cfg_ready = true;
	/* rpm's root and the chain's txn.root are absolute paths. */
	j->root_abs = realpath(o->root, NULL);
	if (!j->root_abs) {
		cli_say("relabel", "%s: %s", o->root, strerror(errno));
		return CLI_FAILED;
	}
	if (o->settings.root.dbpath && imastream_rpm_set_dbpath(o->settings.root.dbpath, log))
		return CLI_FAILED;
	if (imastream_chain_new(&j->cfg, log, &j->chain) ||
	    imastream_chain_add_list(j->chain, j->cfg.plugins) || imastream_chain_init(j->chain))
		return CLI_FAILED;
	/* A writer: rpm's transaction lock for the root, as install takes it, so that no
	 * rpm or imastream install changes the files while we label them (a dry run
	 * writes nothing and takes none). */
	j->rootfd = open(j->root_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (j->rootfd < 0) {
		cli_say("relabel", "%s: %s", o->root, strerror(errno));
		return CLI_FAILED;
	}
	if (!(o->flags & IMASTREAM_RELABEL_DRY_RUN) &&
	    imastream_root_txn_begin(j->rootfd, j->root_abs, root_flags, log, NULL, &j->lock))
		return CLI_FAILED;
	return CLI_OK;
}

/*
 * --accept-config: the edits recorded first (all or nothing), then only their packages
 * relabelled, each once though several of its files were accepted.
 */
static int accept_edits(struct relabel_opts *o, struct relabel_job *j,
			const struct imastream_log *log)
{
	int n = 0;

	if (imastream_accept_config(j->root_abs, j->rootfd, o->accept, o->n_accept, &j->owners,
				    log))
		return CLI_FAILED;
	for (int i = 0; j->owners[i]; i++) {
		bool seen = false;

		for (int k = 0; k < n && !seen; k++)
			seen = !strcmp(j->owners[k], j->owners[i]);
		if (seen)
			free(j->owners[i]);
		else
			j->owners[n++] = j->owners[i];
	}
	j->owners[n] = NULL;
	o->names = j->owners;
	o->nnames = n;
	return CLI_OK;
}

/* Every package named (or all) through the chain; j->err says how it went. */
static int relabel_packages(struct relabel_opts *o, struct relabel_job *j, struct relabel_run *run,
			    const struct imastream_log *log)
{
	struct imastream_relabel_opts opts = { .size = sizeof(opts),
					       .root = j->root_abs,
					       .cfg = &j->cfg,
					       .flags = o->flags,
					       .report = print_file,
					       .report_arg = run };

	j->err = imastream_relabel_new(j->chain, &opts, log, &j->rl);
	if (j->err)
		return CLI_FAILED;
	run->counts = imastream_relabel_counts(j->rl);
	run->progress = cli_progress_wanted(o->settings.say.show);
	/* The total from the headers first, so that the line can say how far and how long. */
	if (run->progress)
		j->err = imastream_rpmdb_foreach(j->root_abs, o->names, o->nnames, count_files, run,
						 log);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!j->err)
		j->err = imastream_rpmdb_foreach(j->root_abs, o->names, o->nnames, relabel_one,
						 j->rl, log);
	if (!j->err)
		show_progress(run, NULL, true);
	cli_progress_clear();
	return CLI_OK;
}

/* The summary (a JSON object, a line on stderr), and the exit status it makes. */
static int report_summary(const struct relabel_opts *o, const struct relabel_job *j,
			  struct relabel_run *run)
{
	const struct imastream_relabel_counts *c = run->counts;
	char size[32];

	if (run->json) {
		cli_json_begin(run->json, "summary");
		cli_json_str(run->json, "command", "relabel");
		cli_json_str(run->json, "root", j->root_abs);
		cli_json_uint(run->json, "packages", c->packages);
		cli_json_uint(run->json, run->dry_run ? "to_label" : "labelled", c->labelled);
		cli_json_uint(run->json, "correct", c->correct);
		cli_json_uint(run->json, "modified", c->modified);
		cli_json_uint(run->json, "missing", c->missing);
		cli_json_uint(run->json, "failed", c->failed);
		cli_json_uint(run->json, "bytes", c->bytes);
		cli_json_seconds(run->json, "elapsed_s",
				 cli_seconds_since(CLOCK_MONOTONIC, &run->start));
		cli_json_put(run->json, stdout);
		cli_json_free(run->json);
	}
	if (!o->settings.say.quiet)
		cli_say("relabel",
			"%s: %lu package%s, %lu files %s, %lu already correct, %lu modified, %lu "
			"missing, %lu failed; %s read, %.2f s",
			j->root_abs, c->packages, c->packages == 1 ? "" : "s", c->labelled,
			run->dry_run ? "to label" : "labelled", c->correct, c->modified, c->missing,
			c->failed, cli_human_size(c->bytes, size, sizeof(size)),
			cli_seconds_since(CLOCK_MONOTONIC, &run->start));
	/* Whether the content went to the worker threads or streamed through the chain here. */
	if (run->verbose)
		cli_say("relabel", "%lu files hashed on worker threads, %.1f MiB read",
			c->hashed_on_workers, (double)c->bytes / (1024.0 * 1024.0));
	return !j->err && !c->modified && !c->missing && !c->failed ? CLI_OK : CLI_FAILED;
}

static void end_job(struct relabel_job *j)
{
	for (int i = 0; j->owners && j->owners[i]; i++)
		free(j->owners[i]);
	free(j->owners);
	imastream_relabel_free(j->rl, j->err);
	imastream_chain_free(j->chain);
	imastream_root_txn_end(j->lock, j->err);
	if (j->rootfd >= 0)
		close(j->rootfd);
	if (j->cfg_ready)
		imastream_config_release(&j->cfg);
	free(j->root_abs);
}

int cmd_relabel(int argc, char **argv)
{
	struct relabel_opts o = { .settings = { .cmd = "relabel",
						.default_config = DEFAULT_CONFIG,
						.say = CLI_SAY_INIT } };
	struct relabel_run run = { .settings = &o.settings };
	const struct imastream_log log = { relabel_log_fn, &run };
	struct relabel_job j = { .rootfd = -1 };
	struct cli_json json_out = { 0 };
	int ret = parse_options(&o, argc, argv);

	if (ret >= 0)
		return ret;
	run.dry_run = o.flags & IMASTREAM_RELABEL_DRY_RUN;
	if (o.pending)
		return cli_relabel_pending(&o.settings, o.root, run.dry_run, o.nnames > 0);
	run.verbose = o.settings.say.verbose;
	if (o.settings.say.json)
		run.json = &json_out;
	clock_gettime(CLOCK_MONOTONIC, &run.start);
	cli_set_verbose(run.verbose);

	ret = open_root(&o, &j, &log);
	if (ret == CLI_OK && o.n_accept)
		ret = accept_edits(&o, &j, &log);
	if (ret == CLI_OK)
		ret = relabel_packages(&o, &j, &run, &log);
	if (ret == CLI_OK)
		ret = report_summary(&o, &j, &run);

	cli_json_free(&json_out);
	end_job(&j);
	cli_progress_clear();
	return ret;
}
