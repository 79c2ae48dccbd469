// SPDX-License-Identifier: LGPL-2.1-or-later
/* The audit of an installed root: each file against its rpm header, its security.ima and security.evm. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>

#include "common/private.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "imastream/installer.h"
#include "installer/private.h"

struct audit {
	int rootfd;
	struct ims_ids ids;
	struct imastream_verifier *verifier;
	unsigned int verify_flags;
	struct imastream_hasher *hasher; /* the header's algorithm and security.ima's */
	uint32_t hasher_mask;
	void (*fn)(void *arg, const struct imastream_audit_file *f);
	void *arg;
	const struct imastream_log *log;
};

/* The algorithm of the file's security.ima (or user.ima), 0 when none can be read. */
static int ima_algo(const struct audit *a, int fd)
{
	const char *name = imastream_xattr_name(IMASTREAM_ATTR_IMA,
						a->verify_flags & IMASTREAM_FILESIG_USER);
	/* The kernel allocates what it is offered; a longer value is left to the verifier. */
	uint8_t value[1024];
	struct imastream_xattr_info info;
	ssize_t n = fgetxattr(fd, name, value, sizeof(value));

	if (n <= 0 || imastream_xattr_decode(value, (size_t)n, &info, NULL))
		return 0;
	return imastream_hash_by_algo(info.algo) ? info.algo : 0;
}

/*
 * Reads the content once for every digest the audit needs: the header's and the one
 * security.ima holds, which the verifier then takes from *@hashed (this file's hasher,
 * or NULL when nothing was read).
 * Return: 1 the header's digest matches, 0 it does not, -errno.
 */
static int hash_content(struct audit *a, rpmfi fi, int fd, const struct imastream_hash_info *hi,
			const struct imastream_hasher **hashed)
{
	const unsigned char *want;
	const uint8_t *digest;
	size_t want_len = 0, len;
	uint32_t mask = 0;
	int algo = 0, err;
	bool header;

	*hashed = NULL;
	want = rpmfiFDigest(fi, &algo, &want_len);
	header = want && hi && want_len == hi->digest_size;
	if (header)
		mask |= IMASTREAM_HASH_BIT(hi->algo);
	algo = ima_algo(a, fd);
	if (algo)
		mask |= IMASTREAM_HASH_BIT(algo);
	if (!mask)
		return 0;
	if (mask != a->hasher_mask) {
		imastream_hasher_free(a->hasher);
		a->hasher = NULL;
		a->hasher_mask = 0;
		err = imastream_hasher_new(mask, NULL, &a->hasher);
		/* An algorithm this OpenSSL lacks: the verifier says so for security.ima. */
		if (err == -EOPNOTSUPP && header && algo) {
			mask = IMASTREAM_HASH_BIT(hi->algo);
			err = imastream_hasher_new(mask, a->log, &a->hasher);
		}
		if (err)
			return err;
		a->hasher_mask = mask;
	}
	err = imastream_hash_fd(a->hasher, fd);
	if (err)
		return err;
	*hashed = a->hasher;
	if (!header || imastream_hasher_digest(a->hasher, hi->algo, &digest, &len))
		return 0;
	return len == want_len && !memcmp(digest, want, len);
}

/* Whether the file has a security.selinux: OK, MISSING or -errno. */
static int label_present(int fd)
{
	ssize_t n = fgetxattr(fd, "security.selinux", NULL, 0);

	if (n > 0)
		return IMASTREAM_VERIFY_OK;
	return n == 0 || errno == ENODATA || errno == ENOTSUP ? IMASTREAM_VERIFY_MISSING : -errno;
}

static void audit_file(struct audit *a, rpmfi fi, const char *nevra, const struct imastream_hash_info *hi)
{
	struct imastream_audit_file af = { .package = nevra, .path = rpmfiFN(fi) };
	const struct imastream_hasher *hashed = NULL;
	struct ims_installed in;
	int err;

	af.label = IMASTREAM_VERIFY_SKIPPED;
	err = ims_installed_open(a->rootfd, fi, &a->ids, nevra, a->log, &in);
	af.config = in.config;
	memcpy(af.letters, in.letters, sizeof(af.letters));
	af.why = in.why;
	if (err) {
		af.state = IMASTREAM_AUDIT_ERROR;
		af.why = strerror(-err);
	} else if (in.state == IMS_INSTALLED_MISSING) {
		af.state = IMASTREAM_AUDIT_MISSING;
	} else if (in.fd >= 0 && S_ISREG(in.st.st_mode)) {
		/*
		 * One read for the header's digest and security.ima's; a file whose size
		 * already differs is not compared with the header (rpm -V's S).
		 */
		err = hash_content(a, fi, in.fd, hi, &hashed);
		if (err == 0 && af.letters[0] != 'S')
			af.letters[2] = '5';
		if (err >= 0)
			err = imastream_verify_file_hashed(a->verifier, in.fd, af.path,
							   a->verify_flags & ~IMASTREAM_AUDIT_LABELS,
							   hashed, &af.report);
		if (err >= 0 && (a->verify_flags & IMASTREAM_AUDIT_LABELS) &&
		    (err = label_present(in.fd)) >= 0) {
			af.label = err;
			err = 0;
		}
		if (err < 0) {
			af.state = IMASTREAM_AUDIT_ERROR;
			af.why = strerror(-err);
		} else {
			af.verified = true;
			af.state = strcmp(af.letters, ".........") ? IMASTREAM_AUDIT_MODIFIED :
				   IMASTREAM_AUDIT_INTACT;
		}
	} else {
		af.state = IMASTREAM_AUDIT_MODIFIED;
	}
	ims_installed_close(&in);
	a->fn(a->arg, &af);
}

static int audit_header(void *arg, void *rpm_header)
{
	struct audit *a = arg;
	Header h = rpm_header;
	const struct imastream_hash_info *hi;
	char *nevra = headerGetAsString(h, RPMTAG_NEVRA);
	rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);

	if (!nevra) {
		rpmfiFree(fi);
		return -ENOMEM;
	}
	hi = fi ? imastream_hash_by_rpm_id(rpmfiDigestAlgo(fi)) : NULL;
	while (fi && rpmfiNext(fi) >= 0)
		if (S_ISREG(rpmfiFMode(fi)) && !(rpmfiFFlags(fi) & RPMFILE_GHOST))
			audit_file(a, fi, nevra, hi);
	rpmfiFree(fi);
	free(nevra);
	return 0;
}

int imastream_audit_rpmdb(const char *root, char *const *names, int nnames,
			  struct imastream_verifier *v, unsigned int verify_flags,
			  void (*fn)(void *arg, const struct imastream_audit_file *f), void *arg,
			  const struct imastream_log *log)
{
	struct audit a = { .verifier = v, .verify_flags = verify_flags, .fn = fn, .arg = arg,
			   .log = log };
	int err;

	if (!root || root[0] != '/' || !v || !fn)
		return ims_err(log, -EINVAL, "audit: an absolute root, a verifier and a callback are required");
	a.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a.rootfd < 0)
		return ims_err(log, -errno, "%s: %m", root);
	ims_ids_load(&a.ids, a.rootfd);
	err = imastream_rpmdb_foreach(root, names, nnames, audit_header, &a, log);
	imastream_hasher_free(a.hasher);
	ims_ids_clear(&a.ids);
	close(a.rootfd);
	return err;
}
