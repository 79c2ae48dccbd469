// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rewrites a well-formed rpm package into a hostile one that rpmbuild would never make:
 * renamed, duplicated or dropped entries, symlinks under files, lying sizes, flipped
 * content.  Every package-level digest and size the input had is recomputed (header
 * digests in the signature header, payload digests and sizes in the main header; the
 * signatures go), so a reader gets past the package checks and meets the hostile part
 * where it matters.  Both payload forms are handled: full "newc" cpio (rpm 4 packages)
 * and rpm's "stripped" cpio (v6 packages of rpm 6, and rpm 4 packages with files over
 * 4 GiB), whose 07070X records carry only the index of their header entry.
 *
 *   rpm-hostile IN.rpm OUT.rpm OP [ARGS]...
 *     rename OLD NEW            header and payload
 *     cpio-rename OLD NEW       payload only (the header keeps OLD); a stripped record,
 *                               which names no path, becomes a full one naming NEW
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
#include <rpm/rpmfiles.h>
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

/* One cpio record: a full "newc" one, or a stripped one (fx >= 0). */
struct rec {
	char hdr[111]; /* a full record's 110 header characters, NUL-terminated */
	long fx;       /* a stripped record's header entry, -1 for a full record */
	unsigned int mode; /* a stripped record's mode, from the header */
	char *name;    /* a stripped record's name is its header entry's path */
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

enum { F_MODE = 1, F_NLINK = 4, F_FILESIZE = 6, F_NAMESIZE = 11 };

static size_t pad4(size_t n)
{
	return (4 - n % 4) % 4;
}

/*
 * A stripped record is "07070X", the header entry's index in 8 hex digits and padding
 * to 4; its content follows with the size the header gives the entry, as rpm's archive
 * reader takes it: a regular file's size (0 for all but the last of a hard-link set),
 * a symlink's target length, 0 for anything else.  rpm ends even a stripped payload
 * with a full "TRAILER!!!" record; an index of ffffffff ends it too.
 */
static size_t stripped_size(rpmfiles files, int fx)
{
	unsigned int mode = rpmfilesFMode(files, fx);
	const int *links = NULL;
	uint32_t nlink;

	if (S_ISLNK(mode))
		return (size_t)rpmfilesFSize(files, fx);
	if (!S_ISREG(mode))
		return 0;
	nlink = rpmfilesFLinks(files, fx, &links);
	if (nlink > 1 && links[nlink - 1] != fx)
		return 0;
	return (size_t)rpmfilesFSize(files, fx);
}

static void parse_cpio(const uint8_t *p, size_t len, Header h, struct cpio *c)
{
	rpmfiles files = rpmfilesNew(NULL, h, RPMTAG_BASENAMES, RPMFI_NOHEADER);
	size_t off = 0;

	if (!files)
		die("header: cannot read its file list");
	for (;;) {
		struct rec r = { .fx = -1 };
		size_t ns;

		if (len - off >= 16 && !memcmp(p + off, "07070X", 6)) {
			char fx[9];

			memcpy(fx, p + off + 6, 8);
			fx[8] = 0;
			r.fx = (long)strtoul(fx, NULL, 16);
			off += 16;
			if (r.fx == 0xffffffffL) {
				r.name = strdup("TRAILER!!!");
			} else if (r.fx < (long)rpmfilesFC(files)) {
				char *fn = rpmfilesFN(files, (int)r.fx);

				r.mode = rpmfilesFMode(files, (int)r.fx);
				r.size = stripped_size(files, (int)r.fx);
				if (asprintf(&r.name, ".%s", fn) < 0)
					die("out of memory");
				free(fn);
			} else {
				die("payload: stripped record for entry %ld of %d", r.fx,
				    (int)rpmfilesFC(files));
			}
		} else {
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
		}
		if (off > len || r.size > len - off)
			die("payload: bad file size for %s", r.name);
		r.data = malloc(r.size + 1);
		memcpy(r.data, p + off, r.size);
		off += r.size + pad4(r.size);
		c->recs = realloc(c->recs, (c->n + 1) * sizeof(*c->recs));
		c->recs[c->n++] = r;
		if (!strcmp(r.name, "TRAILER!!!"))
			break;
		if (off > len)
			die("payload: truncated");
	}
	rpmfilesFree(files);
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

		if (r->fx >= 0) {
			snprintf(hdr, sizeof(hdr), "07070X%08lx", (unsigned long)r->fx);
			put(out, len, hdr, 14);
			put(out, len, zeros, pad4(14));
			put(out, len, r->data, r->size);
			put(out, len, zeros, pad4(r->size));
			continue;
		}
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

/* A file's size: in LONGFILESIZES where the header has them (v6, files over 4 GiB). */
static void set_file_size(Header h, rpm_count_t i, uint64_t v)
{
	struct rpmtd_s td;
	uint64_t *a;

	if (!headerGet(h, RPMTAG_LONGFILESIZES, &td, HEADERGET_ALLOC)) {
		set_u32(h, RPMTAG_FILESIZES, i, (uint32_t)v);
		return;
	}
	a = td.data;
	a[i] = v;
	headerDel(h, RPMTAG_LONGFILESIZES);
	headerPutUint64(h, RPMTAG_LONGFILESIZES, a, rpmtdCount(&td));
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

/*
 * A stripped record names no path: renaming it in the payload alone (@full) turns it
 * into a full record, which rpm's archive reader takes in any payload and maps to the
 * header by the name it carries.
 */
static void rename_in_cpio(struct cpio *c, const char *from, const char *to, int full)
{
	struct rec *r = find_rec(c, from);

	free(r->name);
	if (asprintf(&r->name, "%s%s", to[0] == '/' ? "." : "", to) < 0)
		die("out of memory");
	if (full && r->fx >= 0) {
		memcpy(r->hdr, "070701", 6);
		memset(r->hdr + 6, '0', 104);
		r->hdr[110] = 0;
		set_field(r->hdr, 0, (uint32_t)r->fx + 1); /* inode */
		set_field(r->hdr, F_MODE, r->mode);
		set_field(r->hdr, F_NLINK, 1);
		r->fx = -1;
	}
}

static void read_exact(int fd, void *buf, size_t n)
{
	if (read(fd, buf, n) != (ssize_t)n)
		die("short read");
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_raw(Header h, rpmTagVal tag, rpmTagType type, const void *data, rpm_count_t count)
{
	struct rpmtd_s td = { .tag = tag, .type = type, .count = count, .data = (void *)data };

	/* Raw: some tag numbers are unknown to an older librpm, or mean another tag there. */
	if (!headerPut(h, &td, HEADERPUT_DEFAULT))
		die("cannot put tag %d", tag);
}

/* The hex digest of a and b (b may be empty) with the named algorithm. */
static char *hex_digest(const char *name, const void *a, size_t alen, const void *b, size_t blen)
{
	const EVP_MD *md = EVP_get_digestbyname(name);
	unsigned char bin[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char *hex;

	if (!md || !ctx || !EVP_DigestInit_ex(ctx, md, NULL) || !EVP_DigestUpdate(ctx, a, alen) ||
	    !EVP_DigestUpdate(ctx, b, blen) || !EVP_DigestFinal_ex(ctx, bin, &n))
		die("digest %s failed", name);
	EVP_MD_CTX_free(ctx);
	hex = malloc(2 * n + 1);
	for (unsigned int k = 0; k < n; k++)
		sprintf(hex + 2 * k, "%02x", bin[k]);
	return hex;
}

/* Replaces a string (or one-string array) or number tag the header has, keeping its type. */
static void replace_tag(Header h, rpmTagVal tag, const char *str, uint64_t num)
{
	struct rpmtd_s td;
	rpmTagType type;
	uint32_t n32 = (uint32_t)num;

	if (!headerGet(h, tag, &td, HEADERGET_RAW | HEADERGET_MINMEM))
		return;
	type = td.type;
	rpmtdFreeData(&td);
	headerDel(h, tag);
	if (type == RPM_STRING_TYPE && str)
		put_raw(h, tag, type, str, 1);
	else if (type == RPM_STRING_ARRAY_TYPE && str)
		put_raw(h, tag, type, &str, 1);
	else if (type == RPM_INT64_TYPE && !str)
		put_raw(h, tag, type, &num, 1);
	else if (type == RPM_INT32_TYPE && !str)
		put_raw(h, tag, type, &n32, 1);
	else
		die("tag %d has an unexpected type %d", tag, type);
}

/*
 * The payload's digests and sizes in the main header, where the input had them: of the
 * compressed payload (z) and of the cpio archive (c).
 */
static void update_payload_tags(Header h, const uint8_t *z, size_t zlen, const uint8_t *c, size_t clen)
{
	static const struct {
		rpmTagVal tag;
		int archive; /* of the cpio archive, not of the compressed payload */
		const char *md;
	} digests[] = {
		{ RPMTAG_PAYLOADDIGEST, 0, "SHA256" },
		{ RPMTAG_PAYLOADDIGESTALT, 1, "SHA256" },
		{ RPMTAG_PAYLOADSHA512_COMPAT, 0, "SHA512" },
		{ RPMTAG_PAYLOADSHA512ALT_COMPAT, 1, "SHA512" },
		{ RPMTAG_PAYLOADSHA3_256_COMPAT, 0, "SHA3-256" },
		{ RPMTAG_PAYLOADSHA3_256ALT_COMPAT, 1, "SHA3-256" },
	};
	uint32_t algo = (uint32_t)headerGetNumber(h, RPMTAG_PAYLOADDIGESTALGO);

	/* 8 is SHA-256's OpenPGP id, the only algorithm rpm writes there. */
	if (algo && algo != 8)
		die("payload digest algorithm %u not handled", algo);
	for (size_t k = 0; k < sizeof(digests) / sizeof(digests[0]); k++) {
		char *hex;

		if (!headerIsEntry(h, digests[k].tag))
			continue;
		hex = digests[k].archive ? hex_digest(digests[k].md, c, clen, "", 0) :
					   hex_digest(digests[k].md, z, zlen, "", 0);
		replace_tag(h, digests[k].tag, hex, 0);
		free(hex);
	}
	replace_tag(h, RPMTAG_PAYLOADSIZE_COMPAT, NULL, zlen);
	replace_tag(h, RPMTAG_PAYLOADSIZEALT_COMPAT, NULL, clen);
	replace_tag(h, RPMTAG_ARCHIVESIZE, NULL, clen);
	replace_tag(h, RPMTAG_LONGARCHIVESIZE, NULL, clen);
}

/*
 * A signature header with what the input's had, recomputed for the new header (hb) and
 * payload (z): header digests, header+payload digest and sizes, the archive size and
 * the reserved space (which, with the SHA3-256 digest, marks a v6 package's).  The
 * signatures are dropped.  A SHA-256 header digest is always there.
 */
static Header new_signature(const uint8_t *index, uint32_t il, const uint8_t *hb, size_t hlen,
			    const uint8_t *z, size_t zlen, size_t clen)
{
	static const uint8_t magic[8] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };
	Header sigh = headerNew();
	uint8_t *md5 = NULL, *zeros;
	uint64_t total = sizeof(magic) + hlen + zlen, arch = clen;
	uint32_t total32 = (uint32_t)total, arch32 = (uint32_t)clen;
	char *hex;

	for (uint32_t k = 0; k < il; k++) {
		uint32_t tag = be32(index + 16 * k), count = be32(index + 16 * k + 12);

		switch (tag) {
		case RPMSIGTAG_SHA1:
		case RPMSIGTAG_SHA256:
		case RPMSIGTAG_SHA3_256_COMPAT:
			hex = hex_digest(tag == RPMSIGTAG_SHA1 ? "SHA1" : tag == RPMSIGTAG_SHA256 ? "SHA256" : "SHA3-256",
					 magic, sizeof(magic), hb, hlen);
			put_raw(sigh, tag, RPM_STRING_TYPE, hex, 1);
			free(hex);
			break;
		case RPMSIGTAG_MD5: {
			/* hex_digest's twin for the one binary digest: header and payload */
			EVP_MD_CTX *ctx = EVP_MD_CTX_new();
			unsigned int n = 0;

			md5 = malloc(EVP_MAX_MD_SIZE);
			if (!ctx || !EVP_DigestInit_ex(ctx, EVP_md5(), NULL) ||
			    !EVP_DigestUpdate(ctx, magic, sizeof(magic)) || !EVP_DigestUpdate(ctx, hb, hlen) ||
			    !EVP_DigestUpdate(ctx, z, zlen) || !EVP_DigestFinal_ex(ctx, md5, &n) || n != 16)
				die("digest MD5 failed");
			EVP_MD_CTX_free(ctx);
			put_raw(sigh, tag, RPM_BIN_TYPE, md5, 16);
			break;
		}
		case RPMSIGTAG_SIZE:
			put_raw(sigh, tag, RPM_INT32_TYPE, &total32, 1);
			break;
		case RPMSIGTAG_LONGSIZE:
			put_raw(sigh, tag, RPM_INT64_TYPE, &total, 1);
			break;
		case RPMSIGTAG_PAYLOADSIZE:
			put_raw(sigh, tag, RPM_INT32_TYPE, &arch32, 1);
			break;
		case RPMSIGTAG_LONGARCHIVESIZE:
			put_raw(sigh, tag, RPM_INT64_TYPE, &arch, 1);
			break;
		case RPMSIGTAG_RESERVEDSPACE:
		case RPMSIGTAG_RESERVED_COMPAT:
			zeros = calloc(1, count);
			put_raw(sigh, tag, RPM_BIN_TYPE, zeros, count);
			free(zeros);
			break;
		default:
			break; /* a signature, or the region tag headerReload() writes anew */
		}
	}
	if (!headerIsEntry(sigh, RPMSIGTAG_SHA256)) {
		hex = hex_digest("SHA256", magic, sizeof(magic), hb, hlen);
		put_raw(sigh, RPMSIGTAG_SHA256, RPM_STRING_TYPE, hex, 1);
		free(hex);
	}
	free(md5);
	sigh = headerReload(sigh, RPMTAG_HEADERSIGNATURES);
	if (!sigh)
		die("cannot build the signature header");
	return sigh;
}

/* The payload compressed as the input's was, in memory (its digests go in the header). */
static uint8_t *compress(const uint8_t *data, size_t len, const char *wmode, size_t *zlen)
{
	FILE *tmp = tmpfile();
	FD_t z;
	struct stat st;
	uint8_t *buf;

	if (!tmp)
		die("tmpfile: %s", strerror(errno));
	z = Fdopen(fdDup(fileno(tmp)), wmode);
	if (!z || Fwrite(data, 1, len, z) != (ssize_t)len || Ferror(z) || Fclose(z))
		die("cannot compress the payload");
	if (fstat(fileno(tmp), &st))
		die("fstat: %s", strerror(errno));
	buf = malloc((size_t)st.st_size + 1);
	if (pread(fileno(tmp), buf, (size_t)st.st_size, 0) != st.st_size)
		die("cannot read the compressed payload back");
	fclose(tmp);
	*zlen = (size_t)st.st_size;
	return buf;
}

int main(int argc, char **argv)
{
	static const uint8_t magic[8] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };
	static const uint8_t zeros[8];
	uint8_t lead[96], pre[16], *sigindex, *payload = NULL, *cpio_out = NULL, *zpayload;
	void *hblob, *sblob;
	unsigned int hsize, ssize;
	uint32_t sil, sdl;
	size_t plen = 0, clen = 0, zlen, sigsize;
	struct cpio c = { 0 };
	const char *compressor, *wmode;
	char rmode[32];
	Header h, sigh;
	FD_t in, z;
	FILE *out;
	int fd, i;

	if (argc < 4)
		die("usage: rpm-hostile IN.rpm OUT.rpm OP [ARGS]...");
	if (rpmReadConfigFiles(NULL, NULL))
		die("cannot read rpm configuration");

	/* The signature header is only looked at (which tags it has); the main header is
	 * read with librpm. */
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		die("%s: %s", argv[1], strerror(errno));
	read_exact(fd, lead, sizeof(lead));
	read_exact(fd, pre, sizeof(pre));
	sil = be32(pre + 8);
	sdl = be32(pre + 12);
	if (sil > 0xffff || sdl > 0x10000000)
		die("%s: bad signature header", argv[1]);
	sigsize = 16 + 16 * (size_t)sil + sdl;
	sigindex = malloc(16 * (size_t)sil + 1);
	read_exact(fd, sigindex, 16 * (size_t)sil);
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
	parse_cpio(payload, plen, h, &c);

	/* A header we can change: copied out of the immutable region it was read with. */
	{
		Header copy = headerCopy(h);

		headerFree(h);
		h = copy;
	}

	for (i = 3; i < argc; i++) {
		const char *op = argv[i];

		if (!strcmp(op, "rename") && i + 2 < argc) {
			rename_in_header(h, argv[i + 1], argv[i + 2]);
			rename_in_cpio(&c, argv[i + 1], argv[i + 2], 0);
			i += 2;
		} else if (!strcmp(op, "cpio-rename") && i + 2 < argc) {
			rename_in_cpio(&c, argv[i + 1], argv[i + 2], 1);
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
			set_file_size(h, file_index(h, argv[i + 1]), strtoull(argv[i + 2], NULL, 0));
			i += 2;
		} else if (!strcmp(op, "make-symlink") && i + 2 < argc) {
			rpm_count_t fx = file_index(h, argv[i + 1]);
			struct rec *r = find_rec(&c, argv[i + 1]);
			const char *target = argv[i + 2];

			set_u16(h, RPMTAG_FILEMODES, fx, (uint16_t)(S_IFLNK | 0777));
			set_file_size(h, fx, strlen(target));
			set_str(h, RPMTAG_FILELINKTOS, fx, target);
			set_str(h, RPMTAG_FILEDIGESTS, fx, "");
			/* (a stripped record takes its mode from the header) */
			if (r->fx < 0)
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
	zpayload = compress(cpio_out, clen, wmode, &zlen);
	update_payload_tags(h, zpayload, zlen, cpio_out, clen);

	/* The main header with its immutable region, then the signature header over it. */
	h = headerReload(h, RPMTAG_HEADERIMMUTABLE);
	if (!h)
		die("cannot rebuild the header");
	hblob = headerExport(h, &hsize);
	sigh = new_signature(sigindex, sil, hblob, hsize, zpayload, zlen, clen);
	sblob = headerExport(sigh, &ssize);

	out = fopen(argv[2], "w");
	if (!out)
		die("%s: %s", argv[2], strerror(errno));
	fwrite(lead, 1, sizeof(lead), out);
	fwrite(magic, 1, sizeof(magic), out);
	fwrite(sblob, 1, ssize, out);
	fwrite(zeros, 1, (8 - (8 + ssize) % 8) % 8, out);
	fwrite(magic, 1, sizeof(magic), out);
	fwrite(hblob, 1, hsize, out);
	fwrite(zpayload, 1, zlen, out);
	if (ferror(out) | fclose(out))
		die("%s: cannot write: %s", argv[2], strerror(errno));
	return 0;
}
