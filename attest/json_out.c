// SPDX-License-Identifier: LGPL-2.1-or-later
/* A small streaming JSON writer: no allocation, one write per 64 KiB, strings escaped per RFC 8259. */
#include <errno.h>
#include <unistd.h>

#include "attest/json_out.h"

void json_out_init(struct json_out *o, int fd)
{
	o->fd = fd;
	o->err = 0;
	o->len = 0;
}

int json_out_flush(struct json_out *o)
{
	size_t off = 0;

	while (!o->err && off < o->len) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	o->len = 0;
	return o->err;
}

void json_out_raw(struct json_out *o, const char *s, size_t len)
{
	while (len) {
		size_t n = sizeof(o->buf) - o->len;

		if (!n) {
			json_out_flush(o);
			continue;
		}
		if (n > len)
			n = len;
		memcpy(o->buf + o->len, s, n);
		o->len += n;
		s += n;
		len -= n;
	}
}

static inline void put(struct json_out *o, char c)
{
	if (o->len == sizeof(o->buf))
		json_out_flush(o);
	o->buf[o->len++] = c;
}

static const char hexdigits[] = "0123456789abcdef";

size_t json_utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range (RFC 3629, section 4) */

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0; /* a continuation byte, or an overlong two-byte form */
	if (c < 0xe0)
		n = 2;
	else if (c < 0xf0) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c < 0xf5) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else
		return 0;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

bool json_utf8_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = json_utf8_seq(u + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	return true;
}

void json_out_str(struct json_out *o, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	put(o, '"');
	while (i < len) {
		size_t run = i, n;

		/* The common case: a run of printable ASCII copied at once. */
		while (run < len && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		json_out_raw(o, s + i, run - i);
		i = run;
		if (i == len)
			break;
		if (u[i] >= 0x80) {
			n = json_utf8_seq(u + i, len - i);
			if (n)
				json_out_raw(o, s + i, n);
			else
				json_out_raw(o, "\\ufffd", 6);
			i += n ? n : 1;
			continue;
		}
		put(o, '\\');
		switch (u[i]) {
		case '"': put(o, '"'); break;
		case '\\': put(o, '\\'); break;
		case '\b': put(o, 'b'); break;
		case '\f': put(o, 'f'); break;
		case '\n': put(o, 'n'); break;
		case '\r': put(o, 'r'); break;
		case '\t': put(o, 't'); break;
		default:
			json_out_raw(o, "u00", 3);
			put(o, hexdigits[u[i] >> 4]);
			put(o, hexdigits[u[i] & 15]);
		}
		i++;
	}
	put(o, '"');
}

void json_out_hex(struct json_out *o, const uint8_t *bytes, size_t len)
{
	put(o, '"');
	for (size_t i = 0; i < len; i++) {
		put(o, hexdigits[bytes[i] >> 4]);
		put(o, hexdigits[bytes[i] & 15]);
	}
	put(o, '"');
}
