// SPDX-License-Identifier: LGPL-2.1-or-later
/* Writes IMA/EVM xattrs on a descriptor or a never-followed path, with configurable soft errors. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "common/private.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"
#include "xattr/stored_name.h"

void imastream_xattr_writer_init(struct imastream_xattr_writer *w, unsigned int flags,
				 const struct imastream_log *log)
{
	memset(w, 0, sizeof(*w));
	w->flags = flags;
	w->log = log;
}

int imastream_xattr_writer_soft(struct imastream_xattr_writer *w, int err)
{
	if (!w || err <= 0)
		return -EINVAL;
	for (unsigned int i = 0; i < w->n_soft; i++)
		if (w->soft_errors[i] == err)
			return 0;
	if (w->n_soft >= IMASTREAM_XATTR_MAX_SOFT)
		return -ENOSPC;
	w->soft_errors[w->n_soft++] = err;
	return 0;
}

void ims_xattr_stored_name(const char *name, bool user, char *buf, size_t size)
{
	static const char security[] = "security.";

	if (user && strncmp(name, security, sizeof(security) - 1) == 0)
		snprintf(buf, size, "user.%s", name + sizeof(security) - 1);
	else
		snprintf(buf, size, "%s", name);
}

/* Literals, so that the returned names outlive any call; test_xattr_writer holds them to
 * ims_xattr_stored_name()'s mapping. */
const char *imastream_xattr_name(int attr, bool user)
{
	switch (attr) {
	case IMASTREAM_ATTR_IMA:
		return user ? "user.ima" : "security.ima";
	case IMASTREAM_ATTR_EVM:
		return user ? "user.evm" : "security.evm";
	default:
		return NULL;
	}
}

const char *imastream_xattr_writer_name(const struct imastream_xattr_writer *w, int attr)
{
	return imastream_xattr_name(attr, w && (w->flags & IMASTREAM_XATTR_WRITE_USER));
}

static bool is_soft(const struct imastream_xattr_writer *w, int err)
{
	for (unsigned int i = 0; i < w->n_soft; i++)
		if (w->soft_errors[i] == err)
			return true;
	return false;
}

int imastream_xattr_write_name(const struct imastream_xattr_writer *w, int fd, const char *path,
			       const char *name, const void *value, size_t len, bool *skipped_ret)
{
	const char *what = path ? path : "(fd)";
	int rc, err;

	if (!w || !name || (!value && len) || (fd < 0 && !path))
		return -EINVAL;
	if (skipped_ret)
		*skipped_ret = false;
	/* By path, lsetxattr: a symlink planted at the path gets the xattr, never its target. */
	rc = fd >= 0 ? fsetxattr(fd, name, value, len, 0) : lsetxattr(path, name, value, len, 0);
	if (rc == 0)
		return 0;
	err = errno;
	if (is_soft(w, err)) {
		ims_logf(w->log, IMASTREAM_LOG_WARNING, "%s: %s not written: %s (skipped)", what,
			 name, strerror(err));
		if (skipped_ret)
			*skipped_ret = true;
		return 0;
	}
	if (err == ENOTSUP)
		return ims_err(w->log, -err, "%s: cannot write %s: the filesystem does not support it",
			       what, name);
	return ims_err(w->log, -err, "%s: cannot write %s: %s", what, name, strerror(err));
}

int imastream_xattr_write(const struct imastream_xattr_writer *w, int fd, const char *path,
			  int attr, const void *value, size_t len, bool *skipped_ret)
{
	const char *name = imastream_xattr_writer_name(w, attr);

	if (!name)
		return -EINVAL;
	return imastream_xattr_write_name(w, fd, path, name, value, len, skipped_ret);
}
