// SPDX-License-Identifier: LGPL-2.1-or-later
/* The install record in memory: its packages and objects, and which object owns each path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/private.h"
#include "installed/record_format.h"

void ims_record_file_release(struct rfile *f)
{
	free(f->path);
	free(f->target);
}

void ims_record_meta_release(struct rpkg *p)
{
	free(p->name);
	free(p->nevra);
	free(p->ima);
	free(p->evm);
}

int ims_record_add_pkg(struct ims_record *rec, struct rpkg *meta)
{
	struct rpkg *p = ims_grow(rec->pkgs, rec->npkgs, &rec->apkgs, sizeof(*p), 16);

	if (!p)
		return -ENOMEM;
	rec->pkgs = p;
	rec->pkgs[rec->npkgs] = *meta;
	rec->pkgs[rec->npkgs].first = rec->nfiles;
	rec->pkgs[rec->npkgs].count = 0;
	if (meta->serial > rec->max_serial)
		rec->max_serial = meta->serial;
	return (int)rec->npkgs++;
}

int ims_record_add_file(struct rfile **files, size_t *n, size_t *a, struct rfile *f)
{
	struct rfile *p = ims_grow(*files, *n, a, sizeof(*p), 64);

	if (!p)
		return -ENOMEM;
	*files = p;
	(*files)[*n] = *f;
	return (int)(*n)++;
}

/* The strings of the public view point into the record's own copies. */
void ims_record_link_view(struct rfile *f, const struct rpkg *p)
{
	f->f.path = f->path;
	f->f.link_target = f->target;
	f->f.package = p->name;
	f->f.ima = p->ima ? p->ima : "";
	f->f.evm = p->evm ? p->evm : "";
}

static int by_serial(const void *a, const void *b)
{
	const struct rpkg *x = *(struct rpkg *const *)a, *y = *(struct rpkg *const *)b;

	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

/* Who owns each path: the records in install order, a later one taking a shared path. */
int ims_record_build_owners(struct ims_record *rec)
{
	struct rpkg **order = malloc((rec->npkgs + 1) * sizeof(*order));
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < rec->npkgs; i++)
		order[i] = &rec->pkgs[i];
	qsort(order, rec->npkgs, sizeof(*order), by_serial);
	for (size_t i = 0; i < rec->npkgs && !err; i++) {
		for (size_t j = order[i]->first; j < order[i]->first + order[i]->count && !err;
		     j++) {
			err = ims_strmap_add(&rec->owner, rec->files[j].path, (int)j);
			if (err == -EEXIST) {
				ims_strmap_set(&rec->owner, rec->files[j].path, (int)j);
				err = 0;
			}
		}
	}
	free(order);
	return err;
}

void ims_record_free(struct ims_record *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->nfiles; i++)
		ims_record_file_release(&rec->files[i]);
	for (size_t i = 0; i < rec->npkgs; i++)
		ims_record_meta_release(&rec->pkgs[i]);
	free(rec->files);
	free(rec->pkgs);
	ims_strmap_clear(&rec->owner);
	free(rec);
}

const struct imastream_record_file *ims_record_lookup(const struct ims_record *rec,
						      const char *path)
{
	char key[PATH_MAX + 1];
	int idx;

	/* Asked for every entry installed: an empty root's record has nothing to find. */
	if (!rec->owner.used || !ims_record_canonical_in(path, key))
		return NULL;
	idx = ims_strmap_get(&rec->owner, key);
	return idx >= 0 ? &rec->files[idx].f : NULL;
}

int ims_record_each(const struct ims_record *rec,
		    int (*fn)(void *arg, const struct imastream_record_file *f), void *arg)
{
	for (size_t i = 0; i < rec->nfiles; i++) {
		int err;

		if (rec->pkgs[rec->files[i].pkg].gone)
			continue;
		err = fn(arg, &rec->files[i].f);
		if (err)
			return err;
	}
	return 0;
}
