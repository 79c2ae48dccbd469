// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reads an rpm package's lead and headers with bounds checks and verifies its digests. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <openssl/evp.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "common/private.h"
#include "common/rpmtag-compat.h"
#include "imastream/hash.h"
#include "signpkg/rpmpkg.h"

const uint8_t rpmpkg_hdr_magic[RPMPKG_HDR_MAGIC_SIZE] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };

static const uint8_t lead_magic[4] = { 0xed, 0xab, 0xee, 0xdb };

/* rpm's own ceilings (lib/header.c): beyond them rpm refuses the header anyway. */
#define SIG_IL_MAX 32
#define SIG_DL_MAX (64u << 20)
#define HDR_IL_MAX 0xffffu
#define HDR_DL_MAX (256u << 20)

#define COPY_CHUNK (256u << 10)

void rpmpkg_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

int rpmpkg_unhex(const char *hex, uint8_t *out, size_t len)
{
	if (strlen(hex) != 2 * len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int hi = ims_hex_digit(hex[2 * i]), lo = ims_hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* rpm's default when a package does not say (RPMTAG_FILEDIGESTALGO absent): MD5. */
#define RPM_DEFAULT_FILEDIGESTALGO 1

const struct imastream_hash_info *rpmpkg_file_digest_algo(const struct rpmpkg *pkg)
{
	int rpm_id = (int)headerGetNumber(pkg->h, RPMTAG_FILEDIGESTALGO);

	return imastream_hash_by_rpm_id(rpm_id ? rpm_id : RPM_DEFAULT_FILEDIGESTALGO);
}

/* Reads exactly @len bytes; a short file is -ENODATA so callers can say "truncated". */
static int read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_err(const struct rpmpkg *pkg, const struct imastream_log *log, int err,
		    const char *what)
{
	if (err == -ENODATA)
		return ims_err(log, -EINVAL, "%s: truncated package (in the %s)", pkg->path, what);
	return ims_err(log, err, "%s: cannot read the %s: %s", pkg->path, what, strerror(-err));
}

/* Reads one header structure (magic, il, dl, index, data) into a new blob. */
static int read_header(struct rpmpkg *pkg, const char *what, uint32_t il_max, uint32_t dl_max,
		       uint8_t **blob_ret, size_t *len_ret, const struct imastream_log *log)
{
	uint8_t intro[RPMPKG_HDR_INTRO];
	uint8_t *blob = NULL;
	uint32_t il, dl;
	size_t len;
	int ret;

	ret = read_full(pkg->fd, intro, sizeof(intro));
	if (ret)
		return read_err(pkg, log, ret, what);
	if (memcmp(intro, rpmpkg_hdr_magic, RPMPKG_HDR_MAGIC_SIZE))
		return ims_err(log, -EINVAL, "%s: bad %s magic", pkg->path, what);
	il = ims_get_be32(intro + 8);
	dl = ims_get_be32(intro + 12);
	if (il < 1 || il > il_max || dl > dl_max)
		return ims_err(log, -EINVAL, "%s: %s size out of range (%u entries, %u bytes)",
			       pkg->path, what, il, dl);
	len = RPMPKG_HDR_INTRO + (size_t)il * 16 + dl;
	blob = malloc(len);
	if (!blob)
		return ims_err(log, -ENOMEM, "%s: out of memory reading the %s", pkg->path, what);
	memcpy(blob, intro, sizeof(intro));
	ret = read_full(pkg->fd, blob + RPMPKG_HDR_INTRO, len - RPMPKG_HDR_INTRO);
	if (ret) {
		free(blob);
		return read_err(pkg, log, ret, what);
	}
	*blob_ret = blob;
	*len_ret = len;
	return 0;
}

/* headerImport() checks every index entry against the data area before trusting it. */
static Header import_header(const uint8_t *blob, size_t len)
{
	return headerImport((void *)(blob + RPMPKG_HDR_MAGIC_SIZE),
			    (unsigned int)(len - RPMPKG_HDR_MAGIC_SIZE), HEADERIMPORT_COPY);
}

/* A string tag of the signature header, or NULL when absent or of another type. */
static char *sig_string(Header sigh, rpmTagVal tag)
{
	struct rpmtd_s td;
	char *s = NULL;

	if (!headerGet(sigh, tag, &td, HEADERGET_RAW | HEADERGET_MINMEM))
		return NULL;
	if (td.type == RPM_STRING_TYPE && td.count == 1)
		s = strdup(td.data);
	rpmtdFreeData(&td);
	return s;
}

static int digest_matches(const char *md_name, const uint8_t *data, size_t len, const char *hex)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	char mdhex[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int md_len;

	if (!EVP_Digest(data, len, md, &md_len, EVP_get_digestbyname(md_name), NULL))
		return -EIO;
	rpmpkg_hex(md, md_len, mdhex);
	return strcasecmp(mdhex, hex) ? -EBADMSG : 0;
}

/* The header-only digests cover the header exactly as stored, magic included. */
static int check_header_digests(struct rpmpkg *pkg, const struct imastream_log *log)
{
	static const struct {
		rpmTagVal tag;
		const char *md, *name;
	} digests[] = {
		{ RPMSIGTAG_SHA256, "SHA256", "SHA256" },
		{ RPMSIGTAG_SHA1, "SHA1", "SHA1" },
	};
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(digests) && !ret; i++) {
		char *hex = sig_string(pkg->sigh, digests[i].tag);

		if (!hex)
			continue;
		ret = digest_matches(digests[i].md, pkg->hdr_blob, pkg->hdr_len, hex);
		free(hex);
		if (ret == -EBADMSG)
			ret = ims_err(log, -EINVAL, "%s: header %s digest does not match: corrupt package",
				      pkg->path, digests[i].name);
		else if (ret)
			ret = ims_openssl_err(log, ret, "%s: cannot compute the header %s digest",
					      pkg->path, digests[i].name);
	}
	return ret;
}

int rpmpkg_open(struct rpmpkg *pkg, const char *path, const struct imastream_log *log)
{
	size_t pad;
	uint8_t padding[8];
	int ret;

	memset(pkg, 0, sizeof(*pkg));
	pkg->path = path;
	pkg->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pkg->fd < 0) {
		ret = -errno;
		pkg->fd = -1;
		return ims_err(log, ret, "%s: cannot open: %s", path, strerror(-ret));
	}
	ret = read_full(pkg->fd, pkg->lead, sizeof(pkg->lead));
	if (ret) {
		if (ret == -ENODATA)
			ret = ims_err(log, -EINVAL, "%s: not an rpm package (too short)", path);
		else
			ret = read_err(pkg, log, ret, "lead");
		goto out;
	}
	if (memcmp(pkg->lead, lead_magic, sizeof(lead_magic))) {
		ret = ims_err(log, -EINVAL, "%s: not an rpm package (bad lead magic)", path);
		goto out;
	}
	ret = read_header(pkg, "signature header", SIG_IL_MAX, SIG_DL_MAX, &pkg->sig_blob,
			  &pkg->sig_len, log);
	if (ret)
		goto out;
	/* The signature header is padded to a multiple of 8 bytes; the padding is zeros. */
	pad = (8 - pkg->sig_len % 8) % 8;
	ret = read_full(pkg->fd, padding, pad);
	if (ret) {
		ret = read_err(pkg, log, ret, "signature header");
		goto out;
	}
	pkg->hdr_off = (off_t)(RPMPKG_LEAD_SIZE + pkg->sig_len + pad);
	ret = read_header(pkg, "header", HDR_IL_MAX, HDR_DL_MAX, &pkg->hdr_blob, &pkg->hdr_len,
			  log);
	if (ret)
		goto out;
	pkg->payload_off = pkg->hdr_off + (off_t)pkg->hdr_len;

	pkg->sigh = import_header(pkg->sig_blob, pkg->sig_len);
	if (!pkg->sigh) {
		ret = ims_err(log, -EINVAL, "%s: malformed signature header", path);
		goto out;
	}
	/* Digests first: a flipped byte is then named as corruption, not as bad structure. */
	ret = check_header_digests(pkg, log);
	if (ret)
		goto out;
	pkg->h = import_header(pkg->hdr_blob, pkg->hdr_len);
	if (!pkg->h)
		ret = ims_err(log, -EINVAL, "%s: malformed header", path);
out:
	if (ret)
		rpmpkg_close(pkg);
	return ret;
}

void rpmpkg_close(struct rpmpkg *pkg)
{
	if (pkg->fd >= 0)
		close(pkg->fd);
	pkg->fd = -1;
	free(pkg->sig_blob);
	free(pkg->hdr_blob);
	pkg->sig_blob = pkg->hdr_blob = NULL;
	if (pkg->sigh)
		headerFree(pkg->sigh);
	if (pkg->h)
		headerFree(pkg->h);
	pkg->sigh = pkg->h = NULL;
}

/* What the signature header and the header say the header+payload bytes must be. */
struct expect {
	uint64_t size;      /* 0: not recorded */
	uint8_t md5[16];
	int have_md5;
	char *payload_hex;  /* NULL: no payload digest */
	const char *payload_md;
};

static void get_expectations(struct rpmpkg *pkg, struct expect *e)
{
	struct rpmtd_s td;

	memset(e, 0, sizeof(*e));
	if (headerGet(pkg->sigh, RPMSIGTAG_LONGSIZE, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		if (td.type == RPM_INT64_TYPE && td.count == 1)
			e->size = *(uint64_t *)td.data;
		rpmtdFreeData(&td);
	} else if (headerGet(pkg->sigh, RPMSIGTAG_SIZE, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		if (td.type == RPM_INT32_TYPE && td.count == 1)
			e->size = *(uint32_t *)td.data;
		rpmtdFreeData(&td);
	} else if (headerGet(pkg->h, RPMTAG_PAYLOADSIZE_COMPAT, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		/* An rpm 6 (v6) package records the payload's size in its header instead. */
		if (td.type == RPM_INT64_TYPE && td.count == 1)
			e->size = pkg->hdr_len + *(uint64_t *)td.data;
		rpmtdFreeData(&td);
	}
	if (headerGet(pkg->sigh, RPMSIGTAG_MD5, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		if (td.type == RPM_BIN_TYPE && td.count == 16) {
			memcpy(e->md5, td.data, 16);
			e->have_md5 = 1;
		}
		rpmtdFreeData(&td);
	}
	if (headerGet(pkg->h, RPMTAG_PAYLOADDIGEST, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		/*
		 * Tag 5092 is SHA-256 by its definition; rpm 6 no longer writes its algo tag.
		 * 8 is SHA-256's OpenPGP id (PGPHASHALGO_SHA256, RPM_HASH_SHA256 in rpm 6).
		 */
		int algo = (int)headerGetNumber(pkg->h, RPMTAG_PAYLOADDIGESTALGO);
		const struct imastream_hash_info *hi = imastream_hash_by_rpm_id(algo ? algo : 8);
		const char *hex = rpmtdNextString(&td);

		if (hi && hex) {
			e->payload_hex = strdup(hex);
			e->payload_md = hi->openssl_name;
		}
		rpmtdFreeData(&td);
	}
}

int rpmpkg_copy_verified(struct rpmpkg *pkg, int out, const char *out_path,
			 const struct imastream_log *log)
{
	EVP_MD_CTX *md5 = NULL, *pd = NULL;
	uint8_t *buf = NULL, md[EVP_MAX_MD_SIZE];
	char mdhex[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int md_len;
	uint64_t total = pkg->hdr_len;
	struct expect e;
	int ret;

	get_expectations(pkg, &e);
	buf = malloc(COPY_CHUNK);
	md5 = EVP_MD_CTX_new();
	pd = EVP_MD_CTX_new();
	if (!buf || !md5 || !pd) {
		ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
		goto out;
	}
	if (!EVP_DigestInit_ex(md5, EVP_md5(), NULL) ||
	    !EVP_DigestUpdate(md5, pkg->hdr_blob, pkg->hdr_len) ||
	    (e.payload_hex && !EVP_DigestInit_ex(pd, EVP_get_digestbyname(e.payload_md), NULL))) {
		ret = ims_openssl_err(log, -EIO, "%s: cannot start the payload digests", pkg->path);
		goto out;
	}
	ret = ims_write_full(out, pkg->hdr_blob, pkg->hdr_len);
	if (ret) {
		ret = ims_err(log, ret, "%s: cannot write: %s", out_path, strerror(-ret));
		goto out;
	}
	for (;;) {
		ssize_t n = read(pkg->fd, buf, COPY_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = read_err(pkg, log, -errno, "payload");
			goto out;
		}
		if (n == 0)
			break;
		if (!EVP_DigestUpdate(md5, buf, (size_t)n) ||
		    (e.payload_hex && !EVP_DigestUpdate(pd, buf, (size_t)n))) {
			ret = ims_openssl_err(log, -EIO, "%s: payload digest failed", pkg->path);
			goto out;
		}
		ret = ims_write_full(out, buf, (size_t)n);
		if (ret) {
			ret = ims_err(log, ret, "%s: cannot write: %s", out_path, strerror(-ret));
			goto out;
		}
		total += (uint64_t)n;
	}
	if (e.size && total != e.size) {
		ret = ims_err(log, -EINVAL, "%s: header+payload is %llu bytes, the package says %llu: %s package",
			      pkg->path, (unsigned long long)total, (unsigned long long)e.size,
			      total < e.size ? "truncated" : "corrupt");
		goto out;
	}
	if (e.payload_hex) {
		if (!EVP_DigestFinal_ex(pd, md, &md_len)) {
			ret = ims_openssl_err(log, -EIO, "%s: payload digest failed", pkg->path);
			goto out;
		}
		rpmpkg_hex(md, md_len, mdhex);
		if (strcasecmp(mdhex, e.payload_hex)) {
			ret = ims_err(log, -EINVAL, "%s: payload digest does not match: corrupt package",
				      pkg->path);
			goto out;
		}
	}
	if (e.have_md5) {
		if (!EVP_DigestFinal_ex(md5, md, &md_len)) {
			ret = ims_openssl_err(log, -EIO, "%s: MD5 digest failed", pkg->path);
			goto out;
		}
		if (memcmp(md, e.md5, 16)) {
			ret = ims_err(log, -EINVAL, "%s: header+payload MD5 digest does not match: corrupt package",
				      pkg->path);
			goto out;
		}
	}
	ret = 0;
out:
	EVP_MD_CTX_free(md5);
	EVP_MD_CTX_free(pd);
	free(buf);
	free(e.payload_hex);
	return ret;
}
