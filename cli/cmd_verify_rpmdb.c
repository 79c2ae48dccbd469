// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream verify --rpmdb: every file of the root's packages audited against its header and labels, and the files no package owns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_verify.h"
#include "cli/walk.h"
#include "imastream/audit.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/rpmdb.h"
#include "xattr/codec.h"

/* --rpmdb: every file of the root's packages, against its header and its signatures. */
struct rpmdb_job {
	enum evm_mode evm;
	struct verify_job judged; /* its evm and appraise, for verify_imasig_refusal() */
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
		verify_print_verdict(f->path, "PENDING: labels of a rootless build not yet written",
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
		verify_verdict_text(ima, sizeof(ima), &r->ima);
		verify_verdict_text(evm, sizeof(evm), &r->evm);
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
	if (f->verified && verify_ima_kind(&r->ima))
		json_string(stdout, verify_ima_kind(&r->ima));
	else
		fputs("null", stdout);
	fputs(",\"evm\":", stdout);
	if (f->verified)
		json_string(stdout, evm);
	else
		fputs("null", stdout);
	fputs(",\"evm_type\":", stdout);
	if (f->verified && verify_evm_kind(&r->evm))
		json_string(stdout, verify_evm_kind(&r->evm));
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
		verify_reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_IMA, job->user),
			      &r->ima);
	if (refusal) {
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n, "%s%s: %s", n ? "; " : "",
			 imastream_xattr_name(IMASTREAM_ATTR_IMA, job->user), refusal);
	}
	if (f->verified && evm_fails(job->evm, r->evm.result))
		verify_reason(why, sizeof(why), imastream_xattr_name(IMASTREAM_ATTR_EVM, job->user),
			      &r->evm);
	if (f->label == IMASTREAM_VERIFY_MISSING) {
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n, "%smissing security.selinux", n ? "; " : "");
	}
	snprintf(verdict, sizeof(verdict), "FAIL: %s", why);
	verify_print_verdict(f->path, verdict, f->package);
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
	refusal = f->verified ? verify_imasig_refusal(&job->judged, r) : NULL;
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
		verify_print_verdict(f->path, verdict, f->package);
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
	verify_print_verdict(path, verdict, NULL);
}

int verify_rpmdb(const char *root, struct imastream_trust *trust, unsigned int flags,
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
		verify_summary_record(root_abs, job.checked + job.orphans, job.failed + job.orphans,
				      &t0);
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
