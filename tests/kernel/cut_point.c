// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD for the power-cut test (test_kernel_live.sh): at the Nth event of one class, before doing it, stops the process and says "CUT CLASS:N DETAIL" on the port the host kills qemu from. */
/*
 * CUT_AT=CLASS:N picks the point; CUT_PORT names the port (the guest's third serial
 * port, which the host reads). Classes, counted over the whole process:
 *   write   a write(2)/pwrite(2) into a temp file (rpm's NAME;XXXXXXXX, imastream
 *           install's .imastream-tmp-*): the payload is being streamed
 *   xattr   a setxattr/fsetxattr/lsetxattr of security.*: labels, between the writes and
 *           the renames (relabel: its only writes)
 *   rename  a rename of anything: rpm's and install's commits, the record's rename
 *   unlink  an unlink/unlinkat below /usr or /etc: an upgrade's removals, recover's
 *           clean-up (not the tools' lock and state files)
 *   db      a write(2)/pwrite(2)/fsync/fdatasync of rpm's sqlite database (rpmdb.sqlite
 *           and its -wal or -journal; not -shm, the index every reader writes) or
 *           imastream's state (var/lib/imastream, not its per-boot record): the commit
 * The whole process stops (SIGSTOP) before the marker leaves, so that no other thread
 * writes anything after the point; a child writes the marker once the process shows
 * stopped, and the host's SIGKILL of qemu ends it all. Without CUT_AT it does nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

enum {
	C_WRITE,
	C_XATTR,
	C_RENAME,
	C_UNLINK,
	C_DB,
	C_NONE
};
static const char *const class_names[] = { "write", "xattr", "rename", "unlink", "db" };

static int port_fd = -1;
static int cut_class = C_NONE;
static long cut_at;
static atomic_long counts[C_NONE];

/* Opened at load, before rpm chroots into its root. */
__attribute__((constructor)) static void cut_init(void)
{
	const char *at = getenv("CUT_AT");
	const char *port = getenv("CUT_PORT");
	const char *colon;
	int i;

	if (!at || !port || !(colon = strchr(at, ':')))
		return;
	for (i = 0; i < C_NONE; i++)
		if (strlen(class_names[i]) == (size_t)(colon - at) &&
		    !strncmp(at, class_names[i], (size_t)(colon - at)))
			cut_class = i;
	cut_at = strtol(colon + 1, NULL, 10);
	port_fd = open(port, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (port_fd < 0 || cut_at <= 0)
		cut_class = C_NONE;
	/* Scriptlets and helpers rpm starts count nothing: the point is this process's. */
	unsetenv("CUT_AT");
}

/* What fd refers to, for the classes that look at the file. */
static void fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

static int is_temp(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strchr(base, ';') != NULL || strncmp(base, ".imastream-tmp-", 15) == 0;
}

static int is_db(const char *path)
{
	const char *db = strstr(path, "/rpmdb.sqlite");

	if (db)
		return strcmp(db + 13, "-shm") != 0;
	/* Not the per-boot record of replaced digests: written before the first file, it
	 * would move every point of the commit. */
	return strstr(path, "/var/lib/imastream/") != NULL &&
	       strstr(path, "/var/lib/imastream/boot/") == NULL;
}

/* Stops the process at the point: the child says so once the parent is stopped. */
static void cut_here(const char *detail)
{
	char line[600];
	pid_t parent = getpid();
	int n = snprintf(line, sizeof(line), "CUT %s:%ld %s\n", class_names[cut_class], cut_at,
			 detail);

	if (fork() == 0) {
		char stat_path[64], st[256];

		snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)parent);
		for (;;) {
			int fd = open(stat_path, O_RDONLY);
			ssize_t r = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
			char *p;

			if (fd >= 0)
				close(fd);
			if (r <= 0)
				_exit(1);
			st[r] = '\0';
			p = strrchr(st, ')');
			if (p && p[1] == ' ' && p[2] == 'T')
				break;
			sched_yield();
		}
		if (write(port_fd, line,
			  (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0)
			_exit(1);
		_exit(0);
	}
	for (;;)
		kill(parent, SIGSTOP);
}

/* Counts an event of class c; stops the process when it is the chosen one. */
static void event(int c, const char *detail)
{
	if (c != cut_class)
		return;
	if (atomic_fetch_add(&counts[c], 1) + 1 == cut_at)
		cut_here(detail);
}

static void fd_event(int fd, int is_write)
{
	char path[512];

	if (cut_class != C_WRITE && cut_class != C_DB)
		return;
	fd_path(fd, path, sizeof(path));
	if (is_write && is_temp(path))
		event(C_WRITE, path);
	else if (is_db(path))
		event(C_DB, path);
}

#define REAL(ret, name, ...)                    \
	static ret (*real_##name)(__VA_ARGS__); \
	if (!real_##name)                       \
	real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, write, int, const void *, size_t);
	fd_event(fd, 1);
	return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
	fd_event(fd, 1);
	return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
	fd_event(fd, 1);
	return real_pwrite64(fd, buf, n, off);
}

int fsync(int fd)
{
	REAL(int, fsync, int);
	fd_event(fd, 0);
	return real_fsync(fd);
}

int fdatasync(int fd)
{
	REAL(int, fdatasync, int);
	fd_event(fd, 0);
	return real_fdatasync(fd);
}

static void xattr_event(const char *name, const char *what)
{
	if (cut_class == C_XATTR && name && strncmp(name, "security.", 9) == 0)
		event(C_XATTR, what);
}

int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
	REAL(int, fsetxattr, int, const char *, const void *, size_t, int);
	if (cut_class == C_XATTR) {
		char path[512];

		fd_path(fd, path, sizeof(path));
		xattr_event(name, path);
	}
	return real_fsetxattr(fd, name, value, size, flags);
}

int setxattr(const char *path, const char *name, const void *value, size_t size, int flags)
{
	REAL(int, setxattr, const char *, const char *, const void *, size_t, int);
	xattr_event(name, path);
	return real_setxattr(path, name, value, size, flags);
}

int lsetxattr(const char *path, const char *name, const void *value, size_t size, int flags)
{
	REAL(int, lsetxattr, const char *, const char *, const void *, size_t, int);
	xattr_event(name, path);
	return real_lsetxattr(path, name, value, size, flags);
}

int rename(const char *from, const char *to)
{
	REAL(int, rename, const char *, const char *);
	event(C_RENAME, to);
	return real_rename(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	REAL(int, renameat, int, const char *, int, const char *);
	event(C_RENAME, to);
	return real_renameat(fromfd, from, tofd, to);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
{
	REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
	event(C_RENAME, to);
	return real_renameat2(fromfd, from, tofd, to, flags);
}

/* An unlink in the packages' trees (/usr, /etc): not a lock or state file of the tool. */
static void unlink_event(int dirfd, const char *path)
{
	char full[600];

	if (cut_class != C_UNLINK)
		return;
	if (path[0] == '/') {
		snprintf(full, sizeof(full), "%s", path);
	} else {
		if (dirfd == AT_FDCWD) {
			if (!getcwd(full, sizeof(full) - 2))
				full[0] = '\0';
		} else {
			fd_path(dirfd, full, sizeof(full) - 2);
		}
		strncat(full, "/", sizeof(full) - strlen(full) - 1);
		strncat(full, path, sizeof(full) - strlen(full) - 1);
	}
	if (strncmp(full, "/usr/", 5) == 0 || strncmp(full, "/etc/", 5) == 0)
		event(C_UNLINK, full);
}

int unlink(const char *path)
{
	REAL(int, unlink, const char *);
	unlink_event(AT_FDCWD, path);
	return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	REAL(int, unlinkat, int, const char *, int);
	if (!(flags & AT_REMOVEDIR))
		unlink_event(dirfd, path);
	return real_unlinkat(dirfd, path, flags);
}

/* CUT_COUNTS=1: how many events of each class the process had, on stderr at its exit
 * (to choose points that come). */
__attribute__((destructor)) static void cut_counts(void)
{
	if (getenv("CUT_COUNTS"))
		fprintf(stderr, "cut_point: write %ld xattr %ld rename %ld unlink %ld db %ld\n",
			(long)counts[C_WRITE], (long)counts[C_XATTR], (long)counts[C_RENAME],
			(long)counts[C_UNLINK], (long)counts[C_DB]);
}
