// SPDX-License-Identifier: LGPL-2.1-or-later
/* rpm packages into the extractor: header via librpm, payload via rpmio and rpm's archive reader. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmarchive.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmio.h>
#include <rpm/rpmkeyring.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/extract.h"
#include "imastream/hash.h"
#include "imastream/install_rpm.h"
#include "installer/private.h"
#include "installer/rpm_read.h"

/*
 * Why rpm's own archive reader rather than a cpio parser of ours: in an rpm package the
 * header, not the cpio entry, is the authority for every path and attribute (the cpio
 * metadata is never used by rpm), the payload may be in rpm's "stripped" cpio format
 * (07070X: every v6 package of rpm 6, rpm 4 ones with files over 4 GiB) that only
 * indexes header entries, and hard links are tied together by the header's inode
 * numbers.  rpmfiNewArchiveReader() maps archive entries to header entries exactly as
 * rpm -i does and streams content through rpmfiArchiveRead() in chunks of our size, so
 * the tree we write matches rpm's.  What it does not do, we do around it, before any
 * byte is written: every header entry is checked (paths, types, sizes, hard-link sets,
 * duplicates, non-directories used as directories), because the reader trusts the
 * header (a symlink's declared size is malloc'ed as is); and every entry the reader
 * returns is checked against duplicates and the set of entries still expected, because
 * the reader does not notice a repeated one.
 */

/* Routes librpm's messages to our log instead of stderr while a package is read. */
static int rpmlog_to_ours(rpmlogRec rec, rpmlogCallbackData data)
{
	struct pkgread *r = data;
	const char *msg = rpmlogRecMessage(rec);
	size_t len = strlen(msg);

	while (len && msg[len - 1] == '\n')
		len--;
	snprintf(r->last_rpm_msg, sizeof(r->last_rpm_msg), "%.*s", (int)len, msg);
	ims_logf(r->log, IMASTREAM_LOG_DEBUG, "%s: librpm: %s", r->name, r->last_rpm_msg);
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Explains a failure of rpm's archive reader, with the decompressor's own words. */
static int payload_err(struct pkgread *r, FD_t pfd, int rc, const char *where)
{
	const char *zerr = Ferror(pfd) ? Fstrerror(pfd) : NULL;
	char *msg = NULL, detail[512] = "";
	int err;

	if (rc != RPMERR_READ_FAILED) {
		/* rpm appends errno to some codes; here it would be stale, so clear it. */
		errno = 0;
		msg = rpmfileStrerror(rc);
	}
	if (msg || (zerr && *zerr))
		snprintf(detail, sizeof(detail), " (%s%s%s)", msg ? msg : "",
			 msg && zerr && *zerr ? ", " : "", zerr && *zerr ? zerr : "");
	err = ims_err(r->log, -EBADMSG, "%s: %s%scorrupted or truncated payload%s", r->name,
		      where ? where : "", where ? ": " : "", detail);
	free(msg);
	return err;
}

static const char *rpmio_mode(const char *compressor)
{
	static const struct { const char *name, *mode; } map[] = {
		{ "gzip", "r.gzdio" }, { "bzip2", "r.bzdio" }, { "xz", "r.xzdio" },
		{ "lzma", "r.lzdio" }, { "zstd", "r.zstdio" },
	};

	if (!compressor)
		return "r.gzdio"; /* rpm's default for packages that do not say */
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(compressor, map[i].name))
			return map[i].mode;
	return NULL;
}

/* The consumer's side of an entry: checks, then the extractor.  *open_ret: an entry
 * awaits content and its end (not for ghosts and further hard links, complete at once). */
static int on_entry(struct pkgread *r, int fx, int *first, bool *open_ret)
{
	struct imastream_entry e = { 0 };
	const int *links;
	uint32_t nlinks;
	const uint8_t *digest;
	size_t dlen;
	char *fn;
	int err;

	*open_ret = false;
	if (r->delivered[fx])
		return file_err(r, fx, -EBADMSG, "duplicate entry in the payload");
	r->delivered[fx] = 1;
	if (ims_rpm_is_ghost(r, fx))
		return 0;

	fn = rpmfilesFN(r->files, fx);
	if (!fn)
		return -ENOMEM;
	e.path = fn;
	e.mode = rpmfilesFMode(r->files, fx);
	e.uid = ims_ids_user(&r->ids, rpmfilesFUser(r->files, fx), r->name, r->log);
	e.gid = ims_ids_group(&r->ids, rpmfilesFGroup(r->files, fx), r->name, r->log);
	if (ims_rpm_is_root(fn)) {
		/* The root exists already: only its mode and owner, set before the commit. */
		r->owns_root = true;
		r->root_mode = e.mode;
		r->root_uid = e.uid;
		r->root_gid = e.gid;
		free(fn);
		return 0;
	}
	e.mtime = rpmfilesFMtime(r->files, fx);
	e.rdev = rpmfilesFRdev(r->files, fx);
	e.index = (unsigned int)fx;
	if (rpmfilesFFlags(r->files, fx) & RPMFILE_CONFIG)
		e.flags |= IMASTREAM_ENTRY_CONFIG;
	if (rpmfilesFFlags(r->files, fx) & (RPMFILE_DOC | RPMFILE_LICENSE))
		e.flags |= IMASTREAM_ENTRY_DOC;
	e.caps = rpmfilesFCaps(r->files, fx);
	if (S_ISLNK(e.mode))
		e.link_target = rpmfilesFLink(r->files, fx);

	nlinks = S_ISREG(e.mode) ? rpmfilesFLinks(r->files, fx, &links) : 1;
	if (S_ISREG(e.mode) && nlinks > 1 && links[0] != fx) {
		/* Content-first order: the set's first link came with the content. */
		char *target;

		if (*first != links[0]) {
			err = file_err(r, fx, -EBADMSG, "hard link out of order in the payload");
			goto out;
		}
		target = rpmfilesFN(r->files, links[0]);
		e.flags |= IMASTREAM_ENTRY_HARDLINK;
		e.link_target = target;
		err = target ? imastream_extract_entry_begin(r->x, &e) : -ENOMEM;
		if (!err)
			err = imastream_extract_entry_end(r->x);
		free(target);
		goto out;
	}
	if (S_ISREG(e.mode) && nlinks > 1) {
		/* rpm sets a link set's attributes once per link on the shared inode, so the
		 * last link's mode, owner and mtime are the ones that stay: the chain, EVM and
		 * the record must see those. */
		int last = links[nlinks - 1];

		e.mode = rpmfilesFMode(r->files, last);
		e.uid = ims_ids_user(&r->ids, rpmfilesFUser(r->files, last), r->name, r->log);
		e.gid = ims_ids_group(&r->ids, rpmfilesFGroup(r->files, last), r->name, r->log);
		e.mtime = rpmfilesFMtime(r->files, last);
	}
	if (S_ISREG(e.mode)) {
		*first = fx;
		e.size = rpmfilesFSize(r->files, fx);
		/* The package's IMA signature for this file (rpmsign --signfiles), decoded from
		 * its hex form by librpm; the chain's ima plugin judges it. */
		e.sig = rpmfilesFSignature(r->files, fx, &e.sig_len);
		if (!e.sig || !e.sig_len) {
			e.sig = NULL;
			e.sig_len = 0;
		}
		digest = rpmfilesFDigest(r->files, fx, NULL, &dlen);
		if (r->digest_algo && digest && !(e.size == 0 && all_zero(digest, dlen))) {
			e.digest = digest;
			e.digest_algo = r->digest_algo;
		} else if (r->digest_algo && e.size) {
			err = file_err(r, fx, -EBADMSG, "no file digest in the header");
			goto out;
		}
	}
	err = imastream_extract_entry_begin(r->x, &e);
	*open_ret = !err;
out:
	free(fn);
	return err;
}

static int extract_payload(struct pkgread *r, FD_t pfd)
{
	struct pipeline pl = { .r = r, .pfd = pfd, .threaded = !(r->flags & IMASTREAM_INSTALL_ONE_THREAD) };
	bool started = false, open = false;
	int err = 0, fx, first = -1;
	pthread_t reader;

	pthread_mutex_init(&pl.lock, NULL);
	pthread_cond_init(&pl.cond, NULL);
	pl.nfree = NBUFS;
	for (int i = 0; i < (pl.threaded ? NBUFS : 1); i++)
		if (!(pl.bufs[i] = malloc(CHUNK_SIZE)))
			err = -ENOMEM;
	pl.fi = rpmfiNewArchiveReader(pfd, r->files, RPMFI_ITER_READ_ARCHIVE_CONTENT_FIRST);
	if (!pl.fi && !err)
		err = ims_err(r->log, -EBADMSG, "%s: cannot open the payload", r->name);
	if (!err && pl.threaded) {
		err = -pthread_create(&reader, NULL, ims_rpm_reader_thread, &pl);
		started = !err;
		if (err)
			ims_err(r->log, err, "%s: cannot start the reader thread: %s", r->name, strerror(-err));
	}
	while (!err) {
		struct event ev = ims_rpm_pipeline_pop(&pl);

		if (ev.type == EV_DONE)
			break;
		switch (ev.type) {
		case EV_ENTRY:
			err = on_entry(r, ev.fx, &first, &open);
			break;
		case EV_DATA:
			if (open)
				err = imastream_extract_entry_data(r->x, pl.bufs[ev.buf], ev.len);
			ims_rpm_pipeline_put_buf(&pl, ev.buf);
			break;
		case EV_END:
			if (open)
				err = imastream_extract_entry_end(r->x);
			open = false;
			break;
		case EV_ERROR: {
			char *fn = ev.fx >= 0 ? rpmfilesFN(r->files, ev.fx) : NULL;

			err = payload_err(r, pfd, ev.rc, fn);
			free(fn);
			break;
		}
		default:
			break;
		}
	}
	/* The reader must be done with the archive before anyone else touches it. */
	pthread_mutex_lock(&pl.lock);
	pl.stop = true;
	pthread_cond_broadcast(&pl.cond);
	pthread_mutex_unlock(&pl.lock);
	if (started)
		pthread_join(reader, NULL);
	if (!err) {
		/* The reader finished with EV_DONE: everything delivered must be accounted for. */
		for (fx = 0; fx < r->fc; fx++)
			if (!r->delivered[fx] && !ims_rpm_is_ghost(r, fx)) {
				err = file_err(r, fx, -EBADMSG, "missing from the payload");
				break;
			}
	}
	if (pl.fi) {
		rpmfiArchiveClose(pl.fi);
		rpmfiFree(pl.fi);
	}
	for (int i = 0; i < NBUFS; i++)
		free(pl.bufs[i]);
	pthread_cond_destroy(&pl.cond);
	pthread_mutex_destroy(&pl.lock);
	return err;
}

/*
 * Reads @r's package from @rfd and checks all that can be checked before a byte is written:
 * the header and its digests, the payload's form, every file entry against @rootfd.
 */
static int read_checked_header(struct pkgread *r, rpmts ts, FD_t rfd, int rootfd,
			       const char **mode_ret, const char **compressor_ret, uint64_t *total)
{
	const struct imastream_hash_info *hi;
	const char *compressor, *format, *mode;
	rpmRC rc;

	/* Header digests are checked here; signatures are the chain's verify hook's job
	 * (with our trust store), so the host's rpm keyring is never consulted. */
	rpmtsSetVSFlags(ts, RPMVSF_MASK_NOSIGNATURES |
				    ((r->flags & IMASTREAM_INSTALL_NO_HEADER_DIGEST) ?
					     RPMVSF_MASK_NODIGESTS :
					     0));
	rc = rpmReadPackageFile(ts, rfd, r->name, &r->h);
	if (rc != RPMRC_OK && rc != RPMRC_NOKEY && rc != RPMRC_NOTTRUSTED)
		return ims_err(r->log, -EBADMSG, "%s: %s", r->name,
			       rc == RPMRC_NOTFOUND ? "not an rpm package" :
			       r->last_rpm_msg[0]   ? r->last_rpm_msg :
						      "bad header or header digest");
	if (headerIsSource(r->h))
		return ims_err(r->log, -EOPNOTSUPP, "%s: a source package cannot be installed",
			       r->name);
	format = headerGetString(r->h, RPMTAG_PAYLOADFORMAT);
	if (format && strcmp(format, "cpio"))
		return ims_err(r->log, -EOPNOTSUPP, "%s: payload format '%s' is not supported",
			       r->name, format);
	compressor = headerGetString(r->h, RPMTAG_PAYLOADCOMPRESSOR);
	mode = rpmio_mode(compressor);
	if (!mode)
		return ims_err(r->log, -EOPNOTSUPP, "%s: payload compressor '%s' is not supported",
			       r->name, compressor);
	r->files = rpmfilesNew(NULL, r->h, RPMTAG_BASENAMES, RPMFI_NOHEADER);
	if (!r->files)
		return ims_err(r->log, -EBADMSG, "%s: malformed file list in the header", r->name);
	r->fc = (int)rpmfilesFC(r->files);
	if (!(r->flags & IMASTREAM_INSTALL_NO_FILE_DIGEST) && r->fc) {
		hi = imastream_hash_by_rpm_id(rpmfilesDigestAlgo(r->files));
		if (!hi)
			return ims_err(r->log, -EOPNOTSUPP, "%s: unknown file digest algorithm %d",
				       r->name, rpmfilesDigestAlgo(r->files));
		r->digest_algo = hi->algo;
	}
	r->delivered = calloc((size_t)r->fc + 1, 1);
	if (!r->delivered)
		return -ENOMEM;
	*mode_ret = mode;
	*compressor_ret = compressor;
	return ims_rpm_check_files(r, rootfd, total);
}

int ims_rpm_check_header(int rootfd, int fd, const char *name, unsigned int flags,
			 const struct imastream_log *log,
			 int (*judge)(void *arg, const char *name, void *rpm_header), void *arg)
{
	struct pkgread r = { .name = name ? name : "(package)", .flags = flags, .log = log };
	const char *mode, *compressor;
	rpmlogCallback prev_log;
	rpmKeyring keyring;
	uint64_t total = 0;
	FD_t rfd;
	rpmts ts;
	int err;

	if (flags & ~(IMASTREAM_INSTALL_NO_HEADER_DIGEST | IMASTREAM_INSTALL_NO_FILE_DIGEST |
		      IMASTREAM_INSTALL_ONE_THREAD))
		return ims_err(log, -EINVAL, "%s: unknown install flags 0x%x", r.name, flags);
	if (ims_rpm_config())
		return ims_err(log, -EIO, "cannot read rpm's configuration");
	prev_log = rpmlogSetCallback(rpmlog_to_ours, &r);
	rfd = fdDup(fd);
	ts = rpmtsCreate();
	keyring = rpmKeyringNew();
	if (!rfd || Ferror(rfd) || !ts || !keyring) {
		err = ims_err(log, -EIO, "%s: cannot open: %s", r.name,
			      rfd ? Fstrerror(rfd) : "fdDup failed");
	} else {
		rpmtsSetKeyring(ts, keyring);
		err = read_checked_header(&r, ts, rfd, rootfd, &mode, &compressor, &total);
	}
	if (!err && judge)
		err = judge(arg, r.name, r.h);
	rpmlogSetCallback(prev_log, NULL);
	if (rfd)
		Fclose(rfd);
	rpmfilesFree(r.files);
	headerFree(r.h);
	rpmtsFree(ts);
	rpmKeyringFree(keyring);
	free(r.delivered);
	return err;
}

int imastream_install_rpm(struct imastream_extract *x, int fd, const char *name, unsigned int flags)
{
	struct pkgread r = { .x = x, .name = name ? name : "(package)", .flags = flags };
	rpmlogCallback prev_log;
	rpmKeyring keyring = NULL;
	const char *compressor = NULL, *mode = NULL;
	const struct imastream_entry_sink *sink;
	rpmts ts = NULL;
	FD_t rfd = NULL, pfd = NULL;
	uint64_t total = 0;
	bool begun = false;
	int err = 0, rootfd = ims_extract_rootfd(x);

	r.log = ims_extract_log(x);
	if (flags & ~(IMASTREAM_INSTALL_NO_HEADER_DIGEST | IMASTREAM_INSTALL_NO_FILE_DIGEST |
		      IMASTREAM_INSTALL_ONE_THREAD))
		return ims_err(r.log, -EINVAL, "%s: unknown install flags 0x%x", r.name, flags);
	if (ims_rpm_config())
		return ims_err(r.log, -EIO, "cannot read rpm's configuration");

	prev_log = rpmlogSetCallback(rpmlog_to_ours, &r);
	rfd = fdDup(fd);
	ts = rpmtsCreate();
	keyring = rpmKeyringNew();
	if (!rfd || Ferror(rfd) || !ts || !keyring) {
		err = ims_err(r.log, -EIO, "%s: cannot open: %s", r.name, rfd ? Fstrerror(rfd) : "fdDup failed");
		goto out;
	}
	rpmtsSetKeyring(ts, keyring);
	err = read_checked_header(&r, ts, rfd, rootfd, &mode, &compressor, &total);
	if (err)
		goto out;
	err = ims_ids_load(&r.ids, rootfd, r.log);
	if (err)
		goto out;

	pfd = Fdopen(rfd, mode);
	if (!pfd || Ferror(pfd)) {
		err = ims_err(r.log, -EBADMSG, "%s: cannot open the %s payload: %s", r.name,
			      compressor ? compressor : "gzip", pfd ? Fstrerror(pfd) : "?");
		goto out;
	}
	/* The sink judges the package by its header before anything is written. */
	sink = ims_extract_sink(x);
	if (sink->package_header) {
		err = sink->package_header(sink->arg, r.name, r.h);
		if (err)
			goto out;
	}
	err = imastream_extract_begin(x, r.name);
	if (err)
		goto out;
	begun = true;
	{
		char *nevra = headerGetAsString(r.h, RPMTAG_NEVRA);

		err = ims_extract_set_nevra(x, nevra);
		free(nevra);
		if (err)
			goto out;
	}
	err = extract_payload(&r, pfd);
	if (!err && r.owns_root)
		err = ims_extract_set_root_meta(x, r.root_mode, r.root_uid, r.root_gid);
	if (!err) {
		begun = false;
		err = imastream_extract_commit(x);
	}
out:
	if (begun)
		imastream_extract_abort(x, err);
	rpmlogSetCallback(prev_log, NULL);
	/* Fdopen() pushed the decompressor onto the same FD_t: one close pops both. */
	if (pfd || rfd)
		Fclose(pfd ? pfd : rfd);
	rpmfilesFree(r.files);
	headerFree(r.h);
	rpmtsFree(ts);
	rpmKeyringFree(keyring);
	ims_ids_clear(&r.ids);
	free(r.delivered);
	return err;
}
