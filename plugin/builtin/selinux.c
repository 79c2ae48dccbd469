// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The selinux plugin: looks the label up in a file_contexts by the final path and mode, and
 * sets security.selinux on the file itself (fsetxattr: no setfscreatecon, which needs a
 * kernel running SELinux), with the trailing NUL the kernel stores.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <selinux/label.h>
#include <selinux/selinux.h>

#include "plugin/builtin/plugins.h"

struct selinux_state {
	struct selabel_handle *handle;
	const struct imastream_log *log;
	bool nocontexts;
};

static int selinux_init(struct imastream_init_args *args, void **state_ret)
{
	const char *contexts = imastream_config_get(args->cfg, "file_contexts");
	struct selinux_state *st;
	struct selinux_opt opt = { SELABEL_OPT_PATH, contexts };

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->log = args->log;
	/* Without a configured file_contexts, follow the host: no policy, no labels. */
	if (!contexts && is_selinux_enabled() <= 0) {
		ims_logf(args->log, IMASTREAM_LOG_INFO,
			 "selinux: SELinux is disabled and no file_contexts is configured; no labels");
		*state_ret = st;
		return 0;
	}
	st->handle = selabel_open(SELABEL_CTX_FILE, contexts ? &opt : NULL, contexts ? 1 : 0);
	if (!st->handle) {
		int err = errno ? -errno : -EINVAL;

		free(st);
		return ims_err(args->log, err, "selinux: cannot load file contexts %s: %s",
			       contexts ? contexts : "of the policy",
			       strerror(-err));
	}
	*state_ret = st;
	return 0;
}

static void selinux_cleanup(void *state)
{
	struct selinux_state *st = state;

	if (st->handle)
		selabel_close(st->handle);
	free(st);
}

static int selinux_tsm_pre(void *state, const struct imastream_txn *txn)
{
	struct selinux_state *st = state;

	st->nocontexts = txn->flags & IMASTREAM_TXN_NOCONTEXTS;
	return 0;
}

static int selinux_file_closed(void *state, struct imastream_file *f)
{
	struct selinux_state *st = state;
	char *con = NULL;
	int err;

	if (!st->handle || st->nocontexts || (f->flags & (IMASTREAM_FILE_SKIP | IMASTREAM_FILE_ERASE)))
		return 0;
	if (!f->dest)
		return ims_err(st->log, -EINVAL, "selinux: %s has no final name", f->path);
	if (selabel_lookup_raw(st->handle, &con, f->dest, f->mode) < 0) {
		/* No rule for this path: the file keeps whatever the filesystem gives it. */
		if (errno == ENOENT)
			return 0;
		return ims_err(st->log, -errno, "selinux: cannot look up the label of %s: %s",
			       f->dest, strerror(errno));
	}
	if (strcmp(con, "<<none>>") == 0) {
		freecon(con);
		return 0;
	}
	err = imastream_file_set_xattr(f, "security.selinux", con, strlen(con) + 1);
	freecon(con);
	return err;
}

static const struct imastream_plugin_key selinux_keys[] = {
	{ .name = "file_contexts", .help = "SELinux file_contexts path (the policy's if unset)" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_selinux_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "selinux",
	.rank = IMASTREAM_RANK_LABELS,
	.keys = selinux_keys,
	.init = selinux_init,
	.cleanup = selinux_cleanup,
	.tsm_pre = selinux_tsm_pre,
	.file_closed = selinux_file_closed,
};
