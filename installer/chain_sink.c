// SPDX-License-Identifier: LGPL-2.1-or-later
/* The bridge from the extractor's entry sink to the security hook chain. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/chain_sink.h"
#include "imastream/entry.h"
#include "imastream/extract.h"
#include "installer/sink_conflicts.h"
#include "installer/sink_file.h"
#include "installer/sink_package.h"
#include "installer/sink_progress.h"
#include "installer/sink_record.h"
#include "installer/sink_thread.h"
#include "installer/sink_verity.h"
#include "plugin/core/driver.h"

/* One object between file_opened and file_done. */
struct sfile {
	struct imastream_file f;
	struct sfile *next;            /* in the done list */
	struct ims_work_item work;     /* in the chain thread's queue */
	char *dest;
	char *tmp;     /* verity = on: the temp name beside dest, where commit enables it */
	bool opened;   /* file_opened ran: file_done is owed */
	bool hardlink; /* a further link: the chain already saw its inode */
	bool stream;   /* chunks go to file_updated */
	bool queued;   /* handed to the chain thread, with its own copies: */
	struct ims_entry_copy copy;
	char path[sizeof("/proc/self/fd/") + 12 + NAME_MAX];
};

struct imastream_chain_sink {
	struct imastream_entry_sink sink;
	struct imastream_chain *chain;
	const struct imastream_log *log;
	struct imastream_chain_sink_opts opts;
	int rootfd;
	char *root;
	struct imastream_txn txn;
	bool tsm;
	struct ims_sink_record rec; /* who owns what, and this package's record and removals */
	/* The package being installed: its header, names, and the root's rpm database. */
	struct ims_sink_package cur;
	struct imastream_pkg pkg;
	bool in_psm;
	struct sfile *done, **done_tail; /* closed, awaiting file_done after commit */
	struct ims_sink_progress prog;
	/* The chain thread (sink_thread.c): file_opened/file_closed and the record of files
	 * whose chunks the chain does not need.  A failure fails the package at
	 * commit_package, before any rename. */
	struct ims_worker worker;
	bool verity;     /* verity = on: signed files get fs-verity before their rename */
	/* The signer's nonce worker runs (keys/sign_ahead.c), from tsm_pre to tsm_post. */
	bool sign_ahead;
};

/* Before any chain call of the caller's own: the chain thread is idle. */
static void drain(struct imastream_chain_sink *cs)
{
	ims_worker_drain(&cs->worker);
}

static void sfile_free(struct sfile *sf)
{
	if (!sf)
		return;
	if (sf->queued)
		ims_entry_copy_release(&sf->copy);
	free(sf->tmp);
	free(sf->dest);
	free(sf);
}

/* Ends a file in the chain (if it was opened) and frees it. */
static void sfile_done(struct imastream_chain_sink *cs, struct sfile *sf, int res)
{
	if (sf->opened)
		imastream_chain_file_done(cs->chain, &sf->f, res);
	sfile_free(sf);
}

static int cs_package_header(void *arg, const char *name, void *rpm_header)
{
	struct imastream_chain_sink *cs = arg;

	return ims_sink_package_header(&cs->cur, cs->chain, name, rpm_header);
}

static int cs_begin_package(void *arg, const char *name)
{
	struct imastream_chain_sink *cs = arg;
	int err = ims_sink_package_begin(&cs->cur, name, cs->opts.txn_flags, &cs->pkg);

	if (err)
		return err;
	cs->done = NULL;
	cs->done_tail = &cs->done;
	ims_sink_progress_package(&cs->prog, name);
	err = ims_sink_record_begin(&cs->rec, cs->opts.cfg, cs->cur.name, cs->cur.nevra);
	if (err)
		return err;
	cs->in_psm = true;
	err = imastream_chain_psm_pre(cs->chain, &cs->pkg);
	if (err) {
		/* The extractor ends nothing it did not begin: the post hook is ours to run. */
		imastream_chain_psm_post(cs->chain, &cs->pkg, err);
		cs->in_psm = false;
		ims_sink_record_end(&cs->rec, err, cs->cur.nevra, cs->log);
	}
	return err;
}

/* A conflict with another package's file: the file_conflict hook and the verdict. */
static int check_conflict(struct imastream_chain_sink *cs, const struct imastream_entry *e)
{
	char owner[256];

	if (!ims_conflict_owner(cs->rec.all, cs->rec.owners, cs->cur.name, e, owner, sizeof(owner)))
		return 0;
	drain(cs);
	return ims_conflict_judge(cs->chain, &cs->pkg, e->path, owner,
				  cs->opts.flags & IMASTREAM_SINK_REPLACE_FILES, cs->log);
}

static int cs_entry_begin(void *arg, const struct imastream_entry *e, void **entry_ctx)
{
	struct imastream_chain_sink *cs = arg;
	struct sfile *sf;
	int err;

	err = check_conflict(cs, e);
	if (err)
		return err;
	sf = calloc(1, sizeof(*sf));
	if (!sf || !(sf->dest = strdup(e->path))) {
		free(sf);
		return -ENOMEM;
	}
	*entry_ctx = sf;
	/* A further hard link: its inode has its attributes; the chain sees it once. */
	if (e->flags & IMASTREAM_ENTRY_HARDLINK) {
		sf->hardlink = true;
		return 0;
	}
	sf->stream = ims_sink_file_opened(
		&sf->f, sf->dest, e, &cs->pkg, imastream_chain_hash_algos(cs->chain),
		cs->opts.flags & IMASTREAM_SINK_STREAM_ALWAYS, cs->verity);
	/* Nothing of this file needs the chain before it is closed: the chain thread
	 * opens and closes it in one go. */
	if (cs->worker.started && !sf->stream)
		return 0;
	drain(cs);
	sf->opened = true;
	err = imastream_chain_file_opened(cs->chain, &sf->f);
	if (err) {
		sfile_done(cs, sf, err);
		*entry_ctx = NULL;
	}
	return err;
}

static int cs_entry_data(void *arg, void *entry_ctx, const void *buf, size_t len)
{
	struct imastream_chain_sink *cs = arg;
	struct sfile *sf = entry_ctx;
	int err = 0;

	if (sf->stream)
		err = imastream_chain_file_updated(cs->chain, &sf->f, buf, len);
	ims_sink_progress_bytes(&cs->prog, len);
	return err;
}

/*
 * file_closed (and file_opened first when the chain thread runs it) for one object, and
 * its record.  On error the file is ended and freed; on success it waits in the done list.
 */
static int close_file(struct imastream_chain_sink *cs, struct sfile *sf,
		      const struct imastream_entry *e, int fd, const uint8_t *digest)
{
	int err = 0;

	if (sf->hardlink) {
		err = ims_sink_record_file(cs->rec.pkg, cs->chain, NULL, e, NULL);
		sfile_free(sf);
		return err;
	}
	if (!sf->opened) {
		sf->opened = true;
		err = imastream_chain_file_opened(cs->chain, &sf->f);
		if (err) {
			sfile_done(cs, sf, err);
			return err;
		}
	}
	/* The inode's owner and mode, the package's signature, the verified digest. */
	ims_sink_file_closed(&sf->f, sf->path, fd, e, digest);
	if (e->sig)
		ims_logf(cs->log, IMASTREAM_LOG_DEBUG,
			 "%s: %s: the package carries a %zu-byte IMA signature", cs->cur.nevra,
			 e->path, e->sig_len);
	/* An empty file streams nothing: its (empty) stream still gives the digest. */
	err = sf->stream && S_ISREG(e->mode) && !e->size ?
	      imastream_chain_file_updated(cs->chain, &sf->f, "", 0) : 0;
	if (!err)
		err = imastream_chain_file_closed(cs->chain, &sf->f);
	if (!err)
		err = ims_sink_record_file(cs->rec.pkg, cs->chain, &sf->f, e, digest);
	/* The extractor closes its fd and frees the signature after this call; the chain
	 * thread's copies go now (thousands of files may wait for their file_done). */
	sf->f.fd = -1;
	sf->f.pkg_sig = NULL;
	sf->f.pkg_sig_len = 0;
	if (sf->queued)
		ims_entry_copy_release(&sf->copy);
	if (err) {
		sfile_done(cs, sf, err);
		return err;
	}
	*cs->done_tail = sf;
	cs->done_tail = &sf->next;
	return 0;
}

/* The chain thread's work on one queued object. */
static int run_queued(void *arg, struct ims_work_item *item, int failed)
{
	struct imastream_chain_sink *cs = arg;
	struct sfile *sf = (struct sfile *)((char *)item - offsetof(struct sfile, work));
	char *path;
	int err;

	/* After a failure the package is lost: end the rest without the chain's work. */
	if (failed) {
		sfile_done(cs, sf, failed);
		return 0;
	}
	path = strdup(sf->dest);
	err = close_file(cs, sf, &sf->copy.e, sf->copy.fd,
			 sf->copy.has_digest ? sf->copy.digest : NULL);
	if (err)
		ims_err(cs->log, err, "%s: %s: the hook chain failed: %s", cs->cur.nevra,
			path ? path : "?", strerror(-err));
	free(path);
	return err;
}

/* Hands a closed object to the chain thread, with its own copies of the extractor's data. */
static int enqueue(struct imastream_chain_sink *cs, struct sfile *sf, const struct imastream_entry *e,
		   int fd, int dirfd, const char *name, const uint8_t *digest)
{
	int err;

	sf->queued = true;
	err = ims_entry_copy_take(&sf->copy, e, sf->dest, digest);
	if (!err && !sf->hardlink) {
		/* The extractor closes its descriptors once this returns: ours stay open. */
		err = ims_entry_copy_fds(&sf->copy, fd, dirfd);
		if (err)
			ims_err(cs->log, err, "%s: %s: %s", cs->cur.nevra, e->path, strerror(-err));
		else
			snprintf(sf->path, sizeof(sf->path), "/proc/self/fd/%d/%s", sf->copy.dirfd,
				 name);
	}
	if (!err)
		err = ims_worker_push(&cs->worker, &sf->work);
	if (err)
		sfile_free(sf); /* (a push fails when a file already failed: the package is lost) */
	return err;
}

static int cs_entry_end(void *arg, void *entry_ctx, const struct imastream_entry *e, int fd,
			int dirfd, const char *name, const uint8_t *digest)
{
	struct imastream_chain_sink *cs = arg;
	struct sfile *sf = entry_ctx;
	int err;

	if (!sf)
		return -EINVAL;
	ims_sink_progress_file(&cs->prog);
	if (cs->verity && S_ISREG(e->mode) && !sf->hardlink && !(sf->tmp = strdup(name))) {
		sfile_free(sf);
		return -ENOMEM;
	}
	if (cs->worker.started && !sf->opened)
		return enqueue(cs, sf, e, fd, dirfd, name, digest);
	/* The only handle on a symlink or a device that never follows one in the root. */
	snprintf(sf->path, sizeof(sf->path), "/proc/self/fd/%d/%s", dirfd, name);
	drain(cs); /* (a hard link's record waits for its first link's) */
	err = close_file(cs, sf, e, fd, digest);
	return err;
}

static void cs_entry_abort(void *arg, void *entry_ctx, int err)
{
	struct imastream_chain_sink *cs = arg;

	if (entry_ctx)
		sfile_done(cs, entry_ctx, err ? err : -ECANCELED);
}

/*
 * verity = on: fs-verity on every file the chain signed for it, under its temp name.  The
 * extractor and the chain thread have closed their writable descriptors by now; a file
 * that cannot get verity fails the package, before any rename (fail closed).
 */
static int enable_verity(struct imastream_chain_sink *cs)
{
	int err = 0;

	for (struct sfile *sf = cs->done; sf && !err; sf = sf->next)
		if (sf->tmp && ims_file_wants_verity(&sf->f))
			err = ims_verity_enable_temp(cs->rootfd, sf->dest, sf->tmp, cs->cur.nevra,
						     cs->log);
	return err;
}

static int cs_commit_package(void *arg)
{
	struct imastream_chain_sink *cs = arg;
	int err;

	drain(cs);
	err = ims_worker_error(&cs->worker);
	if (err)
		return err; /* (said when it happened) */
	err = cs->verity ? enable_verity(cs) : 0;
	if (err)
		return err;
	return ims_sink_record_commit(&cs->rec, cs->rootfd, cs->cur.name, cs->cur.nevra, cs->log);
}

/* The upgrade's removals, done at end_package before the record's rename (sink_dropped.c). */
static int cs_journal_steps(void *arg, int (*add)(void *ctx, int step, const char *dir,
						  const char *name),
			    void *ctx)
{
	struct imastream_chain_sink *cs = arg;

	return ims_dropped_journal(&cs->rec.dropped, add, ctx);
}

/* The record's rename, done at end_package: the intent journal lists it last. */
static int cs_journal(void *arg, int (*add)(void *ctx, const char *dir, const char *tmp,
					    const char *name),
		      void *ctx)
{
	struct imastream_chain_sink *cs = arg;

	return ims_sink_record_journal(&cs->rec, add, ctx);
}

static void cs_end_package(void *arg, int status)
{
	struct imastream_chain_sink *cs = arg;
	char final[PATH_MAX];

	drain(cs);
	ims_worker_reset(&cs->worker);
	while (cs->done) {
		struct sfile *sf = cs->done;

		cs->done = sf->next;
		/* Renamed: plugins that look at the file now find it at its final path. */
		if (!status)
			sf->f.path = ims_sink_file_final(final, sizeof(final), cs->root, sf->dest);
		sfile_done(cs, sf, status);
	}
	cs->done_tail = &cs->done;
	/* An upgrade: what the old version had and this one lacks goes, as an erase. */
	ims_sink_record_remove_dropped(&cs->rec, status, cs->rootfd, cs->root, cs->chain, &cs->pkg,
				       cs->log);
	if (cs->in_psm) {
		imastream_chain_psm_post(cs->chain, &cs->pkg, status);
		cs->in_psm = false;
	}
	ims_sink_record_end(&cs->rec, status, cs->cur.nevra, cs->log);
	ims_sink_package_end(&cs->cur, cs->rootfd, status);
	cs->pkg.rpm_header = NULL;
	ims_sink_progress_end(&cs->prog, status);
}

int imastream_chain_sink_new(struct imastream_chain *chain, int rootfd,
			     const struct imastream_chain_sink_opts *opts,
			     const struct imastream_log *log, struct imastream_chain_sink **ret)
{
	struct imastream_chain_sink *cs;
	int err;

	/* The size first: it says which of the other members the caller has. */
	err = opts ? IMS_CHECK_SIZE(log, opts, imastream_chain_sink_opts, progress_arg) : 0;
	if (err)
		return err;
	if (!chain || !opts || !opts->root || opts->root[0] != '/' || rootfd < 0)
		return ims_err(log, -EINVAL,
			       "chain sink: a chain, a root and its absolute path are required");
	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	cs->chain = chain;
	cs->log = log;
	IMS_COPY_SIZED(&cs->opts, opts);
	ims_sink_progress_init(&cs->prog, cs->opts.progress, cs->opts.progress_arg);
	cs->done_tail = &cs->done;
	cs->rootfd = dup(rootfd);
	cs->root = strdup(opts->root);
	if (cs->rootfd < 0 || !cs->root) {
		err = -ENOMEM;
		goto fail;
	}
	err = ims_sink_package_init(&cs->cur, cs->rootfd, cs->root, opts->flags, opts->pgp_keys,
				    log);
	if (err)
		goto fail;
	if (!(opts->flags & IMASTREAM_SINK_NO_RECORD)) {
		err = ims_sink_record_open(&cs->rec, cs->rootfd, cs->root, cs->cur.rpmdb, log);
		if (err)
			goto fail;
	}
	err = ims_probe_root_xattrs(cs->opts.cfg, cs->root, NULL, cs->log);
	if (!err)
		err = ims_probe_root_verity(cs->opts.cfg, cs->root, cs->log);
	if (err)
		goto fail;
	cs->verity = ims_sink_verity_on(cs->opts.cfg);
	/* Without a database the policy plugins have nobody to look up (and must not
	 * create one). */
	cs->txn = (struct imastream_txn){ .size = sizeof(cs->txn),
					  .root = cs->root,
					  .flags = opts->txn_flags,
					  .rpm_ts = cs->cur.rpmdb ? cs->cur.ts : NULL };
	err = imastream_chain_tsm_pre(chain, &cs->txn);
	cs->tsm = true; /* the post hook runs for the plugins the pre hook reached */
	if (err) {
		ims_err(log, err, "%s: the hook chain refused the transaction: %s", cs->root,
			strerror(-err));
		goto fail;
	}
	if (!(opts->flags & IMASTREAM_SINK_ONE_THREAD)) {
		err = ims_worker_start(&cs->worker, run_queued, cs);
		if (err) {
			ims_err(log, err, "cannot start the chain thread: %s", strerror(-err));
			goto fail;
		}
	}
	/* As the rpm plugin's %_imastream_sign_threads: no scriptlet forks here, so the
	 * worker runs for the whole transaction. */
	if (!(opts->flags & (IMASTREAM_SINK_ONE_THREAD | IMASTREAM_SINK_NO_SIGN_AHEAD)) &&
	    ims_more_than_one_cpu()) {
		err = ims_chain_sign_ahead(chain, true);
		if (err)
			goto fail;
		cs->sign_ahead = true;
	}
	cs->sink = (struct imastream_entry_sink){
		.size = sizeof(cs->sink),
		.arg = cs,
		.package_header = cs_package_header,
		.begin_package = cs_begin_package,
		.entry_begin = cs_entry_begin,
		.entry_data = cs_entry_data,
		.entry_end = cs_entry_end,
		.entry_abort = cs_entry_abort,
		.commit_package = cs_commit_package,
		.end_package = cs_end_package,
		.journal = cs_journal,
		.journal_steps = cs_journal_steps,
	};
	*ret = cs;
	return 0;
fail:
	imastream_chain_sink_free(cs, err);
	return err;
}

const struct imastream_entry_sink *imastream_chain_sink_entry_sink(struct imastream_chain_sink *cs)
{
	return &cs->sink;
}

void imastream_chain_sink_free(struct imastream_chain_sink *cs, int res)
{
	if (!cs)
		return;
	/* A package the extractor never ended (it was freed first, or never called). */
	if (cs->in_psm)
		cs_end_package(cs, -ECANCELED);
	ims_worker_stop(&cs->worker);
	if (cs->sign_ahead)
		ims_chain_sign_ahead(cs->chain, false);
	if (cs->tsm)
		imastream_chain_tsm_post(cs->chain, &cs->txn, res);
	if (cs->tsm)
		ims_sink_progress_done(&cs->prog);
	ims_sink_package_release(&cs->cur);
	ims_sink_record_close(&cs->rec);
	if (cs->rootfd >= 0)
		close(cs->rootfd);
	free(cs->root);
	free(cs);
}
