// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Relabelling installed files from their rpm header through the hook chain, without reinstalling.
 * It stays whole, over 600 lines: a file goes from its header's check to its labels on a
 * pool of workers, and the rules that keep that safe (one read per file, signatures and
 * reports in file order) hold across all of its steps at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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
#include "imastream/audit.h"
#include "imastream/chain.h"
#include "imastream/keys.h"
#include "imastream/relabel.h"
#include "imastream/xattr.h"
#include "installed/accepted.h"
#include "installed/ordered_pool.h"
#include "installed/private.h"
#include "xattr/codec.h"
#include "xattr/stored_name.h"
#include "plugin/core/driver.h"

#define CHUNK_SIZE (256 * 1024)
/* As the audit: enough threads for most machines; each file in flight holds a descriptor. */
#define MAX_WORKERS 8
#define MAX_INFLIGHT 64

/* What one worker thread owns: a hasher in the header's algorithm. */
struct relabel_worker {
	struct imastream_hasher *hasher;
	int algo;
};

struct ritem;

struct imastream_relabel {
	struct imastream_chain *chain;
	const struct imastream_log *log;
	struct imastream_relabel_opts opts;
	char *root;
	int rootfd;
	rpmts ts;
	struct imastream_txn txn;
	bool tsm;
	bool sign_ahead; /* the signer's nonce worker runs, from tsm_pre to tsm_post */
	struct ims_ids ids;
	struct imastream_trust *trust; /* tells an existing signature that is right; or NULL */
	struct imastream_xattr_writer writer;
	struct imastream_hasher *hasher; /* the header's algorithm, when the chain has not it */
	int hasher_algo;
	uint8_t *buf;
	bool verity; /* verity = on: the chain wants every file streamed for its tree */
	struct ims_pool *pool; /* NULL on one core: every file streams on the caller's thread */
	struct relabel_worker *workers;
	unsigned int nworkers;
	struct ritem *free_items;
	struct imastream_relabel_counts counts;
	struct ims_rpmdb_links *links; /* counted when a file has more links than its package */
	struct imastream_accepted *accepted; /* accepted %config edits: labelled as they are */
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

/* What the checks on the caller's thread left for a file: a report, or work. */
enum ritem_kind {
	RITEM_REPORT,  /* nothing but a report: its status and why */
	RITEM_SPECIAL, /* a directory or symlink that matches */
	RITEM_CONTENT, /* a regular file that matches so far: its content to hash */
};

/* One installed file between its opening and its report, both on the caller's thread. */
struct ritem {
	struct ritem *next_free;
	enum ritem_kind kind;
	int status;
	const char *why;
	struct rfile rf;
	struct ims_installed in;
	char *fn;
	const struct imastream_pkg *pkg;
	const struct imastream_hash_info *hi;
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST]; /* the header's digest */
	size_t want_len;
	const uint8_t *sig; /* the header's; valid while its rpmfi is */
	size_t sig_len;
	const struct imastream_accepted_file *accepted; /* its accepted edit, or NULL */
	/* Pushed to a worker, which fills in the rest. */
	bool pooled;
	int err;
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t digest_len;
	uint64_t bytes;
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
	ims_xattr_stored_name(name, r->opts.cfg && r->opts.cfg->user_xattrs, buf, size);
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

/* The file's xattrs when the chain accepted it (EVM last), then its file_done and report. */
static void finish(struct imastream_relabel *r, struct rfile *rf, int fd, int err)
{
	bool changed = false;

	if (!err)
		err = apply(r, rf, fd, &changed);
	imastream_chain_file_done(r->chain, &rf->f, err);
	if (err)
		report(r, rf, IMASTREAM_RELABEL_FAILED, strerror(-err));
	else
		report(r, rf, changed ? IMASTREAM_RELABEL_LABELLED : IMASTREAM_RELABEL_CORRECT, NULL);
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
	finish(r, rf, in->fd, err);
}

/*
 * The content's digest a worker computed, given to the chain as the known one: the chain
 * wants no other (no stream), so file_closed takes it instead of reading again.
 */
static int close_hashed(struct imastream_relabel *r, struct ritem *it, const uint8_t **digest_ret)
{
	struct rfile *rf = &it->rf;

	if (it->err)
		return ims_err(r->log, it->err, "%s: cannot read: %s", rf->rep.path,
			       strerror(-it->err));
	r->counts.bytes += it->bytes;
	r->counts.hashed_on_workers++;
	memcpy(rf->f.known_digest, it->digest, it->digest_len);
	rf->f.known_len = it->digest_len;
	*digest_ret = it->digest;
	return imastream_chain_file_closed(r->chain, &rf->f);
}

/* A regular file that matched its header so far: its content, then its labels. */
static void relabel_content(struct imastream_relabel *r, struct ritem *it)
{
	bool modified_config_ok = r->opts.flags & IMASTREAM_RELABEL_MODIFIED_CONFIG;
	struct rfile *rf = &it->rf;
	const struct ims_installed *in = &it->in;
	const uint8_t *digest = NULL;
	int err;

	rf->f = (struct imastream_file){
		.size = sizeof(rf->f), .path = rf->path, .dest = it->fn, .fd = in->fd, .mode = in->st.st_mode,
		.uid = in->st.st_uid, .gid = in->st.st_gid, .content_size = (uint64_t)in->st.st_size,
		.pkg = it->pkg,
		.flags = IMASTREAM_FILE_RECORD_ONLY | (in->config ? IMASTREAM_FILE_CONFIG : 0),
	};
	rf->f.pkg_sig = it->sig;
	rf->f.pkg_sig_len = it->sig_len;
	/* Promised before file_opened, as the install does: the digest comes at file_closed. */
	if (it->pooled)
		rf->f.known_algo = it->hi->algo;
	err = imastream_chain_file_opened(r->chain, &rf->f);
	if (!err)
		err = it->pooled ? close_hashed(r, it, &digest) :
				   stream(r, rf, in->fd, it->hi->algo, &digest);
	if (!err && memcmp(digest, it->want, it->want_len))
		rf->letters[2] = '5';
	/* An accepted edit (imastream_accept_config()) is labelled as it is, and only it. */
	if (!err && it->accepted && it->accepted->algo == it->hi->algo &&
	    it->accepted->digest_len == it->want_len &&
	    !memcmp(digest, it->accepted->digest, it->want_len))
		modified_config_ok = true;
	/* T alone is no difference EVM or IMA covers (the file is labelled as it is). */
	if (!err && (strncmp(rf->letters, ".......", 7) || rf->letters[8] != '.') &&
	    !(in->config && modified_config_ok)) {
		imastream_chain_file_done(r->chain, &rf->f, -EBADMSG);
		report(r, rf, IMASTREAM_RELABEL_MODIFIED, "differs from its header");
		return;
	}
	finish(r, rf, in->fd, err);
}

/* On a worker thread: the content in the header's algorithm, nothing else. */
static void relabel_work(void *arg, unsigned int worker, void *item)
{
	struct imastream_relabel *r = arg;
	struct relabel_worker *w = &r->workers[worker];
	struct ritem *it = item;
	const uint8_t *digest;
	off_t end;

	if (it->kind != RITEM_CONTENT || !it->pooled)
		return;
	if (w->algo != it->hi->algo) {
		imastream_hasher_free(w->hasher);
		w->hasher = NULL;
		w->algo = 0;
		/* No log here: the caller's thread says what failed, in file order. */
		it->err = imastream_hasher_new(IMASTREAM_HASH_BIT(it->hi->algo), NULL, &w->hasher);
		if (it->err)
			return;
		w->algo = it->hi->algo;
	}
	it->err = imastream_hash_fd(w->hasher, it->in.fd);
	if (!it->err)
		it->err = imastream_hasher_digest(w->hasher, it->hi->algo, &digest, &it->digest_len);
	if (!it->err && it->digest_len > sizeof(it->digest))
		it->err = -EINVAL;
	if (it->err)
		return;
	memcpy(it->digest, digest, it->digest_len);
	/* The descriptor was at 0: where the reads stopped is how much was read. */
	end = lseek(it->in.fd, 0, SEEK_CUR);
	it->bytes = end > 0 ? (uint64_t)end : 0;
}

/* On the caller's thread, in file order: the chain, the xattrs, the report. */
static void relabel_done(void *arg, void *item)
{
	struct imastream_relabel *r = arg;
	struct ritem *it = item;

	switch (it->kind) {
	case RITEM_REPORT:
		report(r, &it->rf, it->status, it->why);
		break;
	case RITEM_SPECIAL:
		relabel_special(r, &it->rf, &it->in, it->fn, it->pkg);
		break;
	case RITEM_CONTENT:
		relabel_content(r, it);
		break;
	}
	ims_installed_close(&it->in);
	free(it->fn);
	it->fn = NULL;
	it->next_free = r->free_items;
	r->free_items = it;
}

static void said(struct ritem *it, int status, const char *why)
{
	it->kind = RITEM_REPORT;
	it->status = status;
	it->why = why;
}

/*
 * Whether every hard link of the inode is one of the package's paths: rpm links a regular
 * file only to others of its package (the header's hard-link set), never a symlink.  An
 * inode with more links is also reached from elsewhere, maybe from outside the root, and
 * labelling it would write there too (directories have no hard links to count).
 */
static bool linked_within_package(const struct ims_installed *in, rpmfi fi)
{
	if (S_ISDIR(in->st.st_mode))
		return true;
	return in->st.st_nlink <= (S_ISREG(in->st.st_mode) ? (nlink_t)rpmfiFNlink(fi) : 1);
}

/* The same across packages (a tool that links identical files): every link is a path of rpm's database. */
static bool linked_within_rpmdb(struct imastream_relabel *r, const struct ims_installed *in)
{
	unsigned long count = 0;

	return S_ISREG(in->st.st_mode) &&
	       !ims_rpmdb_links(&r->links, r->root, r->rootfd, &in->st, r->log, &count) &&
	       in->st.st_nlink <= count;
}

/* Opens the file and checks what needs no content: what is left is the item's kind. */
static void check_file(struct imastream_relabel *r, struct ritem *it, rpmfi fi)
{
	bool modified_config_ok = r->opts.flags & IMASTREAM_RELABEL_MODIFIED_CONFIG;
	struct ims_installed *in = &it->in;
	const unsigned char *want;
	size_t want_len = 0, sig_len = 0;
	int algo = 0, err;

	err = ims_installed_open(r->rootfd, fi, &r->ids, it->pkg->nevra, r->log, in);
	it->rf.rep.config = in->config;
	if (!err && in->config) {
		it->accepted = imastream_accepted_find(r->accepted, rpmfiFN(fi));
		/* Its size is the accepted one: its digest is compared once read. */
		if (it->accepted && it->accepted->size == (uint64_t)in->st.st_size)
			modified_config_ok = true;
		else
			it->accepted = NULL;
	}
	memcpy(it->rf.letters, in->letters, sizeof(it->rf.letters));
	if (err) {
		said(it, IMASTREAM_RELABEL_FAILED, "cannot open");
		return;
	}
	if (in->state == IMS_INSTALLED_MISSING) {
		said(it, IMASTREAM_RELABEL_MISSING, "missing");
		return;
	}
	/*
	 * An edited %config file may be taken as it is now: its size (and mtime, which an
	 * edit changes), not its mode or owner.
	 */
	if (in->state == IMS_INSTALLED_MODIFIED &&
	    !(in->fd >= 0 && S_ISREG(in->st.st_mode) && in->config && modified_config_ok &&
	      !strncmp(in->letters + 1, "......", 6) && in->letters[8] == '.')) {
		said(it, IMASTREAM_RELABEL_MODIFIED, in->why ? in->why : "differs from its header");
		return;
	}
	if (!linked_within_package(in, fi) && !linked_within_rpmdb(r, in)) {
		said(it, IMASTREAM_RELABEL_FAILED,
		     "more hard links than rpm's database has paths for it (a link from elsewhere, "
		     "maybe outside the root): not written");
		return;
	}
	if (!S_ISREG(in->st.st_mode)) {
		it->kind = RITEM_SPECIAL;
		return;
	}
	want = rpmfiFDigest(fi, &algo, &want_len);
	if (!want || !it->hi || want_len != it->hi->digest_size || want_len > sizeof(it->want)) {
		said(it, IMASTREAM_RELABEL_FAILED, "no usable digest in the header");
		return;
	}
	memcpy(it->want, want, want_len);
	it->want_len = want_len;
	it->sig = rpmfiFSignature(fi, &sig_len);
	it->sig_len = sig_len;
	snprintf(it->rf.path, sizeof(it->rf.path), "%s", in->path);
	it->kind = RITEM_CONTENT;
}

/*
 * One file: checked here, then its content hashed on a worker when @pooled (the items
 * come back here in order), else streamed through the chain here and now.
 */
static void relabel_file(struct imastream_relabel *r, rpmfi fi, const struct imastream_pkg *pkg,
			 const struct imastream_hash_info *hi, bool pooled)
{
	struct ritem *it = r->free_items;

	if (it)
		r->free_items = it->next_free;
	else
		it = malloc(sizeof(*it));
	if (it)
		*it = (struct ritem){ .pkg = pkg, .hi = hi, .fn = strdup(rpmfiFN(fi)) };
	if (!it || !it->fn) {
		struct rfile rf = { .rep = { .package = pkg->nevra, .path = rpmfiFN(fi) } };

		free(it);
		/* Said after the files before it, as every report is. */
		if (r->pool)
			ims_pool_finish(r->pool);
		report(r, &rf, IMASTREAM_RELABEL_FAILED, "out of memory");
		return;
	}
	it->rf.rep.package = pkg->nevra;
	it->rf.rep.path = it->fn;
	check_file(r, it, fi);
	if (pooled) {
		it->pooled = it->kind == RITEM_CONTENT;
		ims_pool_push(r->pool, it);
	} else {
		relabel_done(r, it);
	}
}

/*
 * Whether the chain needs each file's content streamed through it: verity = on (no header
 * has the fs-verity digest), or a digest in an algorithm other than the header's.  Else
 * the header's digest, computed anywhere, is all it takes (as an install gives it).
 */
static bool chain_needs_stream(const struct imastream_relabel *r,
			       const struct imastream_hash_info *hi)
{
	return r->verity || !hi ||
	       (imastream_chain_hash_algos(r->chain) & ~IMASTREAM_HASH_BIT(hi->algo));
}

int imastream_relabel_header(struct imastream_relabel *r, void *rpm_header)
{
	Header h = rpm_header;
	const struct imastream_hash_info *hi;
	struct imastream_pkg pkg;
	bool pooled;
	char *nevra;
	rpmfi fi;
	int err;

	if (!r || !h)
		return -EINVAL;
	nevra = headerGetAsString(h, RPMTAG_NEVRA);
	fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_VERIFY);
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
	pooled = r->pool && !chain_needs_stream(r, hi);
	while (!err && fi && rpmfiNext(fi) >= 0) {
		mode_t mode = (mode_t)rpmfiFMode(fi);

		if (!(S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode)) ||
		    (rpmfiFFlags(fi) & RPMFILE_GHOST))
			continue;
		relabel_file(r, fi, &pkg, hi, pooled);
	}
	/* Every file of the package is done before its post hook (and its rpmfi goes). */
	if (pooled)
		ims_pool_finish(r->pool);
	imastream_chain_psm_post(r->chain, &pkg, err);
	if (!err)
		r->counts.packages++;
	rpmfiFree(fi);
	free(nevra);
	return err;
}

/*
 * One worker a core, or none on one core (the caller's thread then streams every file,
 * as before there were threads).  A pool that cannot start is no error: the same.
 */
static void start_workers(struct imastream_relabel *r)
{
	cpu_set_t allowed;
	/* The cores this process may run on (taskset, a cpuset), not every core online. */
	long cores = sched_getaffinity(0, sizeof(allowed), &allowed) ? sysconf(_SC_NPROCESSORS_ONLN) :
		     CPU_COUNT(&allowed);
	unsigned int n = cores > 1 ? (unsigned int)(cores < MAX_WORKERS ? cores : MAX_WORKERS) : 0;
	int err;

	if (!n || !(r->workers = calloc(n, sizeof(*r->workers))))
		return;
	err = ims_pool_new(n, MAX_INFLIGHT, relabel_work, relabel_done, r, &r->pool);
	if (err) {
		ims_logf(r->log, IMASTREAM_LOG_DEBUG, "relabel: no worker threads (%s): one thread",
			 strerror(-err));
		r->pool = NULL;
		return;
	}
	r->nworkers = n;
}

static void stop_workers(struct imastream_relabel *r)
{
	ims_pool_free(r->pool);
	r->pool = NULL;
	for (unsigned int i = 0; r->workers && i < r->nworkers; i++)
		imastream_hasher_free(r->workers[i].hasher);
	free(r->workers);
	r->workers = NULL;
	while (r->free_items) {
		struct ritem *it = r->free_items;

		r->free_items = it->next_free;
		free(it);
	}
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
	err = ims_ids_load(&r->ids, r->rootfd, log);
	if (!err)
		err = imastream_accepted_load(r->root, r->rootfd, log, &r->accepted);
	if (err)
		goto fail;
	r->verity = IMS_CONFIG_VERITY(cfg) && cfg->mode == IMASTREAM_MODE_SIGN;
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
	/* As the installer's sink: every signature is made on this thread, in file order. */
	if (!(opts->flags & (IMASTREAM_RELABEL_NO_SIGN_AHEAD | IMASTREAM_RELABEL_DRY_RUN)) &&
	    ims_more_than_one_cpu()) {
		err = ims_chain_sign_ahead(chain, true);
		if (err)
			goto fail;
		r->sign_ahead = true;
	}
	start_workers(r);
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
	/* Every file is done before the transaction's post hook. */
	stop_workers(r);
	if (r->sign_ahead)
		ims_chain_sign_ahead(r->chain, false);
	if (r->tsm)
		imastream_chain_tsm_post(r->chain, &r->txn, res);
	ims_ids_clear(&r->ids);
	imastream_accepted_free(r->accepted);
	ims_rpmdb_links_free(r->links);
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
