// SPDX-License-Identifier: LGPL-2.1-or-later
/* The classification of mutable files: a root's %ghost files and the list of what scriptlets, triggers and services write, never covering a packaged program or library. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>

#include "attest/json_out.h"
#include "attest/mutable.h"
#include "attest/policy-private.h"
#include "imastream/hash.h"
#include "imastream/rpmdb.h"

/* Where programs, libraries and kernels live: nothing below them is mutable. */
static const char *const program_dirs[] = {
	"/bin/",	   "/sbin/",
	"/lib/",	   "/lib32/",
	"/lib64/",	   "/libx32/",
	"/boot/",	   "/usr/bin/",
	"/usr/sbin/",	   "/usr/lib/",
	"/usr/lib32/",	   "/usr/lib64/",
	"/usr/libx32/",	   "/usr/libexec/",
	"/usr/local/bin/", "/usr/local/sbin/",
	"/usr/local/lib/", "/usr/local/lib64/",
};

bool attest_mutable_is_kept(const char *path, unsigned int mode)
{
	const char *base = strrchr(path, '/'), *so;

	if (S_ISDIR(mode))
		return false;
	if (S_ISREG(mode) && (mode & 0111))
		return true;
	for (size_t i = 0; i < sizeof(program_dirs) / sizeof(program_dirs[0]); i++)
		if (!strncmp(path, program_dirs[i], strlen(program_dirs[i])))
			return true;
	/* libfoo.so, libfoo.so.1: a shared library wherever it is (ld.so.cache is not one). */
	for (so = strstr(base ? base : path, ".so"); so; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || (so[3] == '.' && so[4] >= '0' && so[4] <= '9'))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct walk {
	struct attest_mutable *m;
	size_t rules_cap, kept_cap;
	const struct imastream_log *log;
};

static int add_rule(struct walk *w, enum attest_mutable_class class, const char *path, bool dir,
		    const char *from)
{
	struct attest_mutable *m = w->m;
	struct attest_mutable_rule *r;

	if (m->n == w->rules_cap) {
		size_t cap = w->rules_cap ? 2 * w->rules_cap : 64;

		r = realloc(m->rules, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		m->rules = r;
		w->rules_cap = cap;
	}
	r = &m->rules[m->n];
	*r = (struct attest_mutable_rule){
		.class = class, .dir = dir, .path = strdup(path), .from = strdup(from)
	};
	if (!r->path || !r->from) {
		free(r->path);
		free(r->from);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static int add_kept(struct walk *w, const char *path, const char *pkg)
{
	struct attest_mutable *m = w->m;
	size_t plen = strlen(path) + 1;
	char *s;

	if (m->nkept == w->kept_cap) {
		size_t cap = w->kept_cap ? 2 * w->kept_cap : 1024;
		char **k = realloc(m->kept, cap * sizeof(*k)), **p;

		if (!k)
			return -ENOMEM;
		m->kept = k;
		p = realloc(m->kept_pkg, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->kept_pkg = p;
		w->kept_cap = cap;
	}
	/* "PATH\0PACKAGE" in one allocation: sorting moves the path, its package with it. */
	s = malloc(plen + strlen(pkg) + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, path, plen);
	strcpy(s + plen, pkg);
	m->kept[m->nkept++] = s;
	return 0;
}

static int walk_header(void *arg, void *rpm_header)
{
	struct walk *w = arg;
	Header h = rpm_header;
	const char *name = headerGetString(h, RPMTAG_NAME);
	rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	char from[512];
	int err = 0;

	if (!fi)
		return 0;
	snprintf(from, sizeof(from), "%%ghost of package %s", name ? name : "?");
	while (!err && rpmfiNext(fi) >= 0) {
		const char *path = rpmfiFN(fi);
		unsigned int mode = rpmfiFMode(fi);

		if (attest_mutable_is_kept(path, mode))
			err = add_kept(w, path, name ? name : "?");
		else if ((rpmfiFFlags(fi) & RPMFILE_GHOST) && S_ISREG(mode))
			err = add_rule(w, ATTEST_MUTABLE_GHOST, path, false, from);
	}
	rpmfiFree(fi);
	return err;
}

/* The first kept file @path covers (itself, or below it when @dir), or NULL. */
static const char *covered(const struct attest_mutable *m, const char *path, bool dir)
{
	size_t lo = 0, hi = m->nkept, len = strlen(path);

	/* The first kept path not below @path in byte order. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(m->kept[mid], path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < m->nkept && !strncmp(m->kept[lo], path, len); lo++) {
		char next = m->kept[lo][len];

		if (next == '\0' || (dir && next == '/'))
			return m->kept[lo];
		if (!dir)
			break;
	}
	return NULL;
}

static const char *class_names[] = {
	[ATTEST_MUTABLE_GHOST] = "ghost",
	[ATTEST_MUTABLE_GENERATED] = "generated",
	[ATTEST_MUTABLE_STATE] = "state",
};

/* The program or library directory @path (a directory if @dir) is in or holds, or NULL. */
static const char *program_dir(const char *path, bool dir)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < sizeof(program_dirs) / sizeof(program_dirs[0]); i++) {
		const char *d = program_dirs[i];
		size_t dlen = strlen(d);

		/* In it (or it), whatever the database lists: dpkg's programs are there too. */
		if (len + 1 >= dlen && !strncmp(path, d, dlen - 1) &&
		    (path[dlen - 1] == '/' || path[dlen - 1] == '\0'))
			return d;
		if (dir && dlen > len + 1 && !strncmp(d, path, len) && d[len] == '/')
			return d;
	}
	return NULL;
}

/* Why @path is not a path the list may name, or NULL. */
static const char *bad_path(const char *path)
{
	size_t len = strlen(path);

	if (path[0] != '/')
		return "not an absolute path";
	if (len < 2)
		return "the whole root";
	if (len >= PATH_MAX)
		return "path too long";
	if (strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../") ||
	    !strcmp(path + len - 2, "/.") || (len > 2 && !strcmp(path + len - 3, "/..")))
		return "not a plain path (//, . or ..)";
	if (!json_utf8_valid(path, len))
		return "not UTF-8, which a JSON policy cannot spell";
	return NULL;
}

/* One line of the list: CLASS PATH REASON, PATH ending in '/' for a directory. */
static int read_line(struct walk *w, char *line, const char *where)
{
	const struct imastream_log *log = w->log;
	char *class = strtok(line, " \t"), *path = strtok(NULL, " \t"), *reason = strtok(NULL, "");
	enum attest_mutable_class c;
	const char *why, *hit;
	bool dir;
	size_t len;

	if (!class || class[0] == '#')
		return 0;
	if (!strcmp(class, "generated"))
		c = ATTEST_MUTABLE_GENERATED;
	else if (!strcmp(class, "state"))
		c = ATTEST_MUTABLE_STATE;
	else
		return attest_say(log, -EINVAL, "%s: %s: not a class (generated or state)", where,
				  class);
	if (!path)
		return attest_say(log, -EINVAL, "%s: %s without a path", where, class);
	reason = reason ? reason + strspn(reason, " \t") : NULL;
	if (!reason || !*reason)
		return attest_say(log, -EINVAL, "%s: %s: no reason (what writes it, and when)",
				  where, path);
	why = bad_path(path);
	if (why)
		return attest_say(log, -EINVAL, "%s: %s: %s", where, path, why);
	len = strlen(path);
	dir = path[len - 1] == '/';
	if (dir && c == ATTEST_MUTABLE_GENERATED)
		return attest_say(log, -EINVAL, "%s: %s: generated names one file, not a directory",
				  where, path);
	if (dir)
		path[len - 1] = '\0';
	hit = program_dir(path, dir);
	if (hit)
		return attest_say(
			log, -EINVAL,
			"%s: %s%s would cover %s, where programs and libraries live: refused",
			where, path, dir ? "/" : "", hit);
	hit = covered(w->m, path, dir);
	if (hit)
		return attest_say(
			log, -EINVAL,
			"%s: %s%s would cover %s, a program or library of package %s: refused",
			where, path, dir ? "/" : "", hit, hit + strlen(hit) + 1);
	/* A %ghost the list calls generated (glibc's /etc/ld.so.cache): its digest, not an exclude. */
	for (size_t i = 0; c == ATTEST_MUTABLE_GENERATED && i < w->m->n; i++) {
		struct attest_mutable_rule *r = &w->m->rules[i];

		if (r->class == ATTEST_MUTABLE_GHOST && !strcmp(r->path, path)) {
			char *from = strdup(where);

			if (!from)
				return -ENOMEM;
			free(r->from);
			r->from = from;
			r->class = ATTEST_MUTABLE_GENERATED;
			return 0;
		}
	}
	return add_rule(w, c, path, dir, where);
}

static int read_list(struct walk *w, const char *list)
{
	FILE *f = fopen(list, "re");
	char *line = NULL, where[PATH_MAX + 32];
	size_t cap = 0;
	ssize_t len;
	unsigned long n = 0;
	int err = 0;

	if (!f)
		return attest_say(w->log, -errno, "%s: %s", list, strerror(errno));
	while (!err && (len = getline(&line, &cap, f)) >= 0) {
		n++;
		snprintf(where, sizeof(where), "%s:%lu", list, n);
		if (memchr(line, '\0', (size_t)len))
			err = attest_say(w->log, -EINVAL, "%s: a NUL byte", where);
		else {
			if (len && line[len - 1] == '\n')
				line[len - 1] = '\0';
			err = read_line(w, line, where);
		}
	}
	if (!err && ferror(f))
		err = attest_say(w->log, -EIO, "%s: cannot read", list);
	free(line);
	fclose(f);
	return err;
}

int attest_mutable_load(const char *root, const char *list, const struct imastream_log *log,
			struct attest_mutable **ret)
{
	struct walk w = { .log = log };
	int err;

	w.m = calloc(1, sizeof(*w.m));
	if (!w.m)
		return -ENOMEM;
	err = imastream_rpmdb_foreach(root, NULL, 0, walk_header, &w, log);
	if (!err) {
		qsort(w.m->kept, w.m->nkept, sizeof(*w.m->kept), cmp_str);
		for (size_t i = 0; i < w.m->nkept; i++)
			w.m->kept_pkg[i] = w.m->kept[i] + strlen(w.m->kept[i]) + 1;
		err = read_list(&w, list);
	}
	if (err == -ENOMEM)
		attest_say(log, err, "out of memory");
	if (err) {
		attest_mutable_free(w.m);
		return err;
	}
	*ret = w.m;
	return 0;
}

void attest_mutable_free(struct attest_mutable *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->rules[i].path);
		free(m->rules[i].from);
	}
	for (size_t i = 0; i < m->nkept; i++)
		free(m->kept[i]);
	free(m->rules);
	free(m->kept);
	free(m->kept_pkg);
	free(m);
}

/* @path as a regular expression both Python's re and POSIX ERE read literally. */
static void escape(char *out, size_t size, const char *path)
{
	size_t o = 0;

	for (; *path && o + 3 < size; path++) {
		if (strchr("\\^$.|?*+()[]{}", *path))
			out[o++] = '\\';
		out[o++] = *path;
	}
	out[o] = '\0';
}

/* The root's current digest of a generated file; one absent is said and left out. */
static int add_generated(const struct attest_mutable_rule *r, struct attest_policy *pol, int rootfd,
			 const char *full, struct imastream_hasher *hasher, int hash_algo,
			 const struct imastream_log *log)
{
	const uint8_t *digest;
	size_t len;
	struct stat st;
	int fd = imastream_open_beneath(rootfd, r->path, O_RDONLY | O_NONBLOCK), err;

	if (fd < 0)
		return attest_say(log, 0, "%s: generated (%s) but not in the root (%s): not listed",
				  r->path, r->from, strerror(-fd));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return attest_say(log, 0, "%s: generated (%s) but not a regular file: not listed",
				  r->path, r->from);
	}
	err = imastream_hash_fd(hasher, fd);
	close(fd);
	if (!err)
		err = imastream_hasher_digest(hasher, hash_algo, &digest, &len);
	if (!err)
		err = attest_policy_add_digest(pol, full, digest, len);
	if (err)
		return attest_say(log, err, "%s: generated (%s): %s", r->path, r->from,
				  strerror(-err));
	return 0;
}

/* The first exclude of @pol that matches @path, or NULL. */
static const char *matching_exclude(const struct attest_policy *pol, const char *path)
{
	for (size_t i = 0; i < pol->nexcludes; i++)
		if (!regexec(&pol->excludes[i].re, path, 0, NULL, 0))
			return pol->excludes[i].text;
	return NULL;
}

/* No exclude may match a kept file, as the kernel may log it (merged /usr: /usr/bin/x too). */
static int check_excludes(const struct attest_mutable *m, const struct attest_policy *pol,
			  const char *prefix, const struct imastream_log *log)
{
	char full[PATH_MAX * 2 + 8];

	for (size_t i = 0; i < m->nkept; i++) {
		const char *k = m->kept[i], *hit;
		bool usr = !strncmp(k, "/bin/", 5) || !strncmp(k, "/sbin/", 6) ||
			   !strncmp(k, "/lib", 4);

		for (int pass = 0; pass < 1 + usr; pass++) {
			snprintf(full, sizeof(full), "%s%s%s", prefix ? prefix : "",
				 pass ? "/usr" : "", k);
			hit = matching_exclude(pol, full);
			if (hit)
				return attest_say(
					log, -EINVAL,
					"exclude %s matches %s, a program or library of package "
					"%s: no policy written",
					hit, full, m->kept_pkg[i]);
		}
	}
	return 0;
}

int attest_mutable_apply(const struct attest_mutable *m, struct attest_policy *pol, int rootfd,
			 const char *prefix, struct imastream_hasher *hasher, int hash_algo,
			 const struct imastream_log *log)
{
	char path[PATH_MAX + 8], re[PATH_MAX * 4 + 16];
	const char *why;
	int err = 0;

	for (size_t i = 0; !err && i < m->n; i++) {
		const struct attest_mutable_rule *r = &m->rules[i];

		snprintf(path, sizeof(path), "%s%s", prefix ? prefix : "", r->path);
		if (r->class == ATTEST_MUTABLE_GENERATED) {
			err = add_generated(r, pol, rootfd, path, hasher, hash_algo, log);
			continue;
		}
		escape(re, sizeof(re) - 2, path);
		/* keylime matches at the start: a file ends there, a directory goes on. */
		strcat(re, r->dir ? "/" : "$");
		err = attest_policy_add_exclude(pol, re, &why);
		if (err == -EINVAL)
			err = attest_say(log, err, "%s (%s, %s): %s", r->path,
					 class_names[r->class], r->from, why);
	}
	return err ? err : check_excludes(m, pol, prefix, log);
}
