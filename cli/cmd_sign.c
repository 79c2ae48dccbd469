// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream sign: IMA signature (v2, or v3 over the fs-verity digest) and EVM portable signature on existing files, the key loaded once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "cli/cli.h"
#include "cli/digests.h"
#include "cli/options.h"
#include "cli/walk.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "imastream/keys.h"
#include "imastream/verity.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

/* Room for the largest signature a supported key makes (RSA-4096: 512 bytes), and more. */
#define SIG_VALUE_MAX (IMASTREAM_SIG_HDR_SIZE + 1024)

struct sign_result {
	size_t ima_len;
	size_t evm_len;
	uint8_t ima[SIG_VALUE_MAX];
	uint8_t evm[SIG_VALUE_MAX];
};

struct sign_worker {
	struct cli_digests digests; /* its hasher (--verity: fs-verity context) and runs of files */
	struct imastream_signer *signer;
};

struct sign_job {
	const struct imastream_hash_info *algo;
	struct imastream_xattr_writer writer; /* read-only once the walk starts */
	unsigned int filesig_flags;
	bool write;
	bool evm;
	bool verity;             /* sigv3 over the fs-verity digest (type 06) */
	bool names;              /* "VALUE  NAME" lines; false: the values alone */
	struct cli_line line;    /* the main thread's output line */
	struct cli_walk walk;
	struct sign_worker workers[CLI_WALK_MAX_JOBS];
};

static const struct cli_use sign_options[] = {
	{ CLI_OPT_KEY },
	{ CLI_OPT_CERT },
	{ CLI_OPT_KEYID },
	{ CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE },
	{ CLI_OPT_PASS_ENV },
	{ CLI_OPT_EVM, "portable (default): also write security.evm; none: IMA\n"
	  "only. install and the rpm plugin default to none: they\n"
	  "run without a key in hash mode, and a portable signature\n"
	  "freezes owner, mode and labels, which packages may\n"
	  "still change; sign is for trees that are final" },
	{ CLI_OPT_PORTABLE },
	{ CLI_OPT_HASH_ALGO, "sha1, sha224, sha256 (default), sha384, sha512; md5\n"
	  "with --allow-weak" },
	{ CLI_OPT_ALLOW_WEAK },
	{ CLI_OPT_XATTR_USER, "write user.ima and user.evm instead, and cover user.ima\n"
	  "in the EVM value (evmctl --xattr-user)" },
	{ CLI_OPT_VERITY, "security.ima gets a version-3 signature over the\n"
	  "file's fs-verity digest (type 06, as evmctl sign_hash\n"
	  "--veritysig), for digest_type=verity policies; sha256\n"
	  "only. fs-verity itself is not enabled (fsverity enable)" },
	{ CLI_OPT_DRY_RUN },
	{ CLI_OPT_NO_NAMES },
	{ 0 },
};

static const struct cli_spec sign_spec = {
	.cmd = "sign",
	.synopsis =
	"Usage: imastream sign [-r] --key KEY [--cert CERT] [--keyid HEX]\n"
	"                      [-p | --pass-file FILE | --pass-env VAR] [--evm MODE]\n"
	"                      [-a ALGO] [--verity] [--xattr-user] [-n] [--no-names]\n"
	"                      [-j N] [-v] PATH...\n"
	"\n"
	"Signs each regular file: security.ima gets an IMA signature over the content\n"
	"digest (type 03, v2), then security.evm a portable EVM signature (type 05) over\n"
	"the labels, the new security.ima, uid, gid and mode: what 'evmctl ima_sign'\n"
	"followed by 'evmctl sign --portable' write, with the key loaded once. Both\n"
	"values are made before either is written, and security.evm is written last.\n"
	"Prints, per file, the security.ima value in hex, two spaces and the name on one\n"
	"line, and the security.evm value and the name on the next (--no-names: the\n"
	"values alone, as those evmctl commands print them). With -r, a progress line on\n"
	"a terminal and a summary on stderr.\n"
	"With --verity, security.ima gets a version-3 signature (type 06) over the file's\n"
	"fs-verity digest instead, what 'fsverity digest | evmctl sign_hash --veritysig'\n"
	"prints; the kernel appraises it under digest_type=verity once fs-verity is\n"
	"enabled on the file.\n",
	.uses = sign_options,
	.shared = cli_walk_options,
	.epilog =
	"Exit status: 0 if every file was signed, 1 if the key could not be loaded\n"
	"(nothing is written then) or any file failed (one line on stderr each), 2 for a\n"
	"usage error.\n",
};

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
		cli_error("%s: cannot undo the new %s either: %s", it->path, ima_name,
			  strerror(errno));
	return err;
}

/* Worker: signs the file's @digest, then writes security.ima and security.evm last. */
static void sign_file(struct sign_job *job, struct sign_worker *w, struct cli_item *it,
		      const uint8_t *digest, size_t digest_len)
{
	struct sign_result *res = it->data;
	int err;

	err = job->verity ?
	      imastream_ima_sign_verity(w->signer, job->algo->algo, digest, digest_len, res->ima,
					sizeof(res->ima), &res->ima_len, &cli_log) :
	      imastream_ima_sign_digest(w->signer, job->algo->algo, digest, digest_len, res->ima,
					sizeof(res->ima), &res->ima_len, &cli_log);
	if (err) {
		cli_error("%s: IMA signing failed", it->path);
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

/* Worker: the digests of @n files, the small ones hashed together, then each one signed. */
static void sign_run(void *ctx, unsigned int worker, struct cli_item **items, size_t n)
{
	struct sign_job *job = ctx;
	struct sign_worker *w = &job->workers[worker];
	const uint8_t *digest[CLI_WALK_RUN];
	/* fs-verity digests too: each file's tree is its own, the hashing goes across files. */
	size_t len = job->verity ? IMASTREAM_VERITY_DIGEST_SIZE : job->algo->digest_size;

	cli_digests_run(&w->digests, items, n, digest);
	for (size_t i = 0; i < n; i++)
		if (digest[i])
			sign_file(job, w, items[i], digest[i], len);
}

/* Main thread, in walk order: the security.ima value, then the security.evm value. */
static void print_item(void *ctx, struct cli_item *it)
{
	struct sign_job *job = ctx;
	const struct sign_result *res = it->data;

	if (job->walk.say.json) {
		/* The values written; a failure's reason is on stderr. */
		cli_walk_json_file(&job->walk, it->path, it->ok);
		if (it->ok)
			cli_json_hex(&job->walk.out, "ima", res->ima, res->ima_len);
		if (it->ok && job->evm)
			cli_json_hex(&job->walk.out, "evm", res->evm, res->evm_len);
		if (cli_json_put(&job->walk.out, stdout))
			it->ok = false;
		return;
	}
	if (!it->ok)
		return;
	if (cli_put_value(&job->line, res->ima, res->ima_len, job->names ? it->path : NULL) ||
	    (job->evm &&
	     cli_put_value(&job->line, res->evm, res->evm_len, job->names ? it->path : NULL)))
		it->ok = false;
}

static const struct cli_walk_ops sign_ops = { NULL, print_item, sign_run };

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
		cli_say("sign", "%s signatures are too large",
			imastream_signer_key_type(job->workers[0].signer));
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
		err = cli_digests_new(&job->workers[i].digests, job->verity, job->algo->algo,
				      &cli_log, &job->walk);
		if (err)
			return err;
	}
	return 0;
}

static void free_workers(struct sign_job *job)
{
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++) {
		cli_digests_free(&job->workers[i].digests);
		imastream_signer_free(job->workers[i].signer);
	}
}

int cmd_sign(int argc, char **argv)
{
	struct sign_job job = { .evm = true };
	struct cli_key key = CLI_KEY_INIT;
	struct cli_digest_opts o = CLI_DIGEST_OPTS_INIT;
	unsigned int wflags = 0;
	struct cli_parser p;
	int c, taken, err;

	cli_walk_init(&job.walk, "sign", &sign_ops, &job, sizeof(struct sign_result));
	cli_parse_start(&p, &sign_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_EVM:
			if (!strcmp(p.arg, "portable"))
				job.evm = true;
			else if (!strcmp(p.arg, "none"))
				job.evm = false;
			else
				return cli_usage_error("sign", "%s takes 'portable' or 'none', not '%s'",
						       p.spelled, p.arg);
			break;
		case CLI_OPT_PORTABLE:
			job.evm = true;
			break;
		case CLI_OPT_XATTR_USER:
			wflags |= IMASTREAM_XATTR_WRITE_USER;
			job.filesig_flags |= IMASTREAM_FILESIG_USER;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			taken = cli_key_option(&p, c, &key);
			if (!taken)
				taken = cli_digest_option(&p, c, &o);
			if (!taken)
				taken = cli_walk_option(&job.walk, &p, c);
			if (taken <= 0)
				return CLI_USAGE;
		}
	}
	if (!key.opts.key)
		return cli_usage_error("sign", "no --key given");
	if (cli_key_check_pass("sign", &key) != CLI_OK)
		return CLI_USAGE;
	if (cli_parse_operands(&p) >= argc)
		return cli_usage_error("sign", "no PATH given");
	cli_set_verbose(job.walk.say.verbose);
	job.write = !o.dry_run;
	job.names = !o.no_names;
	job.verity = o.verity;
	job.algo = imastream_hash_by_name(o.algo_name);
	/* sm3 signs only with SM2 keys. */
	if (!job.algo || job.algo->algo == IMASTREAM_HASH_SM3)
		return cli_usage_error("sign",
				       "unknown hash algorithm '%s' (sha1, sha224, sha256, "
				       "sha384, sha512)",
				       o.algo_name);
	/* md5: weak, and the kernel refuses md5 signatures; the one rule, as everywhere. */
	if (cli_check_weak_algo("sign", job.algo->algo, o.allow_weak) != CLI_OK)
		return CLI_USAGE;
	/* fs-verity's default tree is SHA-256; the EVM value then uses it too. */
	if (job.verity && o.algo_given && job.algo->algo != IMASTREAM_HASH_SHA256)
		return cli_usage_error("sign", "--verity signs sha256 fs-verity digests only, not %s",
				       job.algo->name);
	err = cli_key_prompt("sign", &key);
	if (err)
		return err;
	imastream_xattr_writer_init(&job.writer, wflags, &cli_log);
	/* The key first: a bad key, passphrase or certificate stops before any file is touched. */
	err = make_workers(&job, &key.opts, &job.walk.jobs);
	cli_pass_forget();
	if (!err)
		err = cli_walk_start(&job.walk);
	if (err) {
		cli_walk_finish(&job.walk);
		free_workers(&job);
		return CLI_FAILED;
	}
	cli_walk_paths(&job.walk, argv + cli_parse_operands(&p), argc - cli_parse_operands(&p));
	cli_digests_say(&job.walk, &job.workers[0].digests, sizeof(job.workers[0]));
	free_workers(&job);
	cli_line_free(&job.line);
	return job.walk.failed ? CLI_FAILED : CLI_OK;
}
