// SPDX-License-Identifier: LGPL-2.1-or-later
/* Signs every file digest of an rpm package and writes the package back atomically. */
/* Not filesig/sign.c, which makes the IMA and EVM signatures of one file. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "common/private.h"
#include "common/rpmtag-compat.h"
#include "imastream/hash.h"
#include "imastream/signpkg.h"
#include "imastream/xattr.h"
#include "signpkg/rpmpkg.h"
#include "xattr/codec.h"

/* rpm's default when a package does not say (RPMTAG_FILEDIGESTALGO absent): MD5. */
#define RPM_DEFAULT_FILEDIGESTALGO 1

/* Room for one raw signature: RSA-16384 or any ECDSA signature fits. */
#define RAW_SIG_MAX 2048

void file_sigs_free(struct file_sigs *fs)
{
	for (unsigned int i = 0; fs->hex && i < fs->n; i++)
		free(fs->hex[i]);
	free(fs->hex);
	fs->hex = NULL;
}

static int is_all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Refuses what rpm itself would not let a file signature be added to. */
int signpkg_check_signable(const struct rpmpkg *pkg, const struct imastream_log *log)
{
	if (headerIsSource(pkg->h))
		return ims_err(log, -EINVAL, "%s: source package: file signatures apply to binary packages only",
			       pkg->path);
	if (!headerIsEntry(pkg->h, RPMTAG_HEADERIMMUTABLE))
		return ims_err(log, -EINVAL, "%s: rpm v3 package (no immutable header region): not supported",
			       pkg->path);
	/*
	 * rpm refuses a package that has file signatures in both headers, and those in the
	 * main header cannot be replaced without invalidating its digests and signatures.
	 */
	if (headerIsEntry(pkg->h, RPMTAG_FILESIGNATURES))
		return ims_err(log, -EINVAL, "%s: already has file signatures inside its main header (an older rpmsign): cannot replace them",
			       pkg->path);
	return 0;
}

/*
 * The package's file digest algorithm (@own_ret) and the one to sign with (@want_ret):
 * sha256 unless the caller asked for another, since the kernel and imastream's plugin and
 * installer expect it; a package with other file digests is then re-hashed from its payload.
 */
static int pick_algo(const struct rpmpkg *pkg, int wanted, const struct imastream_hash_info **own_ret,
		     const struct imastream_hash_info **want_ret, const struct imastream_log *log)
{
	int rpm_id = (int)headerGetNumber(pkg->h, RPMTAG_FILEDIGESTALGO);
	const struct imastream_hash_info *hi, *w = NULL;

	if (!rpm_id)
		rpm_id = RPM_DEFAULT_FILEDIGESTALGO;
	hi = imastream_hash_by_rpm_id(rpm_id);
	if (!hi)
		return ims_err(log, -EINVAL, "%s: unsupported file digest algorithm (rpm id %d)",
			       pkg->path, rpm_id);
	if (wanted) {
		w = imastream_hash_by_algo(wanted);
		if (!w)
			return ims_err(log, -EINVAL, "%s: unknown hash algorithm id %d", pkg->path,
				       wanted);
	}
	*own_ret = hi;
	if (!w)
		w = imastream_hash_by_algo(IMASTREAM_HASH_SHA256);
	*want_ret = w;
	return 0;
}

static int sign_one(const struct imastream_signpkg_signer *signer,
		    const struct imastream_hash_info *hi, const uint8_t *digest, char **hex_ret,
		    size_t *len_ret, const struct imastream_log *log)
{
	uint8_t value[IMASTREAM_SIG_HDR_SIZE + RAW_SIG_MAX];
	size_t sig_len = 0;
	char *hex;
	int ret;

	/* Sign in place behind the 9-byte header, whose size does not depend on the sig. */
	ret = signer->sign(signer->arg, hi->algo, digest, hi->digest_size,
			   value + IMASTREAM_SIG_HDR_SIZE, RAW_SIG_MAX, &sig_len);
	if (ret)
		return ret;
	ret = imastream_sig_header_encode(IMASTREAM_XATTR_DIGSIG, hi->algo, signer->keyid, sig_len,
					  value, log);
	if (ret)
		return ret;
	*len_ret = IMASTREAM_SIG_HDR_SIZE + sig_len;
	hex = malloc(2 * *len_ret + 1);
	if (!hex)
		return -ENOMEM;
	rpmpkg_hex(value, *len_ret, hex);
	*hex_ret = hex;
	return 0;
}

static rpm_count_t count_files(Header h)
{
	struct rpmtd_s td;
	rpm_count_t n = 0;

	if (headerGet(h, RPMTAG_BASENAMES, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		n = td.count;
		rpmtdFreeData(&td);
	}
	return n;
}

/* The installed path of file @i, for messages; NULL if it cannot be built. */
static char *file_name(Header h, unsigned int i)
{
	struct rpmtd_s td;
	char *name = NULL;

	if (headerGet(h, RPMTAG_FILENAMES, &td, HEADERGET_EXT)) {
		if (rpmtdSetIndex(&td, (int)i) >= 0 && rpmtdGetString(&td))
			name = strdup(rpmtdGetString(&td));
		rpmtdFreeData(&td);
	}
	return name;
}

/* One signature per file entry in header order, as rpmsign --signfiles makes them. */
static int sign_files(const struct rpmpkg *pkg, const struct imastream_signpkg_signer *signer,
		      const struct imastream_hash_info *own, const struct imastream_hash_info *hi,
		      const struct rpmpkg_digests *re, struct file_sigs *fs,
		      const struct imastream_log *log)
{
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	struct rpmtd_s td;
	const char *dhex;
	int ret = 0;

	memset(fs, 0, sizeof(*fs));
	if (!headerGet(pkg->h, RPMTAG_FILEDIGESTS, &td, HEADERGET_RAW | HEADERGET_MINMEM)) {
		if (headerIsEntry(pkg->h, RPMTAG_BASENAMES))
			return ims_err(log, -EINVAL, "%s: has files but no file digests", pkg->path);
		return 0;
	}
	if (td.type != RPM_STRING_ARRAY_TYPE || td.count != count_files(pkg->h)) {
		ret = ims_err(log, -EINVAL, "%s: malformed header (file digests do not match the file list)",
			      pkg->path);
		goto out;
	}
	fs->hex = calloc(td.count ? td.count : 1, sizeof(*fs->hex));
	if (!fs->hex) {
		ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
		goto out;
	}
	fs->n = td.count;
	for (unsigned int i = 0; (dhex = rpmtdNextString(&td)) != NULL; i++) {
		size_t len;

		/* No content digest (directories, symlinks, ghosts): empty, like rpmsign. */
		if (!dhex[0]) {
			fs->hex[i] = strdup("");
			if (!fs->hex[i])
				goto nomem;
			continue;
		}
		if (rpmpkg_unhex(dhex, digest, own->digest_size)) {
			ret = ims_err(log, -EINVAL, "%s: file %u has a malformed %s digest", pkg->path,
				      i, own->name);
			goto out;
		}
		if (is_all_zero(digest, own->digest_size)) {
			fs->hex[i] = strdup("");
			if (!fs->hex[i])
				goto nomem;
			continue;
		}
		/* Signing with another algorithm: the digest recomputed from the payload. */
		if (re) {
			if (i >= re->n || !re->have[i]) {
				char *name = file_name(pkg->h, i);

				ret = ims_err(log, -EINVAL, "%s: %s has a digest but no content in the payload",
					      pkg->path, name ? name : "a file");
				free(name);
				goto out;
			}
			memcpy(digest, re->digest + (size_t)i * IMASTREAM_HASH_MAX_DIGEST,
			       hi->digest_size);
		}
		ret = sign_one(signer, hi, digest, &fs->hex[i], &len, log);
		if (ret) {
			char *name = file_name(pkg->h, i);

			ims_err(log, ret, "%s: cannot sign file %s: %s", pkg->path,
				name ? name : "?", strerror(-ret));
			free(name);
			goto out;
		}
		fs->signed_files++;
		if (len > fs->max_len)
			fs->max_len = (unsigned int)len;
	}
	goto out;
nomem:
	ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
out:
	rpmtdFreeData(&td);
	if (ret)
		file_sigs_free(fs);
	return ret;
}

/* Size of @h once it has its region again, as it will be written (magic included). */
static int region_size(Header h, size_t *size_ret)
{
	Header copy = headerReload(headerCopy(h), RPMTAG_HEADERSIGNATURES);

	if (!copy)
		return -EINVAL;
	*size_ret = headerSizeof(copy, HEADER_MAGIC_YES);
	headerFree(copy);
	return 0;
}

/*
 * rpmbuild leaves RPMSIGTAG_RESERVEDSPACE (zeros) so that signatures can be added in
 * place.  Give up as much of it as the new tags take, as rpmsign does; when it is too
 * small, keep it whole: a later rpmsign --addsign can still use it.
 */
static int adjust_reserved_space(Header nh, size_t orig_size)
{
	struct rpmtd_s td;
	rpm_count_t count;
	rpmTagType type;
	size_t new_size;
	uint8_t *zeros;
	long long left;
	int ret;

	if (!headerGet(nh, RPMSIGTAG_RESERVEDSPACE, &td, HEADERGET_RAW | HEADERGET_MINMEM))
		return 0;
	count = td.count;
	type = td.type;
	rpmtdFreeData(&td);
	ret = region_size(nh, &new_size);
	if (ret)
		return ret;
	left = (long long)count - ((long long)new_size - (long long)orig_size);
	if (type != RPM_BIN_TYPE || left <= 0 || left == count)
		return 0;
	rpmtdReset(&td);
	td.tag = RPMSIGTAG_RESERVEDSPACE;
	td.type = RPM_BIN_TYPE;
	zeros = calloc((size_t)left, 1);
	if (!zeros)
		return -ENOMEM;
	td.data = zeros;
	td.count = (rpm_count_t)left;
	ret = headerMod(nh, &td) ? 0 : -EINVAL;
	free(zeros);
	return ret;
}

/* The new signature header blob (magic included, padding not). */
static int signpkg_build_sig_header(const struct rpmpkg *pkg, const struct file_sigs *fs,
				    uint8_t **blob_ret, size_t *len_ret, const struct imastream_log *log)
{
	/* The copy drops the old immutable region; headerReload() makes a new one. */
	Header nh = headerCopy(pkg->sigh);
	struct rpmtd_s td;
	uint32_t max_len = fs->max_len;
	unsigned int size;
	uint8_t *out = NULL;
	void *blob = NULL;
	int ret = -EINVAL;

	if (!nh)
		return ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
	headerDel(nh, IMASTREAM_RPMSIGTAG_FILESIGNATURES);
	headerDel(nh, IMASTREAM_RPMSIGTAG_FILESIGNATURELENGTH);
	if (fs->n) {
		rpmtdReset(&td);
		td.tag = IMASTREAM_RPMSIGTAG_FILESIGNATURES;
		td.type = RPM_STRING_ARRAY_TYPE;
		td.data = fs->hex;
		td.count = fs->n;
		if (!headerPut(nh, &td, HEADERPUT_DEFAULT))
			goto fail;
	}
	/* rpmsign stores the length only when at least one file was signed. */
	if (max_len) {
		rpmtdReset(&td);
		td.tag = IMASTREAM_RPMSIGTAG_FILESIGNATURELENGTH;
		td.type = RPM_INT32_TYPE;
		td.data = &max_len;
		td.count = 1;
		if (!headerPut(nh, &td, HEADERPUT_DEFAULT))
			goto fail;
	}
	ret = adjust_reserved_space(nh, pkg->sig_len);
	if (ret)
		goto fail;
	nh = headerReload(nh, RPMTAG_HEADERSIGNATURES);
	if (!nh) {
		ret = -EINVAL;
		goto fail;
	}
	blob = headerExport(nh, &size);
	if (!blob) {
		ret = -EINVAL;
		goto fail;
	}
	if (size > (64u << 20)) {
		ret = ims_err(log, -E2BIG, "%s: the signature header would exceed rpm's 64 MiB limit",
			      pkg->path);
		goto out;
	}
	out = malloc(RPMPKG_HDR_MAGIC_SIZE + (size_t)size);
	if (!out) {
		ret = ims_err(log, -ENOMEM, "%s: out of memory", pkg->path);
		goto out;
	}
	memcpy(out, rpmpkg_hdr_magic, RPMPKG_HDR_MAGIC_SIZE);
	memcpy(out + RPMPKG_HDR_MAGIC_SIZE, blob, size);
	*blob_ret = out;
	*len_ret = RPMPKG_HDR_MAGIC_SIZE + (size_t)size;
	ret = 0;
	goto out;
fail:
	ret = ims_err(log, ret == -ENOMEM ? ret : -EINVAL, "%s: cannot build the new signature header",
		      pkg->path);
out:
	free(blob);
	if (nh)
		headerFree(nh);
	return ret;
}

/* Destination path: the input itself, or OUTDIR/basename(input). */
static int signpkg_dest_path(const char *path, const char *outdir, char **ret)
{
	char *copy = strdup(path), *s = NULL;
	int n;

	if (!copy)
		return -ENOMEM;
	if (outdir)
		n = asprintf(&s, "%s/%s", outdir, basename(copy));
	else
		n = asprintf(&s, "%s", path);
	free(copy);
	if (n < 0)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* A temp file next to @dest, so that the final rename() stays in one filesystem. */
static int make_temp(const char *dest, char **tmp_ret, int *fd_ret)
{
	char *d = strdup(dest), *b = strdup(dest), *tmp = NULL;
	int fd, ret = 0;

	if (!d || !b || asprintf(&tmp, "%s/.%s.XXXXXX", dirname(d), basename(b)) < 0) {
		ret = -ENOMEM;
		tmp = NULL;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		/* Never 0: the caller takes 0 as a temp file made (gcc 15 sees that path). */
		ret = errno ? -errno : -EIO;
		goto out;
	}
	/* Handed over; keys/pkcs11.c's key load ends in this shape, with nothing to share. */
	*tmp_ret = tmp;
	*fd_ret = fd;
	tmp = NULL;
out:
	free(tmp);
	free(d);
	free(b);
	return ret;
}

static int signpkg_write_package(struct rpmpkg *pkg, const uint8_t *sig, size_t sig_len,
				 const char *dest, const struct imastream_log *log)
{
	static const uint8_t zeros[8];
	char *tmp = NULL;
	struct stat st;
	int fd = -1, ret;

	if (fstat(pkg->fd, &st))
		return ims_err(log, -errno, "%s: cannot stat: %s", pkg->path, strerror(errno));
	ret = make_temp(dest, &tmp, &fd);
	if (ret)
		return ims_err(log, ret, "%s: cannot create a temporary file next to it: %s", dest,
			       strerror(-ret));
	ret = ims_write_full(fd, pkg->lead, sizeof(pkg->lead));
	if (!ret)
		ret = ims_write_full(fd, sig, sig_len);
	if (!ret)
		ret = ims_write_full(fd, zeros, (8 - sig_len % 8) % 8);
	if (ret) {
		ims_err(log, ret, "%s: cannot write: %s", tmp, strerror(-ret));
		goto out;
	}
	ret = rpmpkg_copy_verified(pkg, fd, tmp, log);
	if (ret)
		goto out;
	if (fchmod(fd, st.st_mode & 07777) || fsync(fd)) {
		ret = ims_err(log, -errno, "%s: cannot finish: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		ret = ims_err(log, -errno, "%s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, dest))
		ret = ims_err(log, -errno, "%s: cannot rename into place: %s", dest, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

int signpkg_store(struct rpmpkg *pkg, const struct file_sigs *fs, const char *outdir,
		  struct imastream_signpkg_result *res, const struct imastream_log *log)
{
	uint8_t *sig = NULL;
	size_t sig_len = 0;
	char *dest = NULL;
	int ret;

	ret = signpkg_build_sig_header(pkg, fs, &sig, &sig_len, log);
	if (ret)
		return ret;
	ret = signpkg_dest_path(pkg->path, outdir, &dest);
	if (ret) {
		ims_err(log, ret, "%s: out of memory", pkg->path);
		goto out;
	}
	res->files = fs->n;
	res->signed_files = fs->signed_files;
	res->max_len = fs->max_len;
	res->replaced = headerIsEntry(pkg->sigh, IMASTREAM_RPMSIGTAG_FILESIGNATURES);
	res->openpgp = headerIsEntry(pkg->sigh, RPMSIGTAG_RSA) || headerIsEntry(pkg->sigh, RPMSIGTAG_DSA) ||
		       headerIsEntry(pkg->sigh, RPMSIGTAG_PGP) || headerIsEntry(pkg->sigh, RPMSIGTAG_GPG) ||
		       headerIsEntry(pkg->sigh, RPMSIGTAG_OPENPGP_COMPAT);
	ret = signpkg_write_package(pkg, sig, sig_len, dest, log);
out:
	free(dest);
	free(sig);
	return ret;
}

int signpkg_check_sized(const struct imastream_signpkg_signer *caller_signer,
			struct imastream_signpkg_signer *signer,
			const struct imastream_signpkg_result *result,
			const struct imastream_log *log)
{
	int ret = 0;

	if (caller_signer) {
		ret = IMS_CHECK_SIZE(log, caller_signer, imastream_signpkg_signer, keyid);
		if (!ret)
			IMS_COPY_SIZED(signer, caller_signer);
	}
	if (!ret && result)
		ret = IMS_CHECK_OUT_SIZE(log, result, imastream_signpkg_result, rehashed);
	return ret;
}

int imastream_sign_package(const char *path, const struct imastream_signpkg_opts *caller_opts,
			   struct imastream_signpkg_result *result_ret)
{
	const struct imastream_log *log = caller_opts ? caller_opts->log : NULL;
	struct imastream_signpkg_opts full, *opts = &full;
	const struct imastream_hash_info *hi = NULL, *own = NULL;
	struct rpmpkg_digests re = { 0 }, *rehashed = NULL;
	struct imastream_signpkg_result res = { .size = sizeof(res) };
	struct imastream_signpkg_signer signer;
	struct file_sigs fs = { 0 };
	struct rpmpkg pkg;
	int ret;

	if (!caller_opts)
		return ims_err(log, -EINVAL, "sign-package: no options given");
	/* The size first: it says which of the other members the caller has. */
	ret = IMS_CHECK_SIZE(log, caller_opts, imastream_signpkg_opts, log);
	if (ret)
		return ret;
	IMS_COPY_SIZED(opts, caller_opts);
	if (!path || !opts->signer || !opts->signer->sign)
		return ims_err(log, -EINVAL, "sign-package: no package or no signer given");
	ret = signpkg_check_sized(opts->signer, &signer, result_ret, log);
	if (ret)
		return ret;
	opts->signer = &signer;
	ret = rpmpkg_open(&pkg, path, log);
	if (ret)
		return ret;
	ret = signpkg_check_signable(&pkg, log);
	if (!ret)
		ret = pick_algo(&pkg, opts->algo, &own, &hi, log);
	if (!ret && hi != own) {
		ret = rpmpkg_rehash(&pkg, own, hi, &re, log);
		if (!ret)
			rehashed = &re;
	}
	if (!ret)
		ret = sign_files(&pkg, opts->signer, own, hi, rehashed, &fs, log);
	if (!ret) {
		res.algo = hi->algo;
		res.rehashed = rehashed != NULL;
		ret = signpkg_store(&pkg, &fs, opts->outdir, &res, log);
	}
	if (!ret && result_ret)
		IMS_FILL_SIZED(result_ret, &res);
	rpmpkg_digests_free(&re);
	file_sigs_free(&fs);
	rpmpkg_close(&pkg);
	return ret;
}
