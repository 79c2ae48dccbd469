// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream verify: checks security.ima and security.evm of files (or of an install record) against trusted certificates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <selinux/selinux.h>

#include "cli/cli.h"
#include "cli/cmd_verify.h"
#include "cli/options.h"
#include "cli/walk.h"
#include "imastream/audit.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/rpmdb.h"

static const struct cli_use verify_options[] = {
	{ CLI_OPT_TRUST, "trusted certificates: a PEM or DER file, or a directory\n"
			 "of them; may be given several times" },
	{ CLI_OPT_EVM, "auto (default): check security.evm when it is there and\n"
		       "can be checked (an HMAC cannot: it needs the device's\n"
		       "key); require: a missing or uncheckable security.evm\n"
		       "fails; none: security.ima only" },
	{ CLI_OPT_ROOT, "check every object 'imastream install' recorded under\n"
			"DIR (DIR/var/lib/imastream/): that it exists with its\n"
			"type, mode, owner, size, symlink target and content\n"
			"digest, then the security.ima and security.evm the\n"
			"install wrote (by default --evm require where EVM was\n"
			"written); --trust is only needed for signatures" },
	{ CLI_OPT_RPMDB, "with --root: audit every regular file of the packages\n"
			 "in DIR's rpm database (or of each PACKAGE): content\n"
			 "against the header digest, type, mode, owner, size and\n"
			 "capabilities, then security.ima and security.evm as\n"
			 "above; without PACKAGE, labelled files no package owns\n"
			 "fail too (rpm's temp files NAME;XXXXXXXX of a killed\n"
			 "transaction, others: imastream recover --rpmdb); a\n"
			 "file whose labels a rootless build left pending is\n"
			 "PENDING, and exit status 3 when nothing else failed" },
	{ CLI_OPT_DBPATH, "with --rpmdb: rpm's database below DIR is DB (as\n"
			  "rpm --dbpath; default rpm's %_dbpath)" },
	{ CLI_OPT_LABELS, "with --rpmdb: require: every file has a security.selinux\n"
			  "(the chain had the selinux plugin with a policy); auto\n"
			  "(default): required when SELinux is enabled here; none" },
	{ CLI_OPT_NOCONFIG, "with --rpmdb: leave %config files out, as rpm -V\n"
			    "--noconfig does" },
	{ CLI_OPT_XATTR_USER, "read user.ima and user.evm instead (evmctl --xattr-user)" },
	{ CLI_OPT_APPRAISE_TYPE, "imasig: fail what an IMA policy rule with\n"
				 "appraise_type=imasig refuses: a digest alone (an IMA\n"
				 "signature passes, and a digest under a verified EVM\n"
				 "portable signature, as the kernel takes them)" },
	{ 0 },
};

/* evmctl ima_verify and verify take the certificates as --key. */
static const struct cli_alias verify_aliases[] = {
	{ CLI_OPT_TRUST, 'k', "key", "--trust, in evmctl's spelling; a comma-separated list\n"
	  "as evmctl takes it" },
	{ 0 },
};

static const struct cli_spec verify_spec = {
	.cmd = "verify",
	.synopsis =
	"Usage: imastream verify [-r] --trust DIR|FILE [--trust ...] [--xattr-user]\n"
	"                        [--evm auto|require|none] [--appraise-type imasig]\n"
	"                        [-j N] [-v] PATH...\n"
	"       imastream verify --root DIR [--trust DIR|FILE ...] [--xattr-user]\n"
	"                        [--evm auto|require|none]\n"
	"       imastream verify --root DIR --rpmdb [--format text|json] [--trust ...]\n"
	"                        [--xattr-user] [--evm auto|require|none]\n"
	"                        [--labels auto|require|none] [--noconfig] [PACKAGE...]\n"
	"\n"
	"Checks each regular file's security.ima (a digest: compared with the content;\n"
	"an IMA signature: verified over the content digest; an fs-verity signature,\n"
	"type 06: over the fs-verity digest recomputed from the content) and\n"
	"security.evm (a portable or a type-3 EVM signature over the labels,\n"
	"security.ima, uid, gid and mode) with the certificates of --trust, found by\n"
	"key id. Prints one line per file:\n"
	"  PATH: OK (ima: KIND, evm: EVM)\n"
	"  PATH: FAIL: REASON[; REASON]\n"
	"where KIND is what appraisal finds in security.ima, 'digest', 'signature' or\n"
	"'fs-verity signature' (a rule with appraise_type=imasig refuses a digest\n"
	"alone: --appraise-type), EVM 'portable signature', 'signature', 'missing' or\n"
	"'HMAC, not checked' (left out with --evm none), and a REASON is\n"
	"'security.ima: content changed', 'security.evm: metadata changed',\n"
	"'security.ima: unknown key id XXXXXXXX', '...: bad signature', 'missing\n"
	"security.ima', 'missing security.evm', 'security.evm: malformed (why)' or\n"
	"'security.evm: cannot be verified (why)'. An ECDSA signature that\n"
	"does not verify reads 'content changed or bad signature': ECDSA cannot tell the\n"
	"two apart.\n"
	"With -r, a progress line on a terminal and a summary on stderr.\n"
	"With --rpmdb, every file, directory and symlink of the packages (not %ghost)\n"
	"is compared with its header as rpm -V does, and one that differs is a failure\n"
	"too ('differs from its header (S.5....T. c)': rpm -V's letters S M 5 D L U G T\n"
	"P, '.' passed, '?' could not be read, then rpm's marker, c for %config;\n"
	"'missing (c)'). A %config file whose size, digest or mtime alone changed,\n"
	"under labels that verify it and no signature, is an administrator's edit, not\n"
	"a failure: 'PATH: CONFIG: edited (S.5....T. c)'; under stale or signed labels\n"
	"it is a failure.\n"
	"Only those lines are printed, then a total on stderr. Without PACKAGE, the\n"
	"directories of the packages are searched for labelled files no package owns:\n"
	"'PATH: FAIL: an rpm temp file of a transaction that did not end, labelled\n"
	"(...)' or 'a file no installed package owns'.\n"
	"Run as 'imastream ima_verify' (--evm none --appraise-type imasig), a good file\n"
	"is 'PATH: verification is OK' on stderr, as evmctl ima_verify says it.\n",
	.uses = verify_options,
	.shared = cli_walk_options,
	.aliases = verify_aliases,
	.epilog =
	"With --root, a root whose last install was killed while renaming a package's\n"
	"files into place gives one line, 'interrupted transaction: run imastream\n"
	"recover', and no file is checked.\n"
	"Exit status: 0 if every file passed, 1 if any failed or could not be read (or\n"
	"the record is malformed, or a transaction was interrupted), 2 for a usage error\n"
	"or a trust store that cannot be loaded; with --rpmdb, 3 if nothing failed but\n"
	"labels are pending (PENDING lines), 4 if nothing failed but %config files\n"
	"were edited (CONFIG lines).\n",
};

/*
 * The trust store explains load errors on stderr; once files are checked, its "does not
 * verify" lines would repeat what each file's verdict says, so they are dropped.
 */
static void trust_log(void *arg, int level, const char *msg)
{
	const bool *loading = arg;

	if (*loading)
		cli_log.fn(cli_log.arg, level, msg);
}

/* Adds the certificate paths of one --trust, or of evmctl's comma-separated --key list. */
static bool add_trust(const struct cli_parser *p, const char **paths, unsigned int *n,
		      unsigned int max)
{
	char *arg = p->arg, *item;
	bool list = strcmp(p->spelled, "--trust") && strcmp(p->spelled, "-t");

	while ((item = list ? strsep(&arg, ",") : arg)) {
		if (*n == max) {
			cli_usage_error("verify", "more than %u certificate paths", max);
			return false;
		}
		if (*item)
			paths[(*n)++] = item;
		if (!list)
			break;
	}
	return true;
}

/* What the command line asks for, beyond what the walk and the job keep. */
struct verify_opts {
	const char *trust_paths[64];
	unsigned int n_trust;
	const char *root, *labels, *dbpath;
	bool evm_given, rpmdb, noconfig;
	char **paths;
	int npaths;
};

/* One option of verify's own: -1 to go on, else the exit status. */
static int parse_option(struct verify_opts *o, struct verify_job *job, struct cli_parser *p, int c)
{
	switch (c) {
	case CLI_OPT_TRUST:
		if (!add_trust(p, o->trust_paths, &o->n_trust,
			       sizeof(o->trust_paths) / sizeof(o->trust_paths[0])))
			return CLI_USAGE;
		break;
	case CLI_OPT_ROOT:
		o->root = p->arg;
		break;
	case CLI_OPT_EVM:
		o->evm_given = true;
		if (!strcmp(p->arg, "auto"))
			job->evm = EVM_AUTO;
		else if (!strcmp(p->arg, "require"))
			job->evm = EVM_REQUIRE;
		else if (!strcmp(p->arg, "none"))
			job->evm = EVM_NONE;
		else
			return cli_usage_error("verify",
					       "%s takes 'auto', 'require' or 'none', not '%s'",
					       p->spelled, p->arg);
		break;
	case CLI_OPT_XATTR_USER:
		job->flags |= IMASTREAM_FILESIG_USER;
		break;
	case CLI_OPT_APPRAISE_TYPE:
		if (strcmp(p->arg, "imasig"))
			return cli_usage_error("verify", "%s takes 'imasig', not '%s'", p->spelled,
					       p->arg);
		job->appraise = APPRAISE_IMASIG;
		break;
	case CLI_OPT_RPMDB:
		o->rpmdb = true;
		break;
	case CLI_OPT_DBPATH:
		o->dbpath = p->arg;
		break;
	case CLI_OPT_NOCONFIG:
		o->noconfig = true;
		break;
	case CLI_OPT_LABELS:
		if (strcmp(p->arg, "auto") && strcmp(p->arg, "require") && strcmp(p->arg, "none"))
			return cli_usage_error("verify",
					       "%s takes 'auto', 'require' or 'none', not '%s'",
					       p->spelled, p->arg);
		o->labels = p->arg;
		break;
	case CLI_OPT_HELP:
		return CLI_OK;
	default:
		if (cli_walk_option(&job->walk, p, c) <= 0)
			return CLI_USAGE;
	}
	return -1;
}

/* Parses @argv into @o and @job, and refuses what does not go together: -1 to go on. */
static int parse_options(struct verify_opts *o, struct verify_job *job, int argc, char **argv)
{
	struct cli_parser p;
	int c, ret;

	cli_parse_start(&p, &verify_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END)
		if ((ret = parse_option(o, job, &p, c)) >= 0)
			return ret;
	o->paths = argv + cli_parse_operands(&p);
	o->npaths = argc - cli_parse_operands(&p);
	if (o->rpmdb && !o->root)
		return cli_usage_error("verify", "--rpmdb needs --root");
	if (o->dbpath && !o->rpmdb)
		return cli_usage_error("verify", "--dbpath is for --rpmdb");
	if (o->noconfig && !o->rpmdb)
		return cli_usage_error("verify", "--noconfig is for --rpmdb");
	if (o->root && !o->rpmdb && (o->npaths || job->walk.recursive))
		return cli_usage_error("verify",
				       "--root checks the install record: no PATH or -r with it");
	if (!o->n_trust && !o->root)
		return cli_usage_error("verify", "no --trust given");
	if (!o->npaths && !o->root)
		return cli_usage_error("verify", "no PATH given");
	return -1;
}

/* The certificates of every --trust: CLI_OK, or CLI_USAGE/CLI_FAILED once said. */
static int load_trust(const struct verify_opts *o, const struct imastream_log *tlog,
		      struct imastream_trust **trust)
{
	if (imastream_trust_new(tlog, trust)) {
		cli_error("out of memory");
		return CLI_FAILED;
	}
	for (unsigned int i = 0; i < o->n_trust; i++)
		if (imastream_trust_add_path(*trust, o->trust_paths[i]))
			return CLI_USAGE; /* the store said why */
	return CLI_OK;
}

/* The files and trees named, on the walk's threads, a verifier each. */
static int verify_paths(struct verify_job *job, const struct imastream_trust *trust, char **paths,
			int npaths)
{
	for (unsigned int i = 0; i < job->walk.jobs; i++)
		if (imastream_verifier_new(trust, &cli_log, &job->verifiers[i]))
			return CLI_FAILED;
	if (cli_walk_start(&job->walk))
		return CLI_FAILED;
	cli_walk_paths(&job->walk, paths, npaths);
	return job->walk.failed ? CLI_FAILED : CLI_OK;
}

int cmd_verify(int argc, char **argv)
{
	bool trust_loading = true;
	const struct imastream_log tlog = { trust_log, &trust_loading };
	struct verify_job job = { .evm = EVM_AUTO };
	struct verify_opts o = { .labels = "auto" };
	struct imastream_trust *trust = NULL;
	bool json;
	int ret;

	cli_walk_init(&job.walk, "verify", &verify_ops, &job, sizeof(struct verify_result));
	ret = parse_options(&o, &job, argc, argv);
	if (ret >= 0)
		return ret;
	if (o.noconfig)
		job.flags |= IMASTREAM_AUDIT_NOCONFIG;
	if (o.dbpath && imastream_rpm_set_dbpath(o.dbpath, &cli_log))
		return CLI_FAILED;
	json = job.walk.say.json;
	if (json)
		verify_verdict_json = &job.walk.out;
	/* auto: the selinux plugin's own default, labels by this host's policy when enabled. */
	if (o.rpmdb && (!strcmp(o.labels, "require") ||
			(!strcmp(o.labels, "auto") && is_selinux_enabled() > 0)))
		job.flags |= IMASTREAM_AUDIT_LABELS;
	cli_set_verbose(job.walk.say.verbose);
	if (job.evm == EVM_NONE)
		job.flags |= IMASTREAM_VERIFY_NO_EVM;

	ret = load_trust(&o, &tlog, &trust);
	trust_loading = false;
	if (ret == CLI_OK && o.rpmdb)
		ret = verify_rpmdb(o.root, trust, job.flags, &job, json, o.paths, o.npaths);
	else if (ret == CLI_OK && o.root)
		ret = verify_root(o.root, trust, job.flags, job.evm, o.evm_given, job.appraise);
	else if (ret == CLI_OK)
		ret = verify_paths(&job, trust, o.paths, o.npaths);

	cli_walk_finish(&job.walk);
	cli_json_free(&job.walk.out);
	verify_verdict_json = NULL;
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++)
		imastream_verifier_free(job.verifiers[i]);
	imastream_trust_free(trust);
	return ret;
}
