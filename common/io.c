// SPDX-License-Identifier: LGPL-2.1-or-later
/* The one loop that writes a whole buffer to a descriptor (short writes, EINTR). */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "common/private.h"

int ims_write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		/* A regular file that takes nothing would spin forever: call it an I/O error. */
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
