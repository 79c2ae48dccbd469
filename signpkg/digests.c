// SPDX-License-Identifier: LGPL-2.1-or-later
/* The signing host's side of digest manifests: load one strictly, sign its digests, write the signatures file. */
/* Not cli/digests.c, which hashes walked files for imastream hash and sign. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/signpkg.h"
#include "imastream/xattr.h"
#include "signpkg/manifest.h"
#include "xattr/codec.h"

/* Room for one raw signature, as sign-package has: RSA-16384 or any ECDSA signature fits. */
#define RAW_SIG_MAX (SIGNATURES_MAX_VALUE - IMASTREAM_SIG_HDR_SIZE)

/* Reads all of @fd, refusing more than the format allows before it is all in memory. */
static int read_bounded(int fd, const char *name, char **buf_ret, size_t *len_ret,
			const struct imastream_log *log)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct stat st;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size > MANIFEST_MAX_BYTES)
		return ims_err(log, -E2BIG, "%s: larger than 512 MiB", name);
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1u << 16;
			char *nbuf;

			if (cap > MANIFEST_MAX_BYTES) {
				free(buf);
				return ims_err(log, -E2BIG, "%s: larger than 512 MiB", name);
			}
			nbuf = realloc(buf, ncap);
			if (!nbuf) {
				free(buf);
				return ims_err(log, -ENOMEM, "%s: out of memory", name);
			}
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return ims_err(log, err, "%s: cannot read: %s", name, strerror(-err));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*buf_ret = buf;
	*len_ret = len;
	return 0;
}

static int by_header_sha(const void *a, const void *b)
{
	const struct manifest_pkg *pa = *(struct manifest_pkg *const *)a;
	const struct manifest_pkg *pb = *(struct manifest_pkg *const *)b;

	return memcmp(pa->header_sha256, pb->header_sha256, 32);
}

/* Numbers every file entry, and indexes a signatures file's blocks by header digest. */
static int index_manifest(struct imastream_signpkg_manifest *sm, const char *name,
			  const struct imastream_log *log)
{
	struct manifest *m = &sm->m;
	size_t n = 0;

	for (size_t i = 0; i < m->n_pkgs; i++)
		n += m->pkgs[i].n_files;
	sm->entries = calloc(n ? n : 1, sizeof(*sm->entries));
	if (!sm->entries)
		return ims_err(log, -ENOMEM, "%s: out of memory", name);
	for (size_t i = 0; i < m->n_pkgs; i++)
		for (size_t j = 0; j < m->pkgs[i].n_files; j++)
			sm->entries[sm->n_entries++] = (struct manifest_entry){ &m->pkgs[i],
										&m->pkgs[i].files[j] };
	if (m->kind != MANIFEST_SIGNATURES)
		return 0;
	sm->by_header = calloc(m->n_pkgs ? m->n_pkgs : 1, sizeof(*sm->by_header));
	if (!sm->by_header)
		return ims_err(log, -ENOMEM, "%s: out of memory", name);
	for (size_t i = 0; i < m->n_pkgs; i++)
		sm->by_header[i] = &m->pkgs[i];
	if (m->n_pkgs)
		qsort(sm->by_header, m->n_pkgs, sizeof(*sm->by_header), by_header_sha);
	/* One block per package: which of two would be the right one? */
	for (size_t i = 1; i < m->n_pkgs; i++)
		if (!by_header_sha(&sm->by_header[i - 1], &sm->by_header[i]))
			return ims_err(log, -EINVAL, "%s: two blocks for one package (%s)", name,
				       sm->by_header[i]->nevra);
	return 0;
}

int imastream_signpkg_manifest_load(const char *path, int kind, const struct imastream_log *log,
				    struct imastream_signpkg_manifest **ret)
{
	bool in = path && !strcmp(path, "-");
	const char *name = in ? "standard input" : path;
	struct imastream_signpkg_manifest *sm;
	char *buf = NULL;
	size_t len = 0;
	int fd, err;

	if (!path || !ret || (kind != IMASTREAM_SIGNPKG_DIGESTS && kind != IMASTREAM_SIGNPKG_SIGNATURES))
		return ims_err(log, -EINVAL, "manifest: no file or an unknown kind given");
	fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ims_err(log, -errno, "%s: cannot open: %s", path, strerror(errno));
	err = read_bounded(fd, name, &buf, &len, log);
	if (!in)
		close(fd);
	if (err)
		return err;
	sm = calloc(1, sizeof(*sm));
	if (!sm) {
		free(buf);
		return ims_err(log, -ENOMEM, "%s: out of memory", name);
	}
	/* Its message names the file and the line. */
	err = manifest_parse_file(buf, len,
				  kind == IMASTREAM_SIGNPKG_SIGNATURES ? MANIFEST_SIGNATURES :
									 MANIFEST_DIGESTS,
				  name, log, &sm->m);
	free(buf);
	if (err) {
		free(sm);
		return err;
	}
	err = index_manifest(sm, name, log);
	if (err) {
		imastream_signpkg_manifest_free(sm);
		return err;
	}
	*ret = sm;
	return 0;
}

void imastream_signpkg_manifest_free(struct imastream_signpkg_manifest *sm)
{
	if (!sm)
		return;
	manifest_free(&sm->m);
	free(sm->entries);
	free(sm->by_header);
	free(sm);
}

void imastream_signpkg_manifest_count(const struct imastream_signpkg_manifest *sm,
				      size_t *packages_ret, size_t *files_ret)
{
	if (packages_ret)
		*packages_ret = sm ? sm->m.n_pkgs : 0;
	if (files_ret)
		*files_ret = sm ? sm->n_entries : 0;
}

unsigned int imastream_signpkg_manifest_algos(const struct imastream_signpkg_manifest *sm)
{
	unsigned int mask = 0;

	for (size_t i = 0; sm && i < sm->n_entries; i++)
		mask |= IMASTREAM_HASH_BIT(sm->entries[i].file->algo->algo);
	return mask;
}

int imastream_signpkg_manifest_sign(struct imastream_signpkg_manifest *sm, size_t first,
				    size_t count, const struct imastream_signpkg_signer *signer,
				    const struct imastream_log *log)
{
	uint8_t value[SIGNATURES_MAX_VALUE];
	struct imastream_signpkg_signer own;
	int ret;

	if (!sm || !signer || !signer->sign || sm->m.kind != MANIFEST_DIGESTS ||
	    first > sm->n_entries || count > sm->n_entries - first)
		return ims_err(log, -EINVAL, "sign-digests: no manifest, no signer or a bad range");
	ret = IMS_CHECK_SIZE(log, signer, imastream_signpkg_signer, keyid);
	if (ret)
		return ret;
	/* Ours, complete: a member an older caller lacks reads as zero. */
	IMS_COPY_SIZED(&own, signer);
	signer = &own;
	for (size_t i = first; i < first + count; i++) {
		const struct manifest_entry *e = &sm->entries[i];
		struct manifest_file *mf = e->file;
		size_t sig_len = 0;
		int err;

		/* Sign in place behind the 9-byte header, whose size does not depend on the sig. */
		err = signer->sign(signer->arg, mf->algo->algo, mf->digest, mf->algo->digest_size,
				   value + IMASTREAM_SIG_HDR_SIZE, RAW_SIG_MAX, &sig_len);
		if (!err)
			err = imastream_sig_header_encode(IMASTREAM_XATTR_DIGSIG, mf->algo->algo,
							  signer->keyid, sig_len, value, log);
		if (err)
			return ims_err(log, err, "%s: cannot sign %s: %s", e->pkg->nevra, mf->path,
				       strerror(-err));
		free(mf->value);
		mf->value_len = IMASTREAM_SIG_HDR_SIZE + sig_len;
		mf->value = malloc(mf->value_len);
		if (!mf->value)
			return ims_err(log, -ENOMEM, "%s: out of memory", e->pkg->nevra);
		memcpy(mf->value, value, mf->value_len);
	}
	return 0;
}

int imastream_signpkg_manifest_write_signatures(const struct imastream_signpkg_manifest *sm,
						FILE *out)
{
	int err;

	if (!sm || !out)
		return -EINVAL;
	for (size_t i = 0; i < sm->n_entries; i++)
		if (!sm->entries[i].file->value)
			return -EINVAL;
	err = signatures_write_start(out);
	for (size_t i = 0; i < sm->m.n_pkgs && !err; i++)
		err = signatures_write_pkg(out, &sm->m.pkgs[i]);
	return err;
}

const struct manifest_pkg *manifest_find(const struct imastream_signpkg_manifest *sm,
					 const uint8_t sha[32])
{
	struct manifest_pkg key, *kp = &key, **hit;

	if (!sm->by_header || !sm->m.n_pkgs)
		return NULL;
	memcpy(key.header_sha256, sha, 32);
	hit = bsearch(&kp, sm->by_header, sm->m.n_pkgs, sizeof(*sm->by_header), by_header_sha);
	return hit ? *hit : NULL;
}

const struct manifest_pkg *manifest_find_nevra(const struct imastream_signpkg_manifest *sm,
					       const char *nevra)
{
	for (size_t i = 0; i < sm->m.n_pkgs; i++)
		if (!strcmp(sm->m.pkgs[i].nevra, nevra))
			return &sm->m.pkgs[i];
	return NULL;
}
