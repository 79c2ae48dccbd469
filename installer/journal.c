// SPDX-License-Identifier: LGPL-2.1-or-later
/* The intent journal: a package's renames and removals, durable before the first, completed after a crash. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/hash.h"
#include "imastream/rpmdb.h"
#include "installer/journal.h"
#include "installer/private.h"

/*
 * ROOT/var/lib/imastream/journal, in lines of blank-separated fields (percent-encoded as
 * in the record):
 *
 *	imastream-journal 1
 *	package NAME
 *	pid PID
 *	rename DIR TEMP NAME
 *	remove DIR NAME
 *	rmdir DIR NAME
 *	rpmsave DIR NAME
 *	sha256 HEX
 *
 * DIR is "/" or "/a/b"; the last line is the SHA-256 of every byte before it, so that a
 * journal cut short or rotten is refused as a whole.
 *
 * Why recovery rolls forward and never back: the journal is written after the last temp
 * file of the package is complete (content, owner, mode, security.ima, security.evm,
 * labels) and, with --sync fs or file, on disk, and after the package's record was
 * written under its temp name.  From then on everything the transaction needs exists, so
 * finishing it is always possible, while undoing it is not: a rename over an old file
 * destroyed that file (there is no copy to put back).  So a journal means "these renames
 * are due", and a temp still present is one not done yet.
 *
 * An upgrade's removals of what the old version had and the new one lacks (remove: a
 * non-directory; rmdir: a directory, only if empty; rpmsave: a modified %config file
 * renamed to NAME.rpmsave) come after the package's renames and before the record's, so
 * that the record never lists a file that is gone nor leaves one unlisted.  They are
 * idempotent: a name already gone is a step already done.
 */

#define MAGIC "imastream-journal 1"

int ims_journal_init(struct ims_journal *j, const char *package, pid_t pid)
{
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->package = strdup(package ? package : "");
	return j->package ? 0 : -ENOMEM;
}

void ims_journal_clear(struct ims_journal *j)
{
	for (size_t i = 0; i < j->nops; i++) {
		free(j->ops[i].dir);
		free(j->ops[i].tmp);
		free(j->ops[i].name);
	}
	free(j->ops);
	free(j->package);
	memset(j, 0, sizeof(*j));
}

/* One component: no '/', not "." or "..", not empty, at most NAME_MAX bytes. */
static bool one_component(const char *s)
{
	size_t len = strlen(s);

	return len && len <= NAME_MAX && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* A temp name of writer @pid: ".imastream-tmp-PID-…". */
static bool writers_temp(const char *s, pid_t pid)
{
	char prefix[64];
	int n = snprintf(prefix, sizeof(prefix), IMASTREAM_TEMP_PREFIX "%x-", (unsigned int)pid);

	return one_component(s) && !strncmp(s, prefix, (size_t)n) && s[n];
}

int ims_journal_add(struct ims_journal *j, int kind, const char *dir, const char *tmp,
		    const char *name, const char **why)
{
	struct ims_journal_op op = { .kind = kind }, *p;
	const char *rel = "";

	if (kind != IMS_JOURNAL_RENAME && kind != IMS_JOURNAL_REMOVE && kind != IMS_JOURNAL_RMDIR &&
	    kind != IMS_JOURNAL_SAVE) {
		*why = "unknown step";
		return -EINVAL;
	}
	while (dir && *dir == '/')
		dir++;
	if (!dir || (*dir && ims_path_relative(dir, &rel, why)))
		return -EINVAL;
	if (!name || !one_component(name)) {
		*why = "a name that is not one path component";
		return -EINVAL;
	}
	if (kind == IMS_JOURNAL_RENAME && (!tmp || !writers_temp(tmp, j->pid))) {
		*why = "a temp name that is not the writer's";
		return -EINVAL;
	}
	if (kind != IMS_JOURNAL_RENAME && tmp) {
		*why = "a removal with a temp name";
		return -EINVAL;
	}
	if (kind == IMS_JOURNAL_SAVE && strlen(name) + strlen(IMS_JOURNAL_SAVE_SUFFIX) > NAME_MAX) {
		*why = "a name too long to take " IMS_JOURNAL_SAVE_SUFFIX;
		return -EINVAL;
	}
	p = ims_grow(j->ops, j->nops, &j->aops, sizeof(*p), 64);
	if (!p)
		return -ENOMEM;
	j->ops = p;
	op.dir = strdup(rel);
	op.tmp = tmp ? strdup(tmp) : NULL;
	op.name = strdup(name);
	if (!op.dir || (tmp && !op.tmp) || !op.name) {
		free(op.dir);
		free(op.tmp);
		free(op.name);
		return -ENOMEM;
	}
	j->ops[j->nops++] = op;
	return 0;
}

/* SHA-256 of @len bytes of @buf, in lower-case hex (65 bytes with the NUL). */
static int sha256_hex(const void *buf, size_t len, char hex[65])
{
	struct imastream_hasher *h = NULL;
	const uint8_t *d;
	int err = imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), NULL, &h);

	if (!err)
		err = imastream_hasher_update(h, buf, len);
	if (!err)
		err = imastream_hasher_final(h);
	if (!err)
		err = imastream_hasher_digest(h, IMASTREAM_HASH_SHA256, &d, NULL);
	if (!err)
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", d[i]);
	imastream_hasher_free(h);
	return err;
}

/* A step's word in the journal. */
static const char *step_word(int kind)
{
	switch (kind) {
	case IMS_JOURNAL_RENAME:
		return "rename";
	case IMS_JOURNAL_RMDIR:
		return "rmdir";
	case IMS_JOURNAL_SAVE:
		return "rpmsave";
	default:
		return "remove";
	}
}

int ims_journal_format(const struct ims_journal *j, char **text, size_t *len)
{
	char *buf = NULL, hex[65];
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	int err;

	if (!f)
		return -ENOMEM;
	fputs(MAGIC "\npackage ", f);
	ims_field_put(f, j->package);
	fprintf(f, "\npid %d\n", (int)j->pid);
	for (size_t i = 0; i < j->nops; i++) {
		const struct ims_journal_op *op = &j->ops[i];
		char dir[PATH_MAX + 1];

		snprintf(dir, sizeof(dir), "/%s", op->dir);
		fputs(step_word(op->kind), f);
		putc(' ', f);
		ims_field_put(f, dir);
		if (op->tmp) {
			putc(' ', f);
			ims_field_put(f, op->tmp);
		}
		putc(' ', f);
		ims_field_put(f, op->name);
		putc('\n', f);
	}
	if (fflush(f) == EOF || ferror(f)) {
		fclose(f);
		free(buf);
		return -EIO;
	}
	err = sha256_hex(buf, size, hex);
	if (!err)
		fprintf(f, "sha256 %s\n", hex);
	if (fclose(f) || err) {
		free(buf);
		return err ? err : -ENOMEM;
	}
	*text = buf;
	*len = size;
	return 0;
}

/* Splits @line in place at single blanks into at most @max fields.  Return: their number, or -1. */
static int split(char *line, char **field, int max)
{
	int n = 0;

	for (char *p = line; ; ) {
		char *blank = strchr(p, ' ');

		if (n == max || !*p || *p == ' ')
			return -1; /* too many fields, or an empty one */
		field[n++] = p;
		if (!blank)
			return n;
		*blank = 0;
		p = blank + 1;
	}
}

static int parse_line(struct ims_journal *j, char *line, unsigned int lineno, const char **why)
{
	char *field[4], *end;
	int n = split(line, field, 4), err = -EBADMSG;
	long v;

	*why = "malformed line";
	if (n < 0)
		return -EBADMSG;
	switch (lineno) {
	case 1:
		*why = "not an imastream journal";
		return n == 2 && !strcmp(field[0], "imastream-journal") && !strcmp(field[1], "1") ?
		       0 : -EBADMSG;
	case 2:
		if (n != 2 || strcmp(field[0], "package") || !ims_field_decode(field[1]))
			return -EBADMSG;
		free(j->package);
		j->package = strdup(field[1]);
		return j->package ? 0 : -ENOMEM;
	case 3:
		if (n != 2 || strcmp(field[0], "pid"))
			return -EBADMSG;
		errno = 0;
		v = strtol(field[1], &end, 10);
		if (errno || *end || end == field[1] || v <= 0 || v > INT_MAX) {
			*why = "a bad pid";
			return -EBADMSG;
		}
		j->pid = (pid_t)v;
		return 0;
	}
	for (int i = 1; i < n; i++)
		if (!ims_field_decode(field[i])) {
			*why = "a bad percent escape";
			return -EBADMSG;
		}
	if (!strcmp(field[0], "rename") && n == 4)
		err = ims_journal_add(j, IMS_JOURNAL_RENAME, field[1], field[2], field[3], why);
	else if (!strcmp(field[0], "remove") && n == 3)
		err = ims_journal_add(j, IMS_JOURNAL_REMOVE, field[1], NULL, field[2], why);
	else if (!strcmp(field[0], "rmdir") && n == 3)
		err = ims_journal_add(j, IMS_JOURNAL_RMDIR, field[1], NULL, field[2], why);
	else if (!strcmp(field[0], "rpmsave") && n == 3)
		err = ims_journal_add(j, IMS_JOURNAL_SAVE, field[1], NULL, field[2], why);
	else
		*why = "an unknown step";
	return err == -EINVAL ? -EBADMSG : err;
}

int ims_journal_parse(const char *text, size_t len, struct ims_journal *j, unsigned int *line,
		      const char **why)
{
	const char *last, *sum;
	char hex[65], *copy = NULL;
	unsigned int lineno = 0;
	size_t body;
	int err;

	*line = 0;
	err = ims_journal_init(j, "", 0);
	if (err)
		return err;
	*why = "empty";
	if (!len)
		goto bad;
	*why = "cut short (no newline at its end)";
	if (text[len - 1] != '\n')
		goto bad;
	*why = "a NUL byte in it";
	if (memchr(text, 0, len))
		goto bad;
	/* The last line is the checksum of the body before it. */
	for (last = text + len - 1; last > text && last[-1] != '\n'; last--)
		;
	body = (size_t)(last - text);
	copy = malloc(body + 1);
	if (!copy) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(copy, text, body);
	copy[body] = 0;
	for (char *p = copy, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		*nl = 0;
		lineno++;
		err = parse_line(j, p, lineno, why);
		if (err == -EBADMSG) {
			*line = lineno;
			goto fail;
		}
		if (err)
			goto fail;
	}
	*why = "cut short (no package and pid lines)";
	if (lineno < 3)
		goto bad;
	*line = lineno + 1;
	*why = "cut short (no sha256 line at its end)";
	sum = last;
	if (len - body != 7 + 64 + 1 || strncmp(sum, "sha256 ", 7))
		goto bad;
	err = sha256_hex(text, body, hex);
	if (err)
		goto fail;
	*why = "its sha256 does not match its content";
	if (memcmp(sum + 7, hex, 64))
		goto bad;
	free(copy);
	*line = 0;
	*why = NULL;
	return 0;
bad:
	err = -EBADMSG;
fail:
	free(copy);
	ims_journal_clear(j);
	return err;
}

int ims_journal_write(int statefd, const struct ims_journal *j, bool sync,
		      const struct imastream_log *log)
{
	char tmp[64], *text = NULL;
	size_t len = 0;
	int fd, err;

	err = ims_journal_format(j, &text, &len);
	if (err)
		return ims_err(log, err, "%s: cannot write the intent journal: %s", j->package,
			       strerror(-err));
	/* Our pid in its name: recovery removes it if we die before the rename. */
	snprintf(tmp, sizeof(tmp), IMASTREAM_TEMP_PREFIX "%x-journal", (unsigned int)getpid());
	/* Made afresh: whatever holds the name (a killed writer's file, a FIFO) is not reused. */
	unlinkat(statefd, tmp, 0);
	fd = openat(statefd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
	} else {
		err = ims_write_full(fd, text, len);
		if (!err && sync && fsync(fd))
			err = -errno;
		if (close(fd) && !err)
			err = -errno;
	}
	free(text);
	if (!err && renameat(statefd, tmp, statefd, IMS_JOURNAL_NAME))
		err = -errno;
	if (!err && sync && fsync(statefd))
		err = -errno;
	if (err) {
		unlinkat(statefd, tmp, 0);
		return ims_err(log, err, "%s: cannot write the intent journal " IMS_STATE_DIR "/"
			       IMS_JOURNAL_NAME ": %s", j->package, strerror(-err));
	}
	return 0;
}

void ims_journal_remove(int statefd)
{
	unlinkat(statefd, IMS_JOURNAL_NAME, 0);
}
