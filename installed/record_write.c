// SPDX-License-Identifier: LGPL-2.1-or-later
/* One package's install record: its objects gathered, written under a temp name, then renamed into place. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "installed/record_format.h"

int ims_record_pkg_new(const char *name, const char *nevra, const char *ima, const char *evm,
		       struct ims_record_pkg **ret)
{
	struct ims_record_pkg *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->dirfd = -1;
	p->meta.name = strdup(name);
	p->meta.nevra = strdup(nevra ? nevra : name);
	p->meta.ima = ima ? strdup(ima) : NULL;
	p->meta.evm = evm ? strdup(evm) : NULL;
	if (!p->meta.name || !p->meta.nevra || (ima && !p->meta.ima) || (evm && !p->meta.evm)) {
		ims_record_pkg_free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

int ims_record_pkg_add(struct ims_record_pkg *p, const struct imastream_record_file *f)
{
	struct rfile rf = { .f = *f };
	int idx;

	rf.path = ims_record_canonical(f->path);
	rf.target = f->link_target ? strdup(f->link_target) : NULL;
	if (!rf.path || (f->link_target && !rf.target)) {
		ims_record_file_release(&rf);
		return rf.path ? -ENOMEM : -EINVAL;
	}
	idx = ims_record_add_file(&p->files, &p->nfiles, &p->afiles, &rf);
	if (idx < 0) {
		ims_record_file_release(&rf);
		return idx;
	}
	ims_record_link_view(&p->files[idx], &p->meta);
	return 0;
}

const struct imastream_record_file *ims_record_pkg_find(struct ims_record_pkg *p, const char *path)
{
	char key[PATH_MAX + 1];
	int idx;

	if (!ims_record_canonical_in(path, key))
		return NULL;
	/* Indexed when first asked: only a package with hard links asks, and most have none. */
	for (; p->indexed < p->nfiles; p->indexed++) {
		const char *k = p->files[p->indexed].path;

		idx = ims_strmap_add(&p->index, k, (int)p->indexed);
		if (idx == -EEXIST)
			ims_strmap_set(&p->index, k, (int)p->indexed);
		else if (idx < 0)
			break;
	}
	idx = ims_strmap_get(&p->index, key);
	if (idx < 0)
		return NULL;
	ims_record_link_view(&p->files[idx], &p->meta);
	return &p->files[idx].f;
}

/* The lowest format version that holds @p's record (see the top of this file). */
static int record_version(const struct ims_record_pkg *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].f.xattrs & IMASTREAM_RECORD_CONFIG)
			return RECORD_VERSION_CONFIG;
	return 1;
}

int ims_record_pkg_write(struct ims_record *rec, int rootfd, struct ims_record_pkg *p)
{
	FILE *f = NULL;
	char *buf = NULL;
	int fd = -1, err = 0;

	p->dirfd = ims_record_open_dir(rootfd, true);
	if (p->dirfd < 0)
		return ims_err(rec->log, -errno, "%s: cannot create the record directory %s: %m",
			       p->meta.name, RECORD_DIR);
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		static unsigned int seq;

		/* Our pid in the name: imastream recover removes it once we are gone. */
		snprintf(p->tmp, sizeof(p->tmp), IMASTREAM_TEMP_PREFIX "%x-record-%x",
			 (unsigned int)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		fd = openat(p->dirfd, p->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = ims_err(rec->log, -errno, "%s: cannot create its record: %m", p->meta.name);
		p->tmp[0] = 0;
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		err = -ENOMEM;
		goto out;
	}
	/* A record of thousands of files in a few writes, not one per 4 KiB: glibc takes the
	 * size only with a buffer (with NULL it allocates st_blksize). */
	buf = malloc(RECORD_WRITE_BUF);
	if (buf)
		setvbuf(f, buf, _IOFBF, RECORD_WRITE_BUF);
	fprintf(f, RECORD_MAGIC "%d\npackage ", record_version(p));
	ims_field_put(f, p->meta.name);
	fputs("\nnevra ", f);
	ims_field_put(f, p->meta.nevra);
	if (p->meta.ima) {
		fputs("\nima ", f);
		ims_field_put(f, p->meta.ima);
	}
	if (p->meta.evm) {
		fputs("\nevm ", f);
		ims_field_put(f, p->meta.evm);
	}
	p->meta.serial = rec->max_serial + 1;
	fprintf(f, "\nserial %lu\n", p->meta.serial);
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct rfile *rf = &p->files[i];
		char head[RECORD_HEAD_MAX];

		fwrite(head, 1, ims_record_put_head(head, &rf->f), f);
		ims_field_put(f, rf->path);
		if (rf->target) {
			putc(' ', f);
			ims_field_put(f, rf->target);
		} else if (S_ISCHR(rf->f.mode) || S_ISBLK(rf->f.mode)) {
			fprintf(f, " %u:%u", major(rf->f.rdev), minor(rf->f.rdev));
		}
		putc('\n', f);
	}
	if (fflush(f) == EOF || ferror(f) || fsync(fileno(f)))
		err = -errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	free(buf);
	if (err)
		ims_err(rec->log, err, "%s: cannot write its record: %s", p->meta.name,
			strerror(-err));
out:
	if (err) {
		unlinkat(p->dirfd, p->tmp, 0);
		p->tmp[0] = 0;
	}
	return err;
}

int ims_record_pkg_pending(const struct ims_record_pkg *p, const char **dir, const char **tmp,
			   char *name, size_t name_size)
{
	if (!p->tmp[0])
		return -ENOENT;
	*dir = RECORD_DIR;
	*tmp = p->tmp;
	ims_record_file_name(p->meta.name, name, name_size);
	return 0;
}

int ims_record_pkg_commit(struct ims_record *rec, struct ims_record_pkg *p)
{
	char name[NAME_MAX + 1];
	size_t first;
	int pkg, err = 0;

	if (!p->tmp[0])
		return -EINVAL;
	ims_record_file_name(p->meta.name, name, sizeof(name));
	if (renameat(p->dirfd, p->tmp, p->dirfd, name)) {
		err = ims_err(rec->log, -errno, "%s: cannot rename its record into place: %m",
			      p->meta.name);
		unlinkat(p->dirfd, p->tmp, 0);
		p->tmp[0] = 0;
		return err;
	}
	p->tmp[0] = 0;
	fsync(p->dirfd);
	/* The same name's older record is replaced: its paths are no longer its own. */
	for (size_t i = 0; i < rec->npkgs; i++) {
		if (rec->pkgs[i].gone || strcmp(rec->pkgs[i].name, p->meta.name))
			continue;
		rec->pkgs[i].gone = true;
		for (size_t j = 0; j < rec->nfiles; j++)
			if (rec->files[j].pkg == (int)i &&
			    ims_strmap_get(&rec->owner, rec->files[j].path) == (int)j)
				ims_strmap_set(&rec->owner, rec->files[j].path, -1);
	}
	pkg = ims_record_add_pkg(rec, &p->meta);
	if (pkg < 0)
		return pkg;
	rec->pkgs[pkg].count = p->nfiles;
	memset(&p->meta, 0, sizeof(p->meta));
	/* Room for the package's objects in one step, not a doubling per power of two. */
	if (rec->nfiles + p->nfiles > rec->afiles) {
		struct rfile *grown = realloc(rec->files,
					      (rec->nfiles + p->nfiles) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		rec->files = grown;
		rec->afiles = rec->nfiles + p->nfiles;
	}
	first = rec->nfiles;
	for (size_t i = 0; i < p->nfiles && !err; i++) {
		struct rfile *rf = &p->files[i];
		int idx;

		rf->pkg = pkg;
		idx = ims_record_add_file(&rec->files, &rec->nfiles, &rec->afiles, rf);
		if (idx < 0) {
			err = idx;
			break;
		}
		memset(rf, 0, sizeof(*rf));
		err = ims_strmap_add(&rec->owner, rec->files[idx].path, idx);
		if (err == -EEXIST) {
			ims_strmap_set(&rec->owner, rec->files[idx].path, idx);
			err = 0;
		}
	}
	p->nfiles = 0;
	/* The views point at heap strings, which no growth moves: only the new ones, whose
	 * package strings now belong to rec->pkgs, are linked again. */
	for (size_t i = first; i < rec->nfiles; i++)
		ims_record_link_view(&rec->files[i], &rec->pkgs[rec->files[i].pkg]);
	return err;
}

void ims_record_pkg_free(struct ims_record_pkg *p)
{
	if (!p)
		return;
	if (p->tmp[0] && p->dirfd >= 0)
		unlinkat(p->dirfd, p->tmp, 0);
	if (p->dirfd >= 0)
		close(p->dirfd);
	for (size_t i = 0; i < p->nfiles; i++)
		ims_record_file_release(&p->files[i]);
	free(p->files);
	ims_strmap_clear(&p->index);
	ims_record_meta_release(&p->meta);
	free(p);
}
