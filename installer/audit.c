// SPDX-License-Identifier: LGPL-2.1-or-later
/* The audit of an installed root: each file against its rpm header, its security.ima and security.evm. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
	struct imastream_hasher *hasher; /* the header's algorithm */
	int hasher_algo;
	void (*fn)(void *arg, const struct imastream_audit_file *f);
	void *arg;
	const struct imastream_log *log;
};

/* Whether the content's digest is the header's. Return: 1 yes, 0 no, -errno. */
static int content_matches(struct audit *a, rpmfi fi, int fd, const struct imastream_hash_info *hi)
{
	const unsigned char *want;
	const uint8_t *digest;
	size_t want_len = 0, len;
	int algo = 0, err;

	want = rpmfiFDigest(fi, &algo, &want_len);
	if (!want || !hi || want_len != hi->digest_size)
		return 0;
	err = imastream_hash_fd(a->hasher, fd);
	if (!err)
		err = imastream_hasher_digest(a->hasher, hi->algo, &digest, &len);
	if (err)
		return err;
	return len == want_len && !memcmp(digest, want, len);
}

static void audit_file(struct audit *a, rpmfi fi, const char *nevra, const struct imastream_hash_info *hi)
{
	struct imastream_audit_file af = { .package = nevra, .path = rpmfiFN(fi) };
	struct ims_installed in;
	int err;

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
		/* A file whose size already differs is not read for its digest (rpm -V's S). */
		err = af.letters[0] == 'S' ? 0 : content_matches(a, fi, in.fd, hi);
		if (err == 0 && af.letters[0] != 'S')
			af.letters[2] = '5';
		if (err >= 0 && lseek(in.fd, 0, SEEK_SET) == 0)
			err = imastream_verify_file(a->verifier, in.fd, af.path, a->verify_flags,
						    &af.report);
		else if (err >= 0)
			err = -errno;
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
	if (hi && hi->algo != a->hasher_algo) {
		imastream_hasher_free(a->hasher);
		a->hasher = NULL;
		a->hasher_algo = 0;
		if (!imastream_hasher_new(IMASTREAM_HASH_BIT(hi->algo), a->log, &a->hasher))
			a->hasher_algo = hi->algo;
		else
			hi = NULL;
	}
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
