// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream verify: checks security.ima and security.evm of files (or of an install record) against trusted certificates. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <selinux/selinux.h>

#include "cli/cli.h"
#include "cli/evmctl.h"
#include "cli/options.h"
#include "cli/walk.h"
#include "imastream/audit.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/record.h"
#include "imastream/root.h"
#include "imastream/rpmdb.h"
#include "xattr/codec.h"

enum evm_mode { EVM_AUTO, EVM_REQUIRE, EVM_NONE };

/* --appraise-type: what the IMA policy rule demands of security.ima (none: its value). */
enum appraise {
	APPRAISE_ANY,
	APPRAISE_IMASIG
};

struct verify_result {
	bool error; /* the file could not be read: the library said why */
	struct imastream_verify_report report;
};

struct verify_job {
	unsigned int flags;
	enum evm_mode evm;
	enum appraise appraise;
	struct cli_walk walk;
	struct imastream_verifier *verifiers[CLI_WALK_MAX_JOBS];
};

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

/* What security.ima holds, in the words of each verdict; NULL when nothing decoded. */
static const char *ima_kind(const struct imastream_verify_one *ima)
{
	switch (ima->type) {
	case IMASTREAM_XATTR_IMA_DIGEST:
	case IMASTREAM_XATTR_IMA_DIGEST_NG:
		return "digest";
	case IMASTREAM_XATTR_DIGSIG:
		return "signature";
	case IMASTREAM_XATTR_IMA_VERITY_SIG:
		return "fs-verity signature";
	default:
		return NULL;
	}
}

static const char *evm_kind(const struct imastream_verify_one *evm)
{
	switch (evm->type) {
	case IMASTREAM_XATTR_EVM_PORTABLE:
		return "portable signature";
	case IMASTREAM_XATTR_DIGSIG:
		return "signature";
	case IMASTREAM_XATTR_EVM_HMAC:
		return "HMAC";
	default:
		return NULL;
	}
}

/*
 * Why a good security.ima fails the policy's appraise_type=imasig, or NULL.  The kernel
 * (xattr_verify) takes an IMA signature (type 03), or a digest when EVM reported a
 * verified portable signature over it (INTEGRITY_PASS_IMMUTABLE); it refuses a digest
 * alone, and an fs-verity signature unless the rule also says digest_type=verity.
 */
static const char *imasig_refusal(const struct verify_job *job,
				  const struct imastream_verify_report *r)
{
	if (job->appraise != APPRAISE_IMASIG || r->ima.result != IMASTREAM_VERIFY_OK ||
	    r->ima.type == IMASTREAM_XATTR_DIGSIG)
		return NULL;
	if (r->ima.type == IMASTREAM_XATTR_IMA_VERITY_SIG)
		return "an fs-verity signature, which appraise_type=imasig refuses without "
		       "digest_type=verity";
	if (r->evm.result == IMASTREAM_VERIFY_OK && r->evm.type == IMASTREAM_XATTR_EVM_PORTABLE)
		return NULL;
	return "a digest, and appraise_type=imasig needs a signature (an IMA signature, or "
	       "an EVM portable one over the digest)";
}

/* The verdict of @r under the job's --evm and --appraise-type. */
static bool judge(const struct verify_job *job, const struct imastream_verify_report *r)
{
	if (r->ima.result != IMASTREAM_VERIFY_OK || imasig_refusal(job, r))
		return false;
	switch (r->evm.result) {
	case IMASTREAM_VERIFY_OK:
	case IMASTREAM_VERIFY_SKIPPED:
		return true;
	case IMASTREAM_VERIFY_MISSING:
	case IMASTREAM_VERIFY_UNVERIFIABLE:
		return job->evm != EVM_REQUIRE;
	default:
		return false;
	}
}

static void verify_item(void *ctx, unsigned int worker, struct cli_item *it)
{
	struct verify_job *job = ctx;
	struct verify_result *res = it->data;

	memset(res, 0, sizeof(*res));
	res->report.size = sizeof(res->report);
	if (imastream_verify_file(job->verifiers[worker], it->fd, it->path, job->flags,
				  &res->report)) {
		res->error = true;
		return;
	}
	it->ok = judge(job, &res->report);
}

/* Appends the reason for one xattr's verdict to @buf. */
static void reason(char *buf, size_t size, const char *name,
		   const struct imastream_verify_one *one)
{
	size_t n = strlen(buf);
	const char *sep = n ? "; " : "";

	switch (one->result) {
	case IMASTREAM_VERIFY_MISSING:
		snprintf(buf + n, size - n, "%smissing %s", sep, name);
		break;
	case IMASTREAM_VERIFY_UNKNOWN_KEY:
		snprintf(buf + n, size - n, "%s%s: unknown key id %08x", sep, name, one->keyid);
		break;
	case IMASTREAM_VERIFY_BAD_SIGNATURE:
		snprintf(buf + n, size - n, "%s%s: bad signature (key id %08x)", sep, name,
			 one->keyid);
		break;
	case IMASTREAM_VERIFY_CONTENT_CHANGED:
	case IMASTREAM_VERIFY_METADATA_CHANGED:
		snprintf(buf + n, size - n, "%s%s: %s%s", sep, name,
			 imastream_verify_result_str(one->result),
			 one->undecided ? " or bad signature" : "");
		break;
	default:
		snprintf(buf + n, size - n, "%s%s: %s%s%s%s", sep, name,
			 imastream_verify_result_str(one->result), one->detail[0] ? " (" : "",
			 one->detail, one->detail[0] ? ")" : "");
	}
}

/* --format json: print_verdict() writes records here instead (NULL: text). */
static struct cli_json *verdict_json;

/*
 * The summary record of --root and --rpmdb (the walk writes its own): @root is the
 * absolute root, the only place it is given (file paths are the root's own).
 */
static void summary_record(const char *root, unsigned long files, unsigned long failed,
			   const struct timespec *t0)
{
	struct cli_json j = { 0 };

	cli_json_begin(&j, "summary");
	cli_json_str(&j, "command", "verify");
	cli_json_str(&j, "root", root);
	cli_json_uint(&j, "files", files);
	cli_json_uint(&j, "failed", failed);
	cli_json_seconds(&j, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, t0));
	cli_json_put(&j, stdout);
	cli_json_free(&j);
}

/* "PATH: VERDICT", or "PATH: VERDICT (package NAME)" for a recorded file. */
static void print_verdict(const char *path, const char *verdict, const char *package)
{
	struct cli_line l = { 0 };

	if (verdict_json) {
		bool ok = !strcmp(verdict, "OK");

		cli_json_begin(verdict_json, "file");
		cli_json_str(verdict_json, "path", path);
		if (package)
			cli_json_str(verdict_json, "package", package);
		cli_json_str(verdict_json, "result", ok ? "ok" : "fail");
		if (!ok)
			cli_json_str(verdict_json, "reason",
				     verdict + (strncmp(verdict, "FAIL: ", 6) ? 0 : 6));
		cli_json_put(verdict_json, stdout);
		return;
	}

	cli_line_name(&l, path);
	cli_line_text(&l, ": ");
	cli_line_text(&l, verdict);
	if (package) {
		cli_line_text(&l, " (package ");
		cli_line_name(&l, package);
		cli_line_text(&l, ")");
	}
	cli_line_put(&l, stdout);
	cli_line_free(&l);
}

static void verdict_text(char *buf, size_t size, const struct imastream_verify_one *one);

/*
 * --format json of a checked file: the verdict, then security.ima's and security.evm's
 * apart ("ok" or the reason, @refusal for IMA when appraise_type refuses it) with what
 * each holds, as --rpmdb gives them.
 */
static void print_file_json(const char *path, bool ok, const char *why, const char *refusal,
			    const struct imastream_verify_report *r)
{
	char ima[256], evm[256];

	verdict_text(ima, sizeof(ima), &r->ima);
	verdict_text(evm, sizeof(evm), &r->evm);
	cli_json_begin(verdict_json, "file");
	cli_json_str(verdict_json, "path", path);
	cli_json_str(verdict_json, "result", ok ? "ok" : "fail");
	if (!ok)
		cli_json_str(verdict_json, "reason", why);
	cli_json_str(verdict_json, "ima", refusal ? refusal : ima);
	cli_json_str(verdict_json, "ima_type", ima_kind(&r->ima));
	cli_json_str(verdict_json, "evm", evm);
	cli_json_str(verdict_json, "evm_type", evm_kind(&r->evm));
	cli_json_put(verdict_json, stdout);
}

static void print_item(void *ctx, struct cli_item *it)
{
	const struct verify_job *job = ctx;
	const struct verify_result *res = it->data;
	const struct imastream_verify_report *r = &res->report;
	bool user = job->flags & IMASTREAM_FILESIG_USER;

	const char *refusal = imasig_refusal(job, r);
	char why[512] = "", kinds[96];

	if (res->error) {
		print_verdict(it->path, "FAIL: cannot be read", NULL);
		return;
	}
	if (r->ima.result != IMASTREAM_VERIFY_OK)
		reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_IMA, user), &r->ima);
	if (refusal)
		snprintf(why, sizeof(why), "%s: %s", imastream_xattr_name(IMASTREAM_ATTR_IMA, user),
			 refusal);
	if (r->evm.result != IMASTREAM_VERIFY_OK && r->evm.result != IMASTREAM_VERIFY_SKIPPED &&
	    (job->evm == EVM_REQUIRE || (r->evm.result != IMASTREAM_VERIFY_MISSING &&
					 r->evm.result != IMASTREAM_VERIFY_UNVERIFIABLE)))
		reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_EVM, user), &r->evm);
	if (verdict_json) {
		print_file_json(it->path, it->ok, why, refusal, r);
		return;
	}
	if (!it->ok) {
		char verdict[sizeof(why) + 8];

		snprintf(verdict, sizeof(verdict), "FAIL: %s", why);
		print_verdict(it->path, verdict, NULL);
		return;
	}
	/* As evmctl ima_verify says it: on stderr, stdout left empty. */
	if (cli_evmctl_name) {
		struct cli_line l = { 0 };

		cli_line_name(&l, it->path);
		cli_line_text(&l, ": verification is OK");
		if (cli_line_put(&l, stderr))
			it->ok = false;
		cli_line_free(&l);
		return;
	}
	/* What appraisal will find: a digest or a signature, and what security.evm holds. */
	snprintf(kinds, sizeof(kinds), "OK (ima: %s", ima_kind(&r->ima));
	if (r->evm.result != IMASTREAM_VERIFY_SKIPPED) {
		size_t n = strlen(kinds);
		const char *evm = evm_kind(&r->evm);

		if (r->evm.result == IMASTREAM_VERIFY_MISSING || !evm)
			evm = "missing";
		snprintf(kinds + n, sizeof(kinds) - n, ", evm: %s%s", evm,
			 r->evm.result == IMASTREAM_VERIFY_UNVERIFIABLE ? ", not checked" : "");
	}
	snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), ")");
	print_verdict(it->path, kinds, NULL);
}

static const struct cli_walk_ops verify_ops = { verify_item, print_item };

/* --root: every object of the install record, checked in record order. */
struct root_job {
	int rootfd;
	unsigned int flags;
	bool evm_given;
	enum evm_mode evm;
	enum appraise appraise;
	struct imastream_verifier *verifier;
	unsigned long checked, failed;
};

static int verify_recorded(void *arg, const struct imastream_record_file *f)
{
	struct root_job *job = arg;
	struct verify_result res = { 0 };
	struct verify_job vj = { .flags = job->flags, .evm = job->evm, .appraise = job->appraise };
	struct cli_item it = { .data = &res };
	const char *path = f->path; /* as the root's own system names it (imastream(1), PATHS) */
	char why[512] = "";
	int fd = -1, rc;

	job->checked++;
	rc = imastream_record_check(job->rootfd, f, &fd, why, sizeof(why));
	if (rc) {
		char verdict[sizeof(why) + 8];

		if (rc < 0 && !why[0])
			snprintf(why, sizeof(why), "cannot be read (%s)", strerror(-rc));
		snprintf(verdict, sizeof(verdict), "FAIL: %s", why);
		print_verdict(path, verdict, f->package);
		job->failed++;
		return 0;
	}
	/* What the install wrote is what must verify; symlinks and devices carry none. */
	if (fd < 0 || !(f->xattrs & IMASTREAM_RECORD_IMA)) {
		if (fd >= 0)
			close(fd);
		print_verdict(path, "OK", NULL);
		return 0;
	}
	if (!job->evm_given)
		vj.evm = (f->xattrs & IMASTREAM_RECORD_EVM) ? EVM_REQUIRE : EVM_AUTO;
	if (vj.evm == EVM_NONE)
		vj.flags |= IMASTREAM_VERIFY_NO_EVM;
	it.fd = fd;
	it.path = (char *)path; /* print_item() only reads it */
	memset(&res, 0, sizeof(res));
	res.report.size = sizeof(res.report);
	if (imastream_verify_file(job->verifier, fd, path, vj.flags, &res.report))
		res.error = true;
	else
		it.ok = judge(&vj, &res.report);
	close(fd);
	print_item(&vj, &it);
	if (!it.ok)
		job->failed++;
	return 0;
}

/* How many packages the record under @rootfd names, files or not. */
static unsigned long recorded_packages(int rootfd)
{
	int fd = openat(rootfd, "var/lib/imastream/packages",
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	unsigned long n = 0;
	struct dirent *d;
	DIR *dir;

	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	while ((d = readdir(dir))) {
		size_t len = strlen(d->d_name);

		if (d->d_name[0] != '.' && len > 7 && !strcmp(d->d_name + len - 7, ".record"))
			n++;
	}
	closedir(dir);
	return n;
}

/* Which of the state files imastream_root_interrupted() found not regular, for its message. */
static const char *state_not_regular(int rootfd)
{
	struct stat st;

	return !fstatat(rootfd, "var/lib/imastream/journal", &st, AT_SYMLINK_NOFOLLOW) &&
			       !S_ISREG(st.st_mode) ?
		       "journal" :
		       "running";
}

static int verify_root(const char *typed, struct imastream_trust *trust, unsigned int flags,
		       enum evm_mode evm, bool evm_given, enum appraise appraise)
{
	struct root_job job = {
		.flags = flags, .evm = evm, .evm_given = evm_given, .appraise = appraise
	};
	char *root = NULL;
	struct timespec t0;
	int err, ret = CLI_FAILED;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	job.rootfd = open(typed, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (job.rootfd >= 0)
		root = realpath(typed, NULL);
	if (!root) {
		cli_say("verify", "%s: %s", typed, strerror(errno));
		if (job.rootfd >= 0)
			close(job.rootfd);
		return CLI_USAGE;
	}
	/* Files of a package half renamed, a record not yet: its files are not to blame. */
	err = imastream_root_interrupted(job.rootfd);
	if (err) {
		if (err == 2)
			cli_say("verify",
				"%s: an install is renaming files into place: verify once it ends",
				root);
		else if (err == 3)
			cli_say("verify",
				"%s: an install was interrupted before its files were renamed into "
				"place (its temp files are left): run imastream recover --root %s",
				root, root);
		else if (err > 0)
			cli_say("verify",
				"%s: interrupted transaction: run imastream recover --root %s",
				root, root);
		else if (err == -EMEDIUMTYPE)
			cli_say("verify", "%s/var/lib/imastream/%s: not a regular file (refused)",
				strcmp(root, "/") ? root : "", state_not_regular(job.rootfd));
		else
			cli_say("verify", "%s: %s", root, strerror(-err));
		goto out;
	}
	if (imastream_verifier_new(trust, &cli_log, &job.verifier))
		goto out;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	err = imastream_record_foreach(job.rootfd, verify_recorded, &job, &cli_log);
	if (!err && verdict_json)
		summary_record(root, job.checked, job.failed, &t0);
	else if (!err && job.checked)
		cli_say("verify", "%s: %lu files, %lu failed, %.2f s", root, job.checked,
			job.failed, cli_seconds_since(CLOCK_MONOTONIC, &t0));
	if (fflush(stdout) == EOF) {
		cli_say("verify", "cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	if (err)
		goto out; /* the record said why */
	/* A package without files has a record too: nothing to check is not a failure then. */
	if (!job.checked && !recorded_packages(job.rootfd)) {
		cli_say("verify",
			"%s: no install record (nothing installed by 'imastream install'); "
			"for packages rpm installed: imastream verify --root %s --rpmdb",
			root, root);
		goto out;
	}
	ret = job.failed ? CLI_FAILED : CLI_OK;
out:
	imastream_verifier_free(job.verifier);
	close(job.rootfd);
	free(root);
	return ret;
}

/* --rpmdb: every file of the root's packages, against its header and its signatures. */
struct rpmdb_job {
	enum evm_mode evm;
	struct verify_job judged; /* its evm and appraise, for imasig_refusal() */
	bool json;
	bool user;
	unsigned long checked, failed, orphans, pending, config_edited;
	struct cli_pending_paths pending_paths; /* a rootless build's labels not yet written */
};

/* --rpmdb's exit status when nothing failed but an administrator edited %config files. */
#define CLI_CONFIG_EDITED 4

/* A JSON string: quotes, backslashes and control bytes escaped (other bytes as they are). */
static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* "ok", or the reason() phrase without the xattr's name. */
static void verdict_text(char *buf, size_t size, const struct imastream_verify_one *one)
{
	char tmp[256] = "";

	if (one->result == IMASTREAM_VERIFY_OK) {
		snprintf(buf, size, "ok");
		return;
	}
	reason(tmp, sizeof(tmp), "x", one);
	/* reason() wrote "missing x" or "x: PHRASE". */
	if (!strncmp(tmp, "missing", 7))
		snprintf(buf, size, "missing");
	else
		snprintf(buf, size, "%s", tmp + 3);
}

static bool evm_fails(enum evm_mode evm, int result)
{
	switch (result) {
	case IMASTREAM_VERIFY_OK:
	case IMASTREAM_VERIFY_SKIPPED:
		return false;
	case IMASTREAM_VERIFY_MISSING:
	case IMASTREAM_VERIFY_UNVERIFIABLE:
		return evm == EVM_REQUIRE;
	default:
		return true;
	}
}

/* Whether a label is a verified signature (of IMA, or a portable one of EVM). */
static bool signed_labels(const struct imastream_verify_report *r)
{
	return (r->ima.result == IMASTREAM_VERIFY_OK &&
		(r->ima.type == IMASTREAM_XATTR_DIGSIG ||
		 r->ima.type == IMASTREAM_XATTR_IMA_VERITY_SIG)) ||
	       (r->evm.result == IMASTREAM_VERIFY_OK &&
		(r->evm.type == IMASTREAM_XATTR_EVM_PORTABLE ||
		 r->evm.type == IMASTREAM_XATTR_DIGSIG));
}

/* rpm -V's marker after the letters: c for %config (' ' prints nothing here). */
static bool audit_marked(const struct imastream_audit_file *f)
{
	return f->marker != ' ' && f->marker;
}

/* What the content check found: "ok", "missing (c)", "edited (S.5....T. c)"... */
static void audit_content(char *buf, size_t size, const struct imastream_audit_file *f)
{
	bool marked = audit_marked(f);
	const char mark[2] = { marked ? f->marker : 0, 0 };

	switch (f->state) {
	case IMASTREAM_AUDIT_INTACT:
		snprintf(buf, size, "ok");
		break;
	case IMASTREAM_AUDIT_MISSING:
		snprintf(buf, size, "missing%s%s%s", marked ? " (" : "", mark, marked ? ")" : "");
		break;
	case IMASTREAM_AUDIT_MODIFIED:
	case IMASTREAM_AUDIT_CONFIG_EDITED:
	case IMASTREAM_AUDIT_CONFIG_ACCEPTED:
		snprintf(buf, size, "%s (%s%s%s%s%s)",
			 f->state == IMASTREAM_AUDIT_MODIFIED	   ? "differs from its header" :
			 f->state == IMASTREAM_AUDIT_CONFIG_EDITED ? "edited" :
								     "accepted edit",
			 f->letters, marked ? " " : "", mark, f->why ? ", " : "",
			 f->why ? f->why : "");
		break;
	default:
		snprintf(buf, size, "cannot be read (%s)", f->why ? f->why : "?");
	}
}

/*
 * Labels pending, content as the header says (the owner may still be the ids the
 * build's namespace mapped, which the apply corrects): not a failure yet.  Whether @f is
 * such a file, counted and printed.
 */
static bool audit_pending(struct rpmdb_job *job, const struct imastream_audit_file *f)
{
	if (!(f->state == IMASTREAM_AUDIT_INTACT ||
	      (f->state == IMASTREAM_AUDIT_MODIFIED && !f->why &&
	       !f->letters[strspn(f->letters, ".UG")])) ||
	    !cli_pending_paths_has(&job->pending_paths, f->path))
		return false;
	job->pending++;
	if (job->json) {
		fputs("{\"record\":\"file\",\"package\":", stdout);
		json_string(stdout, f->package);
		fputs(",\"path\":", stdout);
		json_string(stdout, f->path);
		fputs(",\"result\":\"pending\"}\n", stdout);
	} else {
		print_verdict(f->path, "PENDING: labels of a rootless build not yet written",
			      f->package);
	}
	return true;
}

/* --format json: the file's record, whatever its verdict. */
static void audit_json(const struct imastream_audit_file *f, const char *content,
		       const char *refusal, const char *result)
{
	const struct imastream_verify_report *r = &f->report;
	char ima[256] = "", evm[256] = "";

	if (f->verified) {
		verdict_text(ima, sizeof(ima), &r->ima);
		verdict_text(evm, sizeof(evm), &r->evm);
	}
	fputs("{\"record\":\"file\",\"package\":", stdout);
	json_string(stdout, f->package);
	fputs(",\"path\":", stdout);
	json_string(stdout, f->path);
	printf(",\"config\":%s,\"result\":\"%s\",\"content\":", f->config ? "true" : "false",
	       result);
	json_string(stdout, content);
	fputs(",\"rpm\":", stdout);
	json_string(stdout, f->state == IMASTREAM_AUDIT_MISSING ? "missing" : f->letters);
	printf(",\"marker\":\"%c\"", audit_marked(f) ? f->marker : ' ');
	fputs(",\"ima\":", stdout);
	if (f->verified)
		json_string(stdout, refusal ? refusal : ima);
	else
		fputs("null", stdout);
	fputs(",\"ima_type\":", stdout);
	if (f->verified && ima_kind(&r->ima))
		json_string(stdout, ima_kind(&r->ima));
	else
		fputs("null", stdout);
	fputs(",\"evm\":", stdout);
	if (f->verified)
		json_string(stdout, evm);
	else
		fputs("null", stdout);
	fputs(",\"evm_type\":", stdout);
	if (f->verified && evm_kind(&r->evm))
		json_string(stdout, evm_kind(&r->evm));
	else
		fputs("null", stdout);
	if (f->label != IMASTREAM_VERIFY_SKIPPED)
		printf(",\"selinux\":\"%s\"", f->label == IMASTREAM_VERIFY_OK ? "ok" : "missing");
	fputs("}\n", stdout);
}

/* "FAIL: " and every reason a file fails: its content, each label's verdict. */
static void audit_failure(const struct rpmdb_job *job, const struct imastream_audit_file *f,
			  const char *content, const char *refusal, bool labels_ok)
{
	const struct imastream_verify_report *r = &f->report;
	char why[640] = "";
	char verdict[sizeof(why) + 8];

	if (f->state != IMASTREAM_AUDIT_INTACT && f->state != IMASTREAM_AUDIT_CONFIG_ACCEPTED)
		snprintf(why, sizeof(why), "%s", content);
	if (f->state == IMASTREAM_AUDIT_CONFIG_EDITED && labels_ok) {
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n,
			 "; signed, as no edit is: a package's content the database does not name");
	}
	if (f->verified && r->ima.result != IMASTREAM_VERIFY_OK)
		reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_IMA, job->user), &r->ima);
	if (refusal) {
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n, "%s%s: %s", n ? "; " : "",
			 imastream_xattr_name(IMASTREAM_ATTR_IMA, job->user), refusal);
	}
	if (f->verified && evm_fails(job->evm, r->evm.result))
		reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_EVM, job->user), &r->evm);
	if (f->label == IMASTREAM_VERIFY_MISSING) {
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n, "%smissing security.selinux", n ? "; " : "");
	}
	snprintf(verdict, sizeof(verdict), "FAIL: %s", why);
	print_verdict(f->path, verdict, f->package);
}

static void audit_one(void *arg, const struct imastream_audit_file *f)
{
	struct rpmdb_job *job = arg;
	const struct imastream_verify_report *r = &f->report;
	char content[160];
	const char *refusal;
	bool labels_ok, ok, edited;

	job->checked++;
	audit_content(content, sizeof(content), f);
	refusal = f->verified ? imasig_refusal(&job->judged, r) : NULL;
	/* A directory or symlink has no security.ima: its metadata is all rpm -V checks. */
	labels_ok = !f->regular ||
		    (f->verified && r->ima.result == IMASTREAM_VERIFY_OK && !refusal &&
		     !evm_fails(job->evm, r->evm.result) && f->label != IMASTREAM_VERIFY_MISSING);
	/* An accepted edit passes as an intact file does: by its security.ima and evm. */
	ok = (f->state == IMASTREAM_AUDIT_INTACT || f->state == IMASTREAM_AUDIT_CONFIG_ACCEPTED) &&
	     labels_ok;
	/*
	 * An administrator's edit: labels that verify the new content (the kernel keeps a
	 * digest up to date), none a signature, which no edit can make. A signed file that
	 * differs from its header came from a package version the database does not name
	 * (a transaction that did not end); labels that no longer verify make the file
	 * unreadable under appraisal: both are failures.
	 */
	edited = f->state == IMASTREAM_AUDIT_CONFIG_EDITED && labels_ok && !signed_labels(r);
	if (!ok && audit_pending(job, f))
		return;
	/* An edit of a %config file is the administrator's: its own status, not a failure. */
	if (edited)
		job->config_edited++;
	else if (!ok)
		job->failed++;
	if (job->json) {
		audit_json(f, content, refusal, edited ? "config-edited" : ok ? "ok" : "fail");
	} else if (edited) {
		char verdict[sizeof(content) + 8];

		snprintf(verdict, sizeof(verdict), "CONFIG: %s", content);
		print_verdict(f->path, verdict, f->package);
	} else if (!ok) {
		audit_failure(job, f, content, refusal, labels_ok);
	}
}

/* What an orphan is, for its line: why nobody owns it and what removes it. */
const char *cli_orphan_kind(int kind)
{
	switch (kind) {
	case IMASTREAM_ORPHAN_RPM_TEMP:
		return "an rpm temp file of a transaction that did not end";
	case IMASTREAM_ORPHAN_INSTALL_TEMP:
		return "an imastream install temp file";
	case IMASTREAM_ORPHAN_RPM_BACKUP:
		return "an rpm copy of a %config file that no package owns";
	case IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED:
		return "a file of rpm's temp name beside no file of a package";
	case IMASTREAM_ORPHAN_GHOST:
		return "a file at a %ghost path, where rpm installs no content";
	default:
		return "a file no installed package owns";
	}
}

/* A labelled file no package owns: a failure, whatever its signatures say. */
static void orphan_one(void *arg, const struct imastream_orphan *f)
{
	struct rpmdb_job *job = arg;
	const char *path = f->path;
	char verdict[256];

	job->orphans++;
	if (job->json) {
		fputs("{\"record\":\"file\",\"package\":null,\"path\":", stdout);
		json_string(stdout, path);
		printf(",\"result\":\"fail\",\"orphan\":\"%s\",\"ima\":%s,\"evm\":%s}\n",
		       f->kind == IMASTREAM_ORPHAN_RPM_TEMP	    ? "rpm-temp" :
		       f->kind == IMASTREAM_ORPHAN_INSTALL_TEMP	    ? "install-temp" :
		       f->kind == IMASTREAM_ORPHAN_RPM_BACKUP	    ? "rpm-backup" :
		       f->kind == IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED ? "rpm-temp-unowned" :
		       f->kind == IMASTREAM_ORPHAN_GHOST	    ? "ghost" :
								      "unowned",
		       f->ima ? "true" : "false", f->evm ? "true" : "false");
		return;
	}
	snprintf(verdict, sizeof(verdict), "FAIL: %s, labelled (%s%s%s)", cli_orphan_kind(f->kind),
		 f->ima ? imastream_xattr_name(IMASTREAM_ATTR_IMA, job->user) : "",
		 f->ima && f->evm ? ", " : "",
		 f->evm ? imastream_xattr_name(IMASTREAM_ATTR_EVM, job->user) : "");
	print_verdict(path, verdict, NULL);
}

static int verify_rpmdb(const char *root, struct imastream_trust *trust, unsigned int flags,
			const struct verify_job *judged, bool json, char *const *names, int nnames)
{
	struct rpmdb_job job = { .evm = judged->evm,
				 .judged = *judged,
				 .json = json,
				 .user = flags & IMASTREAM_FILESIG_USER };
	struct imastream_verifier *v = NULL;
	char *root_abs = realpath(root, NULL);
	struct timespec t0;
	int err, ret = CLI_FAILED;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!root_abs) {
		cli_say("verify", "%s: %s", root, strerror(errno));
		return CLI_USAGE;
	}
	if (imastream_verifier_new(trust, &cli_log, &v))
		goto out;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (cli_pending_paths_load(&job.pending_paths, root_abs))
		goto out;
	err = imastream_audit_rpmdb(root_abs, names, nnames, v, flags, audit_one, &job, &cli_log);
	/* Ownership is known only from every package: with names given, no orphan search. */
	if (!err && !nnames)
		err = imastream_orphans_rpmdb_trusted(
			root_abs,
			(flags & IMASTREAM_FILESIG_USER) ? IMASTREAM_ORPHANS_XATTR_USER : 0, v,
			orphan_one, &job, &cli_log);
	if (fflush(stdout) == EOF) {
		cli_say("verify", "cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	if (err)
		goto out; /* said */
	if (json) {
		summary_record(root_abs, job.checked + job.orphans, job.failed + job.orphans, &t0);
	} else if (job.orphans) {
		cli_say("verify",
			"%s: %lu files, %lu failed; %lu labelled files no package owns "
			"(imastream recover --root %s --rpmdb removes or unlabels them), %.2f s",
			root_abs, job.checked, job.failed, job.orphans, root_abs,
			cli_seconds_since(CLOCK_MONOTONIC, &t0));
	} else {
		cli_say("verify", "%s: %lu files, %lu failed, %.2f s", root_abs, job.checked,
			job.failed, cli_seconds_since(CLOCK_MONOTONIC, &t0));
	}
	if (job.pending && !json)
		cli_say("verify",
			"%lu files have labels pending from a rootless build: apply them as real "
			"root with: imastream relabel --pending --root %s",
			job.pending, root);
	if (job.config_edited && !json)
		cli_say("verify",
			"%lu %%config files edited since install (imastream relabel "
			"--accept-config PATH accepts an edit)",
			job.config_edited);
	ret = job.failed || job.orphans ? CLI_FAILED :
	      job.pending		? CLI_PENDING :
	      job.config_edited		? CLI_CONFIG_EDITED :
					  CLI_OK;
out:
	cli_pending_paths_free(&job.pending_paths);
	imastream_verifier_free(v);
	free(root_abs);
	return ret;
}

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
		verdict_json = &job.walk.out;
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
	verdict_json = NULL;
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++)
		imastream_verifier_free(job.verifiers[i]);
	imastream_trust_free(trust);
	return ret;
}
