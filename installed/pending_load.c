// SPDX-License-Identifier: LGPL-2.1-or-later
/* The pending labels of a root read for relabel --pending: every transaction's entries oldest first, one live entry per path, and the header or record line each is checked against. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "imastream/pending.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "installed/owners.h"
#include "installed/paths.h"
#include "installed/pending_run.h"
#include "plugin/core/pending_format.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of @dirfd's entries (not "." nor ".."); *@n gets their number. */
static int list_dir(int dirfd, char ***names_ret, size_t *n)
{
	int fd = dup(dirfd);
	char **names = NULL;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	*n = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			char **nn = realloc(names, (cap = cap * 2 + 16) * sizeof(*names));

			if (!nn)
				goto nomem;
			names = nn;
		}
		if (!(names[*n] = strdup(de->d_name)))
			goto nomem;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	*names_ret = names;
	return 0;
nomem:
	closedir(d);
	while (*n)
		free(names[--*n]);
	free(names);
	return -ENOMEM;
}

static void free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

static bool entry_name(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n == 8 && s[n] == '\0';
}

/* Reads and parses one entry; a failure is the item's, said when it is applied. */
static int load_item(struct run *r, int txn, const char *name)
{
	struct item *it;
	struct stat st;
	char *buf = NULL;
	ssize_t got = 0;
	int fd;

	it = realloc(r->items, (r->nitems + 1) * sizeof(*r->items));
	if (!it)
		return -ENOMEM;
	r->items = it;
	it = &r->items[r->nitems++];
	memset(it, 0, sizeof(*it));
	it->txn = txn;
	snprintf(it->name, sizeof(it->name), "%s", name);
	fd = ims_open_regular(r->txnfds[txn], name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size > IMS_PENDING_MAX_SIZE ||
	    !(buf = malloc((size_t)st.st_size + 1)) ||
	    (got = pread(fd, buf, (size_t)st.st_size, 0)) != st.st_size) {
		it->err = -EBADMSG;
		snprintf(it->why, sizeof(it->why), "cannot be read (%s)",
			 fd < 0	 ? ims_open_strerror(fd) :
			 got < 0 ? strerror(errno) :
				   "too large or short");
	} else {
		it->err = ims_pending_parse(buf, (size_t)got, &it->e, it->why, sizeof(it->why));
	}
	it->malformed = it->err != 0;
	free(buf);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* Every transaction directory and its entries, oldest first. */
static int load(struct run *r)
{
	char **names = NULL;
	size_t n;
	int dirfd, err;

	dirfd = imastream_open_beneath(r->rootfd, "/" IMS_PENDING_DIR, O_RDONLY | O_DIRECTORY);
	if (dirfd == -ENOENT)
		return 0;
	if (dirfd < 0)
		return ims_err(r->log, dirfd, "%s/%s: cannot open it: %s", r->root, IMS_PENDING_DIR,
			       strerror(-dirfd));
	err = list_dir(dirfd, &r->txns, &r->ntxns);
	if (!err && !(r->txnfds = calloc(r->ntxns + 1, sizeof(int))))
		err = -ENOMEM;
	for (size_t t = 0; !err && t < r->ntxns; t++) {
		r->txnfds[t] = openat(dirfd, r->txns[t],
				      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (r->txnfds[t] < 0) {
			err = ims_err(r->log, -errno, "%s/%s/%s: not a directory of entries: %s",
				      r->root, IMS_PENDING_DIR, r->txns[t], strerror(errno));
			break;
		}
		err = list_dir(r->txnfds[t], &names, &n);
		for (size_t i = 0; !err && i < n; i++) {
			/* A build killed while it wrote an entry: its file was never complete. */
			if (!strncmp(names[i], ".tmp-", 5))
				unlinkat(r->txnfds[t], names[i], 0);
			else if (entry_name(names[i]))
				err = load_item(r, (int)t, names[i]);
			else
				ims_logf(r->log, IMASTREAM_LOG_WARNING,
					 "%s/%s/%s/%s: not a pending-label entry: left alone",
					 r->root, IMS_PENDING_DIR, r->txns[t], names[i]);
		}
		free_names(names, n);
		names = NULL;
	}
	close(dirfd);
	return err == -ENOMEM ? ims_err(r->log, err, "out of memory") : err;
}

/*
 * One live entry per path: a newer transaction's supersedes an older one's (the file
 * was installed again), two of one transaction are both refused.
 */
int ims_pending_dedup(struct run *r)
{
	for (size_t i = 0; i < r->nitems; i++) {
		struct item *it = &r->items[i];
		int prev;

		if (it->err)
			continue;
		prev = ims_strmap_get(&r->paths, it->e.path);
		if (prev < 0) {
			if (ims_strmap_add(&r->paths, it->e.path, (int)i))
				return -ENOMEM;
			continue;
		}
		if (r->items[prev].txn != it->txn) {
			r->items[prev].drop = true;
			ims_strmap_set(&r->paths, it->e.path, (int)i);
			continue;
		}
		it->err = r->items[prev].err = -EBADMSG;
		snprintf(it->why, sizeof(it->why), "duplicated (also in entry %s)",
			 r->items[prev].name);
		snprintf(r->items[prev].why, sizeof(r->items[prev].why),
			 "duplicated (also in entry %s)", it->name);
	}
	return 0;
}

static struct item *live(struct run *r, const char *path, const char *package)
{
	int i = ims_strmap_get(&r->paths, path);
	struct item *it = i < 0 ? NULL : &r->items[i];

	return it && !it->err && !it->drop && !strcmp(it->e.package, package) ? it : NULL;
}

static int from_header(void *arg, void *rpm_header)
{
	struct run *r = arg;
	Header h = rpm_header;
	char *nevra = headerGetAsString(h, RPMTAG_NEVRA);
	rpmfi fi = NULL;

	if (!nevra)
		return 0;
	fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	while (fi && rpmfiNext(fi) >= 0) {
		struct item *it = live(r, rpmfiFN(fi), nevra);
		const struct imastream_hash_info *hi;
		const unsigned char *d;
		size_t len = 0;
		int algo = 0;

		if (!it)
			continue;
		it->ref.found = true;
		it->ref.ghost = rpmfiFFlags(fi) & RPMFILE_GHOST;
		it->ref.nlink = rpmfiFNlink(fi);
		it->ref.mode = (mode_t)rpmfiFMode(fi);
		free(it->ref.caps);
		it->ref.caps = rpmfiFCaps(fi) && *rpmfiFCaps(fi) ? strdup(rpmfiFCaps(fi)) : NULL;
		it->ref.uid = ims_ids_user(&r->ids, rpmfiFUser(fi), nevra, r->log);
		it->ref.gid = ims_ids_group(&r->ids, rpmfiFGroup(fi), nevra, r->log);
		d = rpmfiFDigest(fi, &algo, &len);
		hi = d ? imastream_hash_by_rpm_id(algo) : NULL;
		if (hi && len == hi->digest_size && len <= sizeof(it->ref.digest)) {
			it->ref.algo = hi->algo;
			it->ref.len = len;
			memcpy(it->ref.digest, d, len);
		}
	}
	rpmfiFree(fi);
	free(nevra);
	return 0;
}

/* A package imastream install recorded: NAME in the record, NAME-VERSION-... in entries. */
static int from_record(void *arg, const struct imastream_record_file *f)
{
	struct run *r = arg;
	int i = ims_strmap_get(&r->paths, f->path);
	struct item *it = i < 0 ? NULL : &r->items[i];
	size_t n = strlen(f->package);

	if (!it || it->err || it->drop || it->ref.found || strncmp(it->e.package, f->package, n) ||
	    it->e.package[n] != '-')
		return 0;
	it->ref.found = true;
	it->ref.mode = f->mode;
	it->ref.uid = f->uid;
	it->ref.gid = f->gid;
	if (f->digest_algo && imastream_hash_by_algo(f->digest_algo)) {
		it->ref.algo = f->digest_algo;
		it->ref.len = imastream_hash_by_algo(f->digest_algo)->digest_size;
		memcpy(it->ref.digest, f->digest, it->ref.len);
	}
	return 0;
}

int ims_pending_references(struct run *r)
{
	int err = ims_ids_load(&r->ids, r->rootfd, r->log);

	if (err)
		return err;
	err = ims_rpmdb_exists(r->rootfd, r->root, r->log);
	if (err > 0)
		err = imastream_rpmdb_foreach(r->root, NULL, 0, from_header, r, r->log);
	if (err < 0)
		return err;
	return imastream_record_foreach(r->rootfd, from_record, r, r->log);
}

void ims_pending_run_free(struct run *r)
{
	for (size_t i = 0; i < r->nitems; i++) {
		ims_pending_entry_release(&r->items[i].e);
		free(r->items[i].ref.caps);
	}
	free(r->items);
	for (size_t t = 0; t < r->ntxns; t++)
		if (r->txnfds && r->txnfds[t] >= 0)
			close(r->txnfds[t]);
	free(r->txnfds);
	free_names(r->txns, r->ntxns);
	ims_strmap_clear(&r->paths);
	ims_ids_clear(&r->ids);
	imastream_hasher_free(r->hasher);
	if (r->rootfd >= 0)
		close(r->rootfd);
}

int ims_pending_start(struct run *r, const char *root, const struct imastream_log *log)
{
	memset(r, 0, sizeof(*r));
	r->root = root;
	r->log = log;
	if (!root || root[0] != '/')
		return ims_err(log, -EINVAL, "the root must be an absolute path: %s",
			       root ? root : "(none)");
	r->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->rootfd < 0)
		return ims_err(log, -errno, "%s: cannot open the root: %s", root, strerror(errno));
	return load(r);
}
