// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream verify --root: every object of the install record checked against the root. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_verify.h"
#include "cli/walk.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/record.h"
#include "imastream/root.h"

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
		verify_print_verdict(path, verdict, f->package);
		job->failed++;
		return 0;
	}
	/* What the install wrote is what must verify; symlinks and devices carry none. */
	if (fd < 0 || !(f->xattrs & IMASTREAM_RECORD_IMA)) {
		if (fd >= 0)
			close(fd);
		verify_print_verdict(path, "OK", NULL);
		return 0;
	}
	if (!job->evm_given)
		vj.evm = (f->xattrs & IMASTREAM_RECORD_EVM) ? EVM_REQUIRE : EVM_AUTO;
	if (vj.evm == EVM_NONE)
		vj.flags |= IMASTREAM_VERIFY_NO_EVM;
	it.fd = fd;
	it.path = (char *)path; /* verify_print_item() only reads it */
	memset(&res, 0, sizeof(res));
	res.report.size = sizeof(res.report);
	if (imastream_verify_file(job->verifier, fd, path, vj.flags, &res.report))
		res.error = true;
	else
		it.ok = verify_judge(&vj, &res.report);
	close(fd);
	verify_print_item(&vj, &it);
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

int verify_root(const char *typed, struct imastream_trust *trust, unsigned int flags,
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
	if (!err && verify_verdict_json)
		verify_summary_record(root, job.checked, job.failed, &t0);
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
