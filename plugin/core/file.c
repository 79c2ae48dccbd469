// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-file context helpers: digests computed once, xattrs written and remembered. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imastream/keys.h"
#include "imastream/xattr.h"
#include "plugin/core/private.h"
#include "xattr/codec.h"
#include "xattr/stored_name.h"

static struct ims_file_state *state_of(const struct imastream_file *f)
{
	return f ? f->chain_state : NULL;
}

const struct imastream_config *imastream_file_config(const struct imastream_file *f)
{
	struct ims_file_state *st = state_of(f);

	return st ? st->svc->cfg : NULL;
}

const struct imastream_log *imastream_file_log(const struct imastream_file *f)
{
	struct ims_file_state *st = state_of(f);

	return st ? st->svc->log : NULL;
}

static const char *file_name(const struct imastream_file *f)
{
	return f->dest ? f->dest : f->path ? f->path : "(unnamed)";
}

/*
 * Opens the content read-only by path (rpm's fd is write-only) and hashes it once: every
 * wanted digest, or with @plain false the fs-verity tree alone.
 */
static int reread(struct imastream_file *f, struct ims_file_state *st, bool plain)
{
	const struct imastream_log *log = st->svc->log;
	struct stat sb;
	unsigned int n;
	int fd, err;

	if (st->svc->streaming)
		return ims_err(log, -EBUSY, "%s: cannot re-read while a file streams", file_name(f));
	if (!f->path)
		return ims_err(log, -EINVAL, "%s: no path to re-read the content from", file_name(f));
	/* Never follow a link and never block on a FIFO: only a regular file is read. */
	fd = open(f->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ims_err(log, -errno, "%s: cannot open %s to hash it: %s", file_name(f),
			       f->path, strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		err = ims_err(log, -EINVAL, "%s: %s is not a regular file", file_name(f), f->path);
		goto out;
	}
	err = ims_digest_finish(st->svc->engine, fd, plain, st->digests, IMS_MAX_FILE_DIGESTS, &n,
				st->verity_digest);
	if (err) {
		ims_err(log, err, "%s: cannot hash %s: %s", file_name(f), f->path, strerror(-err));
		goto out;
	}
	st->have_digests = true;
	st->plain_skipped = !plain;
	st->digest_source = plain ? "reread" : "reread of the tree alone";
out:
	close(fd);
	return err;
}

int imastream_file_digest(struct imastream_file *f, int algo, const uint8_t **digest_ret,
			  size_t *len_ret, const char **how_ret)
{
	struct ims_file_state *st = state_of(f);
	int err;

	if (!st || !digest_ret || !S_ISREG(f->mode))
		return -EINVAL;
	if (!(st->svc->hash_algos & IMASTREAM_HASH_BIT(algo)))
		return ims_err(st->svc->log, -EINVAL,
			       "%s: digest algorithm %d was not asked for at init", file_name(f), algo);
	/* The driver verified the content against this digest: read no byte again. */
	if (f->known_algo == algo && f->known_len) {
		*digest_ret = f->known_digest;
		if (len_ret)
			*len_ret = f->known_len;
		if (how_ret)
			*how_ret = "header";
		return 0;
	}
	/* A stream that left the plain digests to the driver, which then gave none: read. */
	if (!st->have_digests || st->plain_skipped) {
		err = reread(f, st, true);
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < IMS_MAX_FILE_DIGESTS; i++) {
		if (st->digests[i].algo == algo && st->digests[i].len) {
			*digest_ret = st->digests[i].value;
			if (len_ret)
				*len_ret = st->digests[i].len;
			if (how_ret)
				*how_ret = st->digest_source;
			return 0;
		}
	}
	return -EINVAL;
}

int imastream_file_verity_digest(struct imastream_file *f, const uint8_t **digest_ret,
				 const char **how_ret)
{
	struct ims_file_state *st = state_of(f);
	int err;

	if (!st || !digest_ret || !S_ISREG(f->mode))
		return -EINVAL;
	if (!st->svc->verity)
		return ims_err(st->svc->log, -EINVAL, "%s: no fs-verity digest without verity = on",
			       file_name(f));
	/*
	 * No driver knows it beforehand: from the stream, or one re-read, which also makes
	 * the plain digests unless the driver's verified one (rpm's header digest) is the
	 * only one wanted (each digest once).
	 */
	if (!st->have_digests) {
		uint32_t plain = st->svc->hash_algos;

		if (f->known_algo > 0 && f->known_algo < 32 && f->known_len)
			plain &= ~IMASTREAM_HASH_BIT(f->known_algo);
		err = reread(f, st, plain != 0);
		if (err)
			return err;
	}
	*digest_ret = st->verity_digest;
	if (how_ret)
		*how_ret = st->digest_source;
	return 0;
}

/* "security.ima" becomes "user.ima" when the configuration says so. */
static void effective_name(const struct imastream_config *cfg, const char *name, char *buf,
			   size_t size)
{
	ims_xattr_stored_name(name, cfg && cfg->user_xattrs, buf, size);
}

static int record(struct ims_file_state *st, const char *name, const void *value, size_t len,
		  bool skipped)
{
	struct imastream_file_xattr *x = NULL;
	char *name_copy;
	uint8_t *copy;

	for (unsigned int i = 0; i < st->n_xattrs; i++)
		if (strcmp(st->xattrs[i].name, name) == 0)
			x = &st->xattrs[i];
	if (!x && st->n_xattrs == IMASTREAM_FILE_MAX_XATTRS)
		return -ENOSPC;
	copy = malloc(len ? len : 1);
	name_copy = strdup(name);
	if (!copy || !name_copy) {
		free(copy);
		free(name_copy);
		return -ENOMEM;
	}
	memcpy(copy, value, len);
	if (x) {
		free((void *)x->name);
		free((void *)x->value);
	} else {
		x = &st->xattrs[st->n_xattrs++];
	}
	x->name = name_copy;
	x->value = copy;
	x->len = len;
	x->skipped = skipped;
	return 0;
}

/* A file whose labels are kept (touch.c): what it holds is remembered, nothing written. */
static int keep_current(struct ims_file_state *st, const struct imastream_file *f, const char *name,
			const char *real)
{
	uint8_t value[IMASTREAM_FILE_MAX_XATTR_VALUE];
	ssize_t n = lgetxattr(f->path, real, value, sizeof(value));
	int err = n > 0 ? record(st, name, value, (size_t)n, false) : 0;

	if (err)
		return ims_err(st->svc->log, err, "%s: cannot remember %s", file_name(f), name);
	return 0;
}

int imastream_file_set_xattr(struct imastream_file *f, const char *name, const void *value,
			     size_t len)
{
	struct ims_file_state *st = state_of(f);
	const struct imastream_config *cfg;
	const struct imastream_log *log;
	struct imastream_xattr_writer w;
	bool skipped = false, pending = false;
	char real[256];
	int err;

	if (!st || !name || (!value && len))
		return -EINVAL;
	cfg = st->svc->cfg;
	log = st->svc->log;
	if (len > IMASTREAM_FILE_MAX_XATTR_VALUE)
		return ims_err(log, -E2BIG, "%s: %s value of %zu bytes is too long", file_name(f),
			       name, len);
	effective_name(cfg, name, real, sizeof(real));
	/* The driver writes (or not) once it has compared with the file's own values. */
	if (f->flags & IMASTREAM_FILE_RECORD_ONLY)
		goto remember;
	if (st->kept && strncmp(real, "security.", 9) == 0)
		return keep_current(st, f, name, real);
	if (f->fd < 0 && !f->path)
		return ims_err(log, -EINVAL, "%s: neither a descriptor nor a path", file_name(f));
	/* fsetxattr on the fd, or lsetxattr by path (never following a symlink). */
	imastream_xattr_writer_init(&w, 0, NULL);
	if (cfg->no_xattr == IMASTREAM_NO_XATTR_SKIP)
		imastream_xattr_writer_soft(&w, EOPNOTSUPP);
	/* A user namespace refused the transaction's first security xattr: none is tried. */
	if (ims_pending_active(st->svc) && strncmp(real, "security.", 9) == 0) {
		pending = ims_pending_keeps(st->svc);
		skipped = !pending;
		goto remember;
	}
	err = imastream_xattr_write_name(&w, f->fd, f->path, real, value, len, &skipped);
	if (err && ims_pending_refused(st->svc, file_name(f), real, err) == 0) {
		err = 0;
		pending = ims_pending_keeps(st->svc);
		skipped = !pending;
		goto remember;
	}
	/* The kernel keeps an EVM portable signature's labels: say why ours were not kept. */
	if (err == -EPERM && st->frozen_why[0])
		return ims_err(log, err,
			       "%s: cannot set %s: %s (left in place by the package manager under "
			       "an EVM portable signature, whose labels cert and trust do not "
			       "verify: %s)",
			       file_name(f), real, strerror(-err), st->frozen_why);
	if (err)
		return ims_err(log, err, "%s: cannot set %s: %s", file_name(f), real, strerror(-err));
	if (skipped && !st->svc->no_xattr_told) {
		st->svc->no_xattr_told = true;
		ims_logf(log, IMASTREAM_LOG_NOTICE,
			 "%s: filesystem has no xattr support; skipping (no_xattr_support = skip)",
			 file_name(f));
	}
remember:
	err = record(st, name, value, len, skipped);
	if (err)
		return ims_err(log, err, "%s: cannot remember %s", file_name(f), name);
	/* Kept in the root, written later: the later plugins (evm) take it as written. */
	if (pending)
		for (unsigned int i = 0; i < st->n_xattrs; i++)
			if (strcmp(st->xattrs[i].name, name) == 0)
				st->pending_mask |= 1u << i;
	return 0;
}

/* Signatures longer than this (RSA beyond 16384 bits) are not kept: they are signed anew. */
#define KEEP_VALUE_MAX (IMASTREAM_SIG_HDR_SIZE + 2048)

void ims_file_services_own_trust(struct ims_file_services *svc)
{
	if (svc->own_trust || !svc->cfg->cert)
		return;
	if (imastream_trust_new(NULL, &svc->own_trust) == 0 &&
	    imastream_trust_add_path(svc->own_trust, svc->cfg->cert) != 0) {
		imastream_trust_free(svc->own_trust);
		svc->own_trust = NULL;
	}
}

int imastream_file_keep_signature(struct imastream_file *f, const char *name, int type, int algo,
				  const uint8_t *digest, size_t len)
{
	struct ims_file_state *st = state_of(f);
	const struct imastream_trust *trust;
	struct imastream_xattr_info info = { .size = sizeof(info) };
	uint8_t value[KEEP_VALUE_MAX];
	char real[256];
	ssize_t n;
	int err;

	if (!st || !name || !digest || (f->fd < 0 && !f->path))
		return 0;
	/* Its labels are kept whole (touch.c): no signature is made for it. */
	if (st->kept) {
		char real_name[256];

		effective_name(st->svc->cfg, name, real_name, sizeof(real_name));
		err = keep_current(st, f, name, real_name);
		return err ? err : 1;
	}
	/* A file created for this install holds nothing to keep: no read of it. */
	if (f->flags & IMASTREAM_FILE_CREATED)
		return 0;
	/*
	 * relabel keeps what its trust store verifies; an install keeps what its own
	 * certificate verifies on a file rpm leaves in place (a %config file it only
	 * touches): with EVM on, the kernel refuses to replace a valid portable signature
	 * by another value, and an ECDSA signature is never made twice the same.
	 */
	trust = (f->flags & IMASTREAM_FILE_RECORD_ONLY) ? st->svc->keep_trust : st->svc->own_trust;
	if (!trust)
		return 0;
	effective_name(st->svc->cfg, name, real, sizeof(real));
	n = f->fd >= 0 ? fgetxattr(f->fd, real, value, sizeof(value)) :
			 lgetxattr(f->path, real, value, sizeof(value));
	if (n <= 0 || imastream_xattr_decode(value, (size_t)n, &info, NULL) ||
	    (int)info.type != type || info.algo != algo ||
	    imastream_trust_verify(trust, algo, digest, len, info.data, info.data_len, info.keyid))
		return 0;
	err = record(st, name, value, (size_t)n, false);
	if (err)
		return ims_err(st->svc->log, err, "%s: cannot remember %s", file_name(f), name);
	ims_logf(st->svc->log, IMASTREAM_LOG_DEBUG, "%s: %s holds a signature that verifies: kept",
		 file_name(f), real);
	return 1;
}

const struct imastream_file_xattr *imastream_file_get_xattr(const struct imastream_file *f,
							    const char *name)
{
	struct ims_file_state *st = state_of(f);

	if (!st || !name)
		return NULL;
	for (unsigned int i = 0; i < st->n_xattrs; i++)
		if (strcmp(st->xattrs[i].name, name) == 0)
			return &st->xattrs[i];
	return NULL;
}

void ims_file_state_free(struct ims_file_state *st)
{
	if (!st)
		return;
	for (unsigned int i = 0; i < st->n_xattrs; i++) {
		free((void *)st->xattrs[i].name);
		free((void *)st->xattrs[i].value);
	}
	free(st);
}
