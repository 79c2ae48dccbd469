// SPDX-License-Identifier: LGPL-2.1-or-later
/* Message formatting for the library: everything goes to the caller's log callback. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "common/private.h"

/* Formats and hands the message over; errno is preserved, as ims_logf() promises. */
static void vlog(const struct imastream_log *log, int level, const char *fmt, va_list ap)
{
	int saved_errno = errno;
	char msg[1024];

	if (log && log->fn) {
		vsnprintf(msg, sizeof(msg), fmt, ap);
		log->fn(log->arg, level, msg);
	}
	errno = saved_errno;
}

void ims_logf(const struct imastream_log *log, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(log, level, fmt, ap);
	va_end(ap);
}

int ims_err(const struct imastream_log *log, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(log, IMASTREAM_LOG_ERR, fmt, ap);
	va_end(ap);
	return err;
}

int ims_openssl_err(const struct imastream_log *log, int err, const char *fmt, ...)
{
	int saved_errno = errno;
	char msg[768], reason[256] = "";
	unsigned long e, last = 0;
	va_list ap;

	/* Keep the innermost reason: it is the one that names the real problem. */
	while ((e = ERR_get_error()) != 0)
		last = e;
	if (last)
		ERR_error_string_n(last, reason, sizeof(reason));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (reason[0])
		ims_logf(log, IMASTREAM_LOG_ERR, "%s (%s)", msg, reason);
	else
		ims_logf(log, IMASTREAM_LOG_ERR, "%s", msg);
	errno = saved_errno;
	return err;
}

void ims_memzero(void *p, size_t len)
{
	OPENSSL_cleanse(p, len);
}
