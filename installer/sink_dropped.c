// SPDX-License-Identifier: LGPL-2.1-or-later
/* An upgrade's removals: what the recorded old version has and the new one lacks, as rpm -U removes it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/extract.h"
#include "imastream/hash.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "installer/sink_dropped.h"

struct planner {
	const char *name;
	struct ims_record_pkg *next;
	struct ims_drop *drops;
	size_t n, a;
	struct ims_strmap index; /* path → index in drops */
};

/* First pass: the old version's objects that the new one does not list. */
static int collect(void *arg, const struct imastream_record_file *f)
{
	struct planner *p = arg;
	struct ims_drop *d;
	int err;

	if (strcmp(f->package, p->name) || ims_record_pkg_find(p->next, f->path))
		return 0;
	d = ims_grow(p->drops, p->n, &p->a, sizeof(*d), 16);
	if (!d)
		return -ENOMEM;
	p->drops = d;
	p->drops[p->n] = (struct ims_drop){ .path = strdup(f->path), .rf = f };
	if (!p->drops[p->n].path)
		return -ENOMEM;
	err = ims_strmap_add(&p->index, f->path, (int)p->n);
	if (err) {
		free(p->drops[p->n].path);
		return err == -EEXIST ? 0 : err; /* (a record lists a path once; keep the first) */
	}
	p->n++;
	return 0;
}

/* Second pass: a path another recorded package owns too stays (shared files, directories). */
static int mark_shared(void *arg, const struct imastream_record_file *f)
{
	struct planner *p = arg;
	int i;

	if (!strcmp(f->package, p->name))
		return 0;
	i = ims_strmap_get(&p->index, f->path);
	if (i >= 0)
		p->drops[i].kept = true;
	return 0;
}

/* Directories deepest first, so that a parent is empty when its turn comes. */
static int deeper_first(const void *a, const void *b)
{
	const struct ims_drop *x = a, *y = b;
	size_t dx = 0, dy = 0;

	for (const char *s = x->path; *s; s++)
		dx += *s == '/';
	for (const char *s = y->path; *s; s++)
		dy += *s == '/';
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return -strcmp(x->path, y->path);
}

size_t ims_dropped_order(struct ims_drop *d, size_t n)
{
	size_t files = 0, moves = 0;

	/*
	 * One pass, two indexes: each non-directory is swapped down to just after those
	 * before it, so they keep their order; the directories it displaces lose theirs,
	 * which the sort below gives them.  (Shifting the directories up by one per file
	 * instead cost a move per directory per file: quadratic for a large package.)
	 */
	for (size_t i = 0; i < n; i++) {
		struct ims_drop t;

		if (S_ISDIR(d[i].rf->mode))
			continue;
		if (i != files) {
			t = d[files];
			d[files] = d[i];
			d[i] = t;
			moves++;
		}
		files++;
	}
	if (n > files)
		qsort(d + files, n - files, sizeof(*d), deeper_first);
	return moves;
}

/* Whether the regular file @name in @dfd still has the recorded content. */
static bool unmodified(int dfd, const char *name, const struct imastream_record_file *rf)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(rf->digest_algo);
	struct imastream_hasher *h = NULL;
	const uint8_t *d;
	struct stat st;
	bool same = false;
	int fd;

	if (!rf->digest_algo || !hi)
		return false; /* nothing to compare with: kept, as a modified one */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size == rf->size &&
	    !imastream_hasher_new(IMASTREAM_HASH_BIT(hi->algo), NULL, &h) &&
	    !imastream_hash_fd(h, fd) && !imastream_hasher_digest(h, hi->algo, &d, NULL))
		same = !memcmp(d, rf->digest, hi->digest_size);
	imastream_hasher_free(h);
	close(fd);
	return same;
}

/*
 * The step for one dropped object as it is on disk now, or 0 for none: gone already, a
 * type the record does not say (a directory where a file was: never removed), reached
 * only through a symlink (said).
 */
static int step_for(int rootfd, const struct ims_drop *d, const char *nevra, const char *dir,
		    const char *base, const struct imastream_log *log)
{
	const struct imastream_record_file *rf = d->rf;
	char saved[NAME_MAX + 1];
	struct stat st;
	int dfd, step = 0;

	/* Through the directory symlinks the install followed (merged /usr), as rpm -U. */
	dfd = imastream_open_dir_as_rpm(rootfd, dir, O_RDONLY, NULL, 0);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0) {
		ims_logf(log, IMASTREAM_LOG_WARNING,
			 "%s: %s: not removed (a file of the old version): its directory cannot be "
			 "reached beneath the root through a symlink rpm follows (%s)",
			 nevra, d->path,
			 dfd == -EPERM ? "a symlink owned by neither root nor its target's owner" :
					 strerror(-dfd));
		return 0;
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		goto out;
	if (S_ISDIR(rf->mode)) {
		step = S_ISDIR(st.st_mode) ? IMASTREAM_JOURNAL_RMDIR : 0;
	} else if (S_ISDIR(st.st_mode)) {
		ims_logf(log, IMASTREAM_LOG_WARNING,
			 "%s: %s: not removed (a file of the old version): a directory is there now",
			 nevra, d->path);
	} else if ((rf->xattrs & IMASTREAM_RECORD_CONFIG) && S_ISREG(rf->mode) &&
		   S_ISREG(st.st_mode) && !unmodified(dfd, base, rf)) {
		/* rpm's rule: a modified %config file of an erased version is saved, not lost. */
		step = IMASTREAM_JOURNAL_RPMSAVE;
		snprintf(saved, sizeof(saved), "%.*s" IMS_JOURNAL_SAVE_SUFFIX,
			 (int)(NAME_MAX - strlen(IMS_JOURNAL_SAVE_SUFFIX)), base);
		if (strlen(base) + strlen(IMS_JOURNAL_SAVE_SUFFIX) > NAME_MAX ||
		    (!fstatat(dfd, saved, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))) {
			ims_logf(log, IMASTREAM_LOG_WARNING,
				 "%s: %s: a modified %%config file of the old version, kept: it cannot be saved as %s",
				 nevra, d->path, saved);
			step = 0;
		}
	} else {
		step = IMASTREAM_JOURNAL_REMOVE;
	}
out:
	close(dfd);
	return step;
}

int ims_dropped_plan(int rootfd, const struct ims_record *rec, struct ims_rpmdb_owner *owners,
		     const char *name, const char *nevra, struct ims_record_pkg *next,
		     const struct imastream_log *log, struct ims_dropped *out)
{
	struct planner p = { .name = name, .next = next };
	int err;

	memset(out, 0, sizeof(*out));
	err = ims_record_each(rec, collect, &p);
	if (!err && p.n)
		err = ims_record_each(rec, mark_shared, &p);
	if (!err)
		ims_dropped_order(p.drops, p.n);
	for (size_t i = 0; i < p.n && !err; i++) {
		struct ims_drop *d = &p.drops[i];
		char *slash = strrchr(d->path, '/');
		const char *base;
		char *dir;
		int step;

		if (d->kept || !slash || (owners && ims_rpmdb_owner_other(owners, d->path, name) > 0))
			continue;
		/* Relative to the root ("" for the root itself); d->path names it in messages. */
		dir = strndup(d->path + 1, (size_t)(slash - d->path) - (slash > d->path));
		if (!dir) {
			err = -ENOMEM;
			break;
		}
		base = slash + 1;
		step = *base ? step_for(rootfd, d, nevra, dir, base, log) : 0;
		if (step)
			err = ims_dropped_add(out, step, dir, base);
		if (step && !err)
			out->steps[out->n - 1].mode = d->rf->mode;
		free(dir);
	}
	for (size_t i = 0; i < p.n; i++)
		free(p.drops[i].path);
	free(p.drops);
	ims_strmap_clear(&p.index);
	if (err)
		ims_dropped_clear(out);
	return err;
}

int ims_dropped_add(struct ims_dropped *d, int step, const char *dir, const char *name)
{
	struct ims_dropped_step s = { .step = step, .dir = strdup(dir), .name = strdup(name) }, *p;

	if (!s.dir || !s.name)
		goto nomem;
	p = ims_grow(d->steps, d->n, &d->a, sizeof(*p), 16);
	if (!p)
		goto nomem;
	d->steps = p;
	d->steps[d->n++] = s;
	return 0;
nomem:
	free(s.dir);
	free(s.name);
	return -ENOMEM;
}

void ims_dropped_clear(struct ims_dropped *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->steps[i].dir);
		free(d->steps[i].name);
	}
	free(d->steps);
	memset(d, 0, sizeof(*d));
}

int ims_dropped_journal(const struct ims_dropped *d,
			int (*add)(void *ctx, int step, const char *dir, const char *name), void *ctx)
{
	for (size_t i = 0; i < d->n; i++) {
		int err = add(ctx, d->steps[i].step, d->steps[i].dir, d->steps[i].name);

		if (err)
			return err;
	}
	return 0;
}

int ims_dropped_apply(int rootfd, const struct ims_dropped *d, const char *root,
		      const char *nevra, const struct imastream_log *log,
		      struct ims_journal_outcome *out)
{
	struct ims_journal j;
	const char *why = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	if (!d->n)
		return 0;
	/* The journal's own checks and steps: what recovery would do is what is done. */
	err = ims_journal_init(&j, nevra, getpid());
	for (size_t i = 0; i < d->n && !err; i++) {
		const struct ims_dropped_step *s = &d->steps[i];
		int kind = s->step == IMASTREAM_JOURNAL_RMDIR ? IMS_JOURNAL_RMDIR :
			   s->step == IMASTREAM_JOURNAL_RPMSAVE ? IMS_JOURNAL_SAVE : IMS_JOURNAL_REMOVE;

		err = ims_journal_add(&j, kind, s->dir, NULL, s->name, &why);
	}
	if (!err)
		err = ims_journal_replay(rootfd, &j, root, log, out);
	else
		ims_err(log, err, "%s: cannot plan the removal of the old version's files: %s", nevra,
			why ? why : strerror(-err));
	ims_journal_clear(&j);
	return err;
}

/*
 * The chain hears each removal as rpm's erase of a file would make it: file_opened before
 * the steps, file_done after them with their outcome.
 */
void ims_dropped_remove(int rootfd, struct ims_dropped *d, const char *root,
			struct imastream_chain *chain, const struct imastream_pkg *pkg,
			const struct imastream_log *log)
{
	struct imastream_file *files = calloc(d->n, sizeof(*files));
	char **paths = calloc(d->n, sizeof(*paths));
	struct ims_journal_outcome out;
	int err;

	for (size_t i = 0; files && paths && i < d->n; i++) {
		const struct ims_dropped_step *s = &d->steps[i];
		struct imastream_file *f = &files[i];

		/* Kept, under another name: never opened, so its file_done below is the
		 * chain's no-op (a post call without a pre call), and no plugin hears of it. */
		if (s->step == IMASTREAM_JOURNAL_RPMSAVE)
			continue;
		if (asprintf(&paths[i], "%s/%s%s%s", strcmp(root, "/") ? root : "", s->dir,
			     *s->dir ? "/" : "", s->name) < 0) {
			paths[i] = NULL;
			continue; /* (removed all the same; the chain does not hear of it) */
		}
		f->size = sizeof(*f);
		f->path = paths[i];
		f->dest = paths[i] + (strcmp(root, "/") ? strlen(root) : 0);
		f->fd = -1;
		f->mode = s->mode;
		f->flags = IMASTREAM_FILE_ERASE;
		f->pkg = pkg;
		if (imastream_chain_file_opened(chain, f))
			ims_logf(log, IMASTREAM_LOG_WARNING,
				 "%s: %s: the hook chain failed on its removal; removed anyway",
				 pkg->nevra, f->dest);
	}
	err = ims_dropped_apply(rootfd, d, root, pkg->nevra, log, &out);
	if (err)
		ims_logf(log, IMASTREAM_LOG_WARNING,
			 "%s: installed, but files of the old version it does not have may be left",
			 pkg->nevra);
	for (size_t i = 0; files && paths && i < d->n; i++) {
		imastream_chain_file_done(chain, &files[i], err);
		free(paths[i]);
	}
	free(files);
	free(paths);
	ims_dropped_clear(d);
}
