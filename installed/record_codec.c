// SPDX-License-Identifier: LGPL-2.1-or-later
/* The install record's fields: percent-encoded strings, object types, package paths, and an object line parsed and formatted. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "installed/record_format.h"

/* Percent-encodes @s as one field: every byte outside '!'..'~', and '%'. */
void ims_field_put(FILE *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	if (!*s) {
		fputs("%00", f); /* never an empty field; decodes to "" */
		return;
	}
	/* Runs of plain bytes in one write to the stream: a record has thousands of paths. */
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = 0;

		while (p[n] > ' ' && p[n] < 0x7f && p[n] != '%')
			n++;
		if (n) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		putc('%', f);
		putc(hex[*p >> 4], f);
		putc(hex[*p & 15], f);
		p++;
	}
}

/* Decodes a field in place; false for a bad escape (a %00 in the middle is one too). */
bool ims_field_decode(char *s)
{
	char *o = s;

	if (!strcmp(s, "%00")) {
		*s = 0;
		return true;
	}
	for (char *p = s; *p; p++) {
		int hi, lo;

		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		hi = ims_hex_digit(p[1]);
		lo = hi < 0 ? -1 : ims_hex_digit(p[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return false;
		*o++ = (char)(hi << 4 | lo);
		p += 2;
	}
	*o = 0;
	return true;
}

char ims_record_type_char(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return 'f';
	case S_IFDIR:
		return 'd';
	case S_IFLNK:
		return 'l';
	case S_IFCHR:
		return 'c';
	case S_IFBLK:
		return 'b';
	case S_IFIFO:
		return 'p';
	default:
		return '?';
	}
}

static mode_t type_of(char c)
{
	switch (c) {
	case 'f':
		return S_IFREG;
	case 'd':
		return S_IFDIR;
	case 'l':
		return S_IFLNK;
	case 'c':
		return S_IFCHR;
	case 'b':
		return S_IFBLK;
	case 'p':
		return S_IFIFO;
	default:
		return 0;
	}
}

/* "/a/b" for any accepted spelling of a package path, in @out; false if it is not one. */
bool ims_record_canonical_in(const char *path, char out[PATH_MAX + 1])
{
	const char *rel, *why;

	if (ims_path_relative(path, &rel, &why)) /* which also refuses PATH_MAX or more */
		return false;
	out[0] = '/';
	strcpy(out + 1, rel);
	return true;
}

/* The same, allocated; NULL if it is not a package path (or no memory). */
char *ims_record_canonical(const char *path)
{
	char buf[PATH_MAX + 1];

	return ims_record_canonical_in(path, buf) ? strdup(buf) : NULL;
}

/* Parses one object line; @line is modified. */
int ims_record_parse_line(char *line, struct rfile *out)
{
	char *field[9], *save = NULL, *end;
	const struct imastream_hash_info *hi;
	unsigned long long v[4];
	int n = 0;

	memset(out, 0, sizeof(*out));
	for (char *w = strtok_r(line, " ", &save); w && n < 9; w = strtok_r(NULL, " ", &save))
		field[n++] = w;
	if (n < 8 || n > 9 || strlen(field[0]) != 1 || !type_of(field[0][0]))
		return -EBADMSG;
	for (int i = 0; i < 4; i++) {
		errno = 0;
		v[i] = strtoull(field[1 + i], &end, i == 0 ? 8 : 10);
		if (errno || *end || end == field[1 + i])
			return -EBADMSG;
	}
	if (v[0] > 07777 || v[1] > UINT32_MAX || v[2] > UINT32_MAX)
		return -EBADMSG;
	out->f.mode = type_of(field[0][0]) | (mode_t)v[0];
	out->f.uid = (uid_t)v[1];
	out->f.gid = (gid_t)v[2];
	out->f.size = v[3];
	if (strcmp(field[5], "-")) {
		char *colon = strchr(field[5], ':');
		size_t hexlen;

		if (!colon)
			return -EBADMSG;
		*colon = 0;
		hi = imastream_hash_by_name(field[5]);
		hexlen = strlen(colon + 1);
		if (!hi || hexlen != 2 * hi->digest_size ||
		    hi->digest_size > IMASTREAM_RECORD_MAX_DIGEST)
			return -EBADMSG;
		for (size_t i = 0; i < hi->digest_size; i++) {
			int a = ims_hex_digit(colon[1 + 2 * i]),
			    b = ims_hex_digit(colon[2 + 2 * i]);

			if (a < 0 || b < 0)
				return -EBADMSG;
			out->f.digest[i] = (uint8_t)(a << 4 | b);
		}
		out->f.digest_algo = hi->algo;
	}
	if (strcmp(field[6], "-")) {
		char *save2 = NULL;

		for (char *w = strtok_r(field[6], "+", &save2); w;
		     w = strtok_r(NULL, "+", &save2)) {
			if (!strcmp(w, "ima"))
				out->f.xattrs |= IMASTREAM_RECORD_IMA;
			else if (!strcmp(w, "evm"))
				out->f.xattrs |= IMASTREAM_RECORD_EVM;
			else if (!strcmp(w, "label"))
				out->f.xattrs |= IMASTREAM_RECORD_LABEL;
			else if (!strcmp(w, "config"))
				out->f.xattrs |= IMASTREAM_RECORD_CONFIG;
			else
				return -EBADMSG;
		}
	}
	if (!ims_field_decode(field[7]) || (n > 8 && !ims_field_decode(field[8])))
		return -EBADMSG;
	out->path = ims_record_canonical(field[7]);
	if (!out->path)
		return -EBADMSG;
	if (n > 8) {
		if (S_ISCHR(out->f.mode) || S_ISBLK(out->f.mode)) {
			unsigned int maj, min;

			if (sscanf(field[8], "%u:%u", &maj, &min) != 2)
				return -EBADMSG;
			out->f.rdev = makedev(maj, min);
		} else {
			out->target = strdup(field[8]);
			if (!out->target)
				return -ENOMEM;
		}
	}
	if (S_ISLNK(out->f.mode) && !out->target)
		return -EBADMSG;
	return 0;
}

/* Appends the decimal @v to @out; returns the new end. */
static char *put_dec(char *out, unsigned long long v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*out++ = tmp[--n];
	return out;
}

size_t ims_record_put_head(char *out, const struct imastream_record_file *rf)
{
	static const char hex[] = "0123456789abcdef";
	const struct imastream_hash_info *hi = imastream_hash_by_algo(rf->digest_algo);
	unsigned int perm = (unsigned int)(rf->mode & 07777);
	char *o = out;

	*o++ = ims_record_type_char(rf->mode);
	*o++ = ' ';
	for (int shift = 9; shift >= 0; shift -= 3) /* "%04o" */
		*o++ = (char)('0' + ((perm >> shift) & 7));
	*o++ = ' ';
	o = put_dec(o, (unsigned int)rf->uid);
	*o++ = ' ';
	o = put_dec(o, (unsigned int)rf->gid);
	*o++ = ' ';
	o = put_dec(o, (unsigned long long)rf->size);
	*o++ = ' ';
	if (!rf->digest_algo || !hi) {
		*o++ = '-';
	} else {
		unsigned int n = hi->digest_size < IMASTREAM_RECORD_MAX_DIGEST ?
					 hi->digest_size :
					 IMASTREAM_RECORD_MAX_DIGEST;
		size_t len = strnlen(hi->name, 15);

		memcpy(o, hi->name, len);
		o += len;
		*o++ = ':';
		for (unsigned int i = 0; i < n; i++) {
			*o++ = hex[rf->digest[i] >> 4];
			*o++ = hex[rf->digest[i] & 15];
		}
	}
	*o++ = ' ';
	if (!rf->xattrs)
		*o++ = '-';
	if (rf->xattrs & IMASTREAM_RECORD_IMA)
		o = stpcpy(o, "ima");
	if (rf->xattrs & IMASTREAM_RECORD_EVM)
		o = stpcpy(o, rf->xattrs & IMASTREAM_RECORD_IMA ? "+evm" : "evm");
	if (rf->xattrs & IMASTREAM_RECORD_LABEL)
		o = stpcpy(o, rf->xattrs & (IMASTREAM_RECORD_IMA | IMASTREAM_RECORD_EVM) ?
				      "+label" :
				      "label");
	if (rf->xattrs & IMASTREAM_RECORD_CONFIG)
		o = stpcpy(o, rf->xattrs & ~IMASTREAM_RECORD_CONFIG ? "+config" : "config");
	*o++ = ' ';
	return (size_t)(o - out);
}
