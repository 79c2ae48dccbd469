// SPDX-License-Identifier: LGPL-2.1-or-later
/* Expands sign-package operands into the ordered list of packages to sign. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/pkglist.h"

static int push(struct cli_pkglist *l, char *path)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->paths, cap * sizeof(*p));

		if (!p) {
			free(path);
			cli_error("out of memory");
			return -ENOMEM;
		}
		l->paths = p;
		l->cap = cap;
	}
	l->paths[l->n++] = path;
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && !strcmp(s + n - t, tail);
}

/* A binary package by its name: what rpmbuild writes under RPMS/, not SRPMS/. */
static bool is_binary_rpm_name(const char *name)
{
	return name[0] != '.' && ends_with(name, ".rpm") && !ends_with(name, ".src.rpm");
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
	size_t d = strlen(dir), n = strlen(name);
	bool slash = d && dir[d - 1] != '/';
	char *s = malloc(d + slash + n + 1);

	if (!s)
		return NULL;
	memcpy(s, dir, d);
	if (slash)
		s[d] = '/';
	memcpy(s + d + slash, name, n + 1);
	return s;
}

/* Adds the packages under the directory @path (open as @fd, consumed), sorted by name. */
static int add_dir(struct cli_pkglist *l, const char *path, int fd)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir = fdopendir(fd);
	int err = 0;

	if (!dir) {
		cli_error("%s: cannot read directory: %s", path, strerror(errno));
		close(fd);
		l->failed++;
		return 0;
	}
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno) {
				cli_error("%s: cannot read directory: %s", path, strerror(errno));
				l->failed++;
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*p));

			if (!p)
				goto nomem;
			names = p;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto nomem;
		n++;
	}
	if (n) /* qsort wants an array, even for no element */
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n && !err; i++) {
		struct stat st;
		char *sub;

		/* Never through a symlink; the package itself is opened later, by name. */
		if (fstatat(dirfd(dir), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone since readdir */
		if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && is_binary_rpm_name(names[i])))
			continue;
		sub = join(path, names[i]);
		if (!sub)
			goto nomem;
		if (S_ISREG(st.st_mode)) {
			err = push(l, sub);
			continue;
		}
		fd = openat(dirfd(dir), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ELOOP && errno != ENOTDIR) {
				cli_error("%s: cannot open directory: %s", sub, strerror(errno));
				l->failed++;
			}
		} else {
			err = add_dir(l, sub, fd);
		}
		free(sub);
	}
	goto out;
nomem:
	cli_error("out of memory");
	err = -ENOMEM;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(dir);
	return err;
}

int cli_pkglist_add(struct cli_pkglist *l, const char *arg)
{
	struct stat st;
	size_t before;
	char *copy;
	int fd, err;

	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			cli_error("%s: cannot open directory: %s", arg, strerror(errno));
			l->failed++;
			return 0;
		}
		before = l->n;
		l->dirs++;
		err = add_dir(l, arg, fd);
		if (!err && l->n == before) {
			cli_error("%s: no binary rpm package (*.rpm) under it", arg);
			l->failed++;
		}
		return err;
	}
	/* Anything else is signed or refused by name, in its turn, with its own line. */
	copy = strdup(arg);
	if (!copy) {
		cli_error("out of memory");
		return -ENOMEM;
	}
	return push(l, copy);
}

void cli_pkglist_free(struct cli_pkglist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
	*l = (struct cli_pkglist){ 0 };
}
