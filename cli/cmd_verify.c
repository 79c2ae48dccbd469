// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream verify: checks security.ima and security.evm of files (or of an install record) against trusted certificates. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/walk.h"
#include "imastream/filesig.h"
#include "imastream/installer.h"
#include "imastream/keys.h"

enum evm_mode { EVM_AUTO, EVM_REQUIRE, EVM_NONE };

struct verify_result {
	bool error; /* the file could not be read: the library said why */
	struct imastream_verify_report report;
};

struct verify_job {
	unsigned int flags;
	enum evm_mode evm;
	struct cli_walk walk;
	struct imastream_verifier *verifiers[CLI_WALK_MAX_JOBS];
};

static const char usage_text[] =
	"Usage: imastream verify [-r] --trust DIR|FILE [--trust ...] [--xattr-user]\n"
	"                        [--evm auto|require|none] [-j N] [-v] PATH...\n"
	"       imastream verify --root DIR [--trust DIR|FILE ...] [--xattr-user]\n"
	"                        [--evm auto|require|none]\n"
	"\n"
	"Checks each regular file's security.ima (a digest: compared with the content; an\n"
	"IMA signature: verified over the content digest) and security.evm (a portable or\n"
	"a type-3 EVM signature over the labels, security.ima, uid, gid and mode) with the\n"
	"certificates of --trust, found by key id. Prints one line per file:\n"
	"  PATH: OK\n"
	"  PATH: FAIL: REASON[; REASON]\n"
	"where a REASON is 'security.ima: content changed', 'security.evm: metadata\n"
	"changed', 'security.ima: unknown key id XXXXXXXX', '...: bad signature', 'missing\n"
	"security.ima', 'missing security.evm', 'security.evm: malformed (why)' or\n"
	"'security.evm: cannot be verified (why)'. An ECDSA signature that does not verify\n"
	"reads 'content changed or bad signature': ECDSA cannot tell the two apart.\n"
	"\n"
	"  -t, --trust PATH    a PEM or DER certificate file, or a directory of them;\n"
	"                      may be given several times\n"
	"      --evm MODE      auto (default): check security.evm when it is there and can\n"
	"                      be checked (an HMAC cannot: it needs the device's key);\n"
	"                      require: a missing or uncheckable security.evm fails;\n"
	"                      none: security.ima only\n"
	"  -r, --recursive     walk directories; symlinks are skipped, never followed\n"
	"      --root DIR      check every object 'imastream install' recorded under DIR\n"
	"                      (DIR/var/lib/imastream/): that it exists with its type,\n"
	"                      mode, owner, size, symlink target and content digest, then\n"
	"                      the security.ima and security.evm the install wrote (by\n"
	"                      default --evm require where EVM was written); --trust is\n"
	"                      only needed for signatures\n"
	"      --xattr-user    read user.ima / user.evm instead (evmctl --xattr-user)\n"
	"  -j, --jobs N        check N files at a time (default: one per CPU)\n"
	"  -v, --verbose       also name the symlinks a walk skips\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 if every file passed, 1 if any failed or could not be read (or the\n"
	"record is malformed), 2 for a usage error or a trust store that cannot be loaded.\n";

static void verify_item(void *ctx, unsigned int worker, struct cli_item *it)
{
	struct verify_job *job = ctx;
	struct verify_result *res = it->data;
	const struct imastream_verify_report *r = &res->report;

	memset(res, 0, sizeof(*res));
	if (imastream_verify_file(job->verifiers[worker], it->fd, it->path, job->flags,
				  &res->report)) {
		res->error = true;
		return;
	}
	it->ok = r->ima.result == IMASTREAM_VERIFY_OK;
	switch (r->evm.result) {
	case IMASTREAM_VERIFY_OK:
	case IMASTREAM_VERIFY_SKIPPED:
		break;
	case IMASTREAM_VERIFY_MISSING:
	case IMASTREAM_VERIFY_UNVERIFIABLE:
		if (job->evm == EVM_REQUIRE)
			it->ok = false;
		break;
	default:
		it->ok = false;
	}
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

static void print_item(void *ctx, struct cli_item *it)
{
	const struct verify_job *job = ctx;
	const struct verify_result *res = it->data;
	const struct imastream_verify_report *r = &res->report;
	bool user = job->flags & IMASTREAM_FILESIG_USER;
	char why[512] = "";

	if (res->error) {
		printf("%s: FAIL: cannot be read\n", it->path);
		return;
	}
	if (r->ima.result != IMASTREAM_VERIFY_OK)
		reason(why, sizeof(why), user ? "user.ima" : "security.ima", &r->ima);
	if (r->evm.result != IMASTREAM_VERIFY_OK && r->evm.result != IMASTREAM_VERIFY_SKIPPED &&
	    (job->evm == EVM_REQUIRE || (r->evm.result != IMASTREAM_VERIFY_MISSING &&
					 r->evm.result != IMASTREAM_VERIFY_UNVERIFIABLE)))
		reason(why, sizeof(why), user ? "user.evm" : "security.evm", &r->evm);
	if (it->ok)
		printf("%s: OK\n", it->path);
	else
		printf("%s: FAIL: %s\n", it->path, why);
}

static const struct cli_walk_ops verify_ops = { verify_item, print_item };

/* --root: every object of the install record, checked in record order. */
struct root_job {
	int rootfd;
	const char *root;
	unsigned int flags;
	bool evm_given;
	enum evm_mode evm;
	struct imastream_verifier *verifier;
	unsigned long checked, failed;
};

static int verify_recorded(void *arg, const struct imastream_record_file *f)
{
	struct root_job *job = arg;
	struct verify_result res = { 0 };
	struct verify_job vj = { .flags = job->flags, .evm = job->evm };
	struct cli_item it = { .data = &res };
	char why[512] = "", path[4096];
	int fd = -1, rc;

	snprintf(path, sizeof(path), "%s%s", strcmp(job->root, "/") ? job->root : "", f->path);
	job->checked++;
	rc = imastream_record_check(job->rootfd, f, &fd, why, sizeof(why));
	if (rc) {
		if (rc < 0 && !why[0])
			snprintf(why, sizeof(why), "cannot be read (%s)", strerror(-rc));
		printf("%s: FAIL: %s (package %s)\n", path, why, f->package);
		job->failed++;
		return 0;
	}
	/* What the install wrote is what must verify; symlinks and devices carry none. */
	if (fd < 0 || !(f->xattrs & IMASTREAM_RECORD_IMA)) {
		if (fd >= 0)
			close(fd);
		printf("%s: OK\n", path);
		return 0;
	}
	if (!job->evm_given)
		vj.evm = (f->xattrs & IMASTREAM_RECORD_EVM) ? EVM_REQUIRE : EVM_AUTO;
	if (vj.evm == EVM_NONE)
		vj.flags |= IMASTREAM_VERIFY_NO_EVM;
	it.fd = fd;
	it.path = path;
	memset(&res, 0, sizeof(res));
	if (imastream_verify_file(job->verifier, fd, path, vj.flags, &res.report)) {
		res.error = true;
	} else {
		it.ok = res.report.ima.result == IMASTREAM_VERIFY_OK;
		switch (res.report.evm.result) {
		case IMASTREAM_VERIFY_OK:
		case IMASTREAM_VERIFY_SKIPPED:
			break;
		case IMASTREAM_VERIFY_MISSING:
		case IMASTREAM_VERIFY_UNVERIFIABLE:
			if (vj.evm == EVM_REQUIRE)
				it.ok = false;
			break;
		default:
			it.ok = false;
		}
	}
	close(fd);
	print_item(&vj, &it);
	if (!it.ok)
		job->failed++;
	return 0;
}

static int verify_root(const char *root, struct imastream_trust *trust, unsigned int flags,
		       enum evm_mode evm, bool evm_given)
{
	struct root_job job = { .root = root, .flags = flags, .evm = evm, .evm_given = evm_given };
	int err, ret = CLI_FAILED;

	job.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (job.rootfd < 0) {
		cli_error("verify: %s: %s", root, strerror(errno));
		return CLI_USAGE;
	}
	if (imastream_verifier_new(trust, &cli_log, &job.verifier))
		goto out;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	err = imastream_record_foreach(job.rootfd, verify_recorded, &job, &cli_log);
	if (fflush(stdout) == EOF) {
		cli_error("verify: cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	if (err)
		goto out; /* the record said why */
	if (!job.checked) {
		cli_error("verify: %s: no install record (nothing installed by 'imastream install')",
			  root);
		goto out;
	}
	ret = job.failed ? CLI_FAILED : CLI_OK;
out:
	imastream_verifier_free(job.verifier);
	close(job.rootfd);
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

int cmd_verify(int argc, char **argv)
{
	enum { OPT_EVM = 256, OPT_USER, OPT_ROOT };
	static const struct option options[] = {
		{ "trust", required_argument, NULL, 't' },
		{ "evm", required_argument, NULL, OPT_EVM },
		{ "recursive", no_argument, NULL, 'r' },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "xattr-user", no_argument, NULL, OPT_USER },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool trust_loading = true;
	const struct imastream_log tlog = { trust_log, &trust_loading };
	struct verify_job job = { .evm = EVM_AUTO };
	struct imastream_trust *trust = NULL;
	const char *trust_paths[64], *root = NULL;
	bool evm_given = false;
	unsigned int n_trust = 0, jobs = cli_walk_default_jobs();
	int verbose = 0, c, ret = CLI_FAILED;

	job.walk = (struct cli_walk){ .ops = &verify_ops, .ctx = &job, .verb = "verified",
				      .item_size = sizeof(struct verify_result) };
	while ((c = getopt_long(argc, argv, "t:rj:vh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (n_trust == sizeof(trust_paths) / sizeof(trust_paths[0])) {
				cli_error("verify: too many --trust options");
				return CLI_USAGE;
			}
			trust_paths[n_trust++] = optarg;
			break;
		case OPT_ROOT:
			root = optarg;
			break;
		case OPT_EVM:
			evm_given = true;
			if (!strcmp(optarg, "auto")) {
				job.evm = EVM_AUTO;
			} else if (!strcmp(optarg, "require")) {
				job.evm = EVM_REQUIRE;
			} else if (!strcmp(optarg, "none")) {
				job.evm = EVM_NONE;
			} else {
				cli_error("verify: --evm takes 'auto', 'require' or 'none', not '%s'",
					  optarg);
				return CLI_USAGE;
			}
			break;
		case 'r':
			job.walk.recursive = true;
			break;
		case OPT_USER:
			job.flags |= IMASTREAM_FILESIG_USER;
			break;
		case 'j':
			if (!cli_walk_parse_jobs("verify", optarg, &jobs))
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
	if (root && (optind < argc || job.walk.recursive)) {
		cli_error("verify: --root checks the install record: no PATH or -r with it");
		return CLI_USAGE;
	}
	if (!n_trust && !root) {
		cli_error("verify: no --trust given (try 'imastream verify --help')");
		return CLI_USAGE;
	}
	if (optind >= argc && !root) {
		cli_error("verify: no PATH given (try 'imastream verify --help')");
		return CLI_USAGE;
	}
	cli_set_verbose(verbose);
	if (job.evm == EVM_NONE)
		job.flags |= IMASTREAM_VERIFY_NO_EVM;
	if (imastream_trust_new(&tlog, &trust)) {
		cli_error("out of memory");
		return CLI_FAILED;
	}
	for (unsigned int i = 0; i < n_trust; i++) {
		if (imastream_trust_add_path(trust, trust_paths[i])) {
			ret = CLI_USAGE; /* the store said why */
			goto out;
		}
	}
	trust_loading = false;
	if (root) {
		ret = verify_root(root, trust, job.flags, job.evm, evm_given);
		goto out;
	}
	for (unsigned int i = 0; i < jobs; i++)
		if (imastream_verifier_new(trust, &cli_log, &job.verifiers[i]))
			goto out;
	job.walk.jobs = jobs;
	if (cli_walk_start(&job.walk))
		goto out;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	for (int i = optind; i < argc; i++)
		cli_walk_path(&job.walk, argv[i]);
	cli_walk_finish(&job.walk);
	if (fflush(stdout) == EOF) {
		cli_error("verify: cannot write to stdout: %s", strerror(errno));
		job.walk.failed++;
	}
	ret = job.walk.failed ? CLI_FAILED : CLI_OK;
out:
	cli_walk_finish(&job.walk);
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++)
		imastream_verifier_free(job.verifiers[i]);
	imastream_trust_free(trust);
	return ret;
}
