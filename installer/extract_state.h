/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The extractor's state and what its parts share, for the installer/extract*.c files alone. */
#ifndef IMASTREAM_INSTALLER_EXTRACT_STATE_H
#define IMASTREAM_INSTALLER_EXTRACT_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/entry.h"
#include "imastream/extract.h"
#include "imastream/hash.h"
#include "installer/private.h"

/* A directory the package touched: created (and so removed on abort) or already there. */
struct dir {
	char *rel;    /* relative to the root, "" for the root itself */
	int fd;	      /* O_RDONLY|O_DIRECTORY without following symlinks; -1 when evicted */
	int parent;   /* index in dirs[], -1 for the root */
	bool created; /* by this package: removed on abort */
	bool has_mtime;
	int64_t mtime; /* set after commit, when no rename changes it any more */
	bool filled;   /* the package put something new in it: it keeps the install time */
};

/* An object waiting under its temp name for commit. */
struct pending {
	int dir; /* index in dirs[] */
	char *tmp;
	char *base; /* final name in dirs[dir] */
};

struct imastream_extract {
	int rootfd;
	unsigned int flags;
	struct imastream_entry_sink sink;
	const struct imastream_log *log;
	struct imastream_extract_stats stats;
	unsigned int tmp_seq;
	/* Tests only (IMASTREAM_TEST_RENAME_DELAY_MS): a pause between two renames, so that a
	 * kill lands in the rename phase; (IMASTREAM_TEST_RENAME_STOP_AT=N) SIGSTOP before
	 * the Nth rename, so that a kill lands there however busy the machine is. */
	unsigned int test_rename_delay_ms;
	unsigned long test_rename_stop_at;

	/* The open package. */
	bool open;
	char *pkg;
	char *journal_name; /* "NEVRA from PKG" once the reader knows the NEVRA, or NULL */
	struct dir *dirs;
	size_t ndirs, adirs;
	struct ims_strmap dir_index; /* rel → index in dirs[] */
	unsigned int nopen;	     /* directory fds held, besides the root's */
	struct pending *pend;
	size_t npend, apend;
	struct ims_strmap seen; /* every entry path of the package → pending index or -1 */
	uint64_t pkg_entries, pkg_bytes;

	/* The current entry. */
	bool in_entry;
	struct imastream_entry cur;
	char *cur_path;
	void *cur_ctx;
	bool cur_sink_open; /* the sink saw entry_begin and not yet entry_end */
	int cur_fd;
	int cur_dir;
	int cur_pend;
	uint64_t cur_left;
	bool cur_hashing;
	struct imastream_hasher *hasher;
	int hasher_algo;
};

/* Reports an entry error in one line: "PKG: PATH: what: strerror". */
#define entry_err(x, err, fmt, ...)                                                             \
	ims_err((x)->log, (err), "%s: %s: " fmt, (x)->pkg, (x)->cur_path ? (x)->cur_path : "?", \
		##__VA_ARGS__)

/* The package's state dropped, its temp objects and directories already handled (extract.c). */
void ims_extract_reset_package(struct imastream_extract *x);
/* The package's directories (extract_dirs.c): cached fds closed past the cache's size, a
 * directory's name in its parent, its fd (reopened on demand), and the index of the
 * directory @rel[0..len), opened or created on the way. */
void ims_extract_evict_dir_fds(struct imastream_extract *x);
const char *ims_extract_dir_name(const struct dir *d);
int ims_extract_dir_fd(struct imastream_extract *x, int idx);
int ims_extract_get_dir(struct imastream_extract *x, const char *rel, size_t len,
			bool unowned_last);
/* The entry (extract_entry.c): an mtime set on a descriptor, the current entry closed. */
int ims_extract_set_mtime_fd(int fd, int64_t mtime);
void ims_extract_finish_entry(struct imastream_extract *x);

#endif /* IMASTREAM_INSTALLER_EXTRACT_STATE_H */
