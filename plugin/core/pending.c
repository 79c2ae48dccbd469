// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pending labels: in a non-initial user namespace the kernel refuses security.* xattrs
 * (EPERM, EACCES); there the chain keeps, inside the root, what it would have written,
 * one entry per file (pending_format.h), for imastream relabel --pending to apply as real
 * root.  Decided once per transaction, from the first refused write and the process's
 * uid_map, never from the uid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin/core/pending_format.h"
#include "plugin/core/private.h"

#define MAX_MAP_LINES 340 /* the kernel's limit on uid_map lines */

struct id_map {
	unsigned int n;
	struct {
		uint32_t inner, outer, count;
	} line[MAX_MAP_LINES];
};

struct ims_pending {
	bool userns; /* uid_map is not the initial namespace's identity map */
	struct id_map uids, gids;
	int rootfd; /* the transaction's root, or -1 */
	char *root;
	int decided; /* 0, or the userns_xattrs value the first refusal chose */
	int dirfd;   /* ROOT/var/lib/imastream/pending/TXN once an entry is kept */
	char txn[64];
	unsigned long files, values;
};

/* Reads /proc/self/{uid,gid}_map.  Return: 0, or -errno when it cannot be read. */
static int read_map(const char *file, struct id_map *m)
{
	FILE *f = fopen(file, "re");
	unsigned long in, out, count;
	int c;

	m->n = 0;
	if (!f)
		return -errno;
	while (m->n < MAX_MAP_LINES && (c = fscanf(f, "%lu %lu %lu", &in, &out, &count)) == 3) {
		m->line[m->n].inner = (uint32_t)in;
		m->line[m->n].outer = (uint32_t)out;
		m->line[m->n].count = (uint32_t)count;
		m->n++;
	}
	fclose(f);
	return 0;
}

/* The initial namespace maps every id to itself: "0 0 4294967295", one line. */
static bool initial_map(const struct id_map *m)
{
	return m->n == 1 && m->line[0].inner == 0 && m->line[0].outer == 0 &&
	       m->line[0].count == 0xffffffffu;
}

/* @id as the namespace's parent sees it (the host's id of a rootless build's file). */
static uint32_t outer_id(const struct id_map *m, uint32_t id)
{
	for (unsigned int i = 0; i < m->n; i++)
		if (id >= m->line[i].inner && id - m->line[i].inner < m->line[i].count)
			return m->line[i].outer + (id - m->line[i].inner);
	return id;
}

int ims_pending_init(struct ims_file_services *svc)
{
	struct ims_pending *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->rootfd = -1;
	p->dirfd = -1;
	/* No proof of a user namespace (no /proc): an EPERM stays an error. */
	if (read_map("/proc/self/uid_map", &p->uids) == 0 &&
	    read_map("/proc/self/gid_map", &p->gids) == 0)
		p->userns = !initial_map(&p->uids);
	svc->pending = p;
	return 0;
}

static void close_txn(struct ims_pending *p)
{
	if (p->dirfd >= 0)
		close(p->dirfd);
	if (p->rootfd >= 0)
		close(p->rootfd);
	p->dirfd = p->rootfd = -1;
	free(p->root);
	p->root = NULL;
}

void ims_pending_free(struct ims_file_services *svc)
{
	if (!svc->pending)
		return;
	close_txn(svc->pending);
	free(svc->pending);
	svc->pending = NULL;
}

void ims_pending_txn_begin(struct ims_file_services *svc, const char *root)
{
	struct ims_pending *p = svc->pending;

	if (!p)
		return;
	close_txn(p);
	p->decided = 0;
	p->files = p->values = 0;
	p->txn[0] = '\0';
	if (!p->userns)
		return;
	/* Opened now: under rpm the file hooks run inside the chroot, where ROOT is "/". */
	p->root = strdup(root ? root : "/");
	/* rpm's root ends in "/": the line names ROOT/var/..., not ROOT//var/... */
	for (size_t n = p->root ? strlen(p->root) : 0; n > 1 && p->root[n - 1] == '/'; n--)
		p->root[n - 1] = '\0';
	p->rootfd = open(p->root ? p->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

void ims_pending_txn_end(struct ims_file_services *svc)
{
	struct ims_pending *p = svc->pending;
	const char *root;

	if (!p)
		return;
	root = p->root && strcmp(p->root, "/") ? p->root : "";
	if (p->files)
		ims_logf(svc->log, IMASTREAM_LOG_WARNING,
			 "%lu files have %lu security xattrs pending (a user namespace cannot "
			 "write them) in %s/%s/%s: apply them as real root with: imastream relabel "
			 "--pending --root %s",
			 p->files, p->values, root, IMS_PENDING_DIR, p->txn, root[0] ? root : "/");
	close_txn(p);
}

bool ims_pending_active(const struct ims_file_services *svc)
{
	return svc->pending && svc->pending->decided;
}

int ims_pending_refused(struct ims_file_services *svc, const char *what, const char *name, int err)
{
	struct ims_pending *p = svc->pending;
	int policy = IMS_HAS_MEMBER(svc->cfg, struct imastream_config, userns_xattrs) ?
			     svc->cfg->userns_xattrs :
			     IMASTREAM_USERNS_XATTRS_ERROR;

	if (!p || !p->userns || (err != -EPERM && err != -EACCES) ||
	    strncmp(name, "security.", 9) != 0 || policy == IMASTREAM_USERNS_XATTRS_ERROR)
		return err;
	if (p->decided)
		return 0;
	if (policy == IMASTREAM_USERNS_XATTRS_PENDING && p->rootfd < 0)
		return ims_err(svc->log, err, "%s: cannot set %s (%s) and no root to keep it in",
			       what, name, strerror(-err));
	p->decided = policy;
	if (policy == IMASTREAM_USERNS_XATTRS_SKIP)
		ims_logf(svc->log, IMASTREAM_LOG_WARNING,
			 "%s: cannot set %s in a user namespace (%s): no security xattr is "
			 "written in this transaction (userns_xattrs = skip)",
			 what, name, strerror(-err));
	return 0;
}

bool ims_pending_keeps(const struct ims_file_services *svc)
{
	return svc->pending && svc->pending->decided == IMASTREAM_USERNS_XATTRS_PENDING;
}

/* ROOT/var/lib/imastream/pending/TXN, made on the first entry (never through a symlink). */
static int open_txn_dir(struct ims_pending *p, const struct imastream_log *log)
{
	static const char *const parts[] = { "var", "lib", "imastream", "pending" };
	int dfd = p->rootfd, fd;

	if (p->dirfd >= 0)
		return 0;
	for (unsigned int i = 0; i < 5; i++) {
		char name[64];
		const char *part = name;

		if (i < 4) {
			part = parts[i];
		} else {
			/* Transactions sort by time; the pid tells apart two in one second. */
			snprintf(name, sizeof(name), "%010lld-%d", (long long)time(NULL), getpid());
			if (mkdirat(dfd, name, 0700) < 0) {
				fd = -errno;
				goto fail;
			}
			snprintf(p->txn, sizeof(p->txn), "%s", name);
		}
		if (i < 4 && mkdirat(dfd, part, i == 3 ? 0700 : 0755) < 0 && errno != EEXIST) {
			fd = -errno;
			goto fail;
		}
		fd = openat(dfd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			goto fail;
		}
		if (dfd != p->rootfd)
			close(dfd);
		dfd = fd;
		continue;
fail:
		if (dfd != p->rootfd)
			close(dfd);
		return ims_err(log, fd, "cannot make %s/%s in the root to keep pending labels: %s",
			       IMS_PENDING_DIR, p->txn, strerror(-fd));
	}
	p->dirfd = dfd;
	return 0;
}

/* The digest the entry carries: the configured algorithm when the chain has it. */
static int entry_digest(struct ims_file_services *svc, struct imastream_file *f,
			struct ims_pending_entry *e)
{
	uint32_t algos = svc->hash_algos;
	const uint8_t *d;
	size_t len;
	int algo, err;

	if (!algos)
		return -ENOENT;
	algo = (algos & IMASTREAM_HASH_BIT(svc->cfg->hash_algo)) ? svc->cfg->hash_algo :
								   __builtin_ctz(algos);
	err = imastream_file_digest(f, algo, &d, &len, NULL);
	if (err)
		return err;
	if (len > sizeof(e->digest))
		return -EINVAL;
	memcpy(e->digest, d, len);
	e->digest_len = len;
	e->digest_algo = algo;
	return 0;
}

int ims_pending_file_closed(struct ims_file_services *svc, struct imastream_file *f,
			    const struct ims_file_state *st)
{
	struct ims_pending *p = svc->pending;
	struct ims_pending_entry e = { 0 };
	const char *what = f->dest ? f->dest : f->path ? f->path : "(unnamed)";
	char name[32], tmp[40], *buf = NULL;
	size_t len = 0;
	int fd = -1, err;

	if (!p || !st->pending_mask)
		return 0;
	e.path = (char *)f->dest;
	e.package = (char *)(f->pkg && f->pkg->nevra ? f->pkg->nevra : "-");
	e.mode = f->mode;
	e.uid = f->uid;
	e.gid = f->gid;
	e.built_uid = outer_id(&p->uids, f->uid);
	e.built_gid = outer_id(&p->gids, f->gid);
	if (!e.path || e.path[0] != '/')
		return ims_err(svc->log, -EINVAL, "%s: no package path to keep its labels pending",
			       what);
	if (S_ISREG(f->mode)) {
		err = entry_digest(svc, f, &e);
		if (err)
			return ims_err(
				svc->log, err,
				"%s: cannot keep its labels pending without a content digest: %s",
				what, strerror(-err));
	}
	for (unsigned int i = 0; i < st->n_xattrs && e.n_xattrs < IMS_PENDING_MAX_XATTRS; i++) {
		if (!(st->pending_mask & (1u << i)))
			continue;
		snprintf(e.xattrs[e.n_xattrs].name, sizeof(e.xattrs[0].name), "%s",
			 st->xattrs[i].name);
		e.xattrs[e.n_xattrs].value = (uint8_t *)st->xattrs[i].value;
		e.xattrs[e.n_xattrs].len = st->xattrs[i].len;
		e.n_xattrs++;
	}
	err = open_txn_dir(p, svc->log);
	if (err)
		return err;
	err = ims_pending_format(&e, &buf, &len);
	if (err)
		return ims_err(svc->log, err, "%s: cannot write its pending labels: %s", what,
			       strerror(-err));
	/* Whole or absent: written under a temp name, then renamed. */
	snprintf(name, sizeof(name), "%08lu", p->files + 1);
	snprintf(tmp, sizeof(tmp), ".tmp-%s", name);
	fd = openat(p->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : ims_write_full(fd, buf, len);
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(p->dirfd, tmp, p->dirfd, name) < 0)
		err = -errno;
	free(buf);
	if (err) {
		unlinkat(p->dirfd, tmp, 0);
		return ims_err(svc->log, err, "%s: cannot write its pending labels in %s/%s: %s",
			       what, IMS_PENDING_DIR, p->txn, strerror(-err));
	}
	p->files++;
	p->values += e.n_xattrs;
	return 0;
}
