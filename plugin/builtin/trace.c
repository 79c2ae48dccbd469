// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The trace plugin: appends one line per hook call, with its arguments, to the file named
 * by the "trace" key.  Tests compare the transcript with a golden file, so every field is
 * printed in a form that does not depend on the run (temp suffixes, fd numbers).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/builtin/plugins.h"

struct trace {
	FILE *out;
	char name[64];
};

/* rpm's temp names end in ";xxxxxxxx" (the transaction id): print it as ";TMP". */
static void put_path(FILE *out, const char *key, const char *path)
{
	const char *semi;

	if (!path) {
		fprintf(out, " %s=(null)", key);
		return;
	}
	semi = strrchr(path, ';');
	if (semi && strlen(semi) == 9 && !strchr(semi, '/'))
		fprintf(out, " %s=%.*s;TMP", key, (int)(semi - path), path);
	else
		fprintf(out, " %s=%s", key, path);
}

static const char *fd_kind(int fd)
{
	int fl;

	if (fd < 0)
		return "none";
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return "bad";
	switch (fl & O_ACCMODE) {
	case O_RDONLY:
		return "ro";
	case O_WRONLY:
		return "wo";
	default:
		return "rw";
	}
}

static void put_flags(FILE *out, unsigned int flags)
{
	static const char *const names[] = { "config", "ghost", "unowned", "hardlink", "skip",
					     "erase" };
	const char *sep = "";

	fputs(" flags=", out);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & (1u << i)) {
			fprintf(out, "%s%s", sep, names[i]);
			sep = ",";
		}
	}
	if (!*sep)
		fputs("-", out);
}

static void line_start(struct trace *t, const char *hook)
{
	fprintf(t->out, "%s: %s", t->name, hook);
}

static void line_end(struct trace *t)
{
	fputc('\n', t->out);
	fflush(t->out);
}

static int trace_init(struct imastream_init_args *args, void **state_ret)
{
	const struct imastream_config *cfg = args->cfg;
	const char *path = imastream_config_get(cfg, "trace");
	struct trace *t;
	int fd;

	if (!path)
		return ims_err(args->log, -EINVAL, "plugin %s needs a transcript file (trace)",
			       args->name);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	snprintf(t->name, sizeof(t->name), "%s", args->name);
	/* O_APPEND: several trace plugins (and a test) may share one transcript. */
	fd = ims_open_regular(AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || !(t->out = fdopen(fd, "a"))) {
		int err = fd < 0 ? fd : -errno;

		if (fd >= 0)
			close(fd);
		free(t);
		return ims_err(args->log, err, "plugin %s: cannot open %s: %s", args->name, path,
			       ims_open_strerror(err));
	}
	line_start(t, "init");
	fprintf(t->out, " mode=%d algo=%d evm=%d", cfg->mode, cfg->hash_algo, cfg->evm);
	line_end(t);
	*state_ret = t;
	return 0;
}

static void trace_cleanup(void *state)
{
	struct trace *t = state;

	line_start(t, "cleanup");
	line_end(t);
	fclose(t->out);
	free(t);
}

static void put_txn(FILE *out, const struct imastream_txn *txn)
{
	fprintf(out, " root=%s flags=%#x", txn->root ? txn->root : "(null)", txn->flags);
}

static int trace_tsm_pre(void *state, const struct imastream_txn *txn)
{
	struct trace *t = state;

	line_start(t, "tsm_pre");
	put_txn(t->out, txn);
	line_end(t);
	return 0;
}

static void trace_tsm_post(void *state, const struct imastream_txn *txn, int res)
{
	struct trace *t = state;

	line_start(t, "tsm_post");
	put_txn(t->out, txn);
	fprintf(t->out, " res=%d", res);
	line_end(t);
}

static void put_pkg(FILE *out, const struct imastream_pkg *pkg)
{
	static const char *const ops[] = { "install", "erase", "other" };

	if (!pkg) {
		fputs(" pkg=(null)", out);
		return;
	}
	fprintf(out, " pkg=%s op=%s verified=%s", pkg->nevra ? pkg->nevra : "(null)",
		pkg->op >= 0 && pkg->op <= 2 ? ops[pkg->op] : "?",
		(pkg->flags & IMASTREAM_PKG_FILEDIGESTS_CHECKED) ?
			((pkg->flags & IMASTREAM_PKG_HEADER_VERIFIED) ? "header+files" : "files") :
			((pkg->flags & IMASTREAM_PKG_HEADER_VERIFIED) ? "header" : "no"));
}

static int trace_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct trace *t = state;

	line_start(t, "psm_pre");
	put_pkg(t->out, pkg);
	line_end(t);
	return 0;
}

static void trace_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	struct trace *t = state;

	line_start(t, "psm_post");
	put_pkg(t->out, pkg);
	fprintf(t->out, " res=%d", res);
	line_end(t);
}

static int trace_script_exec(void *state, const struct imastream_script *s)
{
	struct trace *t = state;

	line_start(t, "script_exec");
	fprintf(t->out, " path=%s type=%#x", s->path ? s->path : "(null)", s->type);
	line_end(t);
	return 0;
}

static void put_file(FILE *out, const struct imastream_file *f, bool with_fd)
{
	put_path(out, "path", f->path);
	if (f->dest && (!f->path || strncmp(f->path, f->dest, strlen(f->dest)) != 0))
		put_path(out, "dest", f->dest);
	fprintf(out, " mode=%06o", (unsigned int)f->mode);
	put_flags(out, f->flags);
	if (with_fd) {
		fprintf(out, " owner=%u:%u", (unsigned int)f->uid, (unsigned int)f->gid);
		if (S_ISREG(f->mode))
			fprintf(out, " size=%llu", (unsigned long long)f->content_size);
		fprintf(out, " fd=%s", fd_kind(f->fd));
		if (f->known_algo)
			fprintf(out, " known=%d", f->known_algo);
	}
}

static int trace_file_opened(void *state, struct imastream_file *f)
{
	struct trace *t = state;

	line_start(t, "file_opened");
	put_file(t->out, f, false);
	line_end(t);
	return 0;
}

static int trace_file_updated(void *state, struct imastream_file *f, const void *buf, size_t len)
{
	struct trace *t = state;

	(void)buf;
	line_start(t, "file_updated");
	put_path(t->out, "path", f->path);
	fprintf(t->out, " len=%zu", len);
	line_end(t);
	return 0;
}

static int trace_file_closed(void *state, struct imastream_file *f)
{
	struct trace *t = state;

	line_start(t, "file_closed");
	put_file(t->out, f, true);
	/* What earlier plugins set: this is how the order labels → ima → evm shows. */
	for (const char *const *n = (const char *const[]){ "security.selinux", "security.ima",
							   "security.evm", NULL }; *n; n++)
		if (imastream_file_get_xattr(f, *n))
			fprintf(t->out, " has=%s", *n + 9);
	line_end(t);
	return 0;
}

static void trace_file_done(void *state, struct imastream_file *f, int res)
{
	struct trace *t = state;

	line_start(t, "file_done");
	put_path(t->out, "path", f->path);
	fprintf(t->out, " res=%d", res);
	line_end(t);
}

static int trace_verify(void *state, const struct imastream_verify *v)
{
	struct trace *t = state;

	line_start(t, "verify");
	fprintf(t->out, " what=%s algo=%d digest_len=%zu sig_len=%zu result=%d",
		v->what ? v->what : "(null)", v->hash_algo, v->digest_len, v->sig_len, v->result);
	line_end(t);
	return 0;
}

static int trace_file_conflict(void *state, const struct imastream_conflict *c)
{
	struct trace *t = state;

	line_start(t, "file_conflict");
	put_path(t->out, "path", c->path);
	fprintf(t->out, " owner=%s", c->owner ? c->owner : "(null)");
	put_pkg(t->out, c->pkg);
	line_end(t);
	return 0;
}

static const struct imastream_plugin_key trace_keys[] = {
	{ .name = "trace", .help = "file the trace plugin appends its transcript to" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_trace_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "trace",
	.rank = IMASTREAM_RANK_ANY,
	.keys = trace_keys,
	.init = trace_init,
	.cleanup = trace_cleanup,
	.tsm_pre = trace_tsm_pre,
	.tsm_post = trace_tsm_post,
	.psm_pre = trace_psm_pre,
	.psm_post = trace_psm_post,
	.script_exec = trace_script_exec,
	.file_opened = trace_file_opened,
	.file_updated = trace_file_updated,
	.file_closed = trace_file_closed,
	.file_done = trace_file_done,
	.verify = trace_verify,
	.file_conflict = trace_file_conflict,
};
