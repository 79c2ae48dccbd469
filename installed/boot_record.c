// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-boot record: the digests files had before a transaction replaced or erased them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "installed/boot_record.h"
#include "installed/paths.h"

#define HEADER "imastream boot record 1 "

#define BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

/* The shape the kernel prints: 8-4-4-4-12 lowercase hex digits. */
static bool boot_id_valid(const char *s, size_t len)
{
	if (len != IMS_BOOT_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' :
			   !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

int ims_boot_id(char out[IMS_BOOT_ID_LEN + 1], const struct imastream_log *log)
{
	const char *env = getenv("IMASTREAM_BOOT_ID");
	char buf[64] = "";
	size_t len;

	if (env && *env) {
		snprintf(buf, sizeof(buf), "%s", env);
	} else {
		FILE *f = fopen(BOOT_ID_FILE, "re");

		if (!f || !fgets(buf, sizeof(buf), f)) {
			int err = errno ? -errno : -EIO;

			if (f)
				fclose(f);
			return ims_err(log, err, "%s: cannot read the boot id: %s", BOOT_ID_FILE,
				       strerror(-err));
		}
		fclose(f);
	}
	len = strcspn(buf, "\n");
	if (!boot_id_valid(buf, len))
		return ims_err(log, -EINVAL, "%s: '%.*s' is not a boot id (8-4-4-4-12 hex digits)",
			       env && *env ? "IMASTREAM_BOOT_ID" : BOOT_ID_FILE, (int)len, buf);
	memcpy(out, buf, IMS_BOOT_ID_LEN);
	out[IMS_BOOT_ID_LEN] = '\0';
	return 0;
}

static int batch_put(struct ims_boot_batch *b, const char *s, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->buf, cap);
		if (!p)
			return -ENOMEM;
		b->buf = p;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	return 0;
}

int ims_boot_batch_add(struct ims_boot_batch *b, int algo, const uint8_t *digest, size_t len,
		       const char *path)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);
	static const char digits[] = "0123456789abcdef";
	size_t start = b->len;
	int err;

	if (!info || len != info->digest_size || path[0] != '/')
		return -EINVAL;
	err = batch_put(b, info->name, strlen(info->name)) ?: batch_put(b, ":", 1);
	for (size_t i = 0; !err && i < len; i++) {
		char hex[2] = { digits[digest[i] >> 4], digits[digest[i] & 15] };

		err = batch_put(b, hex, 2);
	}
	err = err ?: batch_put(b, " ", 1);
	for (const char *c = path; !err && *c; c++)
		err = *c == '\\' ? batch_put(b, "\\\\", 2) :
		      *c == '\n' ? batch_put(b, "\\n", 2) :
				   batch_put(b, c, 1);
	err = err ?: batch_put(b, "\n", 1);
	if (err) {
		b->len = start;
		return err;
	}
	b->files++;
	return 0;
}

void ims_boot_batch_free(struct ims_boot_batch *b)
{
	free(b->buf);
	*b = (struct ims_boot_batch){ 0 };
}

/* Opens (creating when @create) ROOT/IMS_BOOT_RECORD_DIR, never through a symlink;
 * negative, errno set, when it cannot. */
static int open_dir(int rootfd, bool create)
{
	return ims_open_dir_below(rootfd, IMS_BOOT_RECORD_DIR, create, NULL);
}

/* Other boots' records and temp files: their measurements left with their boot. */
static void prune(int dfd, const char *keep)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, keep) &&
		    boot_id_valid(e->d_name, strnlen(e->d_name, IMS_BOOT_ID_LEN + 1)))
			unlinkat(dfd, e->d_name, 0);
		else if (!strncmp(e->d_name, ".new-", 5))
			unlinkat(dfd, e->d_name, 0);
	closedir(d);
}

/* Creates @id whole (its first line) by a link from a temp file: a reader never sees it half-made. */
static int create_record(int dfd, const char *id)
{
	char tmp[64], line[sizeof(HEADER) + IMS_BOOT_ID_LEN + 1];
	int fd, n = snprintf(line, sizeof(line), HEADER "%s\n", id), err = 0;

	snprintf(tmp, sizeof(tmp), ".new-%ld", (long)getpid());
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)n) != n)
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && linkat(dfd, tmp, dfd, id, 0) && errno != EEXIST)
		err = -errno;
	unlinkat(dfd, tmp, 0);
	return err;
}

/* Drops a last line a killed writer left without its newline, so the next append stays whole. */
static int drop_cut_line(int fd, off_t size, const char *id, const struct imastream_log *log)
{
	char buf[4096];
	off_t end = size;

	while (end > 0) {
		size_t n = end > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)end;
		ssize_t got = pread(fd, buf, n, end - (off_t)n);

		if (got != (ssize_t)n)
			return got < 0 ? -errno : -EIO;
		for (size_t i = n; i > 0; i--)
			if (buf[i - 1] == '\n') {
				off_t keep = end - (off_t)n + (off_t)i;

				if (keep == size)
					return 0;
				/* A transaction killed while it appended: its line is lost. */
				ims_logf(log, IMASTREAM_LOG_WARNING,
					 "%s/%s: its last line was cut short: dropped",
					 IMS_BOOT_RECORD_DIR, id);
				return ftruncate(fd, keep) ? -errno : 0;
			}
		end -= (off_t)n;
	}
	return -EINVAL; /* not even the first line is whole: the record is not ours */
}

int ims_boot_record_append(int rootfd, const struct ims_boot_batch *b,
			   const struct imastream_log *log)
{
	char id[IMS_BOOT_ID_LEN + 1];
	struct stat st;
	int dfd, fd, err;

	if (!b->len)
		return 0;
	err = ims_boot_id(id, log);
	if (err)
		return err;
	dfd = open_dir(rootfd, true);
	if (dfd < 0)
		return ims_err(log, -errno, "%s: cannot open below the root: %s",
			       IMS_BOOT_RECORD_DIR, strerror(errno));
	fd = openat(dfd, id, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		prune(dfd, id);
		err = create_record(dfd, id);
		fd = err ? -1 : openat(dfd, id, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		err = err ?: -errno;
		close(dfd);
		return ims_err(log, err, "%s/%s: cannot open: %s", IMS_BOOT_RECORD_DIR, id,
			       strerror(-err));
	}
	close(dfd);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		err = ims_err(log, -EINVAL, "%s/%s: not a regular file", IMS_BOOT_RECORD_DIR, id);
	if (!err && st.st_size && (err = drop_cut_line(fd, st.st_size, id, log)))
		err = ims_err(log, err, "%s/%s: not a boot record (%s)", IMS_BOOT_RECORD_DIR, id,
			      strerror(-err));
	/*
	 * One write per transaction.  No fsync: after a power cut the kernel starts a new
	 * boot, whose measurements this record no longer describes.
	 */
	if (!err) {
		ssize_t w = write(fd, b->buf, b->len);

		if (w != (ssize_t)b->len)
			err = ims_err(log, w < 0 ? -errno : -EIO, "%s/%s: cannot append: %s",
				      IMS_BOOT_RECORD_DIR, id,
				      w < 0 ? strerror(errno) : "short write");
	}
	close(fd);
	return err;
}

/* One entry line, unescaped in place: "ALGO:HEX PATH". */
static bool parse_entry(char *line, struct ims_boot_entry *e, uint8_t *digest)
{
	char *colon = strchr(line, ':'), *blank = strchr(line, ' '), *out;
	const struct imastream_hash_info *info;
	size_t hexlen;

	if (!colon || !blank || colon > blank)
		return false;
	*colon = '\0';
	info = imastream_hash_by_name(line);
	hexlen = (size_t)(blank - colon - 1);
	if (!info || hexlen != 2 * info->digest_size)
		return false;
	for (size_t i = 0; i < info->digest_size; i++) {
		int hi = ims_hex_digit(colon[1 + 2 * i]), lo = ims_hex_digit(colon[2 + 2 * i]);

		if (hi < 0 || lo < 0)
			return false;
		digest[i] = (uint8_t)(hi << 4 | lo);
	}
	e->algo = info->algo;
	e->digest = digest;
	e->len = info->digest_size;
	e->path = out = blank + 1;
	if (*e->path != '/')
		return false;
	for (const char *c = blank + 1; *c; c++) {
		if (*c == '\\') {
			c++;
			if (*c != '\\' && *c != 'n')
				return false;
			*out++ = *c == 'n' ? '\n' : '\\';
		} else {
			*out++ = *c;
		}
	}
	*out = '\0';
	return true;
}

static int read_all(int fd, char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				break;
			free(*buf);
			return -errno;
		}
		got += (size_t)n;
	}
	(*buf)[got] = '\0';
	*len = got;
	return 0;
}

int ims_boot_record_foreach(int rootfd, const char *boot_id,
			    int (*fn)(void *arg, const struct ims_boot_entry *e), void *arg,
			    const struct imastream_log *log)
{
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	char *buf = NULL, *line, *end;
	size_t len = 0, lineno = 1;
	int dfd = open_dir(rootfd, false), fd, err;

	if (dfd < 0)
		return errno == ENOENT ? 0 :
					 ims_err(log, -errno, "%s: cannot open below the root: %s",
						 IMS_BOOT_RECORD_DIR, strerror(errno));
	fd = openat(dfd, boot_id, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return errno == ENOENT ? 0 :
					 ims_err(log, -errno, "%s/%s: cannot open: %s",
						 IMS_BOOT_RECORD_DIR, boot_id, strerror(errno));
	err = read_all(fd, &buf, &len);
	close(fd);
	if (err)
		return ims_err(log, err, "%s/%s: cannot read: %s", IMS_BOOT_RECORD_DIR, boot_id,
			       err == -EINVAL ? "not a regular file" : strerror(-err));
	/* The first line says whose boot it describes: a record copied from another boot is refused. */
	end = memchr(buf, '\n', len);
	if (!end || (size_t)(end - buf) != strlen(HEADER) + IMS_BOOT_ID_LEN ||
	    memcmp(buf, HEADER, strlen(HEADER))) {
		err = ims_err(log, -EINVAL,
			      "%s/%s:1: not a boot record (its first line is not '" HEADER
			      "BOOTID')",
			      IMS_BOOT_RECORD_DIR, boot_id);
		goto out;
	}
	if (memcmp(buf + strlen(HEADER), boot_id, IMS_BOOT_ID_LEN)) {
		err = ims_err(log, -EINVAL,
			      "%s/%s: a record of boot %.*s, not of this boot: refused",
			      IMS_BOOT_RECORD_DIR, boot_id, IMS_BOOT_ID_LEN, buf + strlen(HEADER));
		goto out;
	}
	for (line = end + 1; !err && line < buf + len; line = end + 1) {
		struct ims_boot_entry e;

		lineno++;
		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end) {
			/* A transaction killed mid-append: its files' old digests are lost, never wrong ones added. */
			ims_logf(
				log, IMASTREAM_LOG_WARNING,
				"%s/%s:%zu: the last line is cut short (a transaction killed while "
				"writing it): skipped",
				IMS_BOOT_RECORD_DIR, boot_id, lineno);
			break;
		}
		*end = '\0';
		if (memchr(line, '\0', (size_t)(end - line)) || !parse_entry(line, &e, digest)) {
			err = ims_err(log, -EINVAL, "%s/%s:%zu: not 'ALGO:HEX PATH': refused",
				      IMS_BOOT_RECORD_DIR, boot_id, lineno);
			break;
		}
		err = fn(arg, &e);
	}
out:
	free(buf);
	return err;
}
