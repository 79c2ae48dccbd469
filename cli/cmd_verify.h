/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the files of imastream verify share: the job's options, one file's verdict and its printing, the --root and --rpmdb checks. */
#ifndef IMASTREAM_CLI_CMD_VERIFY_H
#define IMASTREAM_CLI_CMD_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "cli/walk.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"

enum evm_mode {
	EVM_AUTO,
	EVM_REQUIRE,
	EVM_NONE
};

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

/* cmd_verify_verdict.c: what security.ima and security.evm hold, in the verdict's words (NULL: nothing decoded). */
const char *verify_ima_kind(const struct imastream_verify_one *ima);
const char *verify_evm_kind(const struct imastream_verify_one *evm);
/* Why a good security.ima fails --appraise-type imasig, or NULL. */
const char *verify_imasig_refusal(const struct verify_job *job,
				  const struct imastream_verify_report *r);
/* The verdict of @r under the job's --evm and --appraise-type. */
bool verify_judge(const struct verify_job *job, const struct imastream_verify_report *r);
/* Appends the reason for one xattr's verdict to @buf. */
void verify_reason(char *buf, size_t size, const char *name,
		   const struct imastream_verify_one *one);
/* "ok", or the verify_reason() phrase without the xattr's name. */
void verify_verdict_text(char *buf, size_t size, const struct imastream_verify_one *one);
/* --format json: verify_print_verdict() writes records here instead (NULL: text). */
extern struct cli_json *verify_verdict_json;
/* The summary record of --root and --rpmdb, @root absolute. */
void verify_summary_record(const char *root, unsigned long files, unsigned long failed,
			   const struct timespec *t0);
/* "PATH: VERDICT", or "PATH: VERDICT (package NAME)" for a recorded file. */
void verify_print_verdict(const char *path, const char *verdict, const char *package);
/* The walk's report of a checked file (@ctx: its struct verify_job); --root's too. */
void verify_print_item(void *ctx, struct cli_item *it);
/* The walk's work on the named files and trees. */
extern const struct cli_walk_ops verify_ops;

/* cmd_verify_root.c: --root, every object of the install record. */
int verify_root(const char *typed, struct imastream_trust *trust, unsigned int flags,
		enum evm_mode evm, bool evm_given, enum appraise appraise);
/* cmd_verify_rpmdb.c: --rpmdb, every file of the root's packages and the orphans. */
int verify_rpmdb(const char *root, struct imastream_trust *trust, unsigned int flags,
		 const struct verify_job *judged, bool json, char *const *names, int nnames);

#endif /* IMASTREAM_CLI_CMD_VERIFY_H */
