// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rewrites a well-formed rpm package into a hostile one that rpmbuild would never make:
 * renamed, duplicated or dropped entries, symlinks under files, lying sizes, flipped
 * content.  The header gets a fresh SHA256 header digest, so a reader gets past the
 * header check and meets the hostile part where it matters.
 *
 *   rpm-hostile IN.rpm OUT.rpm OP [ARGS]...
 *     rename OLD NEW            header and payload
 *     cpio-rename OLD NEW       payload only (the header keeps OLD)
 *     flip-content PATH         xor the first content byte (valid stream, wrong digest)
 *     dup-payload PATH          the payload carries PATH twice
 *     drop-payload PATH         the payload lacks PATH
 *     set-size PATH N           the header declares N bytes for PATH
 *     make-symlink PATH TARGET  PATH becomes a symlink to TARGET (header and payload)
 *
 * A test tool: it trusts its input package (one that rpmbuild made), but still checks
 * every length it reads, and exits 99 on anything unexpected.  It is one-shot and
 * leaves its memory to exit (the tests run it without leak detection).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <rpm/header.h>
#include <rpm/rpmio.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "common/rpmtag-compat.h"

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("rpm-hostile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(99);
}

/* One cpio "newc" record. */
struct rec {
	char hdr[111]; /* the 110 header characters, NUL-terminated */
	char *name;
	uint8_t *data;
	size_t size;
};

struct cpio {
	struct rec *recs;
	size_t n;
};

static unsigned long field(const char *hdr, int i)
{
	char buf[9];

	memcpy(buf, hdr + 6 + 8 * i, 8);
	buf[8] = 0;
	return strtoul(buf, NULL, 16);
}

static void set_field(char *hdr, int i, uint32_t v)
{
	char buf[9];

	snprintf(buf, sizeof(buf), "%08x", (unsigned int)v);
	memcpy(hdr + 6 + 8 * i, buf, 8);
}

enum { F_MODE = 1, F_FILESIZE = 6, F_NAMESIZE = 11 };

static size_t pad4(size_t n)
{
	return (4 - n % 4) % 4;
}

static void parse_cpio(const uint8_t *p, size_t len, struct cpio *c)
{
	size_t off = 0;

	for (;;) {
		struct rec r;
		size_t ns;

		if (len - off < 110 || memcmp(p + off, "07070", 5))
			die("payload: bad cpio header at %zu", off);
		memcpy(r.hdr, p + off, 110);
		r.hdr[110] = 0;
		off += 110;
		ns = field(r.hdr, F_NAMESIZE);
		r.size = field(r.hdr, F_FILESIZE);
		if (ns == 0 || ns > len - off)
			die("payload: bad name size at %zu", off);
		r.name = strndup((const char *)p + off, ns);
		off += ns + pad4(110 + ns);
		if (off > len || r.size > len - off)
			die("payload: bad file size for %s", r.name);
		r.data = malloc(r.size + 1);
		memcpy(r.data, p + off, r.size);
		off += r.size + pad4(r.size);
		c->recs = realloc(c->recs, (c->n + 1) * sizeof(*c->recs));
		c->recs[c->n++] = r;
		if (!strcmp(r.name, "TRAILER!!!"))
			return;
		if (off > len)
			die("payload: truncated");
	}
}

static void put(uint8_t **buf, size_t *len, const void *p, size_t n)
{
	*buf = realloc(*buf, *len + n);
	memcpy(*buf + *len, p, n);
	*len += n;
}

static void write_cpio(const struct cpio *c, uint8_t **out, size_t *len)
{
	static const uint8_t zeros[4];

	for (size_t i = 0; i < c->n; i++) {
		const struct rec *r = &c->recs[i];
		size_t ns = strlen(r->name) + 1;
		char hdr[111];

		memcpy(hdr, r->hdr, 111);
		set_field(hdr, F_NAMESIZE, ns);
		set_field(hdr, F_FILESIZE, r->size);
		put(out, len, hdr, 110);
		put(out, len, r->name, ns);
		put(out, len, zeros, pad4(110 + ns));
		put(out, len, r->data, r->size);
		put(out, len, zeros, pad4(r->size));
	}
}

static struct rec *find_rec(struct cpio *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++) {
		const char *n = c->recs[i].name;

		if (n[0] == '.' && n[1] == '/')
			n++;
		if (!strcmp(n, path))
			return &c->recs[i];
	}
	die("payload has no entry %s", path);
	return NULL;
}

/* The header's file list as full paths, and back. */
static char **get_paths(Header h, rpm_count_t *n)
{
	struct rpmtd_s bn, dn, di;
	char **paths;

	if (!headerGet(h, RPMTAG_BASENAMES, &bn, HEADERGET_MINMEM) ||
	    !headerGet(h, RPMTAG_DIRNAMES, &dn, HEADERGET_MINMEM) ||
	    !headerGet(h, RPMTAG_DIRINDEXES, &di, HEADERGET_MINMEM))
		die("header has no file list");
	*n = rpmtdCount(&bn);
	paths = calloc(*n, sizeof(*paths));
	for (rpm_count_t i = 0; i < *n; i++) {
		uint32_t d = ((uint32_t *)di.data)[i];
		const char *dir = ((const char **)dn.data)[d];
		const char *base = ((const char **)bn.data)[i];

		if (asprintf(&paths[i], "%s%s", dir, base) < 0)
			die("out of memory");
	}
	rpmtdFreeData(&bn);
	rpmtdFreeData(&dn);
	rpmtdFreeData(&di);
	return paths;
}

static void put_paths(Header h, char **paths, rpm_count_t n)
{
	const char **bases = calloc(n, sizeof(*bases)), **dirs = calloc(n, sizeof(*dirs));
	uint32_t *idx = calloc(n, sizeof(*idx));
	rpm_count_t nd = 0;

	for (rpm_count_t i = 0; i < n; i++) {
		char *slash = strrchr(paths[i], '/');
		char *dir = strndup(paths[i], (size_t)(slash - paths[i]) + 1);
		rpm_count_t d;

		bases[i] = slash + 1;
		for (d = 0; d < nd && strcmp(dirs[d], dir); d++)
			;
		if (d == nd)
			dirs[nd++] = dir;
		else
			free(dir);
		idx[i] = d;
	}
	headerDel(h, RPMTAG_BASENAMES);
	headerDel(h, RPMTAG_DIRNAMES);
	headerDel(h, RPMTAG_DIRINDEXES);
	headerPutStringArray(h, RPMTAG_BASENAMES, bases, n);
	headerPutStringArray(h, RPMTAG_DIRNAMES, dirs, nd);
	headerPutUint32(h, RPMTAG_DIRINDEXES, idx, n);
}

static rpm_count_t file_index(Header h, const char *path)
{
	rpm_count_t n;
	char **paths = get_paths(h, &n);

	for (rpm_count_t i = 0; i < n; i++)
		if (!strcmp(paths[i], path))
			return i;
	die("header has no file %s", path);
	return 0;
}

/* Replaces element @i of a uint32, uint16 or string array tag. */
static void set_u32(Header h, rpmTagVal tag, rpm_count_t i, uint32_t v)
{
	struct rpmtd_s td;
	uint32_t *a;

	if (!headerGet(h, tag, &td, HEADERGET_ALLOC))
		die("header lacks tag %d", tag);
	a = td.data;
	a[i] = v;
	headerDel(h, tag);
	headerPutUint32(h, tag, a, rpmtdCount(&td));
	rpmtdFreeData(&td);
}

static void set_u16(Header h, rpmTagVal tag, rpm_count_t i, uint16_t v)
{
	struct rpmtd_s td;
	uint16_t *a;

	if (!headerGet(h, tag, &td, HEADERGET_ALLOC))
		die("header lacks tag %d", tag);
	a = td.data;
	a[i] = v;
	headerDel(h, tag);
	headerPutUint16(h, tag, a, rpmtdCount(&td));
	rpmtdFreeData(&td);
}

static void set_str(Header h, rpmTagVal tag, rpm_count_t i, const char *v)
{
	struct rpmtd_s td;
	const char **a;
	rpm_count_t n;

	/* A copy: headerDel() below frees the header's own strings. */
	if (!headerGet(h, tag, &td, HEADERGET_ALLOC))
		die("header lacks tag %d", tag);
	n = rpmtdCount(&td);
	a = calloc(n, sizeof(*a));
	for (rpm_count_t k = 0; k < n; k++)
		a[k] = k == i ? v : ((const char **)td.data)[k];
	headerDel(h, tag);
	headerPutStringArray(h, tag, a, n);
	rpmtdFreeData(&td);
	free(a);
}

static void rename_in_header(Header h, const char *from, const char *to)
{
	rpm_count_t n, i = file_index(h, from);
	char **paths = get_paths(h, &n);

	free(paths[i]);
	paths[i] = strdup(to);
	put_paths(h, paths, n);
}

static void rename_in_cpio(struct cpio *c, const char *from, const char *to)
{
	struct rec *r = find_rec(c, from);

	free(r->name);
	if (asprintf(&r->name, "%s%s", to[0] == '/' ? "." : "", to) < 0)
		die("out of memory");
}

static void read_exact(int fd, void *buf, size_t n)
{
	if (read(fd, buf, n) != (ssize_t)n)
		die("short read");
}

int main(int argc, char **argv)
{
	uint8_t lead[96], pre[16], *payload = NULL, *cpio_out = NULL, *hblob;
	unsigned int hsize;
	size_t plen = 0, clen = 0, sigsize;
	struct cpio c = { 0 };
	const char *compressor, *wmode;
	char rmode[32], hex[65];
	unsigned char md[32];
	Header h, sigh;
	FD_t in, out, z;
	int fd, i;

	if (argc < 4)
		die("usage: rpm-hostile IN.rpm OUT.rpm OP [ARGS]...");
	if (rpmReadConfigFiles(NULL, NULL))
		die("cannot read rpm configuration");

	/* Lead and signature header are skipped; the main header is read with librpm. */
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		die("%s: %s", argv[1], strerror(errno));
	read_exact(fd, lead, sizeof(lead));
	read_exact(fd, pre, sizeof(pre));
	sigsize = 16 + 16 * (size_t)(pre[8] << 24 | pre[9] << 16 | pre[10] << 8 | pre[11]) +
		  (size_t)(pre[12] << 24 | pre[13] << 16 | pre[14] << 8 | pre[15]);
	if (lseek(fd, 96 + sigsize + (8 - sigsize % 8) % 8, SEEK_SET) < 0)
		die("seek: %s", strerror(errno));
	in = fdDup(fd);
	h = headerRead(in, HEADER_MAGIC_YES);
	if (!h)
		die("%s: cannot read the header", argv[1]);
	compressor = headerGetString(h, RPMTAG_PAYLOADCOMPRESSOR);
	if (!compressor)
		compressor = "gzip";
	if (!strcmp(compressor, "gzip"))
		wmode = "w9.gzdio";
	else if (!strcmp(compressor, "xz"))
		wmode = "w6.xzdio";
	else if (!strcmp(compressor, "zstd"))
		wmode = "w3.zstdio";
	else
		die("compressor %s not handled", compressor);
	snprintf(rmode, sizeof(rmode), "r.%s", wmode + 3);
	z = Fdopen(in, rmode);
	for (;;) {
		uint8_t buf[65536];
		ssize_t n = Fread(buf, 1, sizeof(buf), z);

		if (n < 0 || Ferror(z))
			die("payload: %s", Fstrerror(z));
		if (n == 0)
			break;
		put(&payload, &plen, buf, (size_t)n);
	}
	parse_cpio(payload, plen, &c);

	/* A header we can change: copied out of the immutable region it was read with. */
	{
		Header copy = headerCopy(h);

		headerFree(h);
		h = copy;
	}
	headerDel(h, RPMTAG_PAYLOADDIGEST);
	headerDel(h, RPMTAG_PAYLOADDIGESTALT);

	for (i = 3; i < argc; i++) {
		const char *op = argv[i];

		if (!strcmp(op, "rename") && i + 2 < argc) {
			rename_in_header(h, argv[i + 1], argv[i + 2]);
			rename_in_cpio(&c, argv[i + 1], argv[i + 2]);
			i += 2;
		} else if (!strcmp(op, "cpio-rename") && i + 2 < argc) {
			rename_in_cpio(&c, argv[i + 1], argv[i + 2]);
			i += 2;
		} else if (!strcmp(op, "flip-content") && i + 1 < argc) {
			struct rec *r = find_rec(&c, argv[++i]);

			if (!r->size)
				die("%s has no content", argv[i]);
			r->data[0] ^= 0x01;
		} else if (!strcmp(op, "dup-payload") && i + 1 < argc) {
			struct rec copy = *find_rec(&c, argv[++i]);

			copy.name = strdup(copy.name);
			copy.data = malloc(copy.size + 1);
			memcpy(copy.data, find_rec(&c, argv[i])->data, copy.size);
			c.recs = realloc(c.recs, (c.n + 1) * sizeof(*c.recs));
			c.recs[c.n] = c.recs[c.n - 1]; /* keep the trailer last */
			c.recs[c.n - 1] = copy;
			c.n++;
		} else if (!strcmp(op, "drop-payload") && i + 1 < argc) {
			struct rec *r = find_rec(&c, argv[++i]);

			memmove(r, r + 1, (size_t)(&c.recs[c.n] - (r + 1)) * sizeof(*r));
			c.n--;
		} else if (!strcmp(op, "set-size") && i + 2 < argc) {
			set_u32(h, RPMTAG_FILESIZES, file_index(h, argv[i + 1]),
				(uint32_t)strtoul(argv[i + 2], NULL, 0));
			i += 2;
		} else if (!strcmp(op, "make-symlink") && i + 2 < argc) {
			rpm_count_t fx = file_index(h, argv[i + 1]);
			struct rec *r = find_rec(&c, argv[i + 1]);
			const char *target = argv[i + 2];

			set_u16(h, RPMTAG_FILEMODES, fx, (uint16_t)(S_IFLNK | 0777));
			set_u32(h, RPMTAG_FILESIZES, fx, (uint32_t)strlen(target));
			set_str(h, RPMTAG_FILELINKTOS, fx, target);
			set_str(h, RPMTAG_FILEDIGESTS, fx, "");
			set_field(r->hdr, F_MODE, S_IFLNK | 0777);
			free(r->data);
			r->data = (uint8_t *)strdup(target);
			r->size = strlen(target);
			i += 2;
		} else {
			die("unknown operation or missing arguments: %s", op);
		}
	}
	write_cpio(&c, &cpio_out, &clen);

	/* The main header with its immutable region, and a signature header with its digest. */
	h = headerReload(h, RPMTAG_HEADERIMMUTABLE);
	if (!h)
		die("cannot rebuild the header");
	hblob = headerExport(h, &hsize);
	{
		static const uint8_t magic[8] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();

		EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
		EVP_DigestUpdate(ctx, magic, sizeof(magic));
		EVP_DigestUpdate(ctx, hblob, hsize);
		EVP_DigestFinal_ex(ctx, md, NULL);
		EVP_MD_CTX_free(ctx);
		for (int k = 0; k < 32; k++)
			sprintf(hex + 2 * k, "%02x", md[k]);
	}
	sigh = headerNew();
	headerPutString(sigh, RPMSIGTAG_SHA256, hex);
	{
		/* rpm keeps the uncompressed payload size here; readers check sizes with it. */
		uint32_t psize = (uint32_t)clen;
		struct rpmtd_s td = {
			.tag = RPMSIGTAG_PAYLOADSIZE, .type = RPM_INT32_TYPE, .count = 1, .data = &psize,
		};

		/* Raw put: the tag number is BUILDHOST's in the main header's table. */
		if (!headerPut(sigh, &td, HEADERPUT_DEFAULT))
			die("cannot add the payload size");
	}
	sigh = headerReload(sigh, RPMTAG_HEADERSIGNATURES);

	out = Fopen(argv[2], "w.ufdio");
	if (!out || Ferror(out))
		die("%s: cannot create", argv[2]);
	Fwrite(lead, 1, sizeof(lead), out);
	{
		unsigned int ssize;
		void *sblob = headerExport(sigh, &ssize);
		static const uint8_t zeros[8];
		static const uint8_t magic[8] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };

		Fwrite(magic, 1, 8, out);
		Fwrite(sblob, 1, ssize, out);
		Fwrite(zeros, 1, (8 - (8 + ssize) % 8) % 8, out);
		free(sblob);
	}
	{
		static const uint8_t magic[8] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };

		Fwrite(magic, 1, 8, out);
		Fwrite(hblob, 1, hsize, out);
	}
	Fflush(out);
	z = Fdopen(out, wmode);
	if (!z || Fwrite(cpio_out, 1, clen, z) != (ssize_t)clen || Ferror(z))
		die("%s: cannot write the payload", argv[2]);
	if (Fclose(z))
		die("%s: close failed", argv[2]);
	return 0;
}
