// SPDX-License-Identifier: LGPL-2.1-or-later
/* Checks a caller's array of struct imastream_hash_msg, whose stride is the caller's sizeof. */
#include <errno.h>
#include <stdalign.h>

#include "common/private.h"
#include "hashers/private.h"

int ims_hash_msgs_check(const struct imastream_log *log, const char *who, const char *what,
			const void *msgs, size_t n, size_t msg_size)
{
	const size_t first = IMS_SIZE_UPTO(struct imastream_hash_msg, digest);
	const size_t ours = sizeof(struct imastream_hash_msg);

	/* A size that is no struct's sizeof (0 included) would misalign every element. */
	if (msg_size < first || msg_size % alignof(struct imastream_hash_msg))
		return ims_err(log, -EINVAL,
			       "%s: %s batch message size %zu is not that of a struct imastream_hash_msg (%zu bytes or more, a multiple of %zu: pass sizeof(struct imastream_hash_msg))",
			       who, what, msg_size, first, alignof(struct imastream_hash_msg));
	if (!msgs && n)
		return ims_err(log, -EINVAL, "%s: %s batch without messages", who, what);
	/* Every message first, so that a bad one leaves no digest half-written. */
	for (size_t i = 0; i < n; i++) {
		const struct imastream_hash_msg *m = ims_hash_msg_at(msgs, msg_size, i);
		const unsigned char *tail = (const unsigned char *)m;

		if ((!m->data && m->len) || !m->digest)
			return ims_err(log, -EINVAL, "%s: %s batch message %zu has a NULL %s", who, what, i,
				       m->digest ? "data" : "digest");
		/* A newer caller's message: what this library does not know must be unset. */
		for (size_t b = ours; b < msg_size; b++)
			if (tail[b])
				return ims_err(log, -E2BIG,
					       "%s: %s batch message %zu sets members this library does not know (its size %zu, ours %zu): the library is older than the program's header",
					       who, what, i, msg_size, ours);
	}
	return 0;
}

void ims_hash_msgs_copy(struct imastream_hash_msg *dst, const void *msgs, size_t msg_size,
			size_t first, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ims_copy_sized(&dst[i], sizeof(dst[i]), ims_hash_msg_at(msgs, msg_size, first + i),
			       msg_size);
}
