// SPDX-License-Identifier: LGPL-2.1-or-later
/* Verifies a file's security.ima and security.evm against a trust store, with one verdict each. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>

#include "common/private.h"
#include "filesig/verifier.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "imastream/verity.h"
#include "keys/trust_cache.h"
#include "xattr/codec.h"

/* The largest value either xattr can legally hold: a header and a 16-bit sized signature. */
#define VALUE_MAX (IMASTREAM_SIG_HDR_SIZE + IMASTREAM_SIG_MAX)
/* What nearly every value fits in. */
#define SMALL_VALUE 1024

struct imastream_verifier {
	const struct imastream_trust *trust;
	struct imastream_log log;
	/* Content hashers, one per kernel algorithm id, made when first needed. */
	struct imastream_hasher *hashers[32];
	/* fs-verity digests, for type-6 values; made when first needed. */
	struct imastream_verity *verity;
	/* This verifier's (one thread's) verify contexts; made when first needed. */
	struct ims_trust_cache *trust_cache;
	uint8_t value[VALUE_MAX];
};

static const char *const result_names[] = {
	[IMASTREAM_VERIFY_OK] = "OK",
	[IMASTREAM_VERIFY_CONTENT_CHANGED] = "content changed",
	[IMASTREAM_VERIFY_METADATA_CHANGED] = "metadata changed",
	[IMASTREAM_VERIFY_UNKNOWN_KEY] = "unknown key id",
	[IMASTREAM_VERIFY_BAD_SIGNATURE] = "bad signature",
	[IMASTREAM_VERIFY_MISSING] = "missing",
	[IMASTREAM_VERIFY_MALFORMED] = "malformed",
	[IMASTREAM_VERIFY_UNVERIFIABLE] = "cannot be verified",
	[IMASTREAM_VERIFY_SKIPPED] = "not checked",
};

const char *imastream_verify_result_str(int result)
{
	if (result < 0 || (size_t)result >= ARRAY_SIZE(result_names))
		return "unknown result";
	return result_names[result];
}

int imastream_verifier_new(const struct imastream_trust *trust, const struct imastream_log *log,
			   struct imastream_verifier **ret)
{
	struct imastream_verifier *v = calloc(1, sizeof(*v));

	if (!v)
		return ims_err(log, -ENOMEM, "out of memory for a verifier");
	v->trust = trust;
	if (log)
		v->log = *log;
	*ret = v;
	return 0;
}

int ims_verifier_copy(const struct imastream_verifier *v, struct imastream_verifier **ret)
{
	return imastream_verifier_new(v->trust, &v->log, ret);
}

void imastream_verifier_free(struct imastream_verifier *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(v->hashers); i++)
		imastream_hasher_free(v->hashers[i]);
	imastream_verity_free(v->verity);
	ims_trust_cache_free(v->trust_cache);
	free(v);
}

/* A log that keeps the decoder's one line as the verdict's detail. */
static void keep_detail(void *arg, int level, const char *msg)
{
	struct imastream_verify_one *one = arg;

	(void)level;
	snprintf(one->detail, sizeof(one->detail), "%s", msg);
}

static void set_detail(struct imastream_verify_one *one, int result, const char *fmt, ...)
	ims_printf(3, 4);

static void set_detail(struct imastream_verify_one *one, int result, const char *fmt, ...)
{
	va_list ap;

	one->result = result;
	va_start(ap, fmt);
	vsnprintf(one->detail, sizeof(one->detail), fmt, ap);
	va_end(ap);
}

/*
 * Reads and decodes one xattr into @info (pointing into v->value), or takes @known
 * (@known_len bytes, not 0), the value the caller has just read.  Returns 1 when a
 * value was decoded, 0 when @one already holds a verdict (missing, malformed), -errno.
 */
static int read_value(struct imastream_verifier *v, int fd, const char *path, const char *name,
		      const uint8_t *known, size_t known_len, struct imastream_verify_one *one,
		      struct imastream_xattr_info *info)
{
	struct imastream_log capture = { keep_detail, one };
	ssize_t n;

	/*
	 * The kernel allocates as much as it is offered: ask for what signatures take (a
	 * 4096-bit RSA one is 521 bytes), and for the most only when that is too little.
	 */
	if (known && known_len && known_len <= sizeof(v->value)) {
		memcpy(v->value, known, known_len);
		n = (ssize_t)known_len;
	} else {
		n = fgetxattr(fd, name, v->value, SMALL_VALUE);
	}
	if (n < 0 && errno == ERANGE)
		n = fgetxattr(fd, name, v->value, sizeof(v->value));
	if (n < 0) {
		if (errno == ENODATA) {
			set_detail(one, IMASTREAM_VERIFY_MISSING, "no %s", name);
			return 0;
		}
		if (errno == ENOTSUP) {
			set_detail(one, IMASTREAM_VERIFY_MISSING, "no %s (no xattr support here)",
				   name);
			return 0;
		}
		if (errno == ERANGE) {
			set_detail(one, IMASTREAM_VERIFY_MALFORMED, "%s longer than any valid value",
				   name);
			return 0;
		}
		return ims_err(&v->log, -errno, "%s: cannot read %s: %s", path, name,
			       strerror(errno));
	}
	if (n > 0)
		one->type = v->value[0];
	if (imastream_xattr_decode(v->value, (size_t)n, info, &capture)) {
		one->result = IMASTREAM_VERIFY_MALFORMED;
		return 0;
	}
	one->algo = info->algo;
	if (info->type == IMASTREAM_XATTR_DIGSIG || info->type == IMASTREAM_XATTR_EVM_PORTABLE ||
	    info->type == IMASTREAM_XATTR_IMA_VERITY_SIG)
		one->keyid = info->keyid;
	return 1;
}

/*
 * The content's digest with @algo: from @known when it has it, else by hashing the whole
 * of @fd.  1 = done, 0 = verdict set, -errno.
 */
static int content_digest(struct imastream_verifier *v, int fd, const char *path, int algo,
			  const struct imastream_hasher *known, struct imastream_verify_one *one,
			  const uint8_t **digest, size_t *digest_len)
{
	struct imastream_hasher **h;
	int err;

	if (known && !imastream_hasher_digest(known, algo, digest, digest_len))
		return 1;
	if (!imastream_hash_by_algo(algo) || algo < 0 || (size_t)algo >= ARRAY_SIZE(v->hashers)) {
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE, "no %s hashing here",
			   imastream_hash_by_algo(algo) ? imastream_hash_by_algo(algo)->name :
			   "implementation of this algorithm for");
		return 0;
	}
	h = &v->hashers[algo];
	if (!*h) {
		err = imastream_hasher_new(IMASTREAM_HASH_BIT(algo), NULL, h);
		if (err == -EOPNOTSUPP) {
			set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE, "OpenSSL has no %s",
				   imastream_hash_by_algo(algo)->name);
			return 0;
		}
		if (err)
			return ims_err(&v->log, err, "%s: cannot set up hashing: %s", path,
				       strerror(-err));
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ims_err(&v->log, -errno, "%s: cannot seek: %s", path, strerror(errno));
	err = imastream_hash_fd(*h, fd);
	if (!err)
		err = imastream_hasher_digest(*h, algo, digest, digest_len);
	if (err)
		return ims_err(&v->log, err, "%s: cannot read: %s", path, strerror(-err));
	return 1;
}

/*
 * The verdict on a signature over @digest: OK, or why not.  @changed is the verdict for
 * a genuine signature over other data (content or metadata changed).
 */
static void check_signature(struct imastream_verifier *v,
			    const struct imastream_xattr_info *info, const uint8_t *digest,
			    size_t digest_len, int changed, struct imastream_verify_one *one)
{
	uint8_t signed_digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t signed_len;
	int err;

	/* Without a cache (no memory), a context a call: slower, the same verdict. */
	if (!v->trust_cache)
		v->trust_cache = ims_trust_cache_new();
	err = ims_trust_verify_cached(v->trust, v->trust_cache, info->algo, digest, digest_len,
				      info->data, info->data_len, info->keyid);
	switch (err) {
	case 0:
		one->result = IMASTREAM_VERIFY_OK;
		return;
	case -ENOKEY:
		one->result = IMASTREAM_VERIFY_UNKNOWN_KEY;
		return;
	case -EBADMSG:
		break;
	case -EKEYREJECTED:
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE,
			   "certificate %08x holds %s", info->keyid,
			   imastream_trust_rejection(v->trust, info->keyid) ?
			   imastream_trust_rejection(v->trust, info->keyid) :
			   "a key that cannot verify it");
		return;
	default:
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE, "%s signatures not supported here",
			   imastream_hash_by_algo(info->algo) ?
			   imastream_hash_by_algo(info->algo)->name : "this algorithm's");
		return;
	}
	/* It does not verify: open it (RSA) to see whether it signs something else. */
	err = imastream_trust_signed_digest(v->trust, info->algo, info->data, info->data_len,
					    info->keyid, signed_digest, sizeof(signed_digest),
					    &signed_len);
	if (!err && (signed_len != digest_len || memcmp(signed_digest, digest, digest_len)))
		one->result = changed;
	else if (err == -EOPNOTSUPP) {
		one->result = changed;
		one->undecided = true;
	} else
		one->result = IMASTREAM_VERIFY_BAD_SIGNATURE;
}

/*
 * A type-6 value: a version-3 signature over the file id of the fs-verity digest, which
 * is recomputed from the content (what FS_IOC_MEASURE_VERITY gives once verity is on).
 */
static int verify_ima_verity(struct imastream_verifier *v, int fd, const char *path,
			     const struct imastream_xattr_info *info,
			     struct imastream_verify_one *one)
{
	uint8_t verity_digest[IMASTREAM_VERITY_DIGEST_SIZE];
	uint8_t id_digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t id_len;
	int err;

	if (info->algo != IMASTREAM_HASH_SHA256) {
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE, "no %s fs-verity digests here",
			   imastream_hash_by_algo(info->algo) ?
			   imastream_hash_by_algo(info->algo)->name : "such");
		return 0;
	}
	if (!v->verity) {
		err = imastream_verity_new(&v->log, &v->verity);
		if (err)
			return ims_err(&v->log, err, "%s: cannot set up fs-verity hashing: %s", path,
				       strerror(-err));
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ims_err(&v->log, -errno, "%s: cannot seek: %s", path, strerror(errno));
	err = imastream_verity_fd(v->verity, fd, verity_digest);
	if (err)
		return ims_err(&v->log, err, "%s: cannot read: %s", path, strerror(-err));
	err = imastream_sigv3_file_id_digest(IMASTREAM_XATTR_IMA_VERITY_SIG, info->algo,
					     verity_digest, sizeof(verity_digest), id_digest,
					     sizeof(id_digest), &id_len, &v->log);
	if (err)
		return ims_err(&v->log, err, "%s: cannot hash the file id: %s", path,
			       strerror(-err));
	check_signature(v, info, id_digest, id_len, IMASTREAM_VERIFY_CONTENT_CHANGED, one);
	return 0;
}

static int verify_ima(struct imastream_verifier *v, int fd, const char *path, unsigned int flags,
		      const struct imastream_hasher *known, const uint8_t *value,
		      size_t value_len, struct imastream_verify_one *one)
{
	const char *name = imastream_xattr_name(IMASTREAM_ATTR_IMA, flags & IMASTREAM_FILESIG_USER);
	struct imastream_xattr_info info = { .size = sizeof(info) };
	const uint8_t *digest;
	size_t digest_len;
	int err;

	err = read_value(v, fd, path, name, value, value_len, one, &info);
	if (err <= 0)
		return err;
	switch (info.type) {
	case IMASTREAM_XATTR_IMA_DIGEST:
	case IMASTREAM_XATTR_IMA_DIGEST_NG:
	case IMASTREAM_XATTR_DIGSIG:
		break;
	case IMASTREAM_XATTR_IMA_VERITY_SIG:
		return verify_ima_verity(v, fd, path, &info, one);
	default:
		set_detail(one, IMASTREAM_VERIFY_MALFORMED, "type %d does not belong in %s",
			   info.type, name);
		return 0;
	}
	err = content_digest(v, fd, path, info.algo, known, one, &digest, &digest_len);
	if (err <= 0)
		return err;
	if (info.type == IMASTREAM_XATTR_DIGSIG) {
		check_signature(v, &info, digest, digest_len, IMASTREAM_VERIFY_CONTENT_CHANGED,
				one);
		return 0;
	}
	/* The kernel compares only the digest's bytes (a padded md5 is longer). */
	one->result = info.data_len >= digest_len && !memcmp(info.data, digest, digest_len) ?
		IMASTREAM_VERIFY_OK : IMASTREAM_VERIFY_CONTENT_CHANGED;
	return 0;
}

/* A type-3 EVM signature: over the inode's identity too, with or without the fs UUID. */
static int verify_evm_digsig(struct imastream_verifier *v, int fd, const char *path,
			     const struct imastream_xattr_info *info,
			     struct imastream_verify_one *one)
{
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	struct imastream_evm_input in = { .size = sizeof(in) };
	size_t digest_len;
	int err;

	/* Like the kernel (and evmctl), a type-3 value always covers security.ima. */
	err = imastream_evm_collect(fd, path,
				    IMASTREAM_EVM_COLLECT_GENERATION | IMASTREAM_EVM_COLLECT_UUID,
				    &in, NULL);
	if (err == -ENOTTY || err == -EOPNOTSUPP || err == -EINVAL) {
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE,
			   "type-3 EVM signature: this filesystem gives no inode generation or UUID");
		return 0;
	}
	if (err)
		return ims_err(&v->log, err, "%s: cannot read its metadata: %s", path,
			       strerror(-err));
	/* The kernel appends the UUID when built with CONFIG_EVM_ATTR_FSUUID (the default). */
	for (int with_uuid = 1; with_uuid >= 0; with_uuid--) {
		in.has_uuid = with_uuid;
		err = imastream_evm_digest(&in, info->algo, digest, sizeof(digest), &digest_len,
					   NULL);
		if (err) {
			set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE, "no %s hashing here",
				   imastream_hash_by_algo(info->algo) ?
				   imastream_hash_by_algo(info->algo)->name : "such");
			break;
		}
		memset(one->detail, 0, sizeof(one->detail));
		one->undecided = false;
		check_signature(v, info, digest, digest_len, IMASTREAM_VERIFY_METADATA_CHANGED,
				one);
		if (one->result != IMASTREAM_VERIFY_METADATA_CHANGED &&
		    one->result != IMASTREAM_VERIFY_BAD_SIGNATURE)
			break;
	}
	imastream_evm_input_release(&in);
	return 0;
}

static int verify_evm(struct imastream_verifier *v, int fd, const char *path, unsigned int flags,
		      struct imastream_verify_one *one)
{
	const char *name = imastream_xattr_name(IMASTREAM_ATTR_EVM, flags & IMASTREAM_FILESIG_USER);
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	struct imastream_xattr_info info = { .size = sizeof(info) };
	struct imastream_evm_input in = { .size = sizeof(in) };
	size_t digest_len;
	int err;

	err = read_value(v, fd, path, name, NULL, 0, one, &info);
	if (err <= 0)
		return err;
	switch (info.type) {
	case IMASTREAM_XATTR_EVM_PORTABLE:
		break;
	case IMASTREAM_XATTR_DIGSIG:
		return verify_evm_digsig(v, fd, path, &info, one);
	case IMASTREAM_XATTR_EVM_HMAC:
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE,
			   "an EVM HMAC needs the device's EVM key");
		return 0;
	default:
		set_detail(one, IMASTREAM_VERIFY_MALFORMED, "type %d does not belong in %s",
			   info.type, name);
		return 0;
	}
	/* The portable value covers user.ima in the place of security.ima, as evmctl does. */
	err = imastream_evm_collect(fd, path, (flags & IMASTREAM_FILESIG_USER) ?
				    IMASTREAM_EVM_COLLECT_USER_IMA : 0, &in, NULL);
	if (err)
		return ims_err(&v->log, err, "%s: cannot read its metadata: %s", path,
			       strerror(-err));
	err = imastream_evm_digest_portable(&in, info.algo, digest, sizeof(digest), &digest_len,
					    NULL);
	imastream_evm_input_release(&in);
	if (err == -ENODATA) {
		set_detail(one, IMASTREAM_VERIFY_METADATA_CHANGED,
			   "a portable signature needs %s, which is gone",
			   imastream_xattr_name(IMASTREAM_ATTR_IMA, flags & IMASTREAM_FILESIG_USER));
		return 0;
	}
	if (err) {
		set_detail(one, IMASTREAM_VERIFY_UNVERIFIABLE, "no %s hashing here",
			   imastream_hash_by_algo(info.algo) ?
			   imastream_hash_by_algo(info.algo)->name : "such");
		return 0;
	}
	check_signature(v, &info, digest, digest_len, IMASTREAM_VERIFY_METADATA_CHANGED, one);
	return 0;
}

int imastream_verify_file(struct imastream_verifier *v, int fd, const char *path,
			  unsigned int flags, struct imastream_verify_report *report)
{
	return imastream_verify_file_hashed(v, fd, path, flags, NULL, report);
}

int imastream_verify_file_hashed(struct imastream_verifier *v, int fd, const char *path,
				 unsigned int flags, const struct imastream_hasher *content,
				 struct imastream_verify_report *report)
{
	return ims_verify_file_known(v, fd, path, flags, content, NULL, 0, report);
}

int ims_verify_file_known(struct imastream_verifier *v, int fd, const char *path,
			  unsigned int flags, const struct imastream_hasher *content,
			  const uint8_t *ima, size_t ima_len, struct imastream_verify_report *report)
{
	struct imastream_verify_report r = { .size = sizeof(r) };
	int err;

	if (!path)
		path = "(fd)";
	/* Refused before the file is read: a verdict that cannot be handed back is no use. */
	err = report ? IMS_CHECK_OUT_SIZE(&v->log, report, imastream_verify_report, ok) :
		       ims_err(&v->log, -EINVAL, "%s: no report to fill", path);
	if (err)
		return err;
	err = verify_ima(v, fd, path, flags, content, ima, ima_len, &r.ima);
	if (err)
		return err;
	if (flags & IMASTREAM_VERIFY_NO_EVM) {
		r.evm.result = IMASTREAM_VERIFY_SKIPPED;
	} else {
		err = verify_evm(v, fd, path, flags, &r.evm);
		if (err)
			return err;
	}
	r.ok = r.ima.result == IMASTREAM_VERIFY_OK &&
	       (r.evm.result == IMASTREAM_VERIFY_OK || r.evm.result == IMASTREAM_VERIFY_SKIPPED);
	IMS_FILL_SIZED(report, &r);
	return 0;
}
