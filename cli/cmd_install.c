// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream install: streams rpm packages into a root through the security hook chain, in one pass. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "imastream/chain.h"
#include "imastream/installer.h"

static const char usage_text[] =
	"Usage: imastream install --root DIR [OPTIONS] PKG.rpm...\n"
	"\n"
	"Installs rpm packages below DIR without rpm's transaction: each package's header\n"
	"is read and checked, its payload decompressed on one core while the other writes\n"
	"every file under a temp name and hashes it in the same pass, and the hook chain\n"
	"(selinux, ima, evm by default) puts labels, security.ima and security.evm on the\n"
	"inode before it is renamed into place. A package that fails leaves nothing behind.\n"
	"Scriptlets are not run (a warning names the packages that have some). What was\n"
	"installed is recorded under DIR/var/lib/imastream/ (see imastream-install(1));\n"
	"'imastream verify --root DIR' checks it.\n"
	"\n"
	"      --root DIR          the root to install into (required)\n"
	"      --mode MODE         hash, sign or off: what security.ima holds (hash)\n"
	"  -a, --hash-algo ALGO    IMA digest algorithm (sha256)\n"
	"      --key KEY           signing key: PEM file, pkcs11: URI or kernel key\n"
	"      --cert CERT         its certificate (the key id comes from it)\n"
	"      --evm MODE          portable or none: EVM portable signatures (none)\n"
	"      --trust STORE       certificates that verify the packages' own file signatures\n"
	"      --plugins LIST      the chain, in order (selinux,ima,evm)\n"
	"  -o, --set KEY=VALUE     any configuration key of imastream-rpm(8) (repeatable)\n"
	"      --config FILE       \"key = value\" lines, read before the options above\n"
	"      --pgp-key FILE      armored OpenPGP public key trusted for header signatures\n"
	"                          (repeatable); keys imported in DIR's rpm database count too\n"
	"      --allow-unsigned    accept unsigned headers and unknown keys (default: refuse)\n"
	"      --replace-files     replace files that another package (per the record) owns\n"
	"      --no-chown          keep the caller's ownership (for non-root callers)\n"
	"      --nodigest          do not check the header digests (as rpm's)\n"
	"      --nofiledigest      do not check the file digests (as rpm's)\n"
	"      --progress          a progress line on stderr (default: only on a terminal)\n"
	"      --quiet             no progress line\n"
	"  -v, --verbose           more messages (repeat for debugging)\n"
	"  -h, --help              this text\n"
	"\n"
	"Exit status: 0 if every package was installed, 1 if any failed (one line says why;\n"
	"nothing of that package is left, the others are still installed), 2 for a usage\n"
	"error.\n";

enum {
	OPT_ROOT = 256, OPT_MODE, OPT_KEY, OPT_CERT, OPT_EVM, OPT_TRUST, OPT_PLUGINS, OPT_CONFIG,
	OPT_PGP_KEY, OPT_ALLOW_UNSIGNED, OPT_REPLACE_FILES, OPT_NO_CHOWN, OPT_NODIGEST,
	OPT_NOFILEDIGEST, OPT_PROGRESS, OPT_QUIET,
};

/* A configuration setting from the command line, applied after --config. */
struct setting {
	const char *key;
	char *value;
	const char *where;
};

#define MAX_SETTINGS 64
#define MAX_PGP_KEYS 32

/* The log: the first error of a package is its one line; later ones are its echoes. */
struct install_log {
	int verbose;
	bool pkg_failed;   /* this package already printed its error */
	bool line_shown;   /* a progress line is on the terminal */
};

static void clear_progress(struct install_log *il)
{
	if (il->line_shown) {
		fputs("\r\033[K", stderr);
		il->line_shown = false;
	}
}

static void install_log_fn(void *arg, int level, const char *msg)
{
	struct install_log *il = arg;

	if (level == IMASTREAM_LOG_ERR) {
		if (il->pkg_failed && il->verbose < 1)
			return;
		il->pkg_failed = true;
	} else if (level > IMASTREAM_LOG_NOTICE + il->verbose) {
		return;
	}
	clear_progress(il);
	fprintf(stderr, "imastream: %s\n", msg);
}

struct progress {
	struct install_log *il;
	bool on;
	struct timespec start, last;
	unsigned int pkg_index, n_pkgs;
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

	if (!pr->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* Ten updates a second are plenty, and keep the terminal out of the hot path. */
	if (!p->done && seconds(&pr->last, &now) < 0.1)
		return;
	pr->last = now;
	t = seconds(&pr->start, &now);
	mib = (double)p->bytes / (1024.0 * 1024.0);
	fprintf(stderr, "\r\033[Kimastream: [%u/%u] %s: %.1f MiB, %llu files, %.1f MiB/s",
		pr->pkg_index, pr->n_pkgs, p->done ? "done" : p->package ? p->package : "",
		mib, (unsigned long long)p->files, t > 0 ? mib / t : 0.0);
	if (p->done) {
		fputc('\n', stderr);
		pr->il->line_shown = false;
	} else {
		pr->il->line_shown = true;
	}
}

static bool add_setting(struct setting *s, unsigned int *n, const char *key, const char *value,
			const char *where)
{
	if (*n == MAX_SETTINGS) {
		cli_error("install: too many settings");
		return false;
	}
	s[*n] = (struct setting){ key, (char *)value, where };
	(*n)++;
	return true;
}

/* -o KEY=VALUE: split in place. */
static bool add_kv(struct setting *s, unsigned int *n, char *kv)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv) {
		cli_error("install: --set takes KEY=VALUE, not '%s'", kv);
		return false;
	}
	*eq = '\0';
	return add_setting(s, n, kv, eq + 1, "--set");
}

int cmd_install(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "hash-algo", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "cert", required_argument, NULL, OPT_CERT },
		{ "evm", required_argument, NULL, OPT_EVM },
		{ "trust", required_argument, NULL, OPT_TRUST },
		{ "plugins", required_argument, NULL, OPT_PLUGINS },
		{ "set", required_argument, NULL, 'o' },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "pgp-key", required_argument, NULL, OPT_PGP_KEY },
		{ "allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED },
		{ "replace-files", no_argument, NULL, OPT_REPLACE_FILES },
		{ "no-chown", no_argument, NULL, OPT_NO_CHOWN },
		{ "nodigest", no_argument, NULL, OPT_NODIGEST },
		{ "nofiledigest", no_argument, NULL, OPT_NOFILEDIGEST },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct install_log il = { 0 };
	const struct imastream_log log = { install_log_fn, &il };
	struct progress pr = { .il = &il };
	struct setting settings[MAX_SETTINGS];
	const char *pgp_keys[MAX_PGP_KEYS + 1] = { NULL };
	const char *root = NULL, *config_file = NULL;
	unsigned int n_settings = 0, n_keys = 0, sink_flags = 0, extract_flags = 0;
	unsigned int install_flags = 0, txn_flags = 0, failed = 0;
	int show = -1; /* -1: only on a terminal */
	struct imastream_config cfg;
	bool cfg_ready = false;
	struct imastream_chain *chain = NULL;
	struct imastream_chain_sink *cs = NULL;
	struct imastream_extract *x = NULL;
	struct imastream_chain_sink_opts opts = { 0 };
	int c, rootfd = -1, err = 0, ret = CLI_FAILED;

	while ((c = getopt_long(argc, argv, "a:o:vh", options, NULL)) != -1) {
		bool ok = true;

		switch (c) {
		case OPT_ROOT:
			root = optarg;
			break;
		case OPT_MODE:
			ok = add_setting(settings, &n_settings, "mode", optarg, "--mode");
			break;
		case 'a':
			ok = add_setting(settings, &n_settings, "hash_algo", optarg, "--hash-algo");
			break;
		case OPT_KEY:
			ok = add_setting(settings, &n_settings, "key", optarg, "--key");
			break;
		case OPT_CERT:
			ok = add_setting(settings, &n_settings, "cert", optarg, "--cert");
			break;
		case OPT_EVM:
			ok = add_setting(settings, &n_settings, "evm", optarg, "--evm");
			break;
		case OPT_TRUST:
			ok = add_setting(settings, &n_settings, "trust", optarg, "--trust");
			break;
		case OPT_PLUGINS:
			ok = add_setting(settings, &n_settings, "plugins", optarg, "--plugins");
			break;
		case 'o':
			ok = add_kv(settings, &n_settings, optarg);
			break;
		case OPT_CONFIG:
			config_file = optarg;
			break;
		case OPT_PGP_KEY:
			if (n_keys == MAX_PGP_KEYS) {
				cli_error("install: more than %d --pgp-key options", MAX_PGP_KEYS);
				return CLI_USAGE;
			}
			pgp_keys[n_keys++] = optarg;
			break;
		case OPT_ALLOW_UNSIGNED:
			sink_flags |= IMASTREAM_SINK_ALLOW_UNSIGNED;
			break;
		case OPT_REPLACE_FILES:
			sink_flags |= IMASTREAM_SINK_REPLACE_FILES;
			break;
		case OPT_NO_CHOWN:
			extract_flags |= IMASTREAM_EXTRACT_NO_CHOWN;
			break;
		case OPT_NODIGEST:
			install_flags |= IMASTREAM_INSTALL_NO_HEADER_DIGEST;
			sink_flags |= IMASTREAM_SINK_NO_HEADER_DIGEST;
			break;
		case OPT_NOFILEDIGEST:
			install_flags |= IMASTREAM_INSTALL_NO_FILE_DIGEST;
			txn_flags |= IMASTREAM_TXN_NOFILEDIGEST;
			break;
		case OPT_PROGRESS:
			show = 1;
			break;
		case OPT_QUIET:
			show = 0;
			break;
		case 'v':
			il.verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
		if (!ok)
			return CLI_USAGE;
	}
	if (!root) {
		cli_error("install: no --root given (try 'imastream install --help')");
		return CLI_USAGE;
	}
	if (optind >= argc) {
		cli_error("install: no package given (try 'imastream install --help')");
		return CLI_USAGE;
	}
	cli_set_verbose(il.verbose);

	/* Configuration: defaults, then the file, then the options in the order given. */
	if (imastream_config_init(&cfg)) {
		cli_error("out of memory");
		return CLI_FAILED;
	}
	cfg_ready = true;
	ret = CLI_USAGE;
	if (config_file && imastream_config_load(&cfg, config_file, &log))
		goto out;
	for (unsigned int i = 0; i < n_settings; i++)
		if (imastream_config_set(&cfg, settings[i].key, settings[i].value, settings[i].where,
					 &log))
			goto out;
	if (imastream_config_check(&cfg, &log))
		goto out;
	ret = CLI_FAILED;

	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		cli_error("install: %s: %s", root, strerror(errno));
		goto out;
	}
	/* Keys load here, once, before any package is read. */
	if (imastream_chain_new(&cfg, &log, &chain) ||
	    imastream_chain_add_list(chain, cfg.plugins) || imastream_chain_init(chain))
		goto out;

	pr.on = show == 1 || (show == -1 && isatty(STDERR_FILENO));
	pr.n_pkgs = (unsigned int)(argc - optind);
	clock_gettime(CLOCK_MONOTONIC, &pr.start);
	opts = (struct imastream_chain_sink_opts){
		.root = root, .flags = sink_flags, .txn_flags = txn_flags, .cfg = &cfg,
		.pgp_keys = n_keys ? pgp_keys : NULL,
		.progress = pr.on ? show_progress : NULL, .progress_arg = &pr,
	};
	err = imastream_chain_sink_new(chain, rootfd, &opts, &log, &cs);
	if (err)
		goto out;
	err = imastream_extract_new(rootfd, extract_flags, imastream_chain_sink_entry_sink(cs), &log,
				    &x);
	if (err)
		goto out;

	for (int i = optind; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		int perr;

		il.pkg_failed = false;
		pr.pkg_index = (unsigned int)(i - optind + 1);
		if (fd < 0) {
			perr = -errno;
			clear_progress(&il);
			cli_error("%s: %s", argv[i], strerror(-perr));
		} else {
			perr = imastream_install_rpm(x, fd, argv[i], install_flags);
			close(fd);
		}
		if (perr) {
			failed++;
			if (!err)
				err = perr;
		}
	}
	ret = failed ? CLI_FAILED : CLI_OK;
out:
	imastream_extract_free(x);
	imastream_chain_sink_free(cs, err);
	imastream_chain_free(chain);
	if (cfg_ready)
		imastream_config_release(&cfg);
	if (rootfd >= 0)
		close(rootfd);
	clear_progress(&il);
	return ret;
}
