/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by the library's modules: logging, byte order, small utilities. */
#ifndef IMASTREAM_COMMON_PRIVATE_H
#define IMASTREAM_COMMON_PRIVATE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/*
 * open.c: opens @name below @dirfd (openat(2) @flags and @mode) so that it cannot block
 * (a FIFO, a device) and, with O_NOFOLLOW in @flags, cannot follow a symlink, then
 * checks that it is a regular file; O_NONBLOCK is cleared again unless @flags has it.
 * Return: an fd, or -errno: -IMS_ENOTREG for anything but a regular file, -ELOOP for a
 * symlink with O_NOFOLLOW.  ims_open_strerror() words any of them for a message.
 */
#define IMS_ENOTREG EMEDIUMTYPE
int ims_open_regular(int dirfd, const char *name, int flags, mode_t mode);
/*
 * The same open (no wait on a FIFO with no peer: -ENXIO for a writer) of a file that may
 * also be a device, such as a log the administrator names (/dev/full, /dev/null): no
 * type check.  Return: an fd (O_NONBLOCK cleared unless in @flags), or -errno.
 */
int ims_open_nonblocking(int dirfd, const char *name, int flags, mode_t mode);
const char *ims_open_strerror(int err);

/* pseudo_fs.c: @fd is on proc, sysfs or another filesystem of no installed file. */
bool ims_pseudo_fs(int fd);

/*
 * ims_grow - room for element @used of @array, whose capacity is *@alloc elements of @elem
 * bytes: @array itself while there is room, else the array doubled (@first elements for a
 * new one) and *@alloc updated; NULL when out of memory, with @array and *@alloc untouched.
 */
void *ims_grow(void *array, size_t used, size_t *alloc, size_t elem, size_t first);

/*
 * ims_forks - a value that changes in a forked child: a thread's owner records it, and a
 * child, which has no copy of the thread, never uses what the thread makes (getpid()
 * did this at a system call per use).
 */
unsigned long ims_forks(void);

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

/*
 * Room to grow (docs/ARCHITECTURE.md, "Public structs"): a public struct that a caller
 * allocates and fills starts with "size_t size", the sizeof the caller was built with.
 * Members are only ever added at the end; the library refuses a size below the struct's
 * first version and reads a later member only when the caller's size covers it, so a
 * program built against an older header keeps working with a newer library.
 */
#define IMS_SIZE_UPTO(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))
/* Whether a caller's struct (one with a size member) is large enough to hold @member. */
#define IMS_HAS_MEMBER(p, type, member) ((p)->size >= IMS_SIZE_UPTO(type, member))
/*
 * sized.c: 0 when @size, that of a struct @type, reaches @first, the first version's
 * size; else -EINVAL, said in one line naming the struct and how to set its size.
 */
int ims_check_min_size(const struct imastream_log *log, const char *type, size_t size,
		       size_t first);
/*
 * sized.c: 0 when @size (that of @p, a struct @type) reaches @first, the first version's
 * size, and whatever lies past @ours (our sizeof) is zero; else -EINVAL (too small) or
 * -E2BIG (a newer caller set members we do not know), said in one line.
 */
int ims_check_size(const struct imastream_log *log, const char *type, const void *p, size_t size,
		   size_t first, size_t ours);
/* ims_check_size() of @p, a struct @type whose first version ended with member @last. */
#define IMS_CHECK_SIZE(log, p, type, last)                                          \
	ims_check_size((log), #type, (p), (p)->size, IMS_SIZE_UPTO(struct type, last), \
		       sizeof(struct type))

/*
 * sized.c: copies a caller's sized struct @src into @dst, ours: the bytes the caller's
 * size covers, zeros after them (a member added later reads as zero, which must mean
 * "as before" for each one added), and dst->size = sizeof(*dst).  Check the size first.
 */
void ims_copy_sized(void *dst, size_t dst_size, const void *src, size_t src_size);
#define IMS_COPY_SIZED(dst, src) \
	(ims_copy_sized((dst), sizeof(*(dst)), (src), (src)->size), (dst)->size = sizeof(*(dst)))

/*
 * Structs the caller allocates and the library fills (results, counts, collected input):
 * the caller sets .size first; IMS_CHECK_OUT_SIZE() refuses a size below the first
 * version (before any work, so nothing is done for a result that cannot be handed back),
 * and IMS_FILL_SIZED() writes ours, @src, into the caller's @dst: the members its size
 * covers, zeros in any it has past ours (a newer caller's, which this library does not
 * fill), and the caller's size left as it was.
 */
#define IMS_CHECK_OUT_SIZE(log, p, type, last) \
	ims_check_min_size((log), #type, (p)->size, IMS_SIZE_UPTO(struct type, last))
void ims_fill_sized(void *dst, const void *src, size_t src_size);
#define IMS_FILL_SIZED(dst, src) ims_fill_sized((dst), (src), sizeof(*(src)))

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

/* "a,b c" → the next word of a list separated by commas or blanks; NULL at the end. */
const char *ims_next_word(const char **p, size_t *len_ret);

#endif /* IMASTREAM_COMMON_PRIVATE_H */
