/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by the library's modules: logging, byte order, small utilities. */
#ifndef IMASTREAM_PRIVATE_H
#define IMASTREAM_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The value of one hex digit (either case), or -1. */
static inline int ims_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#if defined(__GNUC__)
#define ims_printf(a, b) __attribute__((format(printf, a, b)))
#define ims_cold __attribute__((cold))
#else
#define ims_printf(a, b)
#define ims_cold
#endif

/* Formats a message and hands it to @log; errno is preserved. */
void ims_logf(const struct imastream_log *log, int level, const char *fmt, ...)
	ims_printf(3, 4) ims_cold;

/*
 * Logs @fmt followed by OpenSSL's queued errors (the queue is drained) at ERR level.
 * Returns @err so that callers can write "return ims_openssl_err(log, -EINVAL, ...)".
 */
int ims_openssl_err(const struct imastream_log *log, int err, const char *fmt, ...)
	ims_printf(3, 4) ims_cold;

/* Logs at ERR level and returns @err. */
int ims_err(const struct imastream_log *log, int err, const char *fmt, ...)
	ims_printf(3, 4) ims_cold;

/* io.c: writes all of @buf (retrying short writes and EINTR); 0 or -errno. */
int ims_write_full(int fd, const void *buf, size_t len);

/* Overwrites @len bytes at @p in a way the compiler cannot elide (key material). */
void ims_memzero(void *p, size_t len);

static inline void ims_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void ims_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint16_t ims_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ims_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

struct imastream_verifier;
/* A verifier with @v's trust store and log, for another thread (filesig/verify.c). */
int ims_verifier_copy(const struct imastream_verifier *v, struct imastream_verifier **ret);

#endif /* IMASTREAM_PRIVATE_H */
