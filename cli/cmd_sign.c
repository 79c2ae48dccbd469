// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream sign: IMA signature and EVM portable signature on existing files, the key loaded once. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "cli/cli.h"
#include "cli/walk.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"

/* Room for the largest signature a supported key makes (RSA-4096: 512 bytes), and more. */
#define SIG_VALUE_MAX (IMASTREAM_SIG_HDR_SIZE + 1024)

struct sign_result {
	size_t ima_len;
	size_t evm_len;
	uint8_t ima[SIG_VALUE_MAX];
	uint8_t evm[SIG_VALUE_MAX];
};

struct sign_worker {
	struct imastream_hasher *hasher;
	struct imastream_signer *signer;
};

struct sign_job {
	const struct imastream_hash_info *algo;
	struct imastream_xattr_writer writer; /* read-only once the walk starts */
	unsigned int filesig_flags;
	bool write;
	bool evm;
	struct cli_walk walk;
	struct sign_worker workers[CLI_WALK_MAX_JOBS];
};

static const char usage_text[] =
	"Usage: imastream sign [-r] --key KEY [--cert CERT] [--keyid HEX]\n"
	"                      [--pass-file FILE | --pass-env VAR] [--evm portable|none]\n"
	"                      [-a ALGO] [--xattr-user] [-n] [-j N] [-v] PATH...\n"
	"\n"
	"Signs each regular file: security.ima gets an IMA signature over the content digest\n"
	"(type 03, v2), then security.evm a portable EVM signature (type 05) over the labels,\n"
	"the new security.ima, uid, gid and mode: what 'evmctl ima_sign' followed by 'evmctl\n"
	"sign --portable' write, with the key loaded once. Both values are made before either\n"
	"is written, and security.evm is written last. Prints, per file, the security.ima value\n"
	"in hex on one line and the security.evm value on the next, as those commands do.\n"
	"\n"
	"  -k, --key KEY       private key: a PEM/DER file (mode 0600 or stricter, optionally\n"
	"                      with its certificate appended), pkcs11:URI, kernel:SERIAL,\n"
	"                      kernel:RING:DESC, or an OpenSSL store URI\n"
	"      --cert CERT     its certificate: key id from its subjectKeyIdentifier, and\n"
	"                      refused if it does not match the key\n"
	"      --keyid HEX     the key id to write (8 hex digits), overriding both\n"
	"      --pass-file F   passphrase or PIN: the first line of F\n"
	"      --pass-env VAR  passphrase or PIN: the value of environment variable VAR\n"
	"      --evm MODE      portable (default): also write security.evm; none: IMA only\n"
	"  -a, --hashalgo ALGO sha1, sha224, sha256 (default), sha384, sha512\n"
	"  -r, --recursive     walk directories; symlinks are skipped, never followed;\n"
	"                      a FIFO, device or socket is reported as a failure\n"
	"      --xattr-user    write user.ima / user.evm instead (evmctl --xattr-user)\n"
	"  -n, --dry-run       print the values, write nothing\n"
	"  -j, --jobs N        sign N files at a time (default: one per CPU)\n"
	"  -v, --verbose       also name the symlinks a walk skips\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 if every file was signed, 1 if the key could not be loaded (nothing\n"
	"is written then) or any file failed (one line on stderr each), 2 for a usage error.\n";

static void print_hex(const uint8_t *v, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char line[2 * SIG_VALUE_MAX + 2];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		line[n++] = digits[v[i] >> 4];
		line[n++] = digits[v[i] & 15];
	}
	line[n++] = '\n';
	fwrite(line, 1, n, stdout);
}

/*
 * Writes security.ima, then security.evm. Should the second write fail, the first is
 * undone (the old value put back, or removed if there was none), so that a file never
 * keeps a new security.ima that its security.evm does not cover.
 */
static int write_both(const struct sign_job *job, const struct cli_item *it,
		      const struct sign_result *res)
{
	const char *ima_name = imastream_xattr_writer_name(&job->writer, IMASTREAM_ATTR_IMA);
	uint8_t old[IMASTREAM_SIG_HDR_SIZE + IMASTREAM_SIG_MAX];
	ssize_t old_len = -1;
	int err;

	if (job->evm)
		old_len = fgetxattr(it->fd, ima_name, old, sizeof(old));
	err = imastream_xattr_write(&job->writer, it->fd, it->path, IMASTREAM_ATTR_IMA, res->ima,
				    res->ima_len, NULL);
	if (err || !job->evm)
		return err;
	err = imastream_xattr_write(&job->writer, it->fd, it->path, IMASTREAM_ATTR_EVM, res->evm,
				    res->evm_len, NULL);
	if (!err)
		return 0;
	if (old_len >= 0 ? fsetxattr(it->fd, ima_name, old, (size_t)old_len, 0) :
	    fremovexattr(it->fd, ima_name))
		fprintf(stderr, "imastream: %s: cannot undo the new %s either: %s\n", it->path,
			ima_name, strerror(errno));
	return err;
}

/* Worker: hashes, signs both values, then writes security.ima and security.evm last. */
static void sign_item(void *ctx, unsigned int worker, struct cli_item *it)
{
	struct sign_job *job = ctx;
	struct sign_worker *w = &job->workers[worker];
	struct sign_result *res = it->data;
	const uint8_t *digest;
	size_t digest_len;
	int err;

	err = imastream_hash_fd(w->hasher, it->fd);
	if (!err)
		err = imastream_hasher_digest(w->hasher, job->algo->algo, &digest, &digest_len);
	if (err) {
		/* One stdio call, so lines from concurrent workers never interleave. */
		fprintf(stderr, "imastream: %s: cannot read: %s\n", it->path, strerror(-err));
		return;
	}
	if (imastream_ima_sign_digest(w->signer, job->algo->algo, digest, digest_len, res->ima,
				      sizeof(res->ima), &res->ima_len, &cli_log)) {
		fprintf(stderr, "imastream: %s: IMA signing failed\n", it->path);
		return;
	}
	/* The EVM value covers the security.ima value just made, before it is on disk. */
	if (job->evm && imastream_evm_sign_file(w->signer, it->fd, it->path, job->filesig_flags,
						res->ima, res->ima_len, job->algo->algo,
						res->evm, sizeof(res->evm), &res->evm_len,
						&cli_log))
		return; /* the library named the file */
	if (job->write && write_both(job, it, res))
		return;
	it->ok = true;
}

static void print_item(void *ctx, struct cli_item *it)
{
	const struct sign_job *job = ctx;
	const struct sign_result *res = it->data;

	if (!it->ok)
		return;
	print_hex(res->ima, res->ima_len);
	if (job->evm)
		print_hex(res->evm, res->evm_len);
}

static const struct cli_walk_ops sign_ops = { sign_item, print_item };

/*
 * One hasher per worker; the key is loaded once, and the other workers get handles on
 * the same key. A key that cannot be shared (pkcs11) makes the run single-threaded.
 */
static int make_workers(struct sign_job *job, const struct imastream_key_opts *opts,
			unsigned int *jobs)
{
	int err;

	err = imastream_signer_new(opts, &cli_log, &job->workers[0].signer);
	if (err)
		return err; /* the library said why, in one line */
	if (imastream_signer_max_sig_size(job->workers[0].signer) > SIG_VALUE_MAX -
	    IMASTREAM_SIG_HDR_SIZE) {
		cli_error("sign: %s signatures are too large", imastream_signer_key_type(
				  job->workers[0].signer));
		return -EINVAL;
	}
	for (unsigned int i = 1; i < *jobs; i++) {
		err = imastream_signer_dup(job->workers[0].signer, &job->workers[i].signer);
		if (err == -EOPNOTSUPP) {
			*jobs = i;
			break;
		}
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < *jobs; i++) {
		err = imastream_hasher_new(IMASTREAM_HASH_BIT(job->algo->algo), &cli_log,
					   &job->workers[i].hasher);
		if (err)
			return err;
	}
	return 0;
}

static void free_workers(struct sign_job *job)
{
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++) {
		imastream_hasher_free(job->workers[i].hasher);
		imastream_signer_free(job->workers[i].signer);
	}
}

static bool parse_keyid(const char *arg, uint32_t *keyid_ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 16);
	if (errno || *end || !*arg || strlen(arg) > 8 || arg[0] == '-' || arg[0] == '+')
		return false;
	*keyid_ret = (uint32_t)v;
	return true;
}

int cmd_sign(int argc, char **argv)
{
	enum { OPT_CERT = 256, OPT_KEYID, OPT_PASS_FILE, OPT_PASS_ENV, OPT_EVM, OPT_USER };
	static const struct option options[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "cert", required_argument, NULL, OPT_CERT },
		{ "keyid", required_argument, NULL, OPT_KEYID },
		{ "pass-file", required_argument, NULL, OPT_PASS_FILE },
		{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
		{ "evm", required_argument, NULL, OPT_EVM },
		{ "hashalgo", required_argument, NULL, 'a' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "xattr-user", no_argument, NULL, OPT_USER },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sign_job job = { .write = true, .evm = true };
	struct imastream_key_opts opts = { 0 };
	const char *algo_name = "sha256";
	unsigned int jobs = cli_walk_default_jobs(), wflags = 0;
	int verbose = 0, c, err;

	job.walk = (struct cli_walk){ .ops = &sign_ops, .ctx = &job, .verb = "signed",
				      .item_size = sizeof(struct sign_result) };
	while ((c = getopt_long(argc, argv, "k:a:rnj:vh", options, NULL)) != -1) {
		switch (c) {
		case 'k':
			opts.key = optarg;
			break;
		case OPT_CERT:
			opts.cert = optarg;
			break;
		case OPT_KEYID:
			if (!parse_keyid(optarg, &opts.keyid)) {
				cli_error("sign: --keyid takes up to 8 hex digits, not '%s'", optarg);
				return CLI_USAGE;
			}
			opts.has_keyid = true;
			break;
		case OPT_PASS_FILE:
			opts.pass_file = optarg;
			break;
		case OPT_PASS_ENV:
			opts.pass_env = optarg;
			break;
		case OPT_EVM:
			if (!strcmp(optarg, "portable")) {
				job.evm = true;
			} else if (!strcmp(optarg, "none")) {
				job.evm = false;
			} else {
				cli_error("sign: --evm takes 'portable' or 'none', not '%s'", optarg);
				return CLI_USAGE;
			}
			break;
		case 'a':
			algo_name = optarg;
			break;
		case 'r':
			job.walk.recursive = true;
			break;
		case OPT_USER:
			wflags |= IMASTREAM_XATTR_WRITE_USER;
			job.filesig_flags |= IMASTREAM_FILESIG_USER;
			break;
		case 'n':
			job.write = false;
			break;
		case 'j':
			if (!cli_walk_parse_jobs("sign", optarg, &jobs))
				return CLI_USAGE;
			break;
		case 'v':
			verbose++;
			job.walk.verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (!opts.key) {
		cli_error("sign: no --key given (try 'imastream sign --help')");
		return CLI_USAGE;
	}
	if (opts.pass_file && opts.pass_env) {
		cli_error("sign: give --pass-file or --pass-env, not both");
		return CLI_USAGE;
	}
	if (optind >= argc) {
		cli_error("sign: no PATH given (try 'imastream sign --help')");
		return CLI_USAGE;
	}
	cli_set_verbose(verbose);
	job.algo = imastream_hash_by_name(algo_name);
	/* md5 signatures are refused by the kernel; sm3 signs only with SM2 keys. */
	if (!job.algo || job.algo->algo == IMASTREAM_HASH_MD5 ||
	    job.algo->algo == IMASTREAM_HASH_SM3) {
		cli_error("sign: unknown hash algorithm '%s' (sha1, sha224, sha256, sha384, sha512)",
			  algo_name);
		return CLI_USAGE;
	}
	imastream_xattr_writer_init(&job.writer, wflags, &cli_log);
	/* The key first: a bad key, passphrase or certificate stops before any file is touched. */
	err = make_workers(&job, &opts, &jobs);
	job.walk.jobs = jobs;
	if (!err)
		err = cli_walk_start(&job.walk);
	if (err) {
		cli_walk_finish(&job.walk);
		free_workers(&job);
		return CLI_FAILED;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	for (int i = optind; i < argc; i++)
		cli_walk_path(&job.walk, argv[i]);
	cli_walk_finish(&job.walk);
	free_workers(&job);
	if (fflush(stdout) == EOF) {
		cli_error("sign: cannot write to stdout: %s", strerror(errno));
		job.walk.failed++;
	}
	return job.walk.failed ? CLI_FAILED : CLI_OK;
}
