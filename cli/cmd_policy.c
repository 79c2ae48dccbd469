// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream policy keylime: a keylime runtime policy of everything installed in a root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "attest/attest.h"
#include "attest/mutable.h"
#include "attest/sources.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/replace.h"
#include "imastream/keys.h"
#include "installed/boot_record.h"

#define MAX_TRUST 16

static const struct cli_use policy_options[] = {
	{ CLI_OPT_ROOT, "the installed root (default /): its rpm database\n"
			"or imastream's record is read" },
	{ CLI_OPT_RPMDB, "reference digests from the rpm database's headers\n(the default)" },
	{ CLI_OPT_RECORD, "reference digests from imastream install's record" },
	{ CLI_OPT_HASH_ALGO, "the file digest algorithm of the IMA template (the\n"
			     "kernel's ima_hash=; default sha256); files whose\n"
			     "reference digest is in another algorithm are hashed" },
	{ CLI_OPT_TRUST, "certificates whose keys go into verification-keys: the\n"
			 "keys the installed files' IMA signatures verify with\n(repeatable)" },
	{ CLI_OPT_EXCLUDE, NULL },
	{ CLI_OPT_MUTABLE, NULL },
	{ CLI_OPT_PATH_PREFIX, NULL },
	{ CLI_OPT_LOG_HASH_ALGO, NULL },
	{ CLI_OPT_BASE, NULL },
	{ CLI_OPT_OUTPUT, NULL },
	{ CLI_OPT_VERBOSE, NULL },
	{ CLI_OPT_HELP },
	{ 0 },
};

static const struct cli_spec policy_spec = {
	.cmd = "policy",
	.synopsis =
	"Usage: imastream policy keylime [--root DIR] [--rpmdb|--record] [-a ALGO]\n"
	"                        [--trust CERT ...] [--exclude REGEX ...]\n"
	"                        [--mutable LIST] [--path-prefix DIR] [--base POLICY]\n"
	"                        [--output FILE] [PACKAGE...]\n"
	"\n"
	"Writes a keylime runtime policy (JSON, meta.version 1) that allows, for each\n"
	"regular file of the installed packages (all, or each PACKAGE), the digest its\n"
	"package gave it: the reference values a verifier compares the kernel's IMA\n"
	"measurement list with. Paths are as the attested system sees them: the root\n"
	"prefix removed, --path-prefix put in front, each blank written '_' as the\n"
	"kernel logs it. The headers' digests are used as they are when they are in\n"
	"ALGO; no installed file is read then. %ghost files have no reference and are\n"
	"left out. The files transactions replaced or erased since this boot keep the\n"
	"digest they had (ROOT/var/lib/imastream/boot/BOOTID), as the kernel may have\n"
	"measured them: the next boot drops them. Check a log against it with\n"
	"'imastream attest check'.\n",
	.uses = policy_options,
	.epilog =
	"Exit status: 0 when the policy lists every file, 1 when it was written but some\n"
	"file was left out (said on stderr), when it could not be written or when there\n"
	"is no package to list, 2 for a usage error.\n",
};

/* The public key and key id of each certificate in one PEM or DER buffer. */
static int add_certs(struct attest_policy *pol, const uint8_t *buf, size_t len, const char *file)
{
	BIO *bio = BIO_new_mem_buf(buf, (int)len);
	unsigned int added = 0;
	X509 *x;

	if (!bio)
		return -ENOMEM;
	for (;;) {
		const unsigned char *p = buf;
		unsigned char *der = NULL, *cder = NULL;
		int dlen, clen;
		uint32_t keyid;

		x = added || len < 2 || buf[0] != 0x30 ? PEM_read_bio_X509(bio, NULL, NULL, NULL) :
							  d2i_X509(NULL, &p, (long)len);
		if (!x)
			break;
		dlen = i2d_PUBKEY(X509_get0_pubkey(x), &der);
		clen = i2d_X509(x, &cder);
		X509_free(x);
		if (dlen <= 0 || clen <= 0 ||
		    imastream_keyid_from_cert(cder, (size_t)clen, &cli_log, &keyid, NULL) ||
		    attest_policy_add_key(pol, der, (size_t)dlen, keyid)) {
			OPENSSL_free(der);
			OPENSSL_free(cder);
			BIO_free(bio);
			cli_say("policy", "%s: certificate %u has a key the policy cannot hold", file,
				added + 1);
			return -EINVAL;
		}
		OPENSSL_free(der);
		OPENSSL_free(cder);
		added++;
		if (buf[0] == 0x30)
			break;
	}
	ERR_clear_error();
	BIO_free(bio);
	return added ? 0 : -ENOENT;
}

static int add_cert_file(struct attest_policy *pol, const char *file, bool in_dir)
{
	FILE *f = fopen(file, "rb");
	uint8_t buf[65536];
	size_t len;
	int err;

	if (!f) {
		cli_say("policy", "%s: %s", file, strerror(errno));
		return -errno;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	err = add_certs(pol, buf, len, file);
	if (err == -ENOENT && in_dir)
		return 0;
	if (err == -ENOENT)
		cli_say("policy", "%s: no certificate in it", file);
	return err;
}

static int add_trust(struct attest_policy *pol, const char *path)
{
	struct stat st;
	struct dirent *d;
	DIR *dir;
	int err = 0;

	if (stat(path, &st)) {
		cli_say("policy", "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return add_cert_file(pol, path, false);
	dir = opendir(path);
	if (!dir) {
		cli_say("policy", "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (!err && (d = readdir(dir))) {
		char file[PATH_MAX];

		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, d->d_name);
		if (!stat(file, &st) && S_ISREG(st.st_mode))
			err = add_cert_file(pol, file, true);
	}
	closedir(dir);
	return err;
}

/* --base: a policy keylime would accept, merged in; anything else refused before a file is read. */
static int add_base(struct attest_policy *pol, const char *file, bool log_alg_given, int hash_algo)
{
	struct attest_policy *base = NULL;
	FILE *f = fopen(file, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	if (!f) {
		cli_say("policy", "%s: %s", file, strerror(errno));
		return -errno;
	}
	for (;;) {
		if (len == cap) {
			char *n = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!n) {
				err = -ENOMEM;
				break;
			}
			buf = n;
		}
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (!got) {
			err = ferror(f) ? -EIO : 0;
			break;
		}
	}
	fclose(f);
	if (err)
		cli_say("policy", "%s: cannot read: %s", file, strerror(-err));
	else
		err = attest_policy_read(buf, len, file, &cli_log, &base);
	if (!err)
		err = attest_policy_merge(pol, base, log_alg_given, hash_algo, file, &cli_log);
	attest_policy_free(base);
	free(buf);
	return err;
}

/* Writes to @output (NULL: standard output) as every command does: a reader sees old or new. */
static int write_policy(const struct attest_policy *pol, const char *output)
{
	struct cli_replace r;
	int err;

	err = cli_replace_open(&r, "policy", output ? output : "-");
	if (err)
		return err;
	/* The policy is written to the descriptor: nothing may wait in the stream's buffer. */
	err = fflush(r.out) == EOF ? -errno : 0;
	if (!err)
		err = attest_policy_write(pol, fileno(r.out), &cli_log);
	if (err && output)
		cli_say("policy", "%s: cannot write: %s", output, strerror(-err));
	return cli_replace_close(&r, "policy", err);
}

/* What the command line of policy keylime asks for. */
struct keylime_opts {
	const char *root, *output, *prefix, *log_alg, *list, *base_file;
	const char *trust[MAX_TRUST], *excludes[64];
	unsigned int ntrust, nexcl;
	const struct imastream_hash_info *info;
	bool use_record, source_given; /* --rpmdb or --record: one of them */
	bool log_alg_given;
	char **names; /* the PACKAGEs */
	int nnames;
};

/* One option: -1 to go on, else the exit status. */
static int parse_keylime_option(struct keylime_opts *o, const struct cli_parser *p, int c)
{
	switch (c) {
	case CLI_OPT_HELP:
		return CLI_OK;
	case CLI_OPT_ERROR:
		return CLI_USAGE;
	case CLI_OPT_ROOT:
		o->root = p->arg;
		break;
	case CLI_OPT_RPMDB:
	case CLI_OPT_RECORD:
		/* Two sources would make the last one typed win silently. */
		if (o->source_given && (c == CLI_OPT_RECORD) != o->use_record)
			return cli_usage_error("policy", "--rpmdb and --record: give one source of "
							 "reference digests");
		o->source_given = true;
		o->use_record = c == CLI_OPT_RECORD;
		break;
	case CLI_OPT_HASH_ALGO:
		o->info = imastream_hash_by_name(p->arg);
		if (!o->info)
			return cli_usage_error("policy", "%s %s: not a hash algorithm", p->spelled,
					       p->arg);
		break;
	case CLI_OPT_LOG_HASH_ALGO:
		if (!attest_log_hash_alg_known(p->arg))
			return cli_usage_error("policy", "%s %s: keylime takes %s", p->spelled,
					       p->arg, ATTEST_LOG_HASH_ALGS);
		o->log_alg = p->arg;
		o->log_alg_given = true;
		break;
	case CLI_OPT_TRUST:
		if (o->ntrust == MAX_TRUST)
			return cli_usage_error("policy", "more than %d %s options", MAX_TRUST,
					       p->spelled);
		o->trust[o->ntrust++] = p->arg;
		break;
	case CLI_OPT_EXCLUDE:
		if (o->nexcl == sizeof(o->excludes) / sizeof(o->excludes[0]))
			return cli_usage_error("policy", "too many %s options", p->spelled);
		o->excludes[o->nexcl++] = p->arg;
		break;
	case CLI_OPT_MUTABLE:
		o->list = p->arg;
		break;
	case CLI_OPT_PATH_PREFIX:
		o->prefix = p->arg;
		if (o->prefix[0] != '/')
			return cli_usage_error("policy", "%s %s: not an absolute path", p->spelled,
					       o->prefix);
		break;
	case CLI_OPT_OUTPUT:
		o->output = p->arg;
		break;
	case CLI_OPT_BASE:
		o->base_file = p->arg;
		break;
	case CLI_OPT_VERBOSE:
		cli_set_verbose(1);
		break;
	default:
		return cli_usage_error("policy", "%s is not an option of policy keylime",
				       p->spelled);
	}
	return -1;
}

/* Parses @argv into @o: -1 to go on, else the exit status. */
static int parse_keylime(struct keylime_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	int c, ret;

	cli_parse_start(&p, &policy_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END)
		if ((ret = parse_keylime_option(o, &p, c)) >= 0)
			return ret;
	o->names = argv + cli_parse_operands(&p);
	o->nnames = argc - cli_parse_operands(&p);
	return -1;
}

/*
 * The policy before any digest: its excludes, the --trust certificates and the --base
 * policy merged in.  CLI_OK, or the exit status once said.
 */
static int start_policy(const struct keylime_opts *o, struct attest_policy **pol)
{
	int err;

	if (attest_policy_new(o->log_alg, pol))
		goto oom;
	for (unsigned int i = 0; i < o->nexcl; i++) {
		const char *why;

		err = attest_policy_add_exclude(*pol, o->excludes[i], &why);
		if (err == -EINVAL)
			return cli_usage_error("policy", "--exclude %s: %s", o->excludes[i], why);
		if (err)
			goto oom;
	}
	for (unsigned int i = 0; i < o->ntrust; i++)
		if (add_trust(*pol, o->trust[i]))
			return CLI_USAGE;
	if (o->base_file && add_base(*pol, o->base_file, o->log_alg_given, o->info->algo))
		return CLI_FAILED;
	return CLI_OK;
oom:
	cli_say("policy", "out of memory");
	return CLI_FAILED;
}

/*
 * The digests of the packages (from rpm's database or the install record), this boot's
 * replaced ones and the --mutable list's, into the policy.  CLI_OK, or the exit status
 * once said.
 */
static int add_digests(const struct keylime_opts *o, struct attest_source *src, const char *boot_id,
		       struct attest_mutable **mutable)
{
	const char *root_abs = src->root;
	int err;

	src->rootfd = open(root_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src->rootfd < 0 ||
	    imastream_hasher_new(IMASTREAM_HASH_BIT(o->info->algo), &cli_log, &src->hasher)) {
		cli_say("policy", "%s: %s", root_abs, strerror(errno));
		return CLI_FAILED;
	}
	/* A bad list is refused before anything is read for the policy. */
	if (o->list && attest_mutable_load(root_abs, o->list, &cli_log, mutable))
		return CLI_USAGE;
	err = o->use_record ? attest_source_record(src, o->names, o->nnames) :
			      attest_source_rpmdb(src, o->names, o->nnames);
	if (!err)
		err = attest_source_boot(src, boot_id);
	if (err)
		return CLI_FAILED;
	if (*mutable && attest_mutable_apply(*mutable, src->policy, src->rootfd, src->prefix,
					     src->hasher, o->info->algo, &cli_log))
		return CLI_USAGE;
	return CLI_OK;
}

static int policy_keylime(int argc, char **argv)
{
	struct keylime_opts o = { .root = "/",
				  .log_alg = "sha1",
				  .info = imastream_hash_by_algo(IMASTREAM_HASH_SHA256) };
	struct attest_mutable *mutable = NULL;
	char boot_id[IMS_BOOT_ID_LEN + 1];
	struct attest_policy *pol = NULL;
	struct attest_source src = { .rootfd = -1 };
	char root_abs[PATH_MAX];
	int ret = parse_keylime(&o, argc, argv);

	if (ret >= 0)
		return ret;
	if (!realpath(o.root, root_abs)) {
		cli_say("policy", "%s: %s", o.root, strerror(errno));
		return CLI_USAGE;
	}
	/* Where the policy goes, before the whole database is read, not after. */
	if (o.output && cli_replace_check("policy", o.output))
		return CLI_FAILED;
	/* "/" as the prefix would double every slash. */
	if (o.prefix && !strcmp(o.prefix, "/"))
		o.prefix = NULL;

	ret = start_policy(&o, &pol);
	if (ret == CLI_OK && ims_boot_id(boot_id, &cli_log))
		ret = CLI_FAILED;
	src = (struct attest_source){ .root = root_abs,
				      .prefix = o.prefix,
				      .hash_algo = o.info->algo,
				      .policy = pol,
				      .log = &cli_log,
				      .rootfd = -1 };
	if (ret == CLI_OK)
		ret = add_digests(&o, &src, boot_id, &mutable);
	if (ret == CLI_OK && write_policy(pol, o.output))
		ret = CLI_FAILED;
	if (ret == CLI_OK) {
		cli_say("policy",
			"%s: %lu package%s, %lu files, %zu paths, %s; %lu hashed from disk, %lu "
			"left "
			"out; %lu replaced this boot",
			root_abs, src.packages, src.packages == 1 ? "" : "s", src.files,
			attest_policy_paths(pol), o.info->name, src.hashed, src.unreadable,
			src.boot_digests);
		ret = src.unreadable ? CLI_FAILED : CLI_OK;
	}

	if (src.rootfd >= 0)
		close(src.rootfd);
	imastream_hasher_free(src.hasher);
	attest_mutable_free(mutable);
	attest_policy_free(pol);
	return ret;
}

int cmd_policy(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "keylime"))
		return policy_keylime(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cli_print_help(&policy_spec, stdout);
		return CLI_OK;
	}
	if (argc < 2)
		return cli_usage_error("policy", "no policy format given (keylime)");
	return cli_usage_error("policy", "%s: unknown policy format (keylime)", argv[1]);
}
