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
#include <sys/stat.h>

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
	 * These rows are relabel's too, word for word, but each list stays whole: a shared
	 * group (cli_spec.shared) would only come after the command's own options in --help.
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

int cmd_install(int argc, char **argv)
{
	struct install_log il = { .lock = PTHREAD_MUTEX_INITIALIZER };
	const struct imastream_log log = { install_log_fn, &il };
	struct progress pr = { 0 };
	struct cli_settings settings = { .cmd = "install", .say = CLI_SAY_INIT };
	const char *pgp_keys[MAX_PGP_KEYS + 1] = { NULL };
	const char *root;
	char *root_abs = NULL;
	char **refused = NULL; /* per package: why it was refused before the lock, or NULL */
	struct imastream_precheck *pc = NULL;
	unsigned int n_keys = 0, sink_flags = 0, extract_flags = 0;
	unsigned int install_flags = 0, txn_flags = 0, root_flags = 0, failed = 0;
	unsigned int sync_mode = IMASTREAM_EXTRACT_SYNCFS;
	bool json, summary = false;
	struct cli_json out = { 0 };
	struct imastream_config cfg;
	bool cfg_ready = false;
	struct imastream_chain *chain = NULL;
	struct imastream_chain_sink *cs = NULL;
	struct imastream_extract *x = NULL;
	struct imastream_root_txn *txn = NULL;
	struct imastream_chain_sink_opts opts = { 0 };
	struct cli_parser p;
	int c, rootfd = -1, err = 0, ret = CLI_FAILED;

	cli_parse_start(&p, &install_spec, argc, argv);
	while ((c = cli_settings_parse_next(&settings, &p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_PGP_KEY:
			if (n_keys == MAX_PGP_KEYS)
				return cli_usage_error("install", "more than %d %s options",
						       MAX_PGP_KEYS, p.spelled);
			pgp_keys[n_keys++] = p.arg;
			break;
		case CLI_OPT_ALLOW_UNSIGNED:
			sink_flags |= IMASTREAM_SINK_ALLOW_UNSIGNED;
			break;
		case CLI_OPT_REPLACE_FILES:
			sink_flags |= IMASTREAM_SINK_REPLACE_FILES;
			break;
		case CLI_OPT_TAKE_OVER:
			sink_flags |= IMASTREAM_SINK_TAKE_OVER;
			break;
		case CLI_OPT_NO_CHOWN:
			extract_flags |= IMASTREAM_EXTRACT_NO_CHOWN;
			break;
		case CLI_OPT_SYNC:
			if (!strcmp(p.arg, "fs"))
				sync_mode = IMASTREAM_EXTRACT_SYNCFS;
			else if (!strcmp(p.arg, "file"))
				sync_mode = IMASTREAM_EXTRACT_FSYNC;
			else if (!strcmp(p.arg, "none"))
				sync_mode = 0;
			else
				return cli_usage_error("install", "%s takes fs, file or none, not '%s'",
						       p.spelled, p.arg);
			break;
		case CLI_OPT_NODIGEST:
			install_flags |= IMASTREAM_INSTALL_NO_HEADER_DIGEST;
			sink_flags |= IMASTREAM_SINK_NO_HEADER_DIGEST;
			break;
		case CLI_OPT_NOFILEDIGEST:
			install_flags |= IMASTREAM_INSTALL_NO_FILE_DIGEST;
			txn_flags |= IMASTREAM_TXN_NOFILEDIGEST;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	root = settings.root.dir;
	if (settings.root.no_wait)
		root_flags |= IMASTREAM_ROOT_NO_WAIT;
	json = settings.say.json;
	il.verbose = settings.say.verbose;
	if (!root)
		return cli_usage_error("install", "no --root given");
	if (cli_parse_operands(&p) >= argc)
		return cli_usage_error("install", "no package given");
	il.settings = &settings;
	cli_set_verbose(il.verbose);

	/* Configuration: defaults, then the file, then the options in the order given. */
	ret = cli_settings_config(&settings, &cfg, &log);
	if (ret != CLI_OK)
		return ret;
	cfg_ready = true;
	ret = CLI_FAILED;

	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 && errno == ENOENT) {
		/* rpm -i --root makes it; a mistyped root would then get packages. */
		cli_say("install",
			"%s: no such directory: imastream install does not create the root "
			"(rpm -i --root does): mkdir it first",
			root);
		goto out;
	}
	if (rootfd < 0) {
		cli_say("install", "%s: %s", root, strerror(errno));
		goto out;
	}
	/* rpm's root (for its database) and the chain's txn.root are absolute paths. */
	root_abs = realpath(root, NULL);
	if (!root_abs) {
		cli_say("install", "%s: %s", root, strerror(errno));
		goto out;
	}
	root = root_abs;
	if (settings.root.dbpath && imastream_rpm_set_dbpath(settings.root.dbpath, &log))
		goto out;
	/* Everything that can refuse without the root's lock does so first: the keys and
	 * plugins, then each package's header and its signature.  A run refused here leaves
	 * the root exactly as it was (not even rpm's lock file is created). */
	if (imastream_chain_from_config(&cfg, &log, &chain))
		goto out;
	refused = calloc((size_t)argc, sizeof(*refused));
	if (!refused ||
	    imastream_precheck_new(rootfd, root, n_keys ? pgp_keys : NULL, sink_flags, &log, &pc))
		goto out;
	for (int i = cli_parse_operands(&p); i < argc; i++) {
		/* A pipe is read once, so it is checked as it is installed, under the lock.
		 * Not even opened here: a reader that comes and goes would pair with the
		 * writer and leave it writing to no one (SIGPIPE). */
		struct stat sb;
		int fd = stat(argv[i], &sb) || S_ISREG(sb.st_mode) ?
				 open(argv[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC) :
				 -2;

		/* A directory is a mistake said here, not a read error when its turn comes. */
		if (fd == -2 && S_ISDIR(sb.st_mode)) {
			refused[i] = strdup("is a directory, not an rpm package (give the .rpm "
					    "files in it)");
			if (!refused[i])
				goto out;
			cli_say("install", "%s: %s", argv[i], refused[i]);
			failed++;
			continue;
		}
		if (fd == -2)
			continue;

		pthread_mutex_lock(&il.lock);
		il.pkg_failed = false;
		il.why[0] = 0;
		pthread_mutex_unlock(&il.lock);
		if (fd < 0) {
			refused[i] = strdup(strerror(errno));
			cli_say("install", "%s: %s", argv[i],
				refused[i] ? refused[i] : strerror(errno));
			if (!refused[i])
				goto out;
		} else if (!fstat(fd, &sb) && S_ISREG(sb.st_mode) &&
			   imastream_precheck_rpm(pc, fd, argv[i], install_flags)) {
			refused[i] = strdup(il.why[0] ? il.why : "refused");
			if (!refused[i])
				goto out;
		}
		if (fd >= 0)
			close(fd);
		if (refused[i])
			failed++;
	}
	clock_gettime(CLOCK_MONOTONIC, &pr.start);
	if (failed == (unsigned int)(argc - cli_parse_operands(&p))) {
		for (int i = cli_parse_operands(&p); json && i < argc; i++)
			put_package_json(&out, argv[i], refused[i]);
		summary = json;
		goto out;
	}
	/* One transaction per root, rpm's included; and the leftovers of a killed one go
	 * before the record is read. */
	err = imastream_root_txn_begin(rootfd, root, root_flags, &log, NULL, &txn);
	if (err)
		goto out;

	pr.on = cli_progress_wanted(settings.say.show);
	pr.n_pkgs = (unsigned int)(argc - cli_parse_operands(&p));
	pr.pkg_fd = -1;
	for (int i = cli_parse_operands(&p); i < argc; i++) {
		struct stat st;

		if (!stat(argv[i], &st) && S_ISREG(st.st_mode))
			pr.pkg_total += (uint64_t)st.st_size;
	}
	opts = (struct imastream_chain_sink_opts){
		.size = sizeof(opts),
		.root = root,
		.flags = sink_flags,
		.txn_flags = txn_flags,
		.cfg = &cfg,
		.pgp_keys = n_keys ? pgp_keys : NULL,
		.progress = pr.on || json ? show_progress : NULL,
		.progress_arg = &pr,
	};
	err = imastream_chain_sink_new(chain, rootfd, &opts, &log, &cs);
	if (err)
		goto out;
	/* The journal lets the next run (or imastream recover) complete a package whose
	 * renames a kill cut short: we hold the root's transaction. */
	err = imastream_extract_new(rootfd, extract_flags | sync_mode | IMASTREAM_EXTRACT_JOURNAL,
				    imastream_chain_sink_entry_sink(cs), &log, &x);
	if (err)
		goto out;

	for (int i = cli_parse_operands(&p); i < argc; i++) {
		int fd, perr;

		if (refused[i]) {
			if (json)
				put_package_json(&out, argv[i], refused[i]);
			continue;
		}
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		pthread_mutex_lock(&il.lock);
		il.pkg_failed = false;
		il.why[0] = 0;
		pthread_mutex_unlock(&il.lock);
		pr.pkg_index = (unsigned int)(i - cli_parse_operands(&p) + 1);
		if (fd < 0) {
			perr = -errno;
			cli_say("install", "%s: %s", argv[i], strerror(-perr));
		} else {
			struct stat st;

			pr.pkg_fd = fd;
			perr = imastream_install_rpm(x, fd, argv[i], install_flags);
			pr.pkg_fd = -1;
			if (!fstat(fd, &st))
				pr.pkg_done += (uint64_t)st.st_size;
			close(fd);
		}
		/* Installed, but an error line was said after it (a take-over whose removal
		 * from rpm's database failed): not a success. */
		pthread_mutex_lock(&il.lock);
		if (!perr && il.pkg_failed)
			perr = -EIO;
		pthread_mutex_unlock(&il.lock);
		if (perr) {
			failed++;
			if (!err)
				err = perr;
		}
		if (json)
			put_package_json(&out, argv[i],
					 !perr	   ? NULL :
					 il.why[0] ? il.why :
						     strerror(-perr));
	}
	/* The renames and the records, durable before we say so (--sync file did it per file). */
	if (sync_mode == IMASTREAM_EXTRACT_SYNCFS && failed < (unsigned int)(argc - cli_parse_operands(&p)) &&
	    syncfs(rootfd)) {
		cli_say("install", "%s: syncfs: %s", root, strerror(errno));
		failed++;
	}
	ret = failed ? CLI_FAILED : CLI_OK;
out:
	imastream_extract_free(x);
	imastream_chain_sink_free(cs, err);
	if (summary || (json && cs)) {
		cli_json_begin(&out, "summary");
		cli_json_str(&out, "command", "install");
		cli_json_str(&out, "root", root_abs);
		cli_json_uint(&out, "packages", (uint64_t)(argc - cli_parse_operands(&p)));
		cli_json_uint(&out, "failed", failed);
		cli_json_uint(&out, "files", pr.files);
		cli_json_uint(&out, "bytes", pr.bytes);
		cli_json_seconds(&out, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, &pr.start));
		cli_json_put(&out, stdout);
		fflush(stdout);
	}
	cli_json_free(&out);
	imastream_chain_free(chain);
	imastream_root_txn_end(txn, err);
	imastream_precheck_free(pc);
	for (int i = 0; refused && i < argc; i++)
		free(refused[i]);
	free(refused);
	if (cfg_ready)
		imastream_config_release(&cfg);
	if (rootfd >= 0)
		close(rootfd);
	free(root_abs);
	cli_progress_clear();
	return ret;
}
