// SPDX-License-Identifier: LGPL-2.1-or-later
/* Fills an EVM input from a file: protected xattr values, owner, mode, inode identity. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/fs.h>

#include "common/private.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

/* Linux 6.5+ has FS_IOC_GETFSUUID; Debian 12's headers (6.1) do not define it yet. */
#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
	uint8_t len;
	uint8_t uuid[16];
};
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct fsuuid2)
#endif

/* Where to read each slot from: fd or path (never followed). */
struct source {
	int fd;
	const char *path;
	const char *what; /* for messages */
};

static ssize_t get_xattr(const struct source *src, const char *name, void *buf, size_t size)
{
	if (src->fd >= 0)
		return fgetxattr(src->fd, name, buf, size);
	return lgetxattr(src->path, name, buf, size);
}

static const char *slot_name(int slot, unsigned int flags)
{
	if (slot == IMASTREAM_EVM_IMA && (flags & IMASTREAM_EVM_COLLECT_USER_IMA))
		return imastream_xattr_name(IMASTREAM_ATTR_IMA, true);
	return imastream_evm_xattr_name(slot);
}

/* Slots an LSM may answer for from its own state: listxattr(2) need not name them. */
static bool lsm_may_answer(int slot)
{
	return slot == IMASTREAM_EVM_SELINUX || slot == IMASTREAM_EVM_SMACK64;
}

/*
 * Which slots to ask for: those one listxattr(2) names, and those an LSM may answer for;
 * every slot when the list cannot be read (no xattrs here, or a list too long), as the
 * kernel asks for each.  A file usually has 1 or 2 of the 8: one call saves 4 or 5.
 */
static void slots_to_read(const struct source *src, unsigned int flags, bool wanted[])
{
	char list[4096];
	ssize_t n = src->fd >= 0 ? flistxattr(src->fd, list, sizeof(list)) :
				   llistxattr(src->path, list, sizeof(list));

	for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS; i++)
		wanted[i] = n < 0 || lsm_may_answer(i);
	for (size_t off = 0; n > 0 && off < (size_t)n; off += strnlen(list + off, n - off) + 1)
		for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS; i++)
			if (!strncmp(list + off, slot_name(i, flags), n - off))
				wanted[i] = true;
}

/*
 * Reads every protected value into one allocation.  Sizes are probed first; if a value
 * grows between probe and read (ERANGE), the whole read is retried a few times.
 */
static int read_values_probed(const struct source *src, unsigned int flags,
			      struct imastream_evm_input *in, const struct imastream_log *log)
{
	ssize_t sizes[IMASTREAM_EVM_NR_XATTRS];
	bool wanted[IMASTREAM_EVM_NR_XATTRS];
	uint8_t *store = NULL;
	int err = 0;

	for (int attempt = 0; attempt < 4; attempt++) {
		size_t total = 0, off = 0;
		bool again = false;

		slots_to_read(src, flags, wanted);
		for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS; i++) {
			sizes[i] = -1;
			if (!wanted[i])
				continue;
			sizes[i] = get_xattr(src, slot_name(i, flags), NULL, 0);
			if (sizes[i] < 0) {
				/* Absent, or a filesystem without xattrs: nothing to hash. */
				if (errno == ENODATA || errno == ENOTSUP)
					continue;
				return ims_err(log, -errno, "%s: cannot read %s: %s", src->what,
					       slot_name(i, flags), strerror(errno));
			}
			total += sizes[i];
		}
		free(store);
		store = malloc(total ? total : 1);
		if (!store)
			return ims_err(log, -ENOMEM, "%s: out of memory for xattr values", src->what);
		for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS && !again; i++) {
			ssize_t n;

			in->xattrs[i].value = NULL;
			in->xattrs[i].len = 0;
			if (sizes[i] < 0)
				continue;
			n = sizes[i] ? get_xattr(src, slot_name(i, flags), store + off, sizes[i]) : 0;
			if (n < 0 && (errno == ERANGE || errno == ENODATA)) {
				again = true; /* changed under us */
				continue;
			}
			if (n < 0) {
				err = ims_err(log, -errno, "%s: cannot read %s: %s", src->what,
					      slot_name(i, flags), strerror(errno));
				goto fail;
			}
			in->xattrs[i].value = store + off;
			in->xattrs[i].len = n;
			off += n;
		}
		if (!again) {
			in->owned = store;
			return 0;
		}
	}
	err = ims_err(log, -EAGAIN, "%s: xattrs keep changing while being read", src->what);
fail:
	free(store);
	memset(in->xattrs, 0, sizeof(in->xattrs));
	return err;
}

/* What the values of nearly every file fit in together (a signature, a label, caps). */
#define SMALL_VALUES 2048

/*
 * Reads every protected value into one allocation: in one call each when they fit in
 * SMALL_VALUES together, as they nearly always do, else sized first (read_values_probed).
 */
static int read_values(const struct source *src, unsigned int flags,
		       struct imastream_evm_input *in, const struct imastream_log *log)
{
	uint8_t small[SMALL_VALUES], *store;
	bool wanted[IMASTREAM_EVM_NR_XATTRS];
	ssize_t len[IMASTREAM_EVM_NR_XATTRS];
	size_t at[IMASTREAM_EVM_NR_XATTRS], off = 0;

	slots_to_read(src, flags, wanted);
	for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS; i++) {
		len[i] = -1;
		if (!wanted[i])
			continue;
		/* No room left is not asked with size 0, which returns a size, not a value. */
		if (off == sizeof(small))
			return read_values_probed(src, flags, in, log);
		len[i] = get_xattr(src, slot_name(i, flags), small + off, sizeof(small) - off);
		if (len[i] >= 0) {
			at[i] = off;
			off += (size_t)len[i];
			continue;
		}
		/* Absent, or a filesystem without xattrs: nothing to hash. */
		if (errno == ENODATA || errno == ENOTSUP)
			continue;
		if (errno == ERANGE)
			return read_values_probed(src, flags, in, log);
		return ims_err(log, -errno, "%s: cannot read %s: %s", src->what,
			       slot_name(i, flags), strerror(errno));
	}
	store = malloc(off ? off : 1);
	if (!store)
		return ims_err(log, -ENOMEM, "%s: out of memory for xattr values", src->what);
	memcpy(store, small, off);
	for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS; i++) {
		in->xattrs[i].value = len[i] >= 0 ? store + at[i] : NULL;
		in->xattrs[i].len = len[i] >= 0 ? (size_t)len[i] : 0;
	}
	in->owned = store;
	return 0;
}

static int read_inode_ids(int fd, unsigned int flags, struct imastream_evm_input *in,
			  const char *what, const struct imastream_log *log)
{
	if (flags & IMASTREAM_EVM_COLLECT_GENERATION) {
		/* The kernel ABI says long, but every filesystem copies an int. */
		int gen = 0;

		if (ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
			return ims_err(log, -errno, "%s: cannot read the inode generation: %s",
				       what, strerror(errno));
		in->generation = (uint32_t)gen;
	}
	if (flags & IMASTREAM_EVM_COLLECT_UUID) {
		struct fsuuid2 u = { 0 };

		if (ioctl(fd, FS_IOC_GETFSUUID, &u) < 0)
			return ims_err(log, -errno, "%s: cannot read the filesystem UUID: %s",
				       what, strerror(errno));
		if (u.len != sizeof(in->uuid))
			return ims_err(log, -EINVAL, "%s: filesystem UUID of %u bytes, not 16",
				       what, u.len);
		memcpy(in->uuid, u.uuid, sizeof(in->uuid));
		in->has_uuid = true;
	}
	return 0;
}

int imastream_evm_collect(int fd, const char *path, unsigned int flags,
			  struct imastream_evm_input *in_ret, const struct imastream_log *log)
{
	struct source src = { fd, path, path ? path : "(fd)" };
	struct imastream_evm_input in = { .size = sizeof(in) };
	struct stat st;
	int own_fd = -1, err;

	if (!in_ret || (fd < 0 && !path))
		return ims_err(log, -EINVAL, "EVM collect: no file given");
	/* The caller's size says how much we may write; never guessed (room to grow). */
	err = IMS_CHECK_OUT_SIZE(log, in_ret, imastream_evm_input, owned);
	if (err)
		return err;
	if ((fd >= 0 ? fstat(fd, &st) : lstat(path, &st)) < 0)
		return ims_err(log, -errno, "%s: cannot stat: %s", src.what, strerror(errno));
	in.ino = st.st_ino;
	in.uid = st.st_uid;
	in.gid = st.st_gid;
	in.mode = st.st_mode;
	in.misc_layout = IMASTREAM_EVM_MISC_64;
	err = read_values(&src, flags, &in, log);
	if (err)
		return err;
	if (flags & (IMASTREAM_EVM_COLLECT_GENERATION | IMASTREAM_EVM_COLLECT_UUID)) {
		if (fd < 0) {
			/* O_NONBLOCK: a FIFO must not hang us; O_NOFOLLOW: never leave the path. */
			own_fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			if (own_fd < 0) {
				err = ims_err(log, -errno, "%s: cannot open for inode ioctls: %s",
					      path, strerror(errno));
				goto out;
			}
		}
		err = read_inode_ids(fd >= 0 ? fd : own_fd, flags, &in, src.what, log);
	}
out:
	if (own_fd >= 0)
		close(own_fd);
	if (err) {
		imastream_evm_input_release(&in);
		return err;
	}
	IMS_FILL_SIZED(in_ret, &in);
	return 0;
}

void imastream_evm_input_release(struct imastream_evm_input *in)
{
	if (!in)
		return;
	if (in->owned) {
		memset(in->xattrs, 0, sizeof(in->xattrs));
		free(in->owned);
		in->owned = NULL;
	}
}
