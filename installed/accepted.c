// SPDX-License-Identifier: LGPL-2.1-or-later
/* Accepted %config edits: ROOT/var/lib/imastream/accepted-config, the digest an administrator accepted for each edited %config file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>

#include "common/private.h"
#include "imastream/audit.h"
#include "imastream/entry.h"
#include "imastream/hash.h"
#include "imastream/rpmdb.h"
#include "installed/accepted.h"
#include "installed/paths.h"

/*
 * The record, one file a root, replaced whole (written beside, fsync'd, renamed):
 *   imastream accepted-config 1
 *   root ID                     (ROOT/var/lib/imastream/root-id: this root's, made once)
 *   ALGO HEX SIZE PATH          (one line per accepted file)
 *   end N                       (N lines before it: a cut file has no such line)
 * A record copied from another root carries another ID: refused, as a cut one is.
 */
#define STATE_DIR "var/lib/imastream"
#define RECORD_NAME "accepted-config"
#define ROOT_ID_NAME "root-id"
#define MAGIC "imastream accepted-config 1"
#define ROOT_ID_LEN 32
#define MAX_RECORD (16u << 20)

struct imastream_accepted {
	struct imastream_accepted_file *files;
	size_t n;
};

/* Opens (creating when @create) ROOT/var/lib/imastream, never through a symlink. */
static int open_state_dir(int rootfd, bool create)
{
	return ims_open_dir_below(rootfd, STATE_DIR, create, NULL);
}

/* Reads the small regular file @name of @dirfd whole, NUL-terminated.  -ENOENT if absent. */
static int read_small(int dirfd, const char *name, char **ret, size_t *len_ret)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_RECORD) {
		close(fd);
		return -EBADMSG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return n < 0 ? -errno : -EIO;
	}
	buf[n] = 0;
	*ret = buf;
	*len_ret = (size_t)n;
	return 0;
}

/* This root's id, made when @create and there is none.  Return: 0, -ENOENT, -errno. */
static int root_id(int dirfd, bool create, char id[ROOT_ID_LEN + 1])
{
	unsigned char raw[ROOT_ID_LEN / 2];
	char *buf = NULL, line[ROOT_ID_LEN + 2];
	size_t len;
	int err = read_small(dirfd, ROOT_ID_NAME, &buf, &len), fd;

	if (!err) {
		err = len == ROOT_ID_LEN + 1 && buf[ROOT_ID_LEN] == '\n' &&
				      strspn(buf, "0123456789abcdef") == ROOT_ID_LEN ?
			      0 :
			      -EBADMSG;
		if (!err)
			memcpy(id, buf, ROOT_ID_LEN);
		id[ROOT_ID_LEN] = 0;
		free(buf);
		return err;
	}
	if (err != -ENOENT || !create)
		return err;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -errno;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(line + 2 * i, 3, "%02x", raw[i]);
	line[ROOT_ID_LEN] = '\n';
	fd = openat(dirfd, ROOT_ID_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -errno;
	err = write(fd, line, ROOT_ID_LEN + 1) == ROOT_ID_LEN + 1 && !fsync(fd) ? 0 : -EIO;
	close(fd);
	if (err) {
		unlinkat(dirfd, ROOT_ID_NAME, 0);
		return err;
	}
	memcpy(id, line, ROOT_ID_LEN);
	id[ROOT_ID_LEN] = 0;
	return 0;
}

static int hex_decode(const char *hex, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > max || strspn(hex, "0123456789abcdef") != n)
		return -EBADMSG;
	for (size_t i = 0; i < n / 2; i++)
		sscanf(hex + 2 * i, "%2hhx", &out[i]);
	*len = n / 2;
	return 0;
}

/* One "ALGO HEX SIZE PATH" line into @f (its path pointing into @line). */
static int parse_line(char *line, struct imastream_accepted_file *f)
{
	char *algo = line, *hex, *size, *path, *end;
	const struct imastream_hash_info *hi;

	if (!(hex = strchr(algo, ' ')) || (*hex++ = 0, !(size = strchr(hex, ' '))) ||
	    (*size++ = 0, !(path = strchr(size, ' '))))
		return -EBADMSG;
	*path++ = 0;
	hi = imastream_hash_by_name(algo);
	if (!hi || path[0] != '/' ||
	    hex_decode(hex, f->digest, sizeof(f->digest), &f->digest_len) ||
	    f->digest_len != hi->digest_size)
		return -EBADMSG;
	errno = 0;
	f->size = strtoull(size, &end, 10);
	if (errno || *end || end == size)
		return -EBADMSG;
	f->algo = hi->algo;
	f->path = path;
	return 0;
}

void imastream_accepted_free(struct imastream_accepted *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free((char *)a->files[i].path);
	free(a->files);
	free(a);
}

/* The record's lines from @buf (modified) into @a; @where names the file for messages. */
static int parse(struct imastream_accepted *a, char *buf, const char *id, const char *where,
		 const struct imastream_log *log)
{
	char *save = NULL, *line = strtok_r(buf, "\n", &save);
	unsigned long lineno = 1, count;
	bool ended = false;
	char *end;

	if (!line || strcmp(line, MAGIC))
		return ims_err(log, -EBADMSG, "%s:1: not an accepted-config record: not used",
			       where);
	line = strtok_r(NULL, "\n", &save);
	lineno++;
	if (!line || strncmp(line, "root ", 5))
		return ims_err(log, -EBADMSG, "%s:2: no root id: not used", where);
	if (!id || strcmp(line + 5, id))
		return ims_err(
			log, -EBADMSG,
			"%s: written for another root (root id %.32s, this root's is %s): not used",
			where, line + 5, id ? id : "none");
	while ((line = strtok_r(NULL, "\n", &save))) {
		struct imastream_accepted_file f = { 0 }, *grown;

		lineno++;
		if (ended)
			return ims_err(log, -EBADMSG, "%s:%lu: a line after the end: not used",
				       where, lineno);
		if (!strncmp(line, "end ", 4)) {
			count = strtoul(line + 4, &end, 10);
			if (*end || count != a->n)
				return ims_err(log, -EBADMSG,
					       "%s:%lu: the end says %s lines, the record has %zu: "
					       "not used",
					       where, lineno, line + 4, a->n);
			ended = true;
			continue;
		}
		if (parse_line(line, &f))
			return ims_err(log, -EBADMSG, "%s:%lu: malformed line: not used", where,
				       lineno);
		grown = realloc(a->files, (a->n + 1) * sizeof(*a->files));
		if (!grown || !(f.path = strdup(f.path))) {
			if (grown)
				a->files = grown;
			return -ENOMEM;
		}
		a->files = grown;
		a->files[a->n++] = f;
	}
	if (!ended)
		return ims_err(log, -EBADMSG, "%s: cut short (no end line): not used", where);
	return 0;
}

/* Loads from the state directory @dirfd (or none: an empty set); @root for messages. */
static int load_at(int dirfd, const char *root, const struct imastream_log *log,
		   struct imastream_accepted **ret)
{
	struct imastream_accepted *a = calloc(1, sizeof(*a));
	char where[4096], id[ROOT_ID_LEN + 1], *buf = NULL;
	size_t len;
	int err, iderr;

	if (!a)
		return -ENOMEM;
	snprintf(where, sizeof(where), "%s%s" STATE_DIR "/" RECORD_NAME, root,
		 root[strlen(root) - 1] == '/' ? "" : "/");
	err = dirfd < 0 ? -ENOENT : read_small(dirfd, RECORD_NAME, &buf, &len);
	if (err == -ENOENT) {
		*ret = a;
		return 0;
	}
	if (!err && strlen(buf) != len)
		err = -EBADMSG;
	if (err) {
		free(buf);
		imastream_accepted_free(a);
		return ims_err(log, err, "%s: cannot be read (%s): not used", where,
			       strerror(-err));
	}
	iderr = root_id(dirfd, false, id);
	err = parse(a, buf, iderr ? NULL : id, where, log);
	free(buf);
	if (err) {
		imastream_accepted_free(a);
		return err;
	}
	*ret = a;
	return 0;
}

int imastream_accepted_load(const char *root, int rootfd, const struct imastream_log *log,
			    struct imastream_accepted **ret)
{
	int dirfd = open_state_dir(rootfd, false), err;

	if (dirfd < 0 && dirfd != -ENOENT)
		return ims_err(log, dirfd, "%s/" STATE_DIR ": %s", root, strerror(-dirfd));
	err = load_at(dirfd, root, log, ret);
	if (dirfd >= 0)
		close(dirfd);
	return err;
}

const struct imastream_accepted_file *imastream_accepted_find(const struct imastream_accepted *a,
							      const char *path)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (!strcmp(a->files[i].path, path))
			return &a->files[i];
	return NULL;
}

/* The record with @a's files, written beside and renamed over the old one. */
static int write_record(int dirfd, const struct imastream_accepted *a, const char *id)
{
	char tmp[64];
	FILE *f;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), IMASTREAM_TEMP_PREFIX "%x-accepted", (unsigned int)getpid());
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlinkat(dirfd, tmp, 0);
		return -ENOMEM;
	}
	fprintf(f, MAGIC "\nroot %s\n", id);
	for (size_t i = 0; i < a->n; i++) {
		const struct imastream_accepted_file *af = &a->files[i];

		fprintf(f, "%s ", imastream_hash_by_algo(af->algo)->name);
		for (size_t j = 0; j < af->digest_len; j++)
			fprintf(f, "%02x", af->digest[j]);
		fprintf(f, " %llu %s\n", (unsigned long long)af->size, af->path);
	}
	fprintf(f, "end %zu\n", a->n);
	if (fflush(f) == EOF || ferror(f) || fsync(fileno(f)))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, RECORD_NAME))
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	else if (fsync(dirfd))
		err = -errno;
	return err;
}

/* What the owners' search collects: each path's %config entry, or none. */
struct owners {
	char *const *paths;
	int n;
	int *algo;	/* per path: the header's digest algorithm, 0 no %config entry */
	char **package; /* per path: the NEVRA of the package whose %config it is */
	bool *other;	/* per path: a package lists it, but not as %config */
};

static int find_owner(void *arg, void *rpm_header)
{
	struct owners *o = arg;
	Header h = rpm_header;
	rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	const struct imastream_hash_info *hi;

	if (!fi)
		return 0;
	hi = imastream_hash_by_rpm_id(rpmfiDigestAlgo(fi));
	while (rpmfiNext(fi) >= 0) {
		for (int i = 0; i < o->n; i++) {
			if (strcmp(rpmfiFN(fi), o->paths[i]))
				continue;
			if (!(rpmfiFFlags(fi) & RPMFILE_CONFIG) || !S_ISREG(rpmfiFMode(fi)) ||
			    (rpmfiFFlags(fi) & RPMFILE_GHOST) || !hi) {
				o->other[i] = true;
				continue;
			}
			o->algo[i] = hi->algo;
			free(o->package[i]);
			o->package[i] = headerGetAsString(h, RPMTAG_NEVRA);
		}
	}
	rpmfiFree(fi);
	return 0;
}

/* The current digest (in @algo) and size of the regular file @path below @rootfd. */
static int hash_path(int rootfd, const char *path, int algo, struct imastream_accepted_file *f,
		     const struct imastream_log *log)
{
	char dir[4096];
	const char *base = strrchr(path, '/') + 1;
	struct imastream_hasher *h = NULL;
	const uint8_t *digest;
	struct stat st;
	size_t len;
	int dfd, fd, err;

	snprintf(dir, sizeof(dir), "%.*s", (int)(base - path - 1), path);
	dfd = imastream_open_dir_as_rpm(rootfd, dir[0] ? dir : "/", O_PATH, NULL, 0);
	if (dfd < 0)
		return ims_err(log, dfd, "%s: cannot open its directory below the root: %s", path,
			       strerror(-dfd));
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(dfd);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = fd < 0 ? -errno : -EINVAL;
		if (fd >= 0)
			close(fd);
		return ims_err(log, err, "%s: %s: not accepted", path,
			       err == -EINVAL ? "not a regular file" : strerror(-err));
	}
	err = imastream_hasher_new(IMASTREAM_HASH_BIT(algo), log, &h);
	if (!err)
		err = imastream_hash_fd(h, fd);
	if (!err)
		err = imastream_hasher_digest(h, algo, &digest, &len);
	close(fd);
	if (!err) {
		memcpy(f->digest, digest, len);
		f->digest_len = len;
		f->size = (uint64_t)st.st_size;
		f->algo = algo;
	} else {
		ims_err(log, err, "%s: cannot read: %s", path, strerror(-err));
	}
	imastream_hasher_free(h);
	return err;
}

int imastream_accept_config(const char *root, int rootfd, char *const *paths, int n,
			    char ***packages_ret, const struct imastream_log *log)
{
	struct owners o = { .paths = paths, .n = n };
	struct imastream_accepted *a = NULL;
	struct imastream_accepted_file *files = NULL;
	char id[ROOT_ID_LEN + 1];
	int dirfd = -1, err;

	*packages_ret = NULL;
	o.algo = calloc((size_t)n, sizeof(*o.algo));
	o.package = calloc((size_t)n + 1, sizeof(*o.package));
	o.other = calloc((size_t)n, sizeof(*o.other));
	files = calloc((size_t)n, sizeof(*files));
	if (!o.algo || !o.package || !o.other || !files) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (paths[i][0] != '/' || strchr(paths[i], '\n') || strstr(paths[i], "//")) {
			err = ims_err(log, -EINVAL,
				      "%s: not a path as the packages list it "
				      "(absolute, one line): nothing accepted",
				      paths[i]);
			goto out;
		}
	err = imastream_rpmdb_foreach(root, NULL, 0, find_owner, &o, log);
	if (err)
		goto out;
	/* Every path checked and hashed before anything is written: all or nothing. */
	for (int i = 0; i < n; i++) {
		if (!o.algo[i]) {
			err = ims_err(log, -EINVAL, "%s: %s: nothing accepted", paths[i],
				      o.other[i] ? "no installed package marks it %config" :
						   "no installed package lists it");
			goto out;
		}
		err = hash_path(rootfd, paths[i], o.algo[i], &files[i], log);
		if (err)
			goto out;
		files[i].path = paths[i];
	}
	dirfd = open_state_dir(rootfd, true);
	if (dirfd < 0) {
		err = ims_err(log, dirfd, "%s/" STATE_DIR ": %s", root, strerror(-dirfd));
		goto out;
	}
	err = load_at(dirfd, root, log, &a);
	if (err)
		goto out;
	err = root_id(dirfd, true, id);
	if (err) {
		ims_err(log, err, "%s/" STATE_DIR "/" ROOT_ID_NAME ": %s", root,
			err == -EBADMSG ? "malformed" : strerror(-err));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct imastream_accepted_file *old = (struct imastream_accepted_file *)
						       imastream_accepted_find(a, paths[i]),
					       *grown;

		if (old) {
			const char *p = old->path;

			*old = files[i];
			old->path = p;
			continue;
		}
		grown = realloc(a->files, (a->n + 1) * sizeof(*a->files));
		if (!grown) {
			err = -ENOMEM;
			goto out;
		}
		a->files = grown;
		a->files[a->n] = files[i];
		if (!(a->files[a->n].path = strdup(paths[i]))) {
			err = -ENOMEM;
			goto out;
		}
		a->n++;
	}
	err = write_record(dirfd, a, id);
	if (err) {
		ims_err(log, err, "%s/" STATE_DIR "/" RECORD_NAME ": cannot write: %s", root,
			strerror(-err));
		goto out;
	}
	*packages_ret = o.package;
	o.package = NULL;
out:
	if (o.package)
		for (int i = 0; i < n; i++)
			free(o.package[i]);
	free(o.package);
	free(o.algo);
	free(o.other);
	free(files);
	imastream_accepted_free(a);
	if (dirfd >= 0)
		close(dirfd);
	return err;
}
