// SPDX-License-Identifier: LGPL-2.1-or-later
/* One install at a time per root (rpm's own transaction lock), and the removal of what an interrupted one left. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/rpmmacro.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/root.h"
#include "installer/journal.h"
#include "installer/private.h"

/*
 * The lock is rpm's: librpm locks the whole file ROOT%{_rpmlock_path} (by default
 * %{_dbpath}/.rpm.lock) for writing with fcntl() around every transaction, creating it
 * and its directory (0755) when missing.  Ours is an open file description lock on the
 * same file: it conflicts with rpm's process-associated one, and, unlike those, no
 * close() of another descriptor on that file in this process (librpm's) can drop it.
 */
#define RPMLOCK_FALLBACK "/var/lib/rpm/.rpm.lock"

/* Marks a transaction under way: its presence at the next lock means one was interrupted. */
#define STATE_DIR IMS_STATE_DIR
#define RUNNING_NAME "running"

struct imastream_root_txn {
	int lockfd;
	int rootfd;
	int statefd; /* ROOT/var/lib/imastream, or -1 */
	unsigned int state_made; /* how many of its last components we created */
	bool marked; /* the marker is ours (a failed start leaves a killed run's in place) */
	const struct imastream_log *log;
};

int imastream_root_lock_path(char *buf, size_t size)
{
	char *path;
	int err = ims_rpm_config();

	if (err)
		return err;
	path = rpmExpand("%{?_rpmlock_path}", NULL);
	if (!path)
		return -ENOMEM;
	/* rpm's own fallback when the macro is unset or does not expand (rpmtxnLockInit()). */
	if (snprintf(buf, size, "%s", path[0] && path[0] != '%' ? path : RPMLOCK_FALLBACK) >=
	    (int)size)
		err = -ENAMETOOLONG;
	free(path);
	return err;
}

/* Opens (creating it as rpm does) the lock file below @rootfd. */
static int open_lock_file(int rootfd, const char *root, const char *lock_path,
			  const struct imastream_log *log)
{
	char dir[PATH_MAX];
	const char *rel, *why, *base;
	int dfd, fd, err;

	if (ims_path_relative(lock_path, &rel, &why))
		return ims_err(log, -EINVAL, "%s: rpm's lock path %s is refused: %s", root, lock_path, why);
	snprintf(dir, sizeof(dir), "%s", rel);
	base = strrchr(rel, '/');
	if (base) {
		dir[base - rel] = 0;
		base++;
	} else {
		dir[0] = 0;
		base = rel;
	}
	dfd = ims_open_dir_below(rootfd, dir, true, NULL);
	if (dfd < 0)
		return ims_err(log, dfd, "%s: cannot create the directory of rpm's lock %s: %s%s", root,
			       lock_path, strerror(-dfd),
			       dfd == -ELOOP || dfd == -ENOTDIR ? " (a symlink is never followed)" : "");
	fd = openat(dfd, base, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	err = -errno;
	close(dfd);
	if (fd < 0)
		return ims_err(log, err, "%s: cannot open rpm's lock %s: %s", root, lock_path,
			       strerror(-err));
	return fd;
}

/* Takes the write lock on the whole file; -EAGAIN when someone holds it and !@wait. */
static int lock_whole(int fd, bool wait, pid_t *holder)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (!fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl))
		return 0;
	if (errno != EAGAIN && errno != EACCES)
		return -errno;
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET };
	*holder = !fcntl(fd, F_OFD_GETLK, &fl) && fl.l_type != F_UNLCK ? fl.l_pid : 0;
	return -EAGAIN;
}

static int take_lock(int rootfd, const char *root, unsigned int flags,
		     const struct imastream_log *log)
{
	char lock_path[PATH_MAX], shown[2 * PATH_MAX], holder_text[48] = "";
	pid_t holder = 0;
	int fd, err;

	err = imastream_root_lock_path(lock_path, sizeof(lock_path));
	if (err)
		return ims_err(log, err, "%s: cannot find rpm's lock path: %s", root, strerror(-err));
	snprintf(shown, sizeof(shown), "%s%s", strcmp(root, "/") ? root : "", lock_path);
	fd = open_lock_file(rootfd, root, lock_path, log);
	if (fd < 0)
		return fd;
	err = lock_whole(fd, false, &holder);
	if (err == -EAGAIN) {
		/* An OFD lock's holder has no pid (-1); rpm's has one. */
		if (holder > 0)
			snprintf(holder_text, sizeof(holder_text), ", process %d", (int)holder);
		if (flags & IMASTREAM_ROOT_NO_WAIT) {
			close(fd);
			return ims_err(log, -EBUSY, "%s: another transaction (rpm or imastream%s) holds the lock %s; not waiting",
				       root, holder_text, shown);
		}
		ims_logf(log, IMASTREAM_LOG_NOTICE, "%s: waiting for the lock %s, which another transaction (rpm or imastream%s) holds",
			 root, shown, holder_text);
		err = lock_whole(fd, true, &holder);
	}
	if (err) {
		close(fd);
		return ims_err(log, err, "%s: cannot lock %s: %s", root, shown, strerror(-err));
	}
	return fd;
}

bool imastream_root_exists(int rootfd)
{
	struct stat sb;

	if (ims_rpm_config())
		return false;
	/* A database that holds what librpm must not open still makes a root: whoever
	 * reads it next refuses it, naming the file. */
	return ims_rpmdb_exists(rootfd, "", NULL) != 0 ||
	       (!fstatat(rootfd, STATE_DIR, &sb, AT_SYMLINK_NOFOLLOW) && S_ISDIR(sb.st_mode));
}

static int not_a_root(const char *root, const struct imastream_log *log)
{
	char *dbpath = rpmExpand("%{?_dbpath}", NULL);
	int err = ims_err(log, -ENOENT, "%s: not an installed root: no rpm database (%s) and no %s",
			  root, dbpath && dbpath[0] ? dbpath : "%_dbpath", STATE_DIR);

	free(dbpath);
	return err;
}

static bool temp_pid(const char *name, pid_t *pid)
{
	const char *p = name + strlen(IMASTREAM_TEMP_PREFIX);
	char *end;
	unsigned long v;

	if (strncmp(name, IMASTREAM_TEMP_PREFIX, strlen(IMASTREAM_TEMP_PREFIX)) || !isxdigit((unsigned char)*p))
		return false;
	errno = 0;
	v = strtoul(p, &end, 16);
	if (errno || *end != '-' || !v || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

bool imastream_temp_name_is_leftover(const char *name)
{
	pid_t pid;

	if (!temp_pid(name, &pid))
		return false;
	/* Alive (or not ours to signal, EPERM): its writer may still be at work. */
	return pid != getpid() && kill(pid, 0) && errno == ESRCH;
}

/* Removes the leftover temp objects below directory @fd (closed here), @rel its path. */
static int clean_dir(int fd, const char *rel, unsigned int depth, const struct imastream_log *log,
		     struct imastream_recover_stats *st)
{
	DIR *d;
	struct dirent *de;
	int err = 0;

	if (depth > IMS_PATH_MAX_DEPTH || ims_pseudo_fs(fd)) {
		close(fd);
		return 0;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return ims_err(log, err, "/%s: cannot read the directory: %s", rel, strerror(-err));
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char sub[PATH_MAX];
		struct stat sb;
		bool is_dir = de->d_type == DT_DIR;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), n, &sb, AT_SYMLINK_NOFOLLOW))
				continue;
			is_dir = S_ISDIR(sb.st_mode);
		}
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", n) >= (int)sizeof(sub))
			continue;
		if (is_dir) {
			int cfd = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (cfd >= 0) {
				int e = clean_dir(cfd, sub, depth + 1, log, st);

				if (!err)
					err = e;
			}
			continue;
		}
		if (strncmp(n, IMASTREAM_TEMP_PREFIX, strlen(IMASTREAM_TEMP_PREFIX)))
			continue;
		if (!imastream_temp_name_is_leftover(n)) {
			pid_t pid;

			/* Counted and named: the root is not whole while it is there. */
			if (temp_pid(n, &pid))
				ims_logf(log, IMASTREAM_LOG_WARNING,
					 "/%s: kept: its writer, pid %d, is running (if that is no "
					 "imastream install, but a pid used again, remove it by "
					 "hand)",
					 sub, (int)pid);
			else
				ims_logf(log, IMASTREAM_LOG_WARNING,
					 "/%s: kept: not a temp name imastream writes (remove it "
					 "by hand "
					 "if it is not wanted)",
					 sub);
			st->kept++;
			continue;
		}
		if (!fstatat(dirfd(d), n, &sb, AT_SYMLINK_NOFOLLOW) && S_ISREG(sb.st_mode))
			st->bytes += (uint64_t)sb.st_blocks * 512;
		if (unlinkat(dirfd(d), n, 0) && errno != ENOENT) {
			int e = -errno;

			ims_err(log, e, "/%s: cannot remove it: %s", sub, strerror(-e));
			if (!err)
				err = e;
			continue;
		}
		ims_logf(log, IMASTREAM_LOG_DEBUG, "/%s: removed (left by an interrupted install)", sub);
		st->removed++;
	}
	closedir(d);
	return err;
}

static int clean_temps(int rootfd, const struct imastream_log *log, struct imastream_recover_stats *st)
{
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return ims_err(log, -errno, "cannot open the root: %m");
	return clean_dir(fd, "", 0, log, st);
}

/* Writes the marker of a transaction under way, durably: "imastream-running 1\npid N\n". */
static int mark_running(struct imastream_root_txn *t, const char *root)
{
	char text[64];
	int fd, len, err = 0;

	fd = ims_open_regular(t->statefd, RUNNING_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW,
			      0644);
	if (fd < 0)
		return ims_err(t->log, fd,
			       "%s/" STATE_DIR "/" RUNNING_NAME
			       ": cannot create the marker of an install under way: %s",
			       strcmp(root, "/") ? root : "", ims_open_strerror(fd));
	len = snprintf(text, sizeof(text), "imastream-running 1\npid %d\n", (int)getpid());
	err = ims_write_full(fd, text, (size_t)len);
	if (!err && fsync(fd))
		err = -errno;
	close(fd);
	if (!err && fsync(t->statefd))
		err = -errno;
	if (err)
		return ims_err(t->log, err, "cannot write " STATE_DIR "/" RUNNING_NAME ": %s",
			       strerror(-err));
	return 0;
}

/* Completes the package an intent journal describes (journal.c), counted in @st. */
static int complete_journal(int rootfd, int statefd, const char *root,
			    const struct imastream_log *log, struct imastream_recover_stats *st)
{
	struct ims_journal_outcome out;
	int err = ims_journal_recover(rootfd, statefd, root, log, &out);

	if (!err && out.found) {
		st->journals++;
		st->completed += out.renamed + out.removed;
	}
	return err;
}

/*
 * The pid that the journal or the marker @name names (a "pid N" line: the journal's third,
 * the marker's second), 0 when it names none; -ENOENT when there is no such file,
 * -EMEDIUMTYPE when it is not a regular file (never waited on, never followed).
 */
static pid_t writer_pid(int statefd, const char *name)
{
	char text[256];
	const char *p;
	ssize_t n;
	long v;
	int fd = ims_open_regular(statefd, name, O_RDONLY | O_NOFOLLOW, 0);

	if (fd < 0)
		return fd == -IMS_ENOTREG || fd == -ELOOP ? -IMS_ENOTREG : fd;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = 0;
	p = strstr(text, "\npid ");
	v = p ? strtol(p + 5, NULL, 10) : 0;
	return v > 0 && v <= INT_MAX ? (pid_t)v : 0;
}

/* Whether process @pid may still be at work (alive, or not ours to signal). */
static bool writer_alive(pid_t pid)
{
	return pid > 0 && pid != getpid() && (!kill(pid, 0) || errno == EPERM);
}

int imastream_root_interrupted(int rootfd)
{
	int statefd = ims_open_dir_below(rootfd, STATE_DIR, false, NULL);
	pid_t writer;
	int ret = 0;

	if (statefd == -ENOENT)
		return 0;
	if (statefd < 0)
		return statefd;
	writer = writer_pid(statefd, IMS_JOURNAL_NAME);
	if (writer != -ENOENT) {
		/* An install renaming right now has its journal too: its writer is alive. */
		ret = writer < 0 ? writer : writer_alive(writer) ? 2 : 1;
		goto out;
	}
	/* A marker whose writer is gone: killed before its renames, its temp files left
	 * (our own is the transaction we hold). */
	writer = writer_pid(statefd, RUNNING_NAME);
	if (writer != -ENOENT)
		ret = writer < 0 ? writer : writer == getpid() || writer_alive(writer) ? 0 : 3;
out:
	close(statefd);
	return ret;
}

int imastream_root_txn_begin(int rootfd, const char *root, unsigned int flags,
			     const struct imastream_log *log, struct imastream_recover_stats *st,
			     struct imastream_root_txn **ret)
{
	struct imastream_recover_stats found = { .size = sizeof(found) };
	struct imastream_root_txn *t;
	struct stat sb;
	int err;

	if (flags & ~(IMASTREAM_ROOT_NO_WAIT | IMASTREAM_ROOT_LOCK_ONLY))
		return ims_err(log, -EINVAL, "root transaction: unknown flags 0x%x", flags);
	/* Before any work: counts that cannot be handed back are not worth a lock. */
	err = st ? IMS_CHECK_OUT_SIZE(log, st, imastream_recover_stats, completed) : 0;
	if (err)
		return err;
	if ((flags & IMASTREAM_ROOT_LOCK_ONLY) && !imastream_root_exists(rootfd))
		return not_a_root(root, log);
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto fail;
	}
	t->log = log;
	t->statefd = -1;
	t->lockfd = take_lock(rootfd, root, flags, log);
	if (t->lockfd < 0) {
		err = t->lockfd;
		goto fail;
	}
	t->rootfd = rootfd;
	if (flags & IMASTREAM_ROOT_LOCK_ONLY) {
		*ret = t;
		goto fail;
	}
	t->statefd = ims_open_dir_below(rootfd, STATE_DIR, true, &t->state_made);
	if (t->statefd < 0) {
		err = ims_err(log, t->statefd, "%s: cannot create %s: %s", root, STATE_DIR,
			      strerror(-t->statefd));
		goto fail;
	}
	/* We hold the lock: a journal left is a package whose renames a kill cut short,
	 * completed first (its temp files are what it renames); a marker left is a
	 * transaction that died, whose temp files are nobody's any more. */
	err = complete_journal(rootfd, t->statefd, root, log, &found);
	if (err)
		goto fail;
	if (!fstatat(t->statefd, RUNNING_NAME, &sb, AT_SYMLINK_NOFOLLOW)) {
		err = clean_temps(rootfd, log, &found);
		if (err)
			goto fail;
		if (found.removed)
			ims_logf(log, IMASTREAM_LOG_NOTICE, "%s: removed %lu temp files an interrupted install left",
				 root, found.removed);
	}
	err = mark_running(t, root);
	if (err)
		goto fail;
	t->marked = true;
	*ret = t;
fail:
	/* What was found so far, on failure too: the caller may report it. */
	if (st)
		IMS_FILL_SIZED(st, &found);
	if (err)
		imastream_root_txn_end(t, err); /* NULL-safe */
	return err;
}

void imastream_root_txn_end(struct imastream_root_txn *t, int status)
{
	(void)status;
	if (!t)
		return;
	if (t->statefd >= 0) {
		char dir[] = STATE_DIR;

		if (t->marked) {
			unlinkat(t->statefd, RUNNING_NAME, 0);
			fsync(t->statefd);
		}
		close(t->statefd);
		/* The directories made only for the marker go too (a failed package leaves
		 * the root as it was); with a record in them, they stay. */
		for (unsigned int i = 0; i < t->state_made; i++) {
			char *slash;

			if (unlinkat(t->rootfd, dir, AT_REMOVEDIR))
				break;
			slash = strrchr(dir, '/');
			if (!slash)
				break;
			*slash = 0;
		}
	}
	if (t->lockfd >= 0)
		close(t->lockfd); /* drops the lock */
	free(t);
}

int imastream_root_recover(int rootfd, const char *root, unsigned int flags,
			   const struct imastream_log *log, struct imastream_recover_stats *st)
{
	struct imastream_recover_stats found = { .size = sizeof(found) };
	int lockfd, statefd, err;

	if (flags & ~IMASTREAM_ROOT_NO_WAIT)
		return ims_err(log, -EINVAL, "recover: unknown flags 0x%x", flags);
	err = st ? IMS_CHECK_OUT_SIZE(log, st, imastream_recover_stats, completed) : 0;
	if (err)
		return err;
	/* Before the lock, which would create rpm's lock file in any directory. */
	if (!imastream_root_exists(rootfd)) {
		if (st)
			IMS_FILL_SIZED(st, &found);
		return not_a_root(root, log);
	}
	lockfd = take_lock(rootfd, root, flags, log);
	if (lockfd < 0) {
		if (st)
			IMS_FILL_SIZED(st, &found);
		return lockfd;
	}
	statefd = ims_open_dir_below(rootfd, STATE_DIR, false, NULL);
	/* The journal first: the temp files it names are the ones it renames. */
	err = statefd >= 0 ? complete_journal(rootfd, statefd, root, log, &found) : 0;
	if (!err)
		err = clean_temps(rootfd, log, &found);
	if (!err && statefd >= 0 && unlinkat(statefd, RUNNING_NAME, 0) == 0)
		fsync(statefd);
	if (statefd >= 0)
		close(statefd);
	close(lockfd);
	if (st)
		IMS_FILL_SIZED(st, &found);
	return err;
}
