// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reads a whole IMA measurement list, ascii or binary, into entries with the bytes their template hash covers. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attest.h"
#include "attest/tpm.h"
#include "common/private.h"

/* IMA_TEMPLATE_NAME_LEN_MAX is 15, but a custom template is named by its format. */
#define TEMPLATE_NAME_MAX 255

/* A growing byte buffer. */
struct bytes {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put(struct bytes *b, const void *v, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		uint8_t *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void put_le32(struct bytes *b, uint32_t v)
{
	uint8_t le[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(b, le, 4);
}

static void put_str(struct bytes *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_hex(struct bytes *b, const uint8_t *v, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		char h[2] = { digits[v[i] >> 4], digits[v[i] & 15] };

		put(b, h, 2);
	}
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int say(char *why, size_t whylen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *why, size_t whylen, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return err;
}

/* The d-ng field of the ng templates: "ALGO:" NUL DIGEST, with its length. */
static void put_digest_ng(struct bytes *b, const char *algo, const uint8_t *d, size_t n)
{
	put_le32(b, (uint32_t)(strlen(algo) + 2 + n));
	put_str(b, algo);
	put(b, ":", 2); /* the colon and the NUL after it */
	put(b, d, n);
}

/* The n-ng field: the name and its NUL, with its length. */
static void put_name_ng(struct bytes *b, const char *name)
{
	put_le32(b, (uint32_t)strlen(name) + 1);
	put(b, name, strlen(name) + 1);
}

/*
 * The template data of an entry of the ascii list, as the kernel hashed it
 * (ima_calc_field_array_hash(): each field's 32-bit length, then the field; the legacy ima
 * template: the SHA-1 and the name in 256 bytes, no lengths).
 */
static int template_data(const struct attest_entry *e, struct bytes *d, const char **why)
{
	d->len = 0;
	if (!strcmp(e->template, "ima")) {
		uint8_t name[ATTEST_IMA_NAME_MAX + 1] = { 0 };

		if (strlen(e->name) > ATTEST_IMA_NAME_MAX) {
			*why = "an ima entry whose name is longer than 255 bytes";
			return -EINVAL;
		}
		memcpy(name, e->name, strlen(e->name));
		put(d, e->digest, e->digest_len);
		put(d, name, sizeof(name));
		return d->oom ? -ENOMEM : 0;
	}
	put_digest_ng(d, e->algo, e->digest, e->digest_len);
	put_name_ng(d, e->name);
	if (!strcmp(e->template, "ima-sig")) {
		put_le32(d, (uint32_t)e->sig_len);
		put(d, e->sig, e->sig_len);
	} else if (!strcmp(e->template, "ima-buf")) {
		size_t n = strlen(e->buf_hex);

		if (n % 2) {
			*why = "an ima-buf buffer that is not hex";
			return -EINVAL;
		}
		put_le32(d, (uint32_t)(n / 2));
		for (size_t i = 0; i < n; i += 2) {
			int hi = ims_hex_digit(e->buf_hex[i]),
			    lo = ims_hex_digit(e->buf_hex[i + 1]);
			uint8_t byte = (uint8_t)(hi << 4 | lo);

			if (hi < 0 || lo < 0) {
				*why = "an ima-buf buffer that is not hex";
				return -EINVAL;
			}
			put(d, &byte, 1);
		}
	}
	return d->oom ? -ENOMEM : 0;
}

struct walk {
	int (*fn)(void *arg, const struct attest_measurement *m);
	void *arg;
	FILE *ascii;
	char *why;
	size_t whylen;
	struct bytes data, line;
	struct attest_entry *e;
	uint8_t thash[IMASTREAM_HASH_MAX_DIGEST];
};

static int emit(struct walk *w, struct attest_measurement *m)
{
	m->data = w->data.p;
	m->line = (const char *)w->line.p;
	if (w->ascii && (fputs(m->line, w->ascii) < 0 || putc('\n', w->ascii) < 0))
		return say(w->why, w->whylen, -ENOMEM, "cannot keep the list in memory");
	return w->fn(w->arg, m);
}

static int ascii_entry(struct walk *w, const char *text, size_t len, unsigned long index)
{
	struct attest_measurement m = { .index = index };
	const char *sp1, *sp2, *why = NULL;
	char *copy;
	long hexlen;
	int err;

	w->line.len = 0;
	put(&w->line, text, len);
	copy = strndup(text, len);
	if (!copy || w->line.oom) {
		free(copy);
		return say(w->why, w->whylen, -ENOMEM, "out of memory");
	}
	sp1 = memchr(text, ' ', len);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - text)) : NULL;
	hexlen = sp2 ? sp2 - (sp1 + 1) : -1;
	err = attest_parse_line(copy, w->e, &why);
	if (err == -EOPNOTSUPP) {
		err = say(w->why, w->whylen, -EINVAL,
			  "replay: entry %lu: template %s cannot be rebuilt from the ascii list; "
			  "give "
			  "the binary list",
			  index, w->e->template);
		goto out;
	}
	if (err || hexlen <= 0 || hexlen % 2 || hexlen / 2 > IMASTREAM_HASH_MAX_DIGEST) {
		err = say(w->why, w->whylen, -EINVAL, "list: entry %lu: %s", index,
			  why ? why : "the template hash is not of a known size");
		goto out;
	}
	for (long i = 0; i < hexlen / 2; i++)
		w->thash[i] = (uint8_t)(ims_hex_digit(sp1[1 + 2 * i]) << 4 |
					ims_hex_digit(sp1[2 + 2 * i]));
	err = template_data(w->e, &w->data, &why);
	if (err) {
		err = say(w->why, w->whylen, err, "list: entry %lu: %s", index,
			  why ? why : "out of memory");
		goto out;
	}
	m.pcr = w->e->pcr;
	m.template = w->e->template;
	m.thash = w->thash;
	m.thash_len = (size_t)hexlen / 2;
	m.data_len = w->data.len;
	err = emit(w, &m);
out:
	free(copy);
	return err;
}

static int walk_ascii(struct walk *w, const uint8_t *buf, size_t len)
{
	const char *p = (const char *)buf, *end = p + len;
	unsigned long lineno = 0;
	int err = 0;

	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		if (memchr(p, '\0', n))
			return say(w->why, w->whylen, -EINVAL, "list: line %lu holds a NUL byte",
				   lineno);
		if (n)
			err = ascii_entry(w, p, n, lineno);
		p += n + 1;
	}
	return err;
}

/* The binary list's template hash size: the first that makes the first entry's template name readable. */
static size_t binary_hash_size(const uint8_t *buf, size_t len)
{
	static const size_t sizes[] = { 20, 32, 48, 64 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t off = 4 + sizes[i];
		uint32_t n;
		bool ok = true;

		if (len < off + 4)
			break;
		n = le32(buf + off);
		if (!n || n > TEMPLATE_NAME_MAX || len - off - 4 < n)
			continue;
		for (uint32_t k = 0; k < n && ok; k++) {
			uint8_t c = buf[off + 4 + k];

			ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			     c == '_' || c == '|';
		}
		if (ok)
			return sizes[i];
	}
	return 0;
}

/* One field of a binary entry's template data: a 32-bit length and the bytes. */
static const uint8_t *field(const uint8_t **p, const uint8_t *end, uint32_t *n)
{
	const uint8_t *f;

	if (end - *p < 4)
		return NULL;
	*n = le32(*p);
	if ((size_t)(end - *p - 4) < *n)
		return NULL;
	f = *p + 4;
	*p = f + *n;
	return f;
}

/* The ascii line of a binary entry of a template attest check judges, as the kernel prints it. */
static const char *render_ng(struct bytes *l, const char *template, const uint8_t *data, size_t len)
{
	const uint8_t *p = data, *end = data + len, *d, *n, *x = NULL;
	uint32_t dn, nn, xn = 0;
	const uint8_t *colon;
	bool sig = !strcmp(template, "ima-sig"), buf = !strcmp(template, "ima-buf");

	d = field(&p, end, &dn);
	n = d ? field(&p, end, &nn) : NULL;
	if (n && (sig || buf))
		x = field(&p, end, &xn);
	if (!d || !n || ((sig || buf) && !x) || p != end)
		return "template data whose fields do not add up to its length";
	colon = memchr(d, ':', dn);
	if (!colon || colon + 1 >= d + dn || colon[1] != '\0')
		return "a file digest without its ALGO: prefix";
	if (!nn || n[nn - 1] != '\0' || memchr(n, '\0', nn - 1) || memchr(n, '\n', nn))
		return "a file name that is not one NUL-terminated line";
	put(l, d, (size_t)(colon + 1 - d));
	put_hex(l, colon + 2, (size_t)(d + dn - colon - 2));
	put_str(l, " ");
	put_str(l, (const char *)n);
	if (sig || buf) {
		put_str(l, " ");
		put_hex(l, x, xn);
	}
	return NULL;
}

/* The line's head, put before what the template's fields made: "PCR TEMPLATE-HASH TEMPLATE ". */
static void put_line_head(struct walk *w, unsigned int pcr, size_t hsize, const char *tname)
{
	struct bytes head = { 0 };
	char num[16];

	snprintf(num, sizeof(num), "%u ", pcr);
	put_str(&head, num);
	put_hex(&head, w->thash, hsize);
	put_str(&head, " ");
	put_str(&head, tname);
	put_str(&head, " ");
	put(&head, w->line.p, w->line.len);
	free(w->line.p);
	w->line = head;
}

static int walk_binary(struct walk *w, const uint8_t *buf, size_t len)
{
	size_t hsize = binary_hash_size(buf, len), off = 0;
	unsigned long index = 0;
	char tname[TEMPLATE_NAME_MAX + 1];
	int err = 0;

	if (len >= 4 && le32(buf) > 23 && ims_get_be32(buf) <= 23)
		return say(w->why, w->whylen, -EINVAL,
			   "binary list: entry 1: its PCR is %u read little-endian, %u read "
			   "big-endian: "
			   "a list in the other byte order (a big-endian machine's without "
			   "ima_canonical_fmt); this check reads little-endian lists",
			   le32(buf), ims_get_be32(buf));
	if (!hsize)
		return say(w->why, w->whylen, -EINVAL,
			   "binary list: entry 1: no template name after a template hash of 20, "
			   "32, 48 or 64 "
			   "bytes: not a binary measurement list");
	while (off < len && !err) {
		struct attest_measurement m = { .index = ++index };
		const uint8_t *p = buf + off, *end = buf + len, *data;
		uint32_t nlen, dlen;
		const char *bad = NULL;

		if ((size_t)(end - p) < 4 + hsize + 4)
			return say(w->why, w->whylen, -EINVAL, "binary list: entry %lu: cut short",
				   index);
		m.pcr = le32(p);
		if (m.pcr > 23)
			return say(w->why, w->whylen, -EINVAL,
				   "binary list: entry %lu: PCR %u is not 0 to 23", index, m.pcr);
		memcpy(w->thash, p + 4, hsize);
		p += 4 + hsize;
		nlen = le32(p);
		p += 4;
		if (!nlen || nlen > TEMPLATE_NAME_MAX || (size_t)(end - p) < nlen ||
		    memchr(p, '\0', nlen))
			return say(w->why, w->whylen, -EINVAL,
				   "binary list: entry %lu: no template name", index);
		memcpy(tname, p, nlen);
		tname[nlen] = '\0';
		p += nlen;
		w->data.len = 0;
		w->line.len = 0;
		if (!strcmp(tname, "ima")) {
			/* The d field without its length, the name with its length and no NUL. */
			uint8_t name[ATTEST_IMA_NAME_MAX + 1] = { 0 };
			uint32_t n;

			if ((size_t)(end - p) < 20 + 4 ||
			    (n = le32(p + 20)) > ATTEST_IMA_NAME_MAX || (size_t)(end - p - 24) < n)
				return say(w->why, w->whylen, -EINVAL,
					   "binary list: entry %lu: an ima entry cut short", index);
			memcpy(name, p + 24, n);
			put(&w->data, p, 20);
			put(&w->data, name, sizeof(name));
			if (memchr(name, '\0', n) || memchr(name, '\n', n))
				bad = "a file name that is not one line";
			put_hex(&w->line, p, 20);
			put_str(&w->line, " ");
			put(&w->line, name, n);
			p += 24 + n;
		} else {
			if ((size_t)(end - p) < 4 || (dlen = le32(p)) > (size_t)(end - p - 4))
				return say(w->why, w->whylen, -EINVAL,
					   "binary list: entry %lu: template data cut short",
					   index);
			data = p + 4;
			put(&w->data, data, dlen);
			p = data + dlen;
			if (!strcmp(tname, "ima-ng") || !strcmp(tname, "ima-sig") ||
			    !strcmp(tname, "ima-buf"))
				bad = render_ng(&w->line, tname, data, dlen);
			else
				put_str(&w->line,
					"-"); /* a template the policy judge does not read */
		}
		if (bad)
			return say(w->why, w->whylen, -EINVAL, "binary list: entry %lu: %s", index,
				   bad);
		put_line_head(w, m.pcr, hsize, tname);
		if (w->data.oom || w->line.oom)
			return say(w->why, w->whylen, -ENOMEM, "out of memory");
		m.template = tname;
		m.thash = w->thash;
		m.thash_len = hsize;
		m.data_len = w->data.len;
		err = emit(w, &m);
		off = (size_t)(p - buf);
	}
	return err;
}

int attest_list_walk(const uint8_t *buf, size_t len,
		     int (*fn)(void *arg, const struct attest_measurement *m), void *arg,
		     FILE *ascii, char *why, size_t whylen)
{
	struct walk w = { fn, arg, ascii, why, whylen, { 0 }, { 0 }, NULL, { 0 } };
	int err;

	w.e = malloc(sizeof(*w.e));
	if (!w.e)
		return say(why, whylen, -ENOMEM, "out of memory");
	if (!len)
		err = 0;
	else if (buf[0] >= '0' && buf[0] <= '9')
		err = walk_ascii(&w, buf, len);
	else
		err = walk_binary(&w, buf, len);
	free(w.e);
	free(w.data.p);
	free(w.line.p);
	return err;
}
