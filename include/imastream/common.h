/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared public definitions of libimastream: export macro, log callback, conventions. */
#ifndef IMASTREAM_COMMON_H
#define IMASTREAM_COMMON_H

/*
 * Conventions for every libimastream function:
 *  - returns 0 on success or a negative errno (-EINVAL, -ENOMEM, -EIO, ...);
 *  - outputs go through *_ret pointers, which are written only on success;
 *  - nothing is ever printed: messages go to the caller's struct imastream_log;
 *  - there is no global state: everything lives in a handle the caller owns.
 */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define IMASTREAM_API __attribute__((visibility("default")))
#else
#define IMASTREAM_API
#endif

/* Log levels are syslog's, so a callback can hand them straight to syslog(3). */
enum imastream_log_level {
	IMASTREAM_LOG_ERR = 3,
	IMASTREAM_LOG_WARNING = 4,
	IMASTREAM_LOG_NOTICE = 5,
	IMASTREAM_LOG_INFO = 6,
	IMASTREAM_LOG_DEBUG = 7,
};

/**
 * imastream_log_fn - receives one message from the library
 * @arg: the caller's pointer from struct imastream_log
 * @level: an enum imastream_log_level
 * @msg: one line, without a trailing newline; valid only during the call
 */
typedef void (*imastream_log_fn)(void *arg, int level, const char *msg);

/*
 * Where a handle sends its messages.  A NULL log or a NULL fn drops them.
 *
 * Frozen: unlike the other structs callers fill, this one has no size and never grows
 * (libimastream(3), room to grow).  It is the channel through which every refusal,
 * a bad size included, is said, so a size the library had to check here could only be
 * refused in silence; and nearly every call takes it, often as a static { fn, arg }.
 * A new logging need (a context per message, a level filter) gets a new struct and
 * new functions beside this pair, never a member in it.
 */
struct imastream_log {
	imastream_log_fn fn;
	void *arg;
};

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_COMMON_H */
