// SPDX-License-Identifier: LGPL-2.1-or-later
/* Whether a directory is on a filesystem that holds no installed file (/proc, /sys and the like of a live root): walks of a whole root skip them. */
#include <sys/vfs.h>

#include "common/private.h"

bool ims_pseudo_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return false;
	switch ((unsigned long)sf.f_type) {
	case 0x9fa0:	 /* proc */
	case 0x62656572: /* sysfs */
	case 0x1cd1:	 /* devpts */
	case 0x27e0eb:	 /* cgroup */
	case 0x63677270: /* cgroup2 */
	case 0x64626720: /* debugfs */
	case 0x73636673: /* securityfs */
	case 0x74726163: /* tracefs */
	case 0xcafe4a11: /* bpf */
		return true;
	default:
		return false;
	}
}
