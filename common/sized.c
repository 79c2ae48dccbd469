// SPDX-License-Identifier: LGPL-2.1-or-later
/* Checks and copies the public structs that carry their caller's size (room to grow). */
#include <errno.h>
#include <string.h>

#include "common/private.h"

int ims_check_min_size(const struct imastream_log *log, const char *type, size_t size, size_t first)
{
	if (size < first)
		return ims_err(log, -EINVAL,
			       "struct %s: size %zu is below its first version's %zu bytes (set .size = sizeof(struct %s))",
			       type, size, first, type);
	return 0;
}

int ims_check_size(const struct imastream_log *log, const char *type, const void *p, size_t size,
		   size_t first, size_t ours)
{
	const unsigned char *tail = p;
	int err = ims_check_min_size(log, type, size, first);

	if (err)
		return err;
	/*
	 * A newer caller's struct: the members this library does not know must be zero
	 * (unset), or the caller asked for something that would silently not be done.
	 */
	for (size_t i = ours; i < size; i++)
		if (tail[i])
			return ims_err(log, -E2BIG,
				       "struct %s: the caller sets members this library does not know (its size %zu, ours %zu): the library is older than the program's header",
				       type, size, ours);
	return 0;
}

void ims_copy_sized(void *dst, size_t dst_size, const void *src, size_t src_size)
{
	memset(dst, 0, dst_size);
	memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
}

void ims_fill_sized(void *dst, const void *src, size_t src_size)
{
	size_t dst_size;

	/* The caller's size, its first member, says how much room it has; it stays. */
	memcpy(&dst_size, dst, sizeof(dst_size));
	ims_copy_sized(dst, dst_size, src, src_size);
	memcpy(dst, &dst_size, sizeof(dst_size));
}
