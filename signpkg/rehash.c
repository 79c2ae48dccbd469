// SPDX-License-Identifier: LGPL-2.1-or-later
/* Re-hashes file contents from a package's payload when signatures need another algorithm. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* rpmarchive.h uses rpmfi and FD_t without including their headers. */
#include <rpm/rpmfi.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmio.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>
#include <rpm/rpmarchive.h>

#include "common/private.h"
#include "signpkg/rpmpkg.h"

#define READ_CHUNK (128u << 10)

/* The package's own digest of file @fx matches what the payload holds. */
static int check_own_digest(const struct rpmpkg *pkg, struct rpmtd_s *digests, int fx,
			    const uint8_t *d, size_t len, const char *name,
			    const struct imastream_log *log)
{
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST];
	const char *hex;

	if (rpmtdSetIndex(digests, fx) < 0 || !(hex = rpmtdGetString(digests)) || !hex[0])
		return ims_err(log, -EINVAL, "%s: %s has content in the payload but no digest in the header",
			       pkg->path, name);
	if (rpmpkg_unhex(hex, want, len) || memcmp(want, d, len))
		return ims_err(log, -EINVAL, "%s: content of %s does not match its header digest: corrupt package",
			       pkg->path, name);
	return 0;
}

/* What the pass over the payload needs for each entry. */
struct rehash {
	const struct rpmpkg *pkg;
	const struct imastream_hash_info *own, *want;
	struct imastream_hasher *hasher; /* both algorithms at once */
	struct rpmtd_s *digests;	 /* the header's own, to check the content against */
	uint8_t *buf;
	struct rpmpkg_digests *out;
	const struct imastream_log *log;
};

/* The entry's content hashed, checked against its own digest, the new one stored for
 * every member of its hard-link set (the content comes once per set). */
static int rehash_entry(struct rehash *rh, rpmfi fi)
{
	const uint8_t *d;
	const int *links = NULL;
	uint32_t nlinks;
	ssize_t n;
	size_t len;
	int fx = rpmfiFX(fi), ret;

	imastream_hasher_reset(rh->hasher);
	while ((n = rpmfiArchiveRead(fi, rh->buf, READ_CHUNK)) > 0) {
		ret = imastream_hasher_update(rh->hasher, rh->buf, (size_t)n);
		if (ret)
			return ret;
	}
	if (n < 0)
		return ims_err(rh->log, -EINVAL,
			       "%s: cannot read %s from the payload: corrupt package",
			       rh->pkg->path, rpmfiFN(fi));
	ret = imastream_hasher_final(rh->hasher);
	if (!ret)
		ret = imastream_hasher_digest(rh->hasher, rh->own->algo, &d, &len);
	/* What gets signed must be what rpm will verify and install. */
	if (!ret)
		ret = check_own_digest(rh->pkg, rh->digests, fx, d, len, rpmfiFN(fi), rh->log);
	if (!ret)
		ret = imastream_hasher_digest(rh->hasher, rh->want->algo, &d, &len);
	if (ret)
		return ret;
	nlinks = rpmfiFLinks(fi, &links);
	for (uint32_t i = 0; i < (nlinks > 1 ? nlinks : 1); i++) {
		int idx = nlinks > 1 ? links[i] : fx;

		if (idx < 0 || (unsigned int)idx >= rh->out->n)
			continue;
		memcpy(rh->out->digest + (size_t)idx * IMASTREAM_HASH_MAX_DIGEST, d, len);
		rh->out->have[idx] = 1;
	}
	return 0;
}

int rpmpkg_rehash(struct rpmpkg *pkg, const struct imastream_hash_info *own,
		  const struct imastream_hash_info *want, struct rpmpkg_digests *out,
		  const struct imastream_log *log)
{
	const char *compr = headerGetString(pkg->h, RPMTAG_PAYLOADCOMPRESSOR);
	struct imastream_hasher *hasher = NULL;
	struct rpmtd_s digests;
	rpmfiles files = NULL;
	rpmfi fi = NULL;
	FD_t fd = NULL, cfd = NULL;
	char *mode = NULL;
	uint8_t *buf = NULL;
	int have_digests = 0, rc, ret;
	struct rehash rh = {
		.pkg = pkg, .own = own, .want = want, .digests = &digests, .out = out, .log = log
	};

	memset(out, 0, sizeof(*out));
	rpmtdReset(&digests);
	have_digests = headerGet(pkg->h, RPMTAG_FILEDIGESTS, &digests, HEADERGET_RAW | HEADERGET_MINMEM);
	files = rpmfilesNew(NULL, pkg->h, 0, RPMFI_KEEPHEADER);
	out->n = files ? (unsigned int)rpmfilesFC(files) : 0;
	out->digest = calloc(out->n ? out->n : 1, IMASTREAM_HASH_MAX_DIGEST);
	out->have = calloc(out->n ? out->n : 1, 1);
	buf = malloc(READ_CHUNK);
	if (!files || !have_digests || !out->digest || !out->have || !buf ||
	    asprintf(&mode, "r.%s", compr ? compr : "gzip") < 0) {
		mode = NULL;
		ret = ims_err(log, -ENOMEM, "%s: cannot prepare to read the payload", pkg->path);
		goto out;
	}
	ret = imastream_hasher_new(IMASTREAM_HASH_BIT(own->algo) | IMASTREAM_HASH_BIT(want->algo),
				   log, &hasher);
	if (ret)
		goto out;
	if (lseek(pkg->fd, pkg->payload_off, SEEK_SET) < 0) {
		ret = ims_err(log, -errno, "%s: cannot seek to the payload", pkg->path);
		goto out;
	}
	fd = fdDup(pkg->fd);
	cfd = fd ? Fdopen(fd, mode) : NULL;
	if (!cfd || Ferror(cfd)) {
		ret = ims_err(log, -EINVAL, "%s: cannot open the %s payload", pkg->path,
			      compr ? compr : "gzip");
		goto out;
	}
	rh.hasher = hasher;
	rh.buf = buf;
	fi = rpmfiNewArchiveReader(cfd, files, RPMFI_ITER_READ_ARCHIVE);
	if (!fi) {
		ret = ims_err(log, -EINVAL, "%s: cannot read the payload archive", pkg->path);
		goto out;
	}
	while ((rc = rpmfiNext(fi)) >= 0) {
		ret = rpmfiArchiveHasContent(fi) ? rehash_entry(&rh, fi) : 0;
		if (ret)
			goto out;
	}
	if (rc != RPMERR_ITER_END) {
		char *why = rpmfileStrerror(rc);

		ret = ims_err(log, -EINVAL, "%s: payload archive: %s: corrupt package", pkg->path,
			      why ? why : "read error");
		free(why);
		goto out;
	}
	ret = 0;
out:
	if (fi)
		rpmfiFree(fi);
	if (cfd)
		Fclose(cfd);
	else if (fd)
		Fclose(fd);
	rpmfilesFree(files);
	rpmtdFreeData(&digests);
	imastream_hasher_free(hasher);
	free(buf);
	free(mode);
	/* The copy pass reads the payload again, from its start. */
	if (!ret && lseek(pkg->fd, pkg->payload_off, SEEK_SET) < 0)
		ret = ims_err(log, -errno, "%s: cannot seek to the payload", pkg->path);
	if (ret)
		rpmpkg_digests_free(out);
	return ret;
}

void rpmpkg_digests_free(struct rpmpkg_digests *d)
{
	free(d->digest);
	free(d->have);
	d->digest = NULL;
	d->have = NULL;
	d->n = 0;
}
