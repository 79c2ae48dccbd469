// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream verify: one file's verdict under --evm and --appraise-type, and how it is printed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_verify.h"
#include "cli/evmctl.h"
#include "cli/walk.h"
#include "imastream/filesig.h"
#include "xattr/codec.h"

/* What security.ima holds, in the words of each verdict; NULL when nothing decoded. */
const char *verify_ima_kind(const struct imastream_verify_one *ima)
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

const char *verify_evm_kind(const struct imastream_verify_one *evm)
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
const char *verify_imasig_refusal(const struct verify_job *job,
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
bool verify_judge(const struct verify_job *job, const struct imastream_verify_report *r)
{
	if (r->ima.result != IMASTREAM_VERIFY_OK || verify_imasig_refusal(job, r))
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
	it->ok = verify_judge(job, &res->report);
}

/* Appends the reason for one xattr's verdict to @buf. */
void verify_reason(char *buf, size_t size, const char *name, const struct imastream_verify_one *one)
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

/* --format json: verify_print_verdict() writes records here instead (NULL: text). */
struct cli_json *verify_verdict_json;

/*
 * The summary record of --root and --rpmdb (the walk writes its own): @root is the
 * absolute root, the only place it is given (file paths are the root's own).
 */
void verify_summary_record(const char *root, unsigned long files, unsigned long failed,
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
void verify_print_verdict(const char *path, const char *verdict, const char *package)
{
	struct cli_line l = { 0 };

	if (verify_verdict_json) {
		bool ok = !strcmp(verdict, "OK");

		cli_json_begin(verify_verdict_json, "file");
		cli_json_str(verify_verdict_json, "path", path);
		if (package)
			cli_json_str(verify_verdict_json, "package", package);
		cli_json_str(verify_verdict_json, "result", ok ? "ok" : "fail");
		if (!ok)
			cli_json_str(verify_verdict_json, "reason",
				     verdict + (strncmp(verdict, "FAIL: ", 6) ? 0 : 6));
		cli_json_put(verify_verdict_json, stdout);
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

/*
 * --format json of a checked file: the verdict, then security.ima's and security.evm's
 * apart ("ok" or the reason, @refusal for IMA when appraise_type refuses it) with what
 * each holds, as --rpmdb gives them.
 */
static void print_file_json(const char *path, bool ok, const char *why, const char *refusal,
			    const struct imastream_verify_report *r)
{
	char ima[256], evm[256];

	verify_verdict_text(ima, sizeof(ima), &r->ima);
	verify_verdict_text(evm, sizeof(evm), &r->evm);
	cli_json_begin(verify_verdict_json, "file");
	cli_json_str(verify_verdict_json, "path", path);
	cli_json_str(verify_verdict_json, "result", ok ? "ok" : "fail");
	if (!ok)
		cli_json_str(verify_verdict_json, "reason", why);
	cli_json_str(verify_verdict_json, "ima", refusal ? refusal : ima);
	cli_json_str(verify_verdict_json, "ima_type", verify_ima_kind(&r->ima));
	cli_json_str(verify_verdict_json, "evm", evm);
	cli_json_str(verify_verdict_json, "evm_type", verify_evm_kind(&r->evm));
	cli_json_put(verify_verdict_json, stdout);
}

void verify_print_item(void *ctx, struct cli_item *it)
{
	const struct verify_job *job = ctx;
	const struct verify_result *res = it->data;
	const struct imastream_verify_report *r = &res->report;
	bool user = job->flags & IMASTREAM_FILESIG_USER;

	const char *refusal = verify_imasig_refusal(job, r);
	char why[512] = "", kinds[96];

	if (res->error) {
		verify_print_verdict(it->path, "FAIL: cannot be read", NULL);
		return;
	}
	if (r->ima.result != IMASTREAM_VERIFY_OK)
		verify_reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_IMA, user),
			      &r->ima);
	if (refusal)
		snprintf(why, sizeof(why), "%s: %s", imastream_xattr_name(IMASTREAM_ATTR_IMA, user),
			 refusal);
	if (r->evm.result != IMASTREAM_VERIFY_OK && r->evm.result != IMASTREAM_VERIFY_SKIPPED &&
	    (job->evm == EVM_REQUIRE || (r->evm.result != IMASTREAM_VERIFY_MISSING &&
					 r->evm.result != IMASTREAM_VERIFY_UNVERIFIABLE)))
		verify_reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_EVM, user),
			      &r->evm);
	if (verify_verdict_json) {
		print_file_json(it->path, it->ok, why, refusal, r);
		return;
	}
	if (!it->ok) {
		char verdict[sizeof(why) + 8];

		snprintf(verdict, sizeof(verdict), "FAIL: %s", why);
		verify_print_verdict(it->path, verdict, NULL);
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
	snprintf(kinds, sizeof(kinds), "OK (ima: %s", verify_ima_kind(&r->ima));
	if (r->evm.result != IMASTREAM_VERIFY_SKIPPED) {
		size_t n = strlen(kinds);
		const char *evm = verify_evm_kind(&r->evm);

		if (r->evm.result == IMASTREAM_VERIFY_MISSING || !evm)
			evm = "missing";
		snprintf(kinds + n, sizeof(kinds) - n, ", evm: %s%s", evm,
			 r->evm.result == IMASTREAM_VERIFY_UNVERIFIABLE ? ", not checked" : "");
	}
	snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), ")");
	verify_print_verdict(it->path, kinds, NULL);
}

const struct cli_walk_ops verify_ops = { verify_item, verify_print_item };

/* "ok", or the verify_reason() phrase without the xattr's name. */
void verify_verdict_text(char *buf, size_t size, const struct imastream_verify_one *one)
{
	char tmp[256] = "";

	if (one->result == IMASTREAM_VERIFY_OK) {
		snprintf(buf, size, "ok");
		return;
	}
	verify_reason(tmp, sizeof(tmp), "x", one);
	/* verify_reason() wrote "missing x" or "x: PHRASE". */
	if (!strncmp(tmp, "missing", 7))
		snprintf(buf, size, "missing");
	else
		snprintf(buf, size, "%s", tmp + 3);
}
