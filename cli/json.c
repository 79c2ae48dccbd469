// SPDX-License-Identifier: LGPL-2.1-or-later
/* --format json: JSON Lines, one object per item and a summary object last, built in memory and written in one call. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void put(struct cli_json *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (j->len + n + 1 > j->size) {
		size_t size = (j->len + n + 1) * 2;
		char *b = realloc(j->buf, size);

		if (!b) {
			j->oom = true;
			return;
		}
		j->buf = b;
		j->size = size;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = 0;
}

static void putf(struct cli_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct cli_json *j, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(j, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Length of the valid UTF-8 sequence at @s (1 to 4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong three- and four-byte forms, surrogates and code points past U+10FFFF. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

static void put_string(struct cli_json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		put(j, "null", 4);
		return;
	}
	put(j, "\"", 1);
	while (*p) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			putf(j, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			putf(j, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			put(j, (const char *)p++, 1);
		} else if ((n = utf8_len(p)) != 0) {
			put(j, (const char *)p, n);
			p += n;
		} else {
			/* A byte that is no UTF-8: the code point of the same number (Latin-1). */
			putf(j, "\\u%04x", *p++);
		}
	}
	put(j, "\"", 1);
}

static void key(struct cli_json *j, const char *k)
{
	put(j, ",", 1);
	put_string(j, k);
	put(j, ":", 1);
}

void cli_json_begin(struct cli_json *j, const char *record)
{
	j->len = 0;
	put(j, "{\"record\":", 10);
	put_string(j, record);
}

void cli_json_str(struct cli_json *j, const char *k, const char *v)
{
	key(j, k);
	put_string(j, v);
}

void cli_json_hex(struct cli_json *j, const char *k, const uint8_t *v, size_t len)
{
	key(j, k);
	put(j, "\"", 1);
	for (size_t i = 0; i < len; i++)
		putf(j, "%02x", v[i]);
	put(j, "\"", 1);
}

void cli_json_uint(struct cli_json *j, const char *k, uint64_t v)
{
	key(j, k);
	putf(j, "%" PRIu64, v);
}

void cli_json_seconds(struct cli_json *j, const char *k, double v)
{
	key(j, k);
	putf(j, "%.3f", v);
}

void cli_json_bool(struct cli_json *j, const char *k, bool v)
{
	key(j, k);
	put(j, v ? "true" : "false", v ? 4 : 5);
}

int cli_json_put(struct cli_json *j, FILE *out)
{
	put(j, "}\n", 2);
	if (j->oom) {
		cli_error("out of memory");
		j->oom = false;
		return -1;
	}
	return fwrite(j->buf, 1, j->len, out) == j->len ? 0 : -1;
}

void cli_json_free(struct cli_json *j)
{
	free(j->buf);
	*j = (struct cli_json){ 0 };
}

int cli_format_option(const char *cmd, const char *spelled, const char *arg, bool *json)
{
	if (strcmp(arg, "text") && strcmp(arg, "json"))
		return cli_usage_error(cmd, "%s takes 'text' or 'json', not '%s'", spelled, arg);
	*json = !strcmp(arg, "json");
	return CLI_OK;
}
