// SPDX-License-Identifier: LGPL-2.1-or-later
/* How many paths of the root's rpm database are one inode: the hard links a root may have without a link from elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/rpmdb.h"
#include "installed/private.h"

struct ims_rpmdb_links {
	struct ims_strmap inodes; /* "DEV:INO" of a linked file → how many database paths reach it */
};

static void inode_key(const struct stat *st, char *buf, size_t size)
{
	snprintf(buf, size, "%llx:%llx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
}

/*
 * Every regular, non-ghost file of every package, opened below the root without following
 * a symlink (a path through one is not the database's path): the inodes with more than
 * one link are counted.
 */
static int count_links(struct ims_rpmdb_links *l, const char *root, int rootfd)
{
	rpmts ts = rpmtsCreate();
	rpmdbMatchIterator mi = NULL;
	Header h;
	int err = 0;

	if (!ts || rpmtsSetRootDir(ts, root) || rpmtsOpenDB(ts, O_RDONLY)) {
		err = -EIO;
		goto out;
	}
	mi = rpmtsInitIterator(ts, RPMDBI_PACKAGES, NULL, 0);
	while (!err && mi && (h = rpmdbNextIterator(mi))) {
		rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);

		while (!err && fi && rpmfiNext(fi) >= 0) {
			char key[64];
			struct stat st;
			int fd, n;

			if (!S_ISREG(rpmfiFMode(fi)) || (rpmfiFFlags(fi) & RPMFILE_GHOST))
				continue;
			fd = imastream_open_beneath(rootfd, rpmfiFN(fi), O_PATH);
			if (fd < 0)
				continue;
			n = fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink < 2 ? -1 : 0;
			close(fd);
			if (n)
				continue;
			inode_key(&st, key, sizeof(key));
			n = ims_strmap_get(&l->inodes, key);
			if (n >= 0)
				ims_strmap_set(&l->inodes, key, n + 1);
			else
				err = ims_strmap_add(&l->inodes, key, 1);
		}
		rpmfiFree(fi);
	}
out:
	rpmdbFreeIterator(mi);
	if (ts)
		rpmtsFree(ts);
	return err;
}

int ims_rpmdb_links(struct ims_rpmdb_links **links, const char *root, int rootfd,
		    const struct stat *st, const struct imastream_log *log, unsigned long *count)
{
	char key[64];
	int n, err;

	if (!*links) {
		*links = calloc(1, sizeof(**links));
		if (!*links)
			return -ENOMEM;
		err = count_links(*links, root, rootfd);
		if (err) {
			ims_rpmdb_links_free(*links);
			*links = NULL;
			return ims_err(log, err,
				       "%s: cannot count the hard links of rpm's database: %s",
				       root, strerror(-err));
		}
	}
	inode_key(st, key, sizeof(key));
	n = ims_strmap_get(&(*links)->inodes, key);
	*count = n > 0 ? (unsigned long)n : 0;
	return 0;
}

void ims_rpmdb_links_free(struct ims_rpmdb_links *l)
{
	if (!l)
		return;
	ims_strmap_clear(&l->inodes);
	free(l);
}
