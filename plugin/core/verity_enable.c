// SPDX-License-Identifier: LGPL-2.1-or-later
/* verity = on for the drivers: the root's fs-verity probe, and turning fs-verity on for a signed file once its writers are gone. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fsverity.h>

#include "imastream/xattr.h"
#include "plugin/core/private.h"

int ims_probe_root_verity(const struct imastream_config *cfg, const char *root,
			  const struct imastream_log *log)
{
	struct {
		struct fsverity_digest d;
		uint8_t room[IMASTREAM_VERITY_DIGEST_SIZE];
	} m = { .d.digest_size = IMASTREAM_VERITY_DIGEST_SIZE };
	int fd, err = 0;

	if (!cfg || !root || !IMS_CONFIG_VERITY(cfg) || cfg->mode != IMASTREAM_MODE_SIGN)
		return 0;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ims_err(log, -errno, "cannot open %s: %s", root, strerror(errno));
	/*
	 * Measuring the root directory asks the filesystem without changing anything: one
	 * that supports verity answers ENODATA (a directory never has it); EOPNOTSUPP (no
	 * verity feature, or a kernel without CONFIG_FS_VERITY) and ENOTTY (tmpfs, overlayfs)
	 * mean no file installed here could get fs-verity, and then none gets installed.
	 */
	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m) < 0 &&
	    (errno == EOPNOTSUPP || errno == ENOTTY))
		err = ims_err(log, -EOPNOTSUPP,
			      "%s has no fs-verity support (%s): verity = on cannot install here (ext4 needs mkfs/tune2fs -O verity and a kernel with CONFIG_FS_VERITY)",
			      root, errno == ENOTTY ? "the filesystem has no verity ioctls" :
			      "not enabled on this filesystem or kernel");
	close(fd);
	return err;
}

bool ims_file_wants_verity(const struct imastream_file *f)
{
	const struct imastream_file_xattr *x = imastream_file_get_xattr(f, "security.ima");

	return S_ISREG(f->mode) && x && !x->skipped && x->len > 0 &&
	       x->value[0] == IMASTREAM_XATTR_IMA_VERITY_SIG;
}

int ims_verity_enable(int fd, const char *what, const struct imastream_log *log)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = IMASTREAM_VERITY_BLOCK_SIZE,
	};

	if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg) == 0 || errno == EEXIST)
		return 0;
	if (errno == ETXTBSY)
		return ims_err(log, -ETXTBSY,
			       "%s: cannot enable fs-verity: the file is still open for writing",
			       what);
	return ims_err(log, -errno, "%s: cannot enable fs-verity: %s", what, strerror(errno));
}
