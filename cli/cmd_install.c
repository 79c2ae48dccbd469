// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream install: streams rpm packages into a root through the security hook chain, in one pass. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/settings.h"
#include "imastream/chain.h"
#include "imastream/chain_sink.h"
#include "imastream/extract.h"
#include "imastream/install_rpm.h"
#include "imastream/root.h"
#include "imastream/rpmdb.h"

static const struct cli_use install_options[] = {
	{ CLI_OPT_ROOT, "the root to install into (required)" },
	{ CLI_OPT_MODE },
	{ CLI_OPT_HASH_ALGO, "IMA digest algorithm (sha256; md5 with --allow-weak)" },
	{ CLI_OPT_ALLOW_WEAK, "accept md5 (as -o weak_algos=allow)" },
	{ CLI_OPT_KEY, "signing key: PEM file, pkcs11: URI or kernel key" },
	{ CLI_OPT_CERT, "its certificate (the key id comes from it)" },
	{ CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE },
	{ CLI_OPT_PASS_ENV },
	{ CLI_OPT_EVM, "portable or none: EVM portable signatures (none, as\n"
		       "the rpm plugin: hash mode needs no key, and a portable\n"
		       "signature freezes owner, mode and labels; imastream sign\n"
		       "defaults to portable for trees that are final)" },
	{ CLI_OPT_PORTABLE },
	/*
	 * These rows are relabel's too, word for word: a group listed in place (CLI_OPT_GROUP,
	 * as sign-package and sign-digests share their key's rows) can hold them once
	 * relabel's list takes it too.
	 */
	{ CLI_OPT_TRUST, "certificates that verify the packages' own file\n"
			 "signatures, and that our signatures must verify with" },
	{ CLI_OPT_PLUGINS },
	{ CLI_OPT_XATTR_USER, "write user.ima and user.evm instead (as -o\n"
			      "xattr_namespace=user)" },
	{ CLI_OPT_SET },
	{ CLI_OPT_CONFIG },
	{ CLI_OPT_PGP_KEY, "armored OpenPGP public key trusted for header\n"
			   "signatures (repeatable); keys imported in DIR's rpm\n"
			   "database count too" },
	{ CLI_OPT_ALLOW_UNSIGNED, "accept unsigned headers and unknown keys (default:\n"
				  "refuse)" },
	{ CLI_OPT_REPLACE_FILES, "replace files that another package (per the record) owns" },
	{ CLI_OPT_TAKE_OVER, "install a package the root's rpm database has (refused\n"
			     "otherwise), then remove its entry there: imastream owns\n"
			     "it from then on" },
	{ CLI_OPT_NO_CHOWN, "keep the caller's ownership (for non-root callers)" },
	{ CLI_OPT_NO_WAIT },
	{ CLI_OPT_DBPATH },
	{ CLI_OPT_SYNC, "fs: one syncfs per package before its renames, and\n"
			"one at the end (default); file: fsync every file and\n"
			"directory instead; none: leave it to the kernel (a power\n"
			"loss may then undo renames and leave files whose\n"
			"security.ima names content never written)" },
	{ CLI_OPT_SIGN_THREADS },
	{ CLI_OPT_NODIGEST },
	{ CLI_OPT_NOFILEDIGEST },
	{ CLI_OPT_FORMAT, "text (default) or json: a JSON object per package on\n"
			  "standard output, then a summary object" },
	{ CLI_OPT_PROGRESS, "a progress line on stderr (default: only on a terminal)" },
	{ CLI_OPT_QUIET, "no progress line" },
	{ CLI_OPT_VERBOSE, "more messages (repeat for debugging)" },
	{ CLI_OPT_HELP },
	{ 0 },
};

static const struct cli_spec install_spec = {
	.cmd = "install",
	.synopsis =
	"Usage: imastream install --root DIR [OPTIONS] PKG.rpm...\n"
	"\n"
	"Installs rpm packages below DIR without rpm's transaction: each package's\n"
	"header is read and checked, its payload decompressed on one core while the\n"
	"other writes every file under a temp name and hashes it in the same pass, and\n"
	"the hook chain (selinux, ima, evm by default) puts labels, security.ima and\n"
	"security.evm on the inode before it is renamed into place. A package that fails\n"
	"leaves nothing behind. Scriptlets are not run (a warning names the packages\n"
	"that have some). What was installed is recorded under DIR/var/lib/imastream/\n"
	"(see imastream-install(1)); 'imastream verify --root DIR' checks it.\n"
	"One transaction at a time: rpm's own lock for DIR is held throughout (a\n"
	"second install or an 'rpm -i --root DIR' waits, or fails with --no-wait), and\n"
	"what an interrupted install left is removed first (see imastream-recover(1)).\n"
	"Keys, plugins and every package's header are checked before the lock is\n"
	"taken: a run refused there leaves DIR exactly as it was.\n",
	.uses = install_options,
	.epilog =
	"Exit status: 0 if every package was installed, 1 if any failed (one line says\n"
	"why; nothing of that package is left, the others are still installed), 2 for a\n"
	"usage error.\n",
};

#define MAX_PGP_KEYS 32

/*
 * The log: the first error of a package is its one line; later ones are its echoes.  The
 * library's chain thread logs too, hence the lock.
 */
struct install_log {
	pthread_mutex_t lock;
	int verbose;
	bool pkg_failed;   /* this package already printed its error */
	char why[512];	   /* that error, for its --format json record */
	struct cli_settings *settings; /* what the user typed, to name it in messages */
};

static void install_log_fn(void *arg, int level, const char *msg)
{
	struct install_log *il = arg;

	pthread_mutex_lock(&il->lock);
	if (level == IMASTREAM_LOG_ERR) {
		if (il->pkg_failed && il->verbose < 1)
			goto out;
		if (!il->pkg_failed)
			snprintf(il->why, sizeof(il->why), "%s", msg);
		il->pkg_failed = true;
	} else if (level > IMASTREAM_LOG_NOTICE + il->verbose) {
		goto out;
	}
	cli_settings_say(il->settings, msg);
out:
	pthread_mutex_unlock(&il->lock);
}

struct progress {
	bool on;
	struct timespec start, last;
	unsigned int pkg_index, n_pkgs;
	uint64_t files, bytes; /* the totals so far, for the summary */
	/*
	 * How far: the package files' sizes, those of the packages done, and the one being
	 * read, whose file offset the reader moves (its duplicate shares it).
	 */
	uint64_t pkg_total, pkg_done;
	int pkg_fd;
};

static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void show_progress(void *arg, const struct imastream_sink_progress *p)
{
	struct progress *pr = arg;
	struct timespec now;
	double t, mib;
	char text[256];

	pr->files = p->files;
	pr->bytes = p->bytes;
	if (!pr->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* Ten updates a second are plenty, and keep the terminal out of the hot path. */
	if (!p->done && seconds(&pr->last, &now) < 0.1)
		return;
	pr->last = now;
	t = seconds(&pr->start, &now);
	mib = (double)p->bytes / (1024.0 * 1024.0);
	if (!p->done) {
		off_t pos = pr->pkg_fd >= 0 ? lseek(pr->pkg_fd, 0, SEEK_CUR) : -1;
		char eta[48];

		snprintf(text, sizeof(text), "[%u/%u] %s: %.1f MiB, %llu files, %.1f MiB/s, %s",
			 pr->pkg_index, pr->n_pkgs, p->package ? p->package : "", mib,
			 (unsigned long long)p->files, t > 0 ? mib / t : 0.0,
			 pos < 0 ? "" :
				   cli_eta((double)(pr->pkg_done + (uint64_t)pos),
					   (double)pr->pkg_total, t, eta, sizeof(eta)));
	} else {
		snprintf(text, sizeof(text),
			 "[%u/%u] done: %.1f MiB, %llu files, %.1f MiB/s, %.2f s", pr->pkg_index,
			 pr->n_pkgs, mib, (unsigned long long)p->files, t > 0 ? mib / t : 0.0, t);
	}
	if (p->done) {
		cli_error("%s", text);
	} else {
		char line[sizeof(text) + 24];

		snprintf(line, sizeof(line), "imastream install: %s", text);
		cli_progress_draw(line);
	}
}

/* One --format json record of a package: ok, or failed with @why. */
static void put_package_json(struct cli_json *out, const char *path, const char *why)
{
	cli_json_begin(out, "package");
	cli_json_str(out, "path", path);
	cli_json_str(out, "result", why ? "fail" : "ok");
	if (why)
		cli_json_str(out, "error", why);
	cli_json_put(out, stdout);
	fflush(stdout);
}

/* What the command line asks for. */
struct install_opts {
	struct cli_settings settings;
	const char *pgp_keys[MAX_PGP_KEYS + 1];
	unsigned int n_keys;
	unsigned int sink_flags, extract_flags, install_flags, txn_flags, root_flags;
	unsigned int sync_mode;
	char **pkgs; /* the package operands */
	int n_pkgs;
};

/* The run: the log, the root, the chain and what each package came to. */
struct install_run {
	const struct install_opts *o;
	struct install_log il;
	struct imastream_log log;
	struct progress pr;
	struct cli_json out;
	bool json, summary;
	const char *root;
	char *root_abs;
	int rootfd;
	struct imastream_config cfg;
	bool cfg_ready;
	struct imastream_chain *chain;
	struct imastream_precheck *pc;
	char **refused; /* per package: why it was refused before the lock, or NULL */
	struct imastream_root_txn *txn;
	struct imastream_chain_sink *cs;
	struct imastream_extract *x;
	unsigned int failed;
	int err;
};

/* --sync MODE as extractor flags; CLI_USAGE after one line for another word. */
static int parse_sync(struct install_opts *o, const struct cli_parser *p)
{
	if (!strcmp(p->arg, "fs"))
		o->sync_mode = IMASTREAM_EXTRACT_SYNCFS;
	else if (!strcmp(p->arg, "file"))
		o->sync_mode = IMASTREAM_EXTRACT_FSYNC;
	else if (!strcmp(p->arg, "none"))
		o->sync_mode = 0;
	else
		return cli_usage_error("install", "%s takes fs, file or none, not '%s'", p->spelled,
				       p->arg);
	return CLI_OK;
}

/* The command line into @o: -1 to go on, or the exit status (--help, a usage error). */
static int parse_options(struct install_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	int c, ret = CLI_OK;

	cli_parse_start(&p, &install_spec, argc, argv);
	while (ret == CLI_OK && (c = cli_settings_parse_next(&o->settings, &p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_PGP_KEY:
			if (o->n_keys == MAX_PGP_KEYS)
				return cli_usage_error("install", "more than %d %s options",
						       MAX_PGP_KEYS, p.spelled);
			o->pgp_keys[o->n_keys++] = p.arg;
			break;
		case CLI_OPT_ALLOW_UNSIGNED:
			o->sink_flags |= IMASTREAM_SINK_ALLOW_UNSIGNED;
			break;
		case CLI_OPT_REPLACE_FILES:
			o->sink_flags |= IMASTREAM_SINK_REPLACE_FILES;
			break;
		case CLI_OPT_TAKE_OVER:
			o->sink_flags |= IMASTREAM_SINK_TAKE_OVER;
			break;
		case CLI_OPT_NO_CHOWN:
			o->extract_flags |= IMASTREAM_EXTRACT_NO_CHOWN;
			break;
		case CLI_OPT_SYNC:
			ret = parse_sync(o, &p);
			break;
		case CLI_OPT_SIGN_THREADS:
			ret = cli_parse_switch(&p, &o->sink_flags, IMASTREAM_SINK_NO_SIGN_AHEAD);
			break;
		case CLI_OPT_NODIGEST:
			o->install_flags |= IMASTREAM_INSTALL_NO_HEADER_DIGEST;
			o->sink_flags |= IMASTREAM_SINK_NO_HEADER_DIGEST;
			break;
		case CLI_OPT_NOFILEDIGEST:
			o->install_flags |= IMASTREAM_INSTALL_NO_FILE_DIGEST;
			o->txn_flags |= IMASTREAM_TXN_NOFILEDIGEST;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (ret != CLI_OK)
		return ret;
	if (o->settings.root.no_wait)
		o->root_flags |= IMASTREAM_ROOT_NO_WAIT;
	if (!o->settings.root.dir)
		return cli_usage_error("install", "no --root given");
	if (cli_parse_operands(&p) >= argc)
		return cli_usage_error("install", "no package given");
	o->pkgs = argv + cli_parse_operands(&p);
	o->n_pkgs = argc - cli_parse_operands(&p);
	return -1;
}

/* The root opened and made absolute (rpm's root and the chain's txn.root are): 0, or -1 said. */
static int open_root(struct install_run *r)
{
	r->rootfd = open(r->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->rootfd < 0 && errno == ENOENT) {
		/* rpm -i --root makes it; a mistyped root would then get packages. */
		cli_say("install",
			"%s: no such directory: imastream install does not create the root "
			"(rpm -i --root does): mkdir it first",
			r->root);
		return -1;
	}
	if (r->rootfd < 0) {
		cli_say("install", "%s: %s", r->root, strerror(errno));
		return -1;
	}
	r->root_abs = realpath(r->root, NULL);
	if (!r->root_abs) {
		cli_say("install", "%s: %s", r->root, strerror(errno));
		return -1;
	}
	r->root = r->root_abs;
	return 0;
}

/* A new package's log: no error said yet. */
static void log_package_start(struct install_run *r)
{
	pthread_mutex_lock(&r->il.lock);
	r->il.pkg_failed = false;
	r->il.why[0] = 0;
	pthread_mutex_unlock(&r->il.lock);
}

/*
 * Each package's header and signature checked before the root's lock, why it was refused
 * in r->refused: 0, or -1 when out of memory.
 */
static int precheck_all(struct install_run *r)
{
	const struct install_opts *o = r->o;

	for (int i = 0; i < o->n_pkgs; i++) {
		const char *path = o->pkgs[i];
		/* A pipe is read once, so it is checked as it is installed, under the lock.
		 * Not even opened here: a reader that comes and goes would pair with the
		 * writer and leave it writing to no one (SIGPIPE). */
		struct stat sb;
		int fd = stat(path, &sb) || S_ISREG(sb.st_mode) ?
				 open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) :
				 -2;

		/* A directory is a mistake said here, not a read error when its turn comes. */
		if (fd == -2 && S_ISDIR(sb.st_mode)) {
			r->refused[i] = strdup("is a directory, not an rpm package (give the .rpm "
					       "files in it)");
			if (!r->refused[i])
				return -1;
			cli_say("install", "%s: %s", path, r->refused[i]);
			r->failed++;
			continue;
		}
		if (fd == -2)
			continue;

		log_package_start(r);
		if (fd < 0) {
			r->refused[i] = strdup(strerror(errno));
			cli_say("install", "%s: %s", path,
				r->refused[i] ? r->refused[i] : strerror(errno));
			if (!r->refused[i])
				return -1;
		} else if (!fstat(fd, &sb) && S_ISREG(sb.st_mode) &&
			   imastream_precheck_rpm(r->pc, fd, path, o->install_flags)) {
			r->refused[i] = strdup(r->il.why[0] ? r->il.why : "refused");
			if (!r->refused[i])
				return -1;
		}
		if (fd >= 0)
			close(fd);
		if (r->refused[i])
			r->failed++;
	}
	return 0;
}

/* Under the root's transaction: the chain's sink and the extractor.  0, or -errno said. */
static int start_install(struct install_run *r)
{
	const struct install_opts *o = r->o;
	struct imastream_chain_sink_opts opts;
	int err;

	r->pr.on = cli_progress_wanted(o->settings.say.show);
	r->pr.n_pkgs = (unsigned int)o->n_pkgs;
	r->pr.pkg_fd = -1;
	for (int i = 0; i < o->n_pkgs; i++) {
		struct stat st;

		if (!stat(o->pkgs[i], &st) && S_ISREG(st.st_mode))
			r->pr.pkg_total += (uint64_t)st.st_size;
	}
	opts = (struct imastream_chain_sink_opts){
		.size = sizeof(opts),
		.root = r->root,
		.flags = o->sink_flags,
		.txn_flags = o->txn_flags,
		.cfg = &r->cfg,
		.pgp_keys = o->n_keys ? o->pgp_keys : NULL,
		.progress = r->pr.on || r->json ? show_progress : NULL,
		.progress_arg = &r->pr,
	};
	err = imastream_chain_sink_new(r->chain, r->rootfd, &opts, &r->log, &r->cs);
	if (err)
		return err;
	/* The journal lets the next run (or imastream recover) complete a package whose
	 * renames a kill cut short: we hold the root's transaction. */
	return imastream_extract_new(r->rootfd,
				     o->extract_flags | o->sync_mode | IMASTREAM_EXTRACT_JOURNAL,
				     imastream_chain_sink_entry_sink(r->cs), &r->log, &r->x);
}

/* Package @i installed (its --format json record put): 0, or -errno. */
static int install_one(struct install_run *r, int i)
{
	const char *path = r->o->pkgs[i];
	int fd = open(path, O_RDONLY | O_CLOEXEC), perr;

	log_package_start(r);
	r->pr.pkg_index = (unsigned int)(i + 1);
	if (fd < 0) {
		perr = -errno;
		cli_say("install", "%s: %s", path, strerror(-perr));
	} else {
		struct stat st;

		r->pr.pkg_fd = fd;
		perr = imastream_install_rpm(r->x, fd, path, r->o->install_flags);
		r->pr.pkg_fd = -1;
		if (!fstat(fd, &st))
			r->pr.pkg_done += (uint64_t)st.st_size;
		close(fd);
	}
	/* Installed, but an error line was said after it (a take-over whose removal
	 * from rpm's database failed): not a success. */
	pthread_mutex_lock(&r->il.lock);
	if (!perr && r->il.pkg_failed)
		perr = -EIO;
	pthread_mutex_unlock(&r->il.lock);
	if (r->json)
		put_package_json(&r->out, path,
				 !perr	      ? NULL :
				 r->il.why[0] ? r->il.why :
						strerror(-perr));
	return perr;
}

/* Every package not refused, then the renames and records made durable: CLI_OK or CLI_FAILED. */
static int install_all(struct install_run *r)
{
	const struct install_opts *o = r->o;

	for (int i = 0; i < o->n_pkgs; i++) {
		int perr;

		if (r->refused[i]) {
			if (r->json)
				put_package_json(&r->out, o->pkgs[i], r->refused[i]);
			continue;
		}
		perr = install_one(r, i);
		if (perr) {
			r->failed++;
			if (!r->err)
				r->err = perr;
		}
	}
	/* The renames and the records, durable before we say so (--sync file did it per file). */
	if (o->sync_mode == IMASTREAM_EXTRACT_SYNCFS && r->failed < (unsigned int)o->n_pkgs &&
	    syncfs(r->rootfd)) {
		cli_say("install", "%s: syncfs: %s", r->root, strerror(errno));
		r->failed++;
	}
	return r->failed ? CLI_FAILED : CLI_OK;
}

/*
 * Configuration, the root, the chain, every package prechecked, then installed under the
 * root's transaction.  Everything that can refuse without the lock does so first: a run
 * refused there leaves the root exactly as it was (not even rpm's lock file is created).
 */
static int run_install(struct install_run *r, struct install_opts *o)
{
	int ret;

	/* Configuration: defaults, then the file, then the options in the order given. */
	ret = cli_settings_config(&o->settings, &r->cfg, &r->log);
	if (ret != CLI_OK)
		return ret;
	r->cfg_ready = true;
	if (open_root(r))
		return CLI_FAILED;
	if (o->settings.root.dbpath && imastream_rpm_set_dbpath(o->settings.root.dbpath, &r->log))
		return CLI_FAILED;
	if (imastream_chain_from_config(&r->cfg, &r->log, &r->chain))
		return CLI_FAILED;
	r->refused = calloc((size_t)o->n_pkgs, sizeof(*r->refused));
	if (!r->refused ||
	    imastream_precheck_new(r->rootfd, r->root, o->n_keys ? o->pgp_keys : NULL,
				   o->sink_flags, &r->log, &r->pc) ||
	    precheck_all(r))
		return CLI_FAILED;
	clock_gettime(CLOCK_MONOTONIC, &r->pr.start);
	if (r->failed == (unsigned int)o->n_pkgs) {
		for (int i = 0; r->json && i < o->n_pkgs; i++)
			put_package_json(&r->out, o->pkgs[i], r->refused[i]);
		r->summary = r->json;
		return CLI_FAILED;
	}
	/* One transaction per root, rpm's included; and the leftovers of a killed one go
	 * before the record is read. */
	r->err = imastream_root_txn_begin(r->rootfd, r->root, o->root_flags, &r->log, NULL,
					  &r->txn);
	if (!r->err)
		r->err = start_install(r);
	return r->err ? CLI_FAILED : install_all(r);
}

/* The --format json summary: packages, failures, files and bytes written, time. */
static void report_summary(struct install_run *r)
{
	cli_json_begin(&r->out, "summary");
	cli_json_str(&r->out, "command", "install");
	cli_json_str(&r->out, "root", r->root_abs);
	cli_json_uint(&r->out, "packages", (uint64_t)r->o->n_pkgs);
	cli_json_uint(&r->out, "failed", r->failed);
	cli_json_uint(&r->out, "files", r->pr.files);
	cli_json_uint(&r->out, "bytes", r->pr.bytes);
	cli_json_seconds(&r->out, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, &r->pr.start));
	cli_json_put(&r->out, stdout);
	fflush(stdout);
}

int cmd_install(int argc, char **argv)
{
	struct install_opts o = { .settings = { .cmd = "install", .say = CLI_SAY_INIT },
				  .sync_mode = IMASTREAM_EXTRACT_SYNCFS };
	struct install_run r = { .o = &o,
				 .il = { .lock = PTHREAD_MUTEX_INITIALIZER },
				 .rootfd = -1 };
	int ret = parse_options(&o, argc, argv);

	if (ret >= 0)
		return ret;
	r.log = (struct imastream_log){ install_log_fn, &r.il };
	r.root = o.settings.root.dir;
	r.json = o.settings.say.json;
	r.il.verbose = o.settings.say.verbose;
	r.il.settings = &o.settings;
	cli_set_verbose(r.il.verbose);

	ret = run_install(&r, &o);

	imastream_extract_free(r.x);
	imastream_chain_sink_free(r.cs, r.err);
	if (r.summary || (r.json && r.cs))
		report_summary(&r);
	cli_json_free(&r.out);
	imastream_chain_free(r.chain);
	imastream_root_txn_end(r.txn, r.err);
	imastream_precheck_free(r.pc);
	for (int i = 0; r.refused && i < o.n_pkgs; i++)
		free(r.refused[i]);
	free(r.refused);
	if (r.cfg_ready)
		imastream_config_release(&r.cfg);
	if (r.rootfd >= 0)
		close(r.rootfd);
	free(r.root_abs);
	cli_progress_clear();
	return ret;
}
