// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Example of the installer API for an archive format of one's own: installs a staged
 * directory tree (what `make install DESTDIR=STAGE` leaves) into a root as one package,
 * supplying entries and content chunks itself, through the security hook chain.  The
 * library does the rest: secure creation below the root, temp names, metadata, the
 * chain's labels, security.ima and security.evm on each object before its rename,
 * rollback on error, and the install record that `imastream verify --root` checks.
 *
 *   install-tree [-o KEY=VALUE]... [--name NAME] STAGE ROOT
 *
 * -o sets a chain configuration key (mode=sign, key=..., evm=portable, ...); the default
 * chain writes security.ima digests.  NAME names the package in the record (default:
 * the stage's last path component).
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "imastream/chain_sink.h"
#include "imastream/entry.h"
#include "imastream/extract.h"

static struct imastream_extract *x;
static size_t stage_len;

/* Hard links: the first path seen for each inode with more than one link. */
static struct link { dev_t dev; ino_t ino; char *path; } *links;
static size_t nlinks;

static void print_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_WARNING)
		fprintf(stderr, "install-tree: %s\n", msg);
}

static const char *first_link(const struct stat *st, const char *path)
{
	for (size_t i = 0; i < nlinks; i++)
		if (links[i].dev == st->st_dev && links[i].ino == st->st_ino)
			return links[i].path;
	links = realloc(links, (nlinks + 1) * sizeof(*links));
	links[nlinks++] = (struct link){ st->st_dev, st->st_ino, strdup(path) };
	return NULL;
}

/* Streams one file's content in chunks, as an archive reader would. */
static int copy_content(const char *src)
{
	char buf[128 * 1024];
	ssize_t n;
	int fd = open(src, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		err = imastream_extract_entry_data(x, buf, (size_t)n);
		if (err)
			break;
	}
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static int visit(const char *src, const struct stat *st, int type, struct FTW *ftw)
{
	struct imastream_entry e = {
		.path = src + stage_len, .mode = st->st_mode, .uid = st->st_uid, .gid = st->st_gid,
		.mtime = st->st_mtime, .rdev = st->st_rdev,
	};
	char target[PATH_MAX];
	int err;

	(void)type;
	if (ftw->level == 0)
		return 0; /* the stage directory is the root itself */
	if (S_ISREG(st->st_mode)) {
		e.size = (uint64_t)st->st_size;
		if (st->st_nlink > 1 && (e.link_target = first_link(st, e.path))) {
			e.flags |= IMASTREAM_ENTRY_HARDLINK;
			e.size = 0;
		}
	} else if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(src, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = 0;
		e.link_target = target;
	}
	err = imastream_extract_entry_begin(x, &e);
	if (!err && S_ISREG(st->st_mode) && !(e.flags & IMASTREAM_ENTRY_HARDLINK))
		err = copy_content(src);
	if (!err)
		err = imastream_extract_entry_end(x);
	return err; /* non-zero stops the walk */
}

static void usage(void)
{
	fprintf(stderr, "usage: install-tree [-o KEY=VALUE]... [--name NAME] STAGE ROOT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct imastream_log log = { print_log, NULL };
	struct imastream_config cfg;
	struct imastream_chain *chain = NULL;
	struct imastream_chain_sink *cs = NULL;
	const char *name = NULL, *stage, *root;
	char *root_abs = NULL;
	int rootfd = -1, err, i;

	/* The chain's configuration: defaults (security.ima digests), then -o KEY=VALUE. */
	if (imastream_config_init(&cfg))
		return 1;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		char *eq;

		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			name = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "-o") || i + 1 == argc || !(eq = strchr(argv[i + 1], '=')))
			usage();
		*eq = 0;
		if (imastream_config_set(&cfg, argv[i + 1], eq + 1, "-o", &log))
			return 2;
		i++;
	}
	if (argc - i != 2)
		usage();
	stage = argv[i];
	root = argv[i + 1];
	stage_len = strlen(stage);
	while (stage_len > 1 && stage[stage_len - 1] == '/')
		stage_len--;
	if (!name) {
		name = strrchr(stage, '/') && strrchr(stage, '/')[1] ? strrchr(stage, '/') + 1 : stage;
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	root_abs = realpath(root, NULL);
	if (rootfd < 0 || !root_abs) {
		fprintf(stderr, "install-tree: %s: %s\n", root, strerror(errno));
		return 1;
	}

	/* The chain: its plugins load their keys now, before any file is touched. */
	err = imastream_chain_from_config(&cfg, &log, &chain);
	/* The bridge: tsm_pre now; its entry sink drives the chain per entry and chunk. */
	if (!err) {
		struct imastream_chain_sink_opts opts = {
			.size = sizeof(opts), .root = root_abs, .cfg = &cfg,
			/* A stage has no OpenPGP header to judge. */
			.flags = IMASTREAM_SINK_NO_SIGNATURES,
		};

		err = imastream_chain_sink_new(chain, rootfd, &opts, &log, &cs);
	}
	if (!err)
		err = imastream_extract_new(rootfd, 0, imastream_chain_sink_entry_sink(cs), &log, &x);
	if (!err)
		err = imastream_extract_begin(x, name);
	/* Pre-order, without following symlinks: directories come before their content. */
	if (!err) {
		err = nftw(stage, visit, 64, FTW_PHYS);
		if (err == -1)
			fprintf(stderr, "install-tree: %s: %s\n", stage, strerror(errno));
	}
	if (!err)
		err = imastream_extract_commit(x);
	else
		imastream_extract_abort(x, err);
	/* The extractor first: it may still have a package to end in the chain. */
	imastream_extract_free(x);
	imastream_chain_sink_free(cs, err);
	imastream_chain_free(chain);
	imastream_config_release(&cfg);
	free(root_abs);
	if (rootfd >= 0)
		close(rootfd);
	for (size_t j = 0; j < nlinks; j++)
		free(links[j].path);
	free(links);
	return err ? 1 : 0;
}
