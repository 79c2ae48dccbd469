// SPDX-License-Identifier: LGPL-2.1-or-later
/* One file of an installed package, opened below the root and compared with its rpm header. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rpm/rpmfi.h>

#include "common/private.h"
#include "installer/private.h"

/* rpm -V's columns for what the inode has against the header. */
static void compare(struct ims_installed *in, rpmfi fi, struct ims_ids *ids, const char *nevra,
		    const struct imastream_log *log)
{
	mode_t want = (mode_t)rpmfiFMode(fi);
	uid_t uid = ims_ids_user(ids, rpmfiFUser(fi), nevra, log);
	gid_t gid = ims_ids_group(ids, rpmfiFGroup(fi), nevra, log);

	if ((uint64_t)in->st.st_size != (uint64_t)rpmfiFSize(fi))
		in->letters[0] = 'S';
	if ((in->st.st_mode & (S_IFMT | 07777)) != (want & (S_IFMT | 07777)))
		in->letters[1] = 'M';
	if (in->st.st_uid != uid)
		in->letters[5] = 'U';
	if (in->st.st_gid != gid)
		in->letters[6] = 'G';
}

int ims_installed_open(int rootfd, void *rpm_fi, struct ims_ids *ids, const char *nevra,
		       const struct imastream_log *log, struct ims_installed *in)
{
	rpmfi fi = rpm_fi;
	const char *fn = rpmfiFN(fi);
	int err;

	memset(in, 0, sizeof(*in));
	in->dirfd = in->fd = -1;
	memcpy(in->letters, ".........", sizeof(in->letters));
	in->config = rpmfiFFlags(fi) & RPMFILE_CONFIG;
	in->dirfd = imastream_open_beneath(rootfd, rpmfiDN(fi), O_PATH | O_DIRECTORY);
	if (in->dirfd < 0) {
		err = in->dirfd;
		if (err == -ENOENT) {
			in->state = IMS_INSTALLED_MISSING;
			return 0;
		}
		if (err == -ELOOP || err == -EXDEV || err == -ENOTDIR) {
			in->state = IMS_INSTALLED_MODIFIED;
			in->why = "a symlink or non-directory in a path component";
			return 0;
		}
		return ims_err(log, err, "%s: cannot open its directory: %s", fn, strerror(-err));
	}
	/* Never follow a link, never block on a FIFO swapped in. */
	in->fd = openat(in->dirfd, rpmfiBN(fi), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (in->fd < 0 || fstat(in->fd, &in->st)) {
		err = errno;
		in->letters[1] = 'M';
		in->state = IMS_INSTALLED_MODIFIED;
		if (err == ENOENT)
			in->state = IMS_INSTALLED_MISSING;
		else if (err == ELOOP)
			in->why = "replaced by a symlink";
		else if (err == ENXIO)
			in->why = "not a regular file";
		else
			return ims_err(log, -err, "%s: cannot open: %s", fn, strerror(err));
		return 0;
	}
	if (!S_ISREG(in->st.st_mode)) {
		in->letters[1] = 'M';
		in->state = IMS_INSTALLED_MODIFIED;
		in->why = "not a regular file";
		return 0;
	}
	compare(in, fi, ids, nevra, log);
	in->state = strcmp(in->letters, ".........") ? IMS_INSTALLED_MODIFIED : IMS_INSTALLED_OPEN;
	/* The only handle on the file by name that never follows a link in the root. */
	snprintf(in->path, sizeof(in->path), "/proc/self/fd/%d/%s", in->dirfd, rpmfiBN(fi));
	return 0;
}

void ims_installed_close(struct ims_installed *in)
{
	if (in->fd >= 0)
		close(in->fd);
	if (in->dirfd >= 0)
		close(in->dirfd);
	in->fd = in->dirfd = -1;
}
