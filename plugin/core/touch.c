// SPDX-License-Identifier: LGPL-2.1-or-later
/* A file the driver leaves in place under an EVM portable signature keeps the labels it holds when they verify. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"
#include "plugin/core/private.h"

/*
 * With EVM on, the kernel refuses (EPERM) any change or removal of a security xattr of a
 * file whose portable signature it verifies.  rpm leaves a file in place when its content
 * did not change between the packages (FA_TOUCH, a %config file it keeps), and that file
 * may hold labels another configuration made, or an ECDSA signature we would never make
 * again byte for byte: rewriting them would fail the whole transaction.
 */

void ims_touch_free(struct ims_file_services *svc)
{
	imastream_verifier_free(svc->touch_verifier);
	imastream_trust_free(svc->touch_trust);
	svc->touch_verifier = NULL;
	svc->touch_trust = NULL;
}

void ims_touch_init(struct ims_file_services *svc)
{
	const struct imastream_config *cfg = svc->cfg;
	int err;

	if (!cfg->cert && !cfg->trust)
		return;
	err = imastream_trust_new(NULL, &svc->touch_trust);
	if (!err && cfg->cert)
		err = imastream_trust_add_path(svc->touch_trust, cfg->cert);
	if (!err && cfg->trust)
		err = imastream_trust_add_path(svc->touch_trust, cfg->trust);
	if (!err)
		err = imastream_verifier_new(svc->touch_trust, svc->log, &svc->touch_verifier);
	/* Nothing is kept then: the values are written as they would be without it. */
	if (err) {
		ims_logf(svc->log, IMASTREAM_LOG_DEBUG,
			 "no trusted keys for files left in place: %s", strerror(-err));
		ims_touch_free(svc);
	}
}

/* Whether @f is left in place and holds an EVM portable signature, which freezes its labels. */
static bool frozen(const struct ims_file_services *svc, const struct imastream_file *f)
{
	const unsigned int written_anew = IMASTREAM_FILE_CREATED | IMASTREAM_FILE_RECORD_ONLY |
					  IMASTREAM_FILE_ERASE | IMASTREAM_FILE_SKIP;
	uint8_t evm[IMASTREAM_FILE_MAX_XATTR_VALUE];
	ssize_t n;

	/* user.evm is no xattr the kernel guards. */
	if ((f->flags & written_anew) || !S_ISREG(f->mode) || !f->path || svc->cfg->user_xattrs)
		return false;
	n = lgetxattr(f->path, "security.evm", evm, sizeof(evm));
	return n > 0 && evm[0] == IMASTREAM_XATTR_EVM_PORTABLE;
}

void ims_touch_check(struct ims_file_services *svc, struct imastream_file *f,
		     struct ims_file_state *st)
{
	struct imastream_verify_report report = { .size = sizeof(report) };
	struct imastream_verifier *v = svc->touch_verifier;
	int fd, err = -ENOKEY;

	if (!frozen(svc, f))
		return;
	if (v) {
		/* rpm's descriptor, if any, is write-only: read the content by the path. */
		fd = open(f->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		err = fd < 0 ? -errno : imastream_verify_file(v, fd, f->path, 0, &report);
		if (fd >= 0)
			close(fd);
	}
	if (!err && report.ima.result == IMASTREAM_VERIFY_OK &&
	    report.evm.result == IMASTREAM_VERIFY_OK) {
		st->kept = true;
		ims_logf(svc->log, IMASTREAM_LOG_DEBUG,
			 "%s: left in place, its labels verify with the trusted keys: kept",
			 f->path);
		return;
	}
	/* Said if the kernel refuses the values written instead (imastream_file_set_xattr). */
	if (err == -ENOKEY)
		snprintf(st->frozen_why, sizeof(st->frozen_why), "%s",
			 svc->cfg->cert || svc->cfg->trust ? "they could not be loaded at init" :
							     "neither is set");
	else if (err)
		snprintf(st->frozen_why, sizeof(st->frozen_why), "%s", strerror(-err));
	else
		snprintf(st->frozen_why, sizeof(st->frozen_why),
			 "security.ima: %s, security.evm: %s",
			 imastream_verify_result_str(report.ima.result),
			 imastream_verify_result_str(report.evm.result));
}
