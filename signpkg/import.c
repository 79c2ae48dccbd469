// SPDX-License-Identifier: LGPL-2.1-or-later
/* Puts a signing host's signatures into the package they were made for, each checked against the package and the certificate first. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "common/private.h"
#include "common/rpmtag-compat.h"
#include "imastream/keys.h"
#include "imastream/signpkg.h"
#include "imastream/xattr.h"
#include "signpkg/manifest.h"
#include "signpkg/rpmpkg.h"

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/*
 * The block made for this package: the main header's SHA-256 names it (signing adds to
 * the signature header only, so the header exported is the header now), the NEVRA
 * confirms it.
 */
static int find_block(const struct rpmpkg *pkg, const struct imastream_signpkg_manifest *sigs,
		      const struct manifest_pkg **block_ret, const struct imastream_log *log)
{
	const struct manifest_pkg *b;
	uint8_t sha[32];
	unsigned int md_len = 0;
	char *nevra;
	int ret = 0;

	nevra = headerGetAsString(pkg->h, RPMTAG_NEVRA);
	if (!nevra || !EVP_Digest(pkg->hdr_blob, pkg->hdr_len, sha, &md_len, EVP_sha256(), NULL) ||
	    md_len != 32) {
		free(nevra);
		return ims_err(log, -ENOMEM, "%s: cannot take its NEVRA and header digest", pkg->path);
	}
	b = manifest_find(sigs, sha);
	if (!b && manifest_find_nevra(sigs, nevra))
		ret = ims_err(log, -ENOENT, "%s: the signatures for %s are for another build of it (header SHA-256 differs): not imported",
			      pkg->path, nevra);
	else if (!b)
		ret = ims_err(log, -ENOENT, "%s: no signatures for %s in the signatures file",
			      pkg->path, nevra);
	else if (strcmp(b->nevra, nevra))
		ret = ims_err(log, -EINVAL, "%s: the signatures with its header digest name %s, the package is %s: not imported",
			      pkg->path, b->nevra, nevra);
	free(nevra);
	*block_ret = b;
	return ret;
}

/* One signature: for this file's own digest, and valid with @trust. */
static int check_entry(const struct rpmpkg *pkg, const struct manifest_file *e, const char *name,
		       const struct imastream_hash_info *algo, const uint8_t *digest,
		       const struct imastream_trust *trust, const struct imastream_log *log)
{
	struct imastream_xattr_info info = { .size = sizeof(info) };
	int ret;

	if (strcmp(e->path, name))
		return ims_err(log, -EINVAL, "%s: no signature for %s (the signatures file has %s there): not imported",
			       pkg->path, name, e->path);
	if (e->algo != algo || memcmp(e->digest, digest, algo->digest_size))
		return ims_err(log, -EINVAL, "%s: the signature of %s is for another content (%s digest differs): not imported",
			       pkg->path, name, e->algo->name);
	/* The parser checked the form; the header is read again here for its key id. */
	ret = imastream_xattr_decode(e->value, e->value_len, &info, NULL);
	if (ret)
		return ims_err(log, -EINVAL, "%s: the signature of %s is malformed", pkg->path, name);
	ret = imastream_trust_verify(trust, algo->algo, digest, algo->digest_size, info.data,
				     info.data_len, info.keyid);
	if (ret == -ENOKEY)
		return ims_err(log, ret, "%s: %s is signed with key id %08x, which the certificate does not have: not imported",
			       pkg->path, name, info.keyid);
	if (ret == -EBADMSG)
		return ims_err(log, ret, "%s: the signature of %s does not verify with the certificate (tampered, or another key): not imported",
			       pkg->path, name);
	if (ret)
		return ims_err(log, ret, "%s: cannot verify the signature of %s: %s", pkg->path, name,
			       strerror(-ret));
	return 0;
}

/* Every file sign-package would sign gets the block's next entry; none may be left over. */
static int match_files(const struct rpmpkg *pkg, const struct manifest_pkg *b,
		       const struct imastream_trust *trust, struct file_sigs *fs,
		       const struct imastream_log *log)
{
	const struct imastream_hash_info *algo = rpmpkg_file_digest_algo(pkg);
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	struct rpmtd_s digests, names;
	const char *dhex;
	size_t k = 0;
	int ret = 0;

	memset(fs, 0, sizeof(*fs));
	if (!algo)
		return ims_err(log, -EINVAL, "%s: unsupported file digest algorithm", pkg->path);
	rpmtdReset(&names);
	if (!headerGet(pkg->h, RPMTAG_FILEDIGESTS, &digests, HEADERGET_MINMEM)) {
		if (b->n_files)
			return ims_err(log, -EINVAL, "%s: has no files, the signatures file has %zu signatures for it: not imported",
				       pkg->path, b->n_files);
		return 0;
	}
	if (!headerGet(pkg->h, RPMTAG_FILENAMES, &names, HEADERGET_EXT) ||
	    digests.count != names.count) {
		ret = ims_err(log, -EINVAL, "%s: malformed header (file digests do not match the file list)",
			      pkg->path);
		goto out;
	}
	fs->hex = calloc(digests.count ? digests.count : 1, sizeof(*fs->hex));
	if (!fs->hex) {
		ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
		goto out;
	}
	fs->n = digests.count;
	for (unsigned int i = 0; (dhex = rpmtdNextString(&digests)) != NULL; i++) {
		const char *name;
		const struct manifest_file *e;

		rpmtdNext(&names);
		name = rpmtdGetString(&names);
		if (dhex[0] && rpmpkg_unhex(dhex, digest, algo->digest_size)) {
			ret = ims_err(log, -EINVAL, "%s: file %u has a malformed %s digest", pkg->path,
				      i, algo->name);
			goto out;
		}
		/* No content digest (directories, symlinks, ghosts): empty, as sign-package. */
		if (!dhex[0] || all_zero(digest, algo->digest_size)) {
			fs->hex[i] = strdup("");
			if (!fs->hex[i])
				goto nomem;
			continue;
		}
		if (k >= b->n_files) {
			ret = ims_err(log, -EINVAL, "%s: no signature for %s in the signatures file: not imported",
				      pkg->path, name ? name : "a file");
			goto out;
		}
		e = &b->files[k++];
		ret = check_entry(pkg, e, name ? name : "", algo, digest, trust, log);
		if (ret)
			goto out;
		fs->hex[i] = malloc(2 * e->value_len + 1);
		if (!fs->hex[i])
			goto nomem;
		rpmpkg_hex(e->value, e->value_len, fs->hex[i]);
		fs->signed_files++;
		if (e->value_len > fs->max_len)
			fs->max_len = (unsigned int)e->value_len;
	}
	if (k < b->n_files)
		ret = ims_err(log, -EINVAL, "%s: the signatures file signs %s, which the package does not have: not imported",
			      pkg->path, b->files[k].path);
	goto out;
nomem:
	ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
out:
	rpmtdFreeData(&names);
	rpmtdFreeData(&digests);
	if (ret)
		file_sigs_free(fs);
	return ret;
}

int imastream_signpkg_import_signatures(const char *path,
					const struct imastream_signpkg_manifest *sigs,
					const struct imastream_trust *trust,
					const struct imastream_signpkg_opts *caller_opts,
					struct imastream_signpkg_result *result_ret)
{
	const struct imastream_log *log = caller_opts ? caller_opts->log : NULL;
	struct imastream_signpkg_opts full, *opts = &full;
	struct imastream_signpkg_result res = { .size = sizeof(res) };
	const struct manifest_pkg *block = NULL;
	struct file_sigs fs = { 0 };
	struct rpmpkg pkg;
	int ret;

	ret = caller_opts ? IMS_CHECK_SIZE(log, caller_opts, imastream_signpkg_opts, log) : 0;
	if (ret)
		return ret;
	if (!path || !sigs || sigs->m.kind != MANIFEST_SIGNATURES || !trust || !caller_opts)
		return ims_err(log, -EINVAL, "import-signatures: no package, signatures file or certificate given");
	/* Ours, complete: what an older caller lacks is zero, its default. */
	IMS_COPY_SIZED(opts, caller_opts);
	/* Before any work: a result that cannot be handed back is refused now. */
	ret = signpkg_check_sized(NULL, NULL, result_ret, log);
	if (ret)
		return ret;
	ret = rpmpkg_open(&pkg, path, log);
	if (ret)
		return ret;
	ret = signpkg_check_signable(&pkg, log);
	if (!ret)
		ret = find_block(&pkg, sigs, &block, log);
	if (!ret)
		ret = match_files(&pkg, block, trust, &fs, log);
	if (!ret) {
		res.algo = rpmpkg_file_digest_algo(&pkg)->algo;
		ret = signpkg_store(&pkg, &fs, opts->outdir, &res, log);
	}
	if (!ret && result_ret)
		IMS_FILL_SIZED(result_ret, &res);
	file_sigs_free(&fs);
	rpmpkg_close(&pkg);
	return ret;
}
