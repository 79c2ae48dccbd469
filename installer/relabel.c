// SPDX-License-Identifier: LGPL-2.1-or-later
/* Relabelling installed files from their rpm header through the hook chain, without reinstalling. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/installer.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"
#include "installer/private.h"

#define CHUNK_SIZE (256 * 1024)

struct imastream_relabel {
	struct imastream_chain *chain;
	const struct imastream_log *log;
	struct imastream_relabel_opts opts;
	char *root;
	int rootfd;
	rpmts ts;
	struct imastream_txn txn;
	bool tsm;
	struct ims_ids ids;
	struct imastream_trust *trust; /* tells an existing signature that is right; or NULL */
	struct imastream_xattr_writer writer;
	struct imastream_hasher *hasher; /* the header's algorithm, when the chain has not it */
	int hasher_algo;
	uint8_t *buf;
	struct imastream_relabel_counts counts;
};

/* The security xattrs a chain may record, in the order they are written: evm last. */
static const char *const xattr_order[] = {
	"security.selinux", "security.SMACK64", "security.SMACK64EXEC", "security.SMACK64TRANSMUTE",
	"security.SMACK64MMAP", "security.apparmor", "security.capability", "security.ima",
	"security.evm",
};
#define N_XATTRS (sizeof(xattr_order) / sizeof(xattr_order[0]))
#define EVM_INDEX (N_XATTRS - 1)
#define IMA_INDEX (N_XATTRS - 2)

/* One file between its checks and its report. */
struct rfile {
	struct imastream_relabel_file rep;
	struct imastream_file f;
	char letters[10];
	char written[128];
	char path[sizeof("/proc/self/fd/") + 12 + NAME_MAX];
};

static void report(struct imastream_relabel *r, struct rfile *rf, int status, const char *why)
{
	rf->rep.status = status;
	rf->rep.why = why;
	switch (status) {
	case IMASTREAM_RELABEL_LABELLED:
		r->counts.labelled++;
		rf->rep.written = rf->written;
		break;
	case IMASTREAM_RELABEL_CORRECT:
		r->counts.correct++;
		break;
	case IMASTREAM_RELABEL_MODIFIED:
		r->counts.modified++;
		memcpy(rf->rep.letters, rf->letters, sizeof(rf->rep.letters));
		break;
	case IMASTREAM_RELABEL_MISSING:
		r->counts.missing++;
		break;
	default:
		r->counts.failed++;
	}
	if (r->opts.report)
		r->opts.report(r->opts.report_arg, &rf->rep);
}

/* "security.ima" as this configuration stores it ("user.ima" with xattr_namespace = user). */
static void real_name(const struct imastream_relabel *r, const char *name, char *buf, size_t size)
{
	if (r->opts.cfg && r->opts.cfg->user_xattrs && !strncmp(name, "security.", 9))
		snprintf(buf, size, "user.%s", name + 9);
	else
		snprintf(buf, size, "%s", name);
}

/* The file's own value of @name: its length, 0 when absent, -errno. */
static ssize_t disk_value(const struct imastream_relabel *r, int fd, const char *path,
			  const char *name, uint8_t *buf, size_t size)
{
	char real[64];
	ssize_t n;

	real_name(r, name, real, sizeof(real));
	/* A symlink has no descriptor to read from: its /proc/self/fd/DIR/NAME path. */
	n = fd >= 0 ? fgetxattr(fd, real, buf, size) : lgetxattr(path, real, buf, size);
	if (n >= 0)
		return n;
	return errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
}

/*
 * Whether the file's security.ima stands for @x: the same bytes, or (signatures being
 * randomised) another IMA signature of the same content that verifies with the trust.
 */
static bool ima_equivalent(struct imastream_relabel *r, struct imastream_file *f,
			   const struct imastream_file_xattr *x, const uint8_t *disk, size_t len)
{
	struct imastream_xattr_info want = { .size = sizeof(want) }, have = { .size = sizeof(have) };
	const uint8_t *digest;
	size_t dlen;

	if (len == x->len && !memcmp(disk, x->value, len))
		return true;
	if (!r->trust || imastream_xattr_decode(x->value, x->len, &want, NULL) ||
	    imastream_xattr_decode(disk, len, &have, NULL) || want.type != IMASTREAM_XATTR_DIGSIG ||
	    have.type != IMASTREAM_XATTR_DIGSIG || want.algo != have.algo)
		return false;
	if (imastream_file_digest(f, have.algo, &digest, &dlen, NULL))
		return false;
	return !imastream_trust_verify(r->trust, have.algo, digest, dlen, have.data, have.data_len,
				       have.keyid);
}

/* Whether the file's security.evm is a portable signature over what the file has now. */
static bool evm_equivalent(struct imastream_relabel *r, int fd, const char *name,
			   const struct imastream_file_xattr *x, const uint8_t *disk, size_t len)
{
	struct imastream_xattr_info want = { .size = sizeof(want) }, have = { .size = sizeof(have) };
	struct imastream_evm_input in = { .size = sizeof(in) };
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t dlen;
	bool ok;

	if (len == x->len && !memcmp(disk, x->value, len))
		return true;
	if (!r->trust || imastream_xattr_decode(x->value, x->len, &want, NULL) ||
	    imastream_xattr_decode(disk, len, &have, NULL) ||
	    want.type != IMASTREAM_XATTR_EVM_PORTABLE || have.type != IMASTREAM_XATTR_EVM_PORTABLE)
		return false;
	if (imastream_evm_collect(fd, name, r->opts.cfg && r->opts.cfg->user_xattrs ?
				  IMASTREAM_EVM_COLLECT_USER_IMA : 0, &in, NULL))
		return false;
	ok = !imastream_evm_digest_portable(&in, have.algo, digest, sizeof(digest), &dlen, NULL) &&
	     !imastream_trust_verify(r->trust, have.algo, digest, dlen, have.data, have.data_len,
				     have.keyid);
	imastream_evm_input_release(&in);
	return ok;
}

static void note_written(struct rfile *rf, const char *name)
{
	size_t n = strlen(rf->written);

	snprintf(rf->written + n, sizeof(rf->written) - n, "%s%s", n ? "," : "", name);
}

/*
 * Compares what the chain recorded with what the file has and writes what differs.
 * security.evm covers the others: when anything else changes, the old one goes first
 * and the new one is written last, so at no moment does a security.evm cover a value the
 * file no longer has (an interrupted run leaves security.ima without security.evm, which
 * the next run completes).
 * Return: 0 with *@changed set, or -errno (said).
 */
static int apply(struct imastream_relabel *r, struct rfile *rf, int fd, bool *changed)
{
	const struct imastream_file_xattr *x[N_XATTRS];
	bool same[N_XATTRS], exact[N_XATTRS], others_same = true;
	uint8_t *disk = r->buf;
	char real[64];
	ssize_t len;
	int err;

	*changed = false;
	for (size_t i = 0; i < N_XATTRS; i++) {
		x[i] = imastream_file_get_xattr(&rf->f, xattr_order[i]);
		same[i] = exact[i] = true;
		if (!x[i] || x[i]->skipped)
			continue;
		len = disk_value(r, fd, rf->path, xattr_order[i], disk,
				 IMASTREAM_FILE_MAX_XATTR_VALUE);
		if (len < 0)
			return ims_err(r->log, (int)len, "%s: cannot read %s: %s", rf->rep.path,
				       xattr_order[i], strerror((int)-len));
		exact[i] = (size_t)len == x[i]->len && !memcmp(disk, x[i]->value, x[i]->len);
		if (i == EVM_INDEX)
			same[i] = len && others_same &&
				  evm_equivalent(r, fd, rf->path, x[i], disk, (size_t)len);
		else if (i == IMA_INDEX)
			same[i] = len && ima_equivalent(r, &rf->f, x[i], disk, (size_t)len);
		else
			same[i] = exact[i];
		if (i != EVM_INDEX && !same[i])
			others_same = false;
	}
	if (others_same && same[EVM_INDEX])
		return 0;
	/*
	 * The security.evm to write covers the chain's values: one kept because it is merely
	 * equivalent (another signature of the same content) is rewritten with it.
	 */
	if (x[EVM_INDEX] && !x[EVM_INDEX]->skipped && !same[EVM_INDEX])
		for (size_t i = 0; i < EVM_INDEX; i++)
			if (!exact[i]) {
				same[i] = false;
				others_same = false;
			}
	*changed = true;
	/* (When anything else differs, security.evm does too: it is rewritten last.) */
	for (size_t i = 0; i < N_XATTRS; i++)
		if (x[i] && !x[i]->skipped && !same[i])
			note_written(rf, xattr_order[i]);
	if (r->opts.flags & IMASTREAM_RELABEL_DRY_RUN)
		return 0;
	if (!others_same) {
		/* Whatever covered the old values must not cover the new ones, even briefly. */
		real_name(r, "security.evm", real, sizeof(real));
		if ((fd >= 0 ? fremovexattr(fd, real) : lremovexattr(rf->path, real)) &&
		    errno != ENODATA && errno != EOPNOTSUPP)
			return ims_err(r->log, -errno, "%s: cannot remove %s: %m", rf->rep.path, real);
	}
	for (size_t i = 0; i < N_XATTRS; i++) {
		if (!x[i] || x[i]->skipped || same[i])
			continue;
		real_name(r, xattr_order[i], real, sizeof(real));
		err = imastream_xattr_write_name(&r->writer, fd, rf->path, real, x[i]->value,
						 x[i]->len, NULL);
		if (err)
			return ims_err(r->log, err, "%s: cannot set %s: %s", rf->rep.path, real,
				       strerror(-err));
	}
	return 0;
}

/*
 * The content through the chain: every digest it wants, computed once from one read;
 * @header_digest_ret gets the digest in the header's algorithm to compare.
 */
static int stream(struct imastream_relabel *r, struct rfile *rf, int fd, int algo,
		  const uint8_t **digest_ret)
{
	bool own = !(imastream_chain_hash_algos(r->chain) & IMASTREAM_HASH_BIT(algo));
	uint64_t total = 0;
	size_t len;
	ssize_t n;
	int err;

	if (own && (err = imastream_hasher_reset(r->hasher)))
		return err;
	do {
		n = read(fd, r->buf, CHUNK_SIZE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ims_err(r->log, -errno, "%s: cannot read: %m", rf->rep.path);
		}
		total += (uint64_t)n;
		/* An empty file still streams once: its digest is the empty stream's. */
		if (n || total == 0) {
			err = imastream_chain_file_updated(r->chain, &rf->f, r->buf, (size_t)n);
			if (!err && own)
				err = imastream_hasher_update(r->hasher, r->buf, (size_t)n);
			if (err)
				return err;
		}
	} while (n > 0);
	r->counts.bytes += total;
	err = imastream_chain_file_closed(r->chain, &rf->f);
	if (err)
		return err;
	if (!own)
		return imastream_file_digest(&rf->f, algo, digest_ret, &len, NULL);
	err = imastream_hasher_final(r->hasher);
	return err ? err : imastream_hasher_digest(r->hasher, algo, digest_ret, &len);
}

/*
 * A directory or a symlink that matches its header: through the chain as at install,
 * where only labels (security.selinux from the file contexts) are written on them; IMA
 * appraises regular files, and EVM portable signatures need a security.ima.
 */
static void relabel_special(struct imastream_relabel *r, struct rfile *rf,
			    const struct ims_installed *in, const char *fn,
			    const struct imastream_pkg *pkg)
{
	bool changed = false;
	int err;

	snprintf(rf->path, sizeof(rf->path), "%s", in->path);
	rf->f = (struct imastream_file){
		.size = sizeof(rf->f), .path = rf->path, .dest = fn, .fd = in->fd, .mode = in->st.st_mode,
		.uid = in->st.st_uid, .gid = in->st.st_gid, .pkg = pkg,
		.flags = IMASTREAM_FILE_RECORD_ONLY,
	};
	err = imastream_chain_file_opened(r->chain, &rf->f);
	if (!err)
		err = imastream_chain_file_closed(r->chain, &rf->f);
	if (!err)
		err = apply(r, rf, in->fd, &changed);
	imastream_chain_file_done(r->chain, &rf->f, err);
	if (err)
		report(r, rf, IMASTREAM_RELABEL_FAILED, strerror(-err));
	else
		report(r, rf, changed ? IMASTREAM_RELABEL_LABELLED : IMASTREAM_RELABEL_CORRECT, NULL);
}

static void relabel_file(struct imastream_relabel *r, rpmfi fi, const struct imastream_pkg *pkg,
			 const struct imastream_hash_info *hi)
{
	bool modified_config_ok = r->opts.flags & IMASTREAM_RELABEL_MODIFIED_CONFIG;
	struct rfile rf = { 0 };
	struct ims_installed in;
	const unsigned char *want;
	const uint8_t *digest = NULL;
	size_t want_len = 0, sig_len = 0;
	int algo = 0, err;
	bool changed;
	char *fn;

	rf.rep.package = pkg->nevra;
	rf.rep.path = fn = strdup(rpmfiFN(fi));
	if (!fn) {
		report(r, &rf, IMASTREAM_RELABEL_FAILED, "out of memory");
		return;
	}
	err = ims_installed_open(r->rootfd, fi, &r->ids, pkg->nevra, r->log, &in);
	rf.rep.config = in.config;
	memcpy(rf.letters, in.letters, sizeof(rf.letters));
	if (err) {
		report(r, &rf, IMASTREAM_RELABEL_FAILED, "cannot open");
		goto out;
	}
	if (in.state == IMS_INSTALLED_MISSING) {
		report(r, &rf, IMASTREAM_RELABEL_MISSING, "missing");
		goto out;
	}
	/* An edited %config file may be taken as it is now: its size, not its mode or owner. */
	if (in.state == IMS_INSTALLED_MODIFIED &&
	    !(in.fd >= 0 && S_ISREG(in.st.st_mode) && in.config && modified_config_ok &&
	      !strcmp(in.letters + 1, "........"))) {
		report(r, &rf, IMASTREAM_RELABEL_MODIFIED, in.why ? in.why : "differs from its header");
		goto out;
	}
	if (!S_ISREG(in.st.st_mode)) {
		relabel_special(r, &rf, &in, fn, pkg);
		goto out;
	}
	want = rpmfiFDigest(fi, &algo, &want_len);
	if (!want || !hi || want_len != hi->digest_size) {
		report(r, &rf, IMASTREAM_RELABEL_FAILED, "no usable digest in the header");
		goto out;
	}
	snprintf(rf.path, sizeof(rf.path), "%s", in.path);
	rf.f = (struct imastream_file){
		.size = sizeof(rf.f), .path = rf.path, .dest = fn, .fd = in.fd, .mode = in.st.st_mode, .uid = in.st.st_uid,
		.gid = in.st.st_gid, .content_size = (uint64_t)in.st.st_size, .pkg = pkg,
		.flags = IMASTREAM_FILE_RECORD_ONLY | (in.config ? IMASTREAM_FILE_CONFIG : 0),
	};
	rf.f.pkg_sig = rpmfiFSignature(fi, &sig_len);
	rf.f.pkg_sig_len = sig_len;
	err = imastream_chain_file_opened(r->chain, &rf.f);
	if (!err)
		err = stream(r, &rf, in.fd, hi->algo, &digest);
	if (!err && memcmp(digest, want, want_len))
		rf.letters[2] = '5';
	if (!err && strcmp(rf.letters, ".........") && !(in.config && modified_config_ok)) {
		imastream_chain_file_done(r->chain, &rf.f, -EBADMSG);
		report(r, &rf, IMASTREAM_RELABEL_MODIFIED, "differs from its header");
		goto out;
	}
	if (!err)
		err = apply(r, &rf, in.fd, &changed);
	imastream_chain_file_done(r->chain, &rf.f, err);
	if (err)
		report(r, &rf, IMASTREAM_RELABEL_FAILED, strerror(-err));
	else
		report(r, &rf, changed ? IMASTREAM_RELABEL_LABELLED : IMASTREAM_RELABEL_CORRECT, NULL);
out:
	ims_installed_close(&in);
	free(fn);
}

int imastream_relabel_header(struct imastream_relabel *r, void *rpm_header)
{
	Header h = rpm_header;
	const struct imastream_hash_info *hi;
	struct imastream_pkg pkg;
	char *nevra;
	rpmfi fi;
	int err;

	if (!r || !h)
		return -EINVAL;
	nevra = headerGetAsString(h, RPMTAG_NEVRA);
	fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	if (!nevra) {
		rpmfiFree(fi);
		return -ENOMEM;
	}
	/* rpm checked the header and every file's digest when it installed the package. */
	pkg = (struct imastream_pkg){ .size = sizeof(pkg), .nevra = nevra, .op = IMASTREAM_PKG_INSTALL,
				      .flags = IMASTREAM_PKG_HEADER_VERIFIED |
					       IMASTREAM_PKG_FILEDIGESTS_CHECKED,
				      .rpm_header = h };
	err = imastream_chain_psm_pre(r->chain, &pkg);
	if (err) {
		ims_err(r->log, err, "%s: refused by the hook chain: %s", nevra, strerror(-err));
		r->counts.failed++;
	}
	hi = fi ? imastream_hash_by_rpm_id(rpmfiDigestAlgo(fi)) : NULL;
	if (hi && hi->algo != r->hasher_algo) {
		imastream_hasher_free(r->hasher);
		r->hasher = NULL;
		r->hasher_algo = 0;
		if (!imastream_hasher_new(IMASTREAM_HASH_BIT(hi->algo), r->log, &r->hasher))
			r->hasher_algo = hi->algo;
		else
			hi = NULL;
	}
	while (!err && fi && rpmfiNext(fi) >= 0) {
		mode_t mode = (mode_t)rpmfiFMode(fi);

		if (!(S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode)) ||
		    (rpmfiFFlags(fi) & RPMFILE_GHOST))
			continue;
		relabel_file(r, fi, &pkg, hi);
	}
	imastream_chain_psm_post(r->chain, &pkg, err);
	if (!err)
		r->counts.packages++;
	rpmfiFree(fi);
	free(nevra);
	return err;
}

int imastream_relabel_new(struct imastream_chain *chain, const struct imastream_relabel_opts *opts,
			  const struct imastream_log *log, struct imastream_relabel **ret)
{
	const struct imastream_config *cfg;
	struct imastream_relabel *r;
	int err;

	/* The size first: it says which of the other members the caller has. */
	err = opts ? IMS_CHECK_SIZE(log, opts, imastream_relabel_opts, report_arg) : 0;
	if (err)
		return err;
	if (!chain || !opts || !opts->cfg || !opts->root || opts->root[0] != '/')
		return ims_err(log, -EINVAL, "relabel: a chain, its configuration and an absolute root are required");
	err = ims_rpm_config();
	if (err)
		return ims_err(log, err, "cannot read rpm's configuration");
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->chain = chain;
	r->log = log;
	IMS_COPY_SIZED(&r->opts, opts);
	cfg = r->opts.cfg;
	r->root = strdup(opts->root);
	r->buf = malloc(CHUNK_SIZE > IMASTREAM_FILE_MAX_XATTR_VALUE ? CHUNK_SIZE :
			IMASTREAM_FILE_MAX_XATTR_VALUE);
	r->ts = rpmtsCreate();
	r->rootfd = open(opts->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->rootfd < 0) {
		err = ims_err(log, -errno, "%s: %m", opts->root);
		goto fail;
	}
	if (!r->root || !r->buf || !r->ts) {
		err = -ENOMEM;
		goto fail;
	}
	if (rpmtsSetRootDir(r->ts, r->root)) {
		err = ims_err(log, -EINVAL, "%s: not usable as rpm's root directory", r->root);
		goto fail;
	}
	ims_ids_load(&r->ids, r->rootfd);
	imastream_xattr_writer_init(&r->writer, 0, NULL);
	if (cfg->no_xattr == IMASTREAM_NO_XATTR_SKIP)
		imastream_xattr_writer_soft(&r->writer, EOPNOTSUPP);
	/* Our own certificate and the trust store: a signature either verifies is right. */
	if (cfg->trust || cfg->cert) {
		err = imastream_trust_new(NULL, &r->trust);
		if (!err && cfg->trust)
			err = imastream_trust_add_path(r->trust, cfg->trust);
		if (!err && cfg->cert)
			err = imastream_trust_add_path(r->trust, cfg->cert);
		if (err) {
			ims_err(log, err, "relabel: cannot load %s: %s", cfg->trust ? cfg->trust : cfg->cert,
				strerror(-err));
			goto fail;
		}
	}
	/* A rerun keeps the signatures that verify instead of signing again. */
	imastream_chain_keep_signatures(chain, r->trust);
	r->txn = (struct imastream_txn){ .size = sizeof(r->txn), .root = r->root, .rpm_ts = r->ts };
	err = imastream_chain_tsm_pre(chain, &r->txn);
	r->tsm = true;
	if (err) {
		ims_err(log, err, "%s: the hook chain refused the transaction: %s", r->root,
			strerror(-err));
		goto fail;
	}
	*ret = r;
	return 0;
fail:
	imastream_relabel_free(r, err);
	return err;
}

const struct imastream_relabel_counts *imastream_relabel_counts(const struct imastream_relabel *r)
{
	return r ? &r->counts : NULL;
}

void imastream_relabel_free(struct imastream_relabel *r, int res)
{
	if (!r)
		return;
	if (r->tsm)
		imastream_chain_tsm_post(r->chain, &r->txn, res);
	ims_ids_clear(&r->ids);
	imastream_trust_free(r->trust);
	imastream_hasher_free(r->hasher);
	if (r->ts)
		rpmtsFree(r->ts);
	if (r->rootfd >= 0)
		close(r->rootfd);
	free(r->buf);
	free(r->root);
	free(r);
}
