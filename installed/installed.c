// SPDX-License-Identifier: LGPL-2.1-or-later
/* One file of an installed package, opened below the root and compared with its rpm header. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/capability.h>
#include <sys/xattr.h>

#include <rpm/rpmfi.h>

#include "common/private.h"
#include "imastream/rpmdb.h"
#include "installed/private.h"

/*
 * Whether the file's capabilities are the header's (rpm -V's P): both as libcap reads
 * them, no capability at all when the header has none or the file no security.capability.
 * Return: 1 they differ, 0 they do not, -errno.
 */
static int caps_differ(int fd, rpmfi fi)
{
	const char *text = rpmfiFCaps(fi);
	cap_t want, have;
	int err = 0, ret;

	/*
	 * Neither the header nor the file has any: equal, without libcap, whose cap_init()
	 * and cap_get_fd() cost four capget(2) calls a file for the same answer.
	 */
	if ((!text || !*text) && fgetxattr(fd, "security.capability", NULL, 0) < 0 &&
	    (errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP))
		return 0;
	want = text && *text ? cap_from_text(text) : cap_init();
	if (!want)
		/* Text rpm itself could not parse: the file cannot match it. */
		return errno == ENOMEM ? -ENOMEM : 1;
	have = cap_get_fd(fd);
	if (!have && (errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP))
		have = cap_init();
	if (!have)
		err = -errno;
	ret = err ? err : cap_compare(want, have) != 0;
	cap_free(want);
	cap_free(have);
	return ret;
}

/* rpm -V's columns for what the inode has against the header. */
static int compare(struct ims_installed *in, rpmfi fi, struct ims_ids *ids, const char *nevra,
		   const struct imastream_log *log)
{
	int err;

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
	err = caps_differ(in->fd, fi);
	if (err < 0)
		return ims_err(log, err, "%s: cannot read its capabilities: %s", rpmfiFN(fi),
			       strerror(-err));
	if (err)
		in->letters[8] = 'P';
	/* rpm -V's T: whole seconds, as rpm stores them. */
	if ((uint32_t)in->st.st_mtime != (uint32_t)rpmfiFMtime(fi))
		in->letters[7] = 'T';
	return 0;
}

/*
 * The columns a %verify(not ...) of the package leaves out print '.', as in rpm -V;
 * each column's RPMVERIFY_ bit, in rpm's order S M 5 D L U G T P.
 */
static void mask_verify_flags(struct ims_installed *in, rpmfi fi)
{
	static const unsigned int bits[9] = {
		RPMVERIFY_FILESIZE, RPMVERIFY_MODE,   RPMVERIFY_FILEDIGEST,
		RPMVERIFY_RDEV,	    RPMVERIFY_LINKTO, RPMVERIFY_USER,
		RPMVERIFY_GROUP,    RPMVERIFY_MTIME,  RPMVERIFY_CAPS,
	};
	rpmVerifyAttrs v = rpmfiVFlags(fi);

	in->vflags = v;
	for (int i = 0; i < 9; i++)
		if (!(v & bits[i]))
			in->letters[i] = '.';
}

/*
 * Whether anything but the mtime differs: T alone is no change EVM or IMA covers, so
 * relabel still labels such a file (the audit prints it, as rpm -V does).
 */
static int state_of(const struct ims_installed *in)
{
	char other[10];

	memcpy(other, in->letters, sizeof(other));
	other[7] = '.';
	return strcmp(other, ".........") ? IMS_INSTALLED_MODIFIED : IMS_INSTALLED_OPEN;
}

/*
 * A directory or a symlink, as rpm -V checks them: the type, the owner, a directory's
 * mode, a symlink's target (L); no size, digest or capabilities.  A symlink is only
 * looked at (O_PATH, never followed): @in->fd is -1 for it and @in->path names it.
 */
/*
 * A directory of the package that is a symlink on disk (its %dir /lib on a merged-/usr
 * root): rpm -V takes the directory it leads to when rpm would follow the link (verify.c,
 * as fsmVerify()), and so does this, with @in->dirfd and *@base moved to the real one.
 * Return: the directory's fd, or -1 with @in->why set when the link is not followed.
 */
static int follow_listed_dir(int rootfd, struct ims_installed *in, const char **base, char *real,
			     size_t size)
{
	char *slash;
	int fd, pfd;

	fd = ims_follow_dir_link(rootfd, in->dirfd, *base, O_PATH, real, size);
	if (fd < 0) {
		if (fd == -EPERM)
			in->why = "a symlink rpm would not follow (owned by neither root nor its "
				  "target's owner)";
		return -1;
	}
	close(fd);
	slash = strrchr(real, '/');
	if (slash)
		*slash = 0;
	pfd = imastream_open_dir_as_rpm(rootfd, slash ? real : "", O_PATH, NULL, 0);
	if (pfd < 0 || !*(slash ? slash + 1 : real)) {
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	*base = slash ? slash + 1 : real;
	fd = openat(pfd, *base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		close(pfd);
		return -1;
	}
	close(in->dirfd);
	in->dirfd = pfd;
	return fd;
}

static int open_special(int rootfd, struct ims_installed *in, rpmfi fi, struct ims_ids *ids,
			const char *nevra, const struct imastream_log *log)
{
	mode_t want = (mode_t)rpmfiFMode(fi);
	const char *fn = rpmfiFN(fi), *target, *base = rpmfiBN(fi);
	char link[PATH_MAX], real[PATH_MAX];
	ssize_t n;
	int fd;

	/* "/" itself (Fedora's filesystem package owns it): rpm keeps it as "/" + "". */
	if (!*base)
		base = ".";
	fd = openat(in->dirfd, base,
		    (S_ISDIR(want) ? O_RDONLY | O_DIRECTORY : O_PATH) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && S_ISDIR(want) && (errno == ENOTDIR || errno == ELOOP))
		fd = follow_listed_dir(rootfd, in, &base, real, sizeof(real));
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP || S_ISDIR(want)))
		fd = openat(in->dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &in->st)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		if (errno == ENOENT) {
			in->state = IMS_INSTALLED_MISSING;
			return 0;
		}
		return ims_err(log, -errno, "%s: cannot open: %m", fn);
	}
	in->fd = fd;
	snprintf(in->path, sizeof(in->path), "/proc/self/fd/%d/%.*s", in->dirfd, NAME_MAX, base);
	if ((in->st.st_mode & S_IFMT) != (want & S_IFMT)) {
		in->letters[1] = 'M';
		in->state = IMS_INSTALLED_MODIFIED;
		if (!in->why)
			in->why = S_ISDIR(want) ? "not a directory" : "not a symlink";
		return 0;
	}
	if (S_ISDIR(want) && (in->st.st_mode & 07777) != (want & 07777))
		in->letters[1] = 'M';
	if (in->st.st_uid != ims_ids_user(ids, rpmfiFUser(fi), nevra, log))
		in->letters[5] = 'U';
	if (in->st.st_gid != ims_ids_group(ids, rpmfiFGroup(fi), nevra, log))
		in->letters[6] = 'G';
	if (S_ISLNK(want)) {
		close(in->fd);
		in->fd = -1;
		n = readlinkat(in->dirfd, base, link, sizeof(link) - 1);
		if (n < 0)
			return ims_err(log, -errno, "%s: cannot read the link: %m", fn);
		link[n] = 0;
		target = rpmfiFLink(fi);
		if (!target || strcmp(target, link))
			in->letters[4] = 'L';
	}
	mask_verify_flags(in, fi);
	in->state = state_of(in);
	return 0;
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
	in->vflags = rpmfiVFlags(fi);
	/* Through the directory symlinks rpm follows (merged /usr), as it installed them. */
	in->dirfd = imastream_open_dir_as_rpm(rootfd, rpmfiDN(fi), O_PATH, NULL, 0);
	if (in->dirfd < 0) {
		err = in->dirfd;
		if (err == -ENOENT) {
			in->state = IMS_INSTALLED_MISSING;
			return 0;
		}
		if (err == -EPERM) {
			in->state = IMS_INSTALLED_MODIFIED;
			in->why = "a symlink rpm would not follow (owned by neither root nor its "
				  "target's owner) in a path component";
			return 0;
		}
		if (err == -ELOOP || err == -EXDEV || err == -ENOTDIR) {
			in->state = IMS_INSTALLED_MODIFIED;
			in->why = "a symlink or non-directory in a path component";
			return 0;
		}
		return ims_err(log, err, "%s: cannot open its directory: %s", fn, strerror(-err));
	}
	if (S_ISDIR(rpmfiFMode(fi)) || S_ISLNK(rpmfiFMode(fi)))
		return open_special(rootfd, in, fi, ids, nevra, log);
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
	err = compare(in, fi, ids, nevra, log);
	if (err)
		return err;
	mask_verify_flags(in, fi);
	in->state = state_of(in);
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
