// SPDX-License-Identifier: LGPL-2.1-or-later
/* A package's identity and file digests as digest manifest records: what a remote signing host needs, not the package. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "common/private.h"
#include "imastream/signpkg.h"
#include "signpkg/manifest.h"
#include "signpkg/rpmpkg.h"

/* rpm's default when a package does not say (RPMTAG_FILEDIGESTALGO absent): MD5. */
#define RPM_DEFAULT_FILEDIGESTALGO 1

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* The files sign-package would sign: a content digest that is not empty or all zeros. */
static int collect_files(const struct rpmpkg *pkg, const struct imastream_hash_info *algo,
			 struct manifest_pkg *mp, const struct imastream_log *log)
{
	struct rpmtd_s digests, names;
	const char *dhex;
	int ret = 0;

	if (!headerGet(pkg->h, RPMTAG_FILEDIGESTS, &digests, HEADERGET_MINMEM))
		return 0; /* no files */
	if (!headerGet(pkg->h, RPMTAG_FILENAMES, &names, HEADERGET_EXT)) {
		rpmtdFreeData(&digests);
		return ims_err(log, -EINVAL, "%s: has file digests but no file names", pkg->path);
	}
	if (digests.count != names.count) {
		ret = ims_err(log, -EINVAL, "%s: malformed header (file digests do not match the file list)",
			      pkg->path);
		goto out;
	}
	mp->files = calloc(digests.count ? digests.count : 1, sizeof(*mp->files));
	if (!mp->files) {
		ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
		goto out;
	}
	while ((dhex = rpmtdNextString(&digests)) != NULL) {
		struct manifest_file *mf = &mp->files[mp->n_files];
		const char *name;

		rpmtdNext(&names);
		name = rpmtdGetString(&names);
		if (!dhex[0])
			continue;
		if (rpmpkg_unhex(dhex, mf->digest, algo->digest_size) || !name) {
			ret = ims_err(log, -EINVAL, "%s: file %u has a malformed %s digest", pkg->path,
				      (unsigned int)rpmtdGetIndex(&digests), algo->name);
			goto out;
		}
		if (all_zero(mf->digest, algo->digest_size))
			continue;
		mf->algo = algo;
		mf->path = strdup(name);
		if (!mf->path) {
			ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
			goto out;
		}
		mp->n_files++;
	}
out:
	rpmtdFreeData(&names);
	rpmtdFreeData(&digests);
	return ret;
}

int imastream_signpkg_manifest_start(FILE *out)
{
	return manifest_write_start(out);
}

int imastream_signpkg_export_digests(const char *path, FILE *out, const struct imastream_log *log)
{
	struct manifest_pkg mp = { 0 };
	const struct imastream_hash_info *algo;
	struct rpmpkg pkg;
	unsigned int md_len = 0;
	int rpm_id, ret;

	if (!path || !out)
		return ims_err(log, -EINVAL, "export-digests: no package or no output given");
	ret = rpmpkg_open(&pkg, path, log);
	if (ret)
		return ret;
	if (headerIsSource(pkg.h)) {
		ret = ims_err(log, -EINVAL, "%s: source package: file signatures apply to binary packages only",
			      path);
		goto out;
	}
	rpm_id = (int)headerGetNumber(pkg.h, RPMTAG_FILEDIGESTALGO);
	algo = imastream_hash_by_rpm_id(rpm_id ? rpm_id : RPM_DEFAULT_FILEDIGESTALGO);
	if (!algo) {
		ret = ims_err(log, -EINVAL, "%s: unsupported file digest algorithm (rpm id %d)", path,
			      rpm_id);
		goto out;
	}
	mp.nevra = headerGetAsString(pkg.h, RPMTAG_NEVRA);
	if (!mp.nevra || !EVP_Digest(pkg.hdr_blob, pkg.hdr_len, mp.header_sha256, &md_len,
				     EVP_sha256(), NULL) || md_len != 32) {
		ret = ims_err(log, -ENOMEM, "%s: cannot take its NEVRA and header digest", path);
		goto out;
	}
	ret = collect_files(&pkg, algo, &mp, log);
	if (ret)
		goto out;
	ret = manifest_write_pkg(out, &mp);
	if (ret == -EINVAL)
		ims_err(log, ret, "%s: its NEVRA '%s' has bytes a digest manifest cannot carry", path,
			mp.nevra);
	else if (ret)
		ims_err(log, ret, "%s: cannot write its digests", path);
out:
	for (size_t i = 0; i < mp.n_files; i++)
		free(mp.files[i].path);
	free(mp.files);
	free(mp.nevra);
	rpmpkg_close(&pkg);
	return ret;
}
