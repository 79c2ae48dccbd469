// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The record plugin: one line per installed file (path, package, digest, signer, domain,
 * labels) and per erased file (path, package, "erased", signer, domain) appended to a log
 * for attestation, and a per-transaction summary to syslog.  Fields are percent-encoded, so
 * a hostile name cannot forge a line or a field.  The format is documented in
 * imastream-rpm(8), section RECORD.
 *
 * Lines wait in memory and are appended in few write(2) calls on an O_APPEND descriptor,
 * each holding whole lines only: when no file of the package is open any more, when
 * FLUSH_AT bytes wait, and at psm_post, tsm_post and cleanup.  A line is formatted at
 * file_done, once the file has its final name, so the log never names a file before it
 * is in place.  Under rpm 4.18 (lib/fsm.c, rpmPackageFilesInstall) an install calls
 * fsm_file_pre (file_opened) for every file while it unpacks them under temporary names,
 * then renames each into place followed by its fsm_file_post (file_done): the package's
 * lines are written right after its last rename, before lib/psm.c adds the package to
 * rpm's database (dbAdd), runs %post and the triggers, and calls psm_post.  An erase
 * calls pre and post around each removal, so each erase line is written at once.  A kill
 * -9 can therefore lose only lines of the package in progress (installs: of files rpm
 * renamed into place but had not yet added to its database); every earlier package's
 * lines are in the log.  The loss fails closed: a file missing from the log is missing
 * from a policy made of it, so attestation names it; no line claims what was not
 * installed.  A policy made of such a log still holds what the log held before the
 * package began (for an upgrade, the old version's digests of the paths it shares).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "plugin/builtin/plugins.h"
#include "plugin/builtin/policy/policy.h"

/* The labels a record lists, when an earlier plugin of the chain set them. */
static const char *const label_names[] = {
	"security.selinux", "security.SMACK64", "security.SMACK64EXEC",
	"security.SMACK64TRANSMUTE", "security.SMACK64MMAP",
};

/* A label value longer than this is shown truncated and marked with a final "...". */
#define MAX_LABEL_SHOWN 1024

/* Waiting lines are written once they reach this size (one line may pass it). */
#define FLUSH_AT (64u << 10)

struct record {
	const struct imastream_log *log;
	int fd;
	int facility; /* -1: no syslog summary */
	int algo;
	const char *log_path;
	const char *root;
	struct imastream_chain *chain;
	/* The package in progress: its signer, as far as anyone checked it. */
	char keyid[17];
	const char *domain;
	unsigned int pkg_files;
	/* Files of the package opened and not yet done (unowned directories aside): lines
	 * wait until none is left. */
	unsigned int open_files;
	/* Whole lines not yet written, and how many of them are installs and erases. */
	char *buf;
	size_t len, cap;
	unsigned int buf_installed, buf_erased;
	/* The transaction so far: installed, erased. */
	unsigned int packages, files, erased_packages, erased_files, write_errors;
};

static const struct {
	const char *name;
	int facility;
} facilities[] = {
	{ "authpriv", LOG_AUTHPRIV }, { "auth", LOG_AUTH }, { "daemon", LOG_DAEMON },
	{ "user", LOG_USER }, { "local0", LOG_LOCAL0 }, { "local1", LOG_LOCAL1 },
	{ "local2", LOG_LOCAL2 }, { "local3", LOG_LOCAL3 }, { "local4", LOG_LOCAL4 },
	{ "local5", LOG_LOCAL5 }, { "local6", LOG_LOCAL6 }, { "local7", LOG_LOCAL7 },
};

static int parse_facility(const char *name, int *ret)
{
	if (strcmp(name, "none") == 0) {
		*ret = -1;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(facilities); i++)
		if (strcmp(name, facilities[i].name) == 0) {
			*ret = facilities[i].facility;
			return 0;
		}
	return -EINVAL;
}

static const char *check_facility(const char *value)
{
	int facility;

	return parse_facility(value, &facility) ? "is not a syslog facility or none" : NULL;
}

/* Appends the waiting lines, whole, in as few write(2) calls as the kernel takes. */
static void flush(struct record *r)
{
	unsigned int lines = r->buf_installed + r->buf_erased;
	int err;

	if (!r->len)
		return;
	err = ims_write_full(r->fd, r->buf, r->len);
	if (err) {
		r->write_errors += lines;
		ims_logf(r->log, IMASTREAM_LOG_ERR, "record: cannot append %u records to %s: %s",
			 lines, r->log_path, strerror(-err));
	} else {
		r->files += r->buf_installed;
		r->erased_files += r->buf_erased;
		r->pkg_files += lines;
	}
	r->len = 0;
	r->buf_installed = r->buf_erased = 0;
}

static void record_cleanup(void *state)
{
	struct record *r = state;

	if (!r)
		return;
	if (r->fd >= 0) {
		flush(r);
		close(r->fd);
	}
	free(r->buf);
	free(r);
}

static int record_init(struct imastream_init_args *args, void **state_ret)
{
	const struct imastream_config *cfg = args->cfg;
	struct record *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->log = args->log;
	r->chain = args->chain;
	r->algo = cfg->hash_algo;
	r->log_path = imastream_config_get(cfg, "record_log");
	/* Checked when set (check_facility), so the default parses too. */
	err = parse_facility(imastream_config_get(cfg, "record_syslog"), &r->facility);
	if (!err && !r->log_path)
		err = ims_err(r->log, -EINVAL, "record: no record_log file configured");
	if (!err) {
		/* Opened here: file hooks run inside the chroot, the log lives outside it. */
		r->fd = ims_open_nonblocking(AT_FDCWD, r->log_path, O_WRONLY | O_APPEND | O_CREAT,
					     0640);
		if (r->fd < 0)
			err = ims_err(r->log, r->fd, "record: cannot open %s: %s", r->log_path,
				      ims_open_strerror(r->fd));
	}
	/* With trust domains configured, the record names the domain that verified. */
	if (!err)
		err = ims_chain_trust(r->chain, &(struct ims_trust *){ NULL });
	if (err) {
		record_cleanup(r);
		return err;
	}
	args->hash_algos |= IMASTREAM_HASH_BIT(r->algo);
	*state_ret = r;
	return 0;
}

static int record_tsm_pre(void *state, const struct imastream_txn *txn)
{
	struct record *r = state;

	r->root = txn->root;
	r->packages = r->files = r->write_errors = 0;
	r->erased_packages = r->erased_files = 0;
	return 0;
}

static void record_tsm_post(void *state, const struct imastream_txn *txn, int res)
{
	struct record *r = state;
	char msg[512];

	(void)txn;
	flush(r);
	snprintf(msg, sizeof(msg),
		 "transaction on %s %s: %u files of %u packages installed, %u files of %u packages erased, recorded in %s%s",
		 r->root ? r->root : "/", res ? "failed" : "done", r->files, r->packages,
		 r->erased_files, r->erased_packages, r->log_path,
		 r->write_errors ? " (some records could not be written)" : "");
	ims_logf(r->log, IMASTREAM_LOG_INFO, "record: %s", msg);
	if (r->facility >= 0) {
		openlog("imastream", LOG_PID, r->facility);
		syslog(r->facility | (res || r->write_errors ? LOG_WARNING : LOG_INFO), "%s", msg);
		closelog();
	}
}

static int record_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct record *r = state;
	struct ims_verdict v;

	flush(r); /* lines of files that came outside a package, if a driver has them */
	r->keyid[0] = '\0';
	r->domain = NULL;
	r->pkg_files = 0;
	r->open_files = 0;
	/* An erased package is judged by the header its rpmdb record keeps. */
	if ((pkg->op != IMASTREAM_PKG_INSTALL && pkg->op != IMASTREAM_PKG_ERASE) ||
	    !pkg->rpm_header)
		return 0;
	if (ims_chain_verdict(r->chain, pkg, &v) != 0)
		return 0;
	/* A key id is recorded only when someone verified it: our domains or rpm's keyring. */
	if (v.domain || (v.keyid[0] && (pkg->flags & IMASTREAM_PKG_HEADER_VERIFIED)))
		memcpy(r->keyid, v.keyid, sizeof(r->keyid));
	r->domain = v.domain ? v.domain->name : NULL;
	return 0;
}

static void record_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	struct record *r = state;

	flush(r);
	r->open_files = 0;
	if (!res && r->pkg_files) {
		if (pkg->op == IMASTREAM_PKG_ERASE)
			r->erased_packages++;
		else
			r->packages++;
	}
	r->pkg_files = 0;
}

/* "name=value,..." of the labels set on @f, or "-". */
static size_t format_labels(struct imastream_file *f, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < ARRAY_SIZE(label_names); i++) {
		const struct imastream_file_xattr *x = imastream_file_get_xattr(f, label_names[i]);
		size_t len;

		if (!x)
			continue;
		len = x->len;
		/* A label's trailing NUL is not part of the label. */
		if (len && x->value[len - 1] == '\0')
			len--;
		o += snprintf(out + o, size - o, "%s%s=", o ? "," : "", label_names[i] + 9);
		o += ims_escape(x->value, len < MAX_LABEL_SHOWN ? len : MAX_LABEL_SHOWN, ",=",
				out + o, size - o);
		if (len > MAX_LABEL_SHOWN)
			o += snprintf(out + o, size - o, "...");
	}
	if (!o)
		out[o++] = '-';
	return o;
}

static void digest_field(struct record *r, struct imastream_file *f, char *out, size_t size)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(r->algo);
	static const char hex[] = "0123456789abcdef";
	const uint8_t *d;
	size_t len, o;

	strcpy(out, "-");
	if (!S_ISREG(f->mode) || !hi || imastream_file_digest(f, r->algo, &d, &len, NULL) != 0)
		return;
	o = strnlen(hi->name, size - 2);
	memcpy(out, hi->name, o);
	out[o++] = ':';
	for (size_t i = 0; i < len && o + 3 <= size; i++) {
		out[o++] = hex[d[i] >> 4];
		out[o++] = hex[d[i] & 15];
	}
	out[o] = '\0';
}

/*
 * Whether @f, reported done by an erase, is gone: rpm reports a directory it could not
 * remove (other files are still in it) as done too.  A %ghost was never recorded as
 * installed, so its removal is not recorded either.
 */
static bool gone(const struct imastream_file *f)
{
	struct stat st;

	if (f->flags & IMASTREAM_FILE_GHOST)
		return false;
	return !f->path || lstat(f->path, &st) != 0;
}

static int record_file_opened(void *state, struct imastream_file *f)
{
	struct record *r = state;

	/* Not a directory no package owns: rpm 4.18.0 ends those only at psm_post. */
	if (!(f->flags & IMASTREAM_FILE_UNOWNED))
		r->open_files++;
	return 0;
}

/* Formats @f's line at the end of the waiting lines; false if there is no room. */
static bool add_line(struct record *r, struct imastream_file *f, const char *name)
{
	size_t name_len, nevra_len, size, o;
	char digest[2 * IMASTREAM_HASH_MAX_DIGEST + 16];
	bool erase;
	char *line;

	erase = f->pkg->op == IMASTREAM_PKG_ERASE || (f->flags & IMASTREAM_FILE_ERASE);
	if (erase && !gone(f))
		return true;
	if (erase)
		strcpy(digest, "erased");
	else
		digest_field(r, f, digest, sizeof(digest));
	name_len = strlen(name);
	nevra_len = strlen(f->pkg->nevra);
	size = 3 * (name_len + nevra_len) + strlen(digest) + 64 +
	       ARRAY_SIZE(label_names) * (3 * MAX_LABEL_SHOWN + 64) + 3 * 64;
	if (r->len + size > r->cap) {
		size_t cap = r->len + size > FLUSH_AT ? r->len + size : FLUSH_AT;
		char *grown = realloc(r->buf, cap);

		if (!grown)
			return false;
		r->buf = grown;
		r->cap = cap;
	}
	line = r->buf + r->len;
	o = ims_escape(name, name_len, NULL, line, size);
	line[o++] = ' ';
	o += ims_escape(f->pkg->nevra, nevra_len, NULL, line + o, size - o);
	/* By hand, not snprintf: this runs for every file and was half of the plugin's work. */
	line[o++] = ' ';
	o = (size_t)(stpcpy(line + o, digest) - line);
	line[o++] = ' ';
	o = (size_t)(stpcpy(line + o, r->keyid[0] ? r->keyid : "-") - line);
	line[o++] = ' ';
	if (r->domain)
		o += ims_escape(r->domain, strlen(r->domain), NULL, line + o, size - o);
	else
		line[o++] = '-';
	line[o++] = ' ';
	if (erase)
		line[o++] = '-';
	else
		o += format_labels(f, line + o, size - o - 1);
	line[o++] = '\n';
	r->len += o;
	if (erase)
		r->buf_erased++;
	else
		r->buf_installed++;
	return true;
}

static void record_file_done(void *state, struct imastream_file *f, int res)
{
	struct record *r = state;
	const char *name = f->dest ? f->dest : f->path;

	if (r->open_files && !(f->flags & IMASTREAM_FILE_UNOWNED))
		r->open_files--;
	if (!res && name && f->pkg && !(f->flags & (IMASTREAM_FILE_SKIP | IMASTREAM_FILE_UNOWNED)) &&
	    !add_line(r, f, name)) {
		r->write_errors++;
		ims_logf(r->log, IMASTREAM_LOG_ERR, "record: no memory for the record of %s", name);
	}
	/* Whole lines only, and no later than the package's last file in place. */
	if (!r->open_files || r->len >= FLUSH_AT)
		flush(r);
}

static const struct imastream_plugin_key record_keys[] = {
	{ .name = "record_log", .help = "file the record plugin appends one line per file to" },
	{ .name = "record_syslog", .def = "authpriv", .check = check_facility,
	  .help = "syslog facility of its per-transaction summary, or none" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_record_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "record",
	.rank = IMASTREAM_RANK_ANY,
	.keys = record_keys,
	.init = record_init,
	.cleanup = record_cleanup,
	.tsm_pre = record_tsm_pre,
	.tsm_post = record_tsm_post,
	.psm_pre = record_psm_pre,
	.psm_post = record_psm_post,
	.file_opened = record_file_opened,
	.file_done = record_file_done,
};
