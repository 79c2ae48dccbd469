// SPDX-License-Identifier: LGPL-2.1-or-later
/* The pending-label entry's text form and its strict parser (format in pending_format.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/private.h"
#include "hashers/backend.h"
#include "plugin/core/pending_format.h"

void ims_pending_entry_release(struct ims_pending_entry *e)
{
	if (!e)
		return;
	free(e->path);
	free(e->package);
	for (unsigned int i = 0; i < e->n_xattrs; i++)
		free(e->xattrs[i].value);
	memset(e, 0, sizeof(*e));
}

static int say(char *why, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* One line of @buf from *@pos, without its '\n'; NULL when the bytes end without one. */
static const char *next_line(const char *buf, size_t len, size_t *pos, size_t *line_len)
{
	const char *start = buf + *pos, *nl;

	if (*pos >= len)
		return NULL;
	nl = memchr(start, '\n', len - *pos);
	if (!nl)
		return NULL;
	*line_len = (size_t)(nl - start);
	*pos += *line_len + 1;
	return start;
}

/* "KEY VALUE" with exactly @key: the value's start and length, or NULL. */
static const char *value_of(const char *line, size_t n, const char *key, size_t *vlen)
{
	size_t k = strlen(key);

	if (n <= k || memcmp(line, key, k) != 0 || line[k] != ' ')
		return NULL;
	*vlen = n - k - 1;
	return line + k + 1;
}

static int hex_decode(const char *s, size_t n, uint8_t *out, size_t max, size_t *len_ret)
{
	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = ims_hex_digit((unsigned char)s[i]),
		    lo = ims_hex_digit((unsigned char)s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	*len_ret = n / 2;
	return 0;
}

/* A percent-escaped absolute path, every component a real name (no "", ".", ".."). */
static char *path_decode(const char *s, size_t n)
{
	char *p = malloc(n + 1), *c;
	size_t o = 0;

	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= 0x20 || ch >= 0x7f)
			goto bad; /* those are always escaped */
		if (ch == '%') {
			int hi, lo;

			if (i + 2 >= n)
				goto bad;
			hi = ims_hex_digit((unsigned char)s[i + 1]);
			lo = ims_hex_digit((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0 || (hi << 4 | lo) == 0)
				goto bad;
			ch = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		p[o++] = (char)ch;
	}
	p[o] = '\0';
	if (p[0] != '/' || o < 2)
		goto bad;
	for (c = p + 1;;) {
		char *end = strchr(c, '/');
		size_t clen = end ? (size_t)(end - c) : strlen(c);

		if (clen == 0 || (clen == 1 && c[0] == '.') ||
		    (clen == 2 && c[0] == '.' && c[1] == '.'))
			goto bad;
		if (!end)
			break;
		c = end + 1;
	}
	return p;
bad:
	free(p);
	errno = EINVAL;
	return NULL;
}

/* A decimal id below (uid_t)-1, which means "no id". */
static int parse_id(const char *s, size_t n, unsigned int *out)
{
	unsigned long long v = 0;

	if (n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v >= 0xffffffffULL)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* "A B": two ids. */
static int parse_pair(const char *s, size_t n, unsigned int *a, unsigned int *b)
{
	const char *sp = memchr(s, ' ', n);

	if (!sp)
		return -1;
	return parse_id(s, (size_t)(sp - s), a) || parse_id(sp + 1, n - (size_t)(sp - s) - 1, b) ?
		       -1 :
		       0;
}

static int parse_mode(const char *s, size_t n, mode_t *out)
{
	unsigned int v = 0;

	if (n == 0 || n > 7)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -1;
		v = v * 8 + (unsigned)(s[i] - '0');
	}
	switch (v & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		*out = (mode_t)v;
		return 0;
	default:
		return -1;
	}
}

/* "ALGO HEX" or "none". */
static int parse_digest(const char *s, size_t n, struct ims_pending_entry *e)
{
	const struct imastream_hash_info *hi;
	const char *sp;
	char name[32];

	if (n == 4 && memcmp(s, "none", 4) == 0)
		return 0;
	sp = memchr(s, ' ', n);
	if (!sp || (size_t)(sp - s) >= sizeof(name))
		return -1;
	memcpy(name, s, (size_t)(sp - s));
	name[sp - s] = '\0';
	hi = imastream_hash_by_name(name);
	if (!hi ||
	    hex_decode(sp + 1, n - (size_t)(sp - s) - 1, e->digest, sizeof(e->digest),
		       &e->digest_len) ||
	    e->digest_len != hi->digest_size)
		return -1;
	e->digest_algo = hi->algo;
	return 0;
}

/* "security.NAME HEX": a security xattr, once per entry. */
static int parse_xattr(const char *s, size_t n, struct ims_pending_entry *e, char *why,
		       size_t why_size)
{
	struct ims_pending_xattr *x;
	const char *sp = memchr(s, ' ', n);
	size_t nlen, hlen;

	if (!sp)
		return say(why, why_size, -EBADMSG, "an xattr line without a value");
	nlen = (size_t)(sp - s);
	hlen = n - nlen - 1;
	if (nlen <= 9 || nlen >= sizeof(x->name) || memcmp(s, "security.", 9) != 0)
		return say(why, why_size, -EBADMSG, "an xattr outside the security namespace");
	for (size_t i = 9; i < nlen; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '/')
			return say(why, why_size, -EBADMSG, "a bad xattr name");
	if (e->n_xattrs == IMS_PENDING_MAX_XATTRS)
		return say(why, why_size, -EBADMSG, "more than %d xattrs", IMS_PENDING_MAX_XATTRS);
	x = &e->xattrs[e->n_xattrs];
	memcpy(x->name, s, nlen);
	x->name[nlen] = '\0';
	for (unsigned int i = 0; i < e->n_xattrs; i++)
		if (strcmp(e->xattrs[i].name, x->name) == 0)
			return say(why, why_size, -EBADMSG, "%s twice", x->name);
	if (hlen == 0 || hlen / 2 > IMS_PENDING_MAX_VALUE)
		return say(why, why_size, -EBADMSG, "%s: an empty or too long value", x->name);
	x->value = malloc(hlen / 2 + 1);
	if (!x->value)
		return say(why, why_size, -ENOMEM, "out of memory");
	if (hex_decode(sp + 1, hlen, x->value, hlen / 2 + 1, &x->len)) {
		free(x->value);
		x->value = NULL;
		return say(why, why_size, -EBADMSG, "%s: a value that is not hex", x->name);
	}
	e->n_xattrs++;
	return 0;
}

int ims_pending_parse(const char *buf, size_t len, struct ims_pending_entry *e, char *why,
		      size_t why_size)
{
	static const char *const keys[] = { "path",  "package",	    "mode",
					    "owner", "built-owner", "digest" };
	const char *line, *v;
	size_t pos = 0, n, vlen;
	unsigned int version;
	int err;

	memset(e, 0, sizeof(*e));
	if (!buf || len > IMS_PENDING_MAX_SIZE)
		return say(why, why_size, -EBADMSG, "larger than any entry");
	if (memchr(buf, '\0', len))
		return say(why, why_size, -EBADMSG, "a NUL byte");
	line = next_line(buf, len, &pos, &n);
	if (!line || !(v = value_of(line, n, "imastream-pending", &vlen)) ||
	    parse_id(v, vlen, &version) || version == 0)
		return say(why, why_size, -EBADMSG, "not a pending-label entry");
	if (version > IMS_PENDING_VERSION)
		return say(why, why_size, -EPROTONOSUPPORT,
			   "written in format %u, newer than this imastream's %d", version,
			   IMS_PENDING_VERSION);
	for (unsigned int k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		unsigned int a, b;

		line = next_line(buf, len, &pos, &n);
		if (!line)
			return say(why, why_size, -EBADMSG, "truncated before \"%s\"", keys[k]);
		v = value_of(line, n, keys[k], &vlen);
		if (!v)
			return say(why, why_size, -EBADMSG, "\"%s\" expected", keys[k]);
		switch (k) {
		case 0:
			e->path = path_decode(v, vlen);
			if (!e->path)
				return say(why, why_size, -EBADMSG,
					   "a path that is not absolute and plain");
			break;
		case 1:
			if (!vlen)
				return say(why, why_size, -EBADMSG, "an empty package name");
			for (size_t i = 0; i < vlen; i++)
				if (v[i] <= 0x20 || v[i] >= 0x7f)
					return say(why, why_size, -EBADMSG, "a bad package name");
			e->package = strndup(v, vlen);
			if (!e->package)
				return say(why, why_size, -ENOMEM, "out of memory");
			break;
		case 2:
			if (parse_mode(v, vlen, &e->mode))
				return say(why, why_size, -EBADMSG, "a bad mode");
			break;
		case 3:
		case 4:
			if (parse_pair(v, vlen, &a, &b))
				return say(why, why_size, -EBADMSG, "a bad %s", keys[k]);
			if (k == 3) {
				e->uid = a;
				e->gid = b;
			} else {
				e->built_uid = a;
				e->built_gid = b;
			}
			break;
		default:
			if (parse_digest(v, vlen, e))
				return say(why, why_size, -EBADMSG, "a bad digest");
			if (S_ISREG(e->mode) != (e->digest_algo != 0))
				return say(why, why_size, -EBADMSG,
					   S_ISREG(e->mode) ?
						   "a regular file without a digest" :
						   "a digest for a file that is not regular");
		}
	}
	for (;;) {
		line = next_line(buf, len, &pos, &n);
		if (!line)
			return say(why, why_size, -EBADMSG, "truncated (no \"end\")");
		if (n == 3 && memcmp(line, "end", 3) == 0)
			break;
		v = value_of(line, n, "xattr", &vlen);
		if (!v)
			return say(why, why_size, -EBADMSG, "\"xattr\" or \"end\" expected");
		err = parse_xattr(v, vlen, e, why, why_size);
		if (err)
			return err;
	}
	if (pos != len)
		return say(why, why_size, -EBADMSG, "bytes after \"end\"");
	if (!e->n_xattrs)
		return say(why, why_size, -EBADMSG, "no value to write");
	return 0;
}

/* Appends to a growing buffer; on failure the buffer is freed and *@b set to NULL. */
struct out {
	char *b;
	size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!o->b)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->b + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			free(o->b);
			o->b = NULL;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		char *nb = realloc(o->b, o->cap * 2 + (size_t)n);

		if (!nb) {
			free(o->b);
			o->b = NULL;
			return;
		}
		o->b = nb;
		o->cap = o->cap * 2 + (size_t)n;
	}
}

static void put_hex(struct out *o, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n && o->b; i++)
		put(o, "%02x", v[i]);
}

int ims_pending_format(const struct ims_pending_entry *e, char **buf_ret, size_t *len_ret)
{
	const struct imastream_hash_info *hi = NULL;
	struct out o = { .cap = 512 };

	if (!e || !e->path || e->path[0] != '/' || !e->package || !e->n_xattrs ||
	    e->n_xattrs > IMS_PENDING_MAX_XATTRS)
		return -EINVAL;
	if (e->digest_algo) {
		for (unsigned int i = 0; (hi = imastream_hash_info_at(i)); i++)
			if (hi->algo == e->digest_algo)
				break;
		if (!hi || hi->digest_size != e->digest_len)
			return -EINVAL;
	}
	o.b = malloc(o.cap);
	put(&o, "imastream-pending %d\npath ", IMS_PENDING_VERSION);
	for (const unsigned char *p = (const unsigned char *)e->path; *p; p++)
		put(&o, (*p <= 0x20 || *p >= 0x7f || *p == '%') ? "%%%02x" : "%c", *p);
	put(&o, "\npackage %s\nmode %07o\nowner %u %u\nbuilt-owner %u %u\ndigest ", e->package,
	    (unsigned int)e->mode, (unsigned int)e->uid, (unsigned int)e->gid,
	    (unsigned int)e->built_uid, (unsigned int)e->built_gid);
	if (hi) {
		put(&o, "%s ", hi->name);
		put_hex(&o, e->digest, e->digest_len);
	} else {
		put(&o, "none");
	}
	for (unsigned int i = 0; i < e->n_xattrs; i++) {
		put(&o, "\nxattr %s ", e->xattrs[i].name);
		put_hex(&o, e->xattrs[i].value, e->xattrs[i].len);
	}
	put(&o, "\nend\n");
	if (!o.b)
		return -ENOMEM;
	*buf_ret = o.b;
	*len_ret = o.len;
	return 0;
}
