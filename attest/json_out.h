/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small streaming JSON writer: buffered output to a file descriptor, strings escaped per RFC 8259. */
#ifndef IMASTREAM_ATTEST_JSON_OUT_H
#define IMASTREAM_ATTEST_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct json_out {
	int fd;
	int err;        /* the first write error, -errno; later output is dropped */
	size_t len;
	char buf[65536];
};

void json_out_init(struct json_out *o, int fd);
/* @s as it is: punctuation, numbers, literals. */
void json_out_raw(struct json_out *o, const char *s, size_t len);
static inline void json_out_lit(struct json_out *o, const char *s)
{
	json_out_raw(o, s, strlen(s));
}
/*
 * @s as a JSON string, quotes included: '"' and '\' escaped, control characters
 * (U+0000 to U+001F) as \b \f \n \r \t or \u00XX, everything else as it is (no '/'
 * escape). A byte that does not start or continue well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF) is written as \ufffd: JSON
 * text is Unicode, and Python's json refuses a file that is not UTF-8.
 */
void json_out_str(struct json_out *o, const char *s, size_t len);
/* @len bytes as lowercase hex digits, quoted. */
void json_out_hex(struct json_out *o, const uint8_t *bytes, size_t len);
/* Writes what is buffered. Return: 0, or the first error (-errno). */
int json_out_flush(struct json_out *o);

/* The length of the well-formed UTF-8 sequence at @s (1 to 4), 0 if it is not one. */
size_t json_utf8_seq(const unsigned char *s, size_t len);
/* Whether all of @s is well-formed UTF-8. */
bool json_utf8_valid(const char *s, size_t len);

#endif /* IMASTREAM_ATTEST_JSON_OUT_H */
