// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * imastream.so: the rpm transaction plugin.  It maps rpm's hooks onto the chain and is the
 * only place where errors become rpmRC:
 *   init → configuration (file, macros, plugin options) and chain init (keys load here:
 *          file hooks run inside the chroot);  tsm_pre/post, psm_pre/post as they are;
 *   scriptlet_fork_post → script_exec;  fsm_file_pre → file_opened;
 *   fsm_file_prepare → file_closed (content verified, metadata final, not yet renamed);
 *   fsm_file_post → file_done.  Files rpm never posts (a failed unpack) are ended in
 *   psm_post, so every file_opened has its file_done.
 * Sign mode: a signing worker runs from tsm_pre to tsm_post, stopped around each
 * scriptlet (scriptlet_pre/post: rpm forks in between).  At a package's first file it
 * gets every regular file's header digest, owner and mode, and makes both signatures
 * ahead of rpm's stream; fsm_file_prepare takes them, or waits for them, before it
 * returns, so both are on the file before rpm renames it.  Where the worker cannot run
 * (a token's key), the signer's ECDSA nonce worker instead.
 * verity = on: fs-verity is enabled in fsm_file_post, the first hook after rpm closed its
 * write-only descriptor (it is still open in fsm_file_prepare, and the kernel refuses
 * verity while a writer is open).  rpm has renamed the file by then and ignores the
 * hook's result: a file whose verity cannot be enabled keeps its sigv3 without verity,
 * which a digest_type=verity policy refuses to run (fail closed); the error is logged.
 * %_imastream_sync file (the default): a labelled file is fsync'ed in fsm_file_prepare,
 * after its labels and before rpm renames it, so that a power cut never leaves a signed
 * file at its final name whose content did not reach the disk (rpm syncs nothing unless
 * %_flush_io is set; when it is, rpm's own fsync after this hook does the same job).
 * It stays whole, over 600 lines: each function is one of rpm's hooks or what a hook needs
 * of rpm's types (rpmfi, rpmte, rpmRC); split, the hook order a reader checks against
 * rpm's fsm, and rpm's headers with it, would spread over several files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmstring.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "plugin/core/driver.h"
#include "plugin/rpm/replaced_digests.h"
#include "plugin/rpm/owners.h"
#include "plugin/rpm/rpmplugin-compat.h"

struct afile {
	struct imastream_file f;
	char *path;
	char *dest;
	uint64_t key;       /* hash of dest */
	uint64_t seq;       /* order of opening */
	struct afile *next; /* in its bucket of adapter.files */
};

struct adapter {
	struct imastream_config cfg;
	struct imastream_log log;
	struct imastream_chain *chain;
	struct imastream_txn txn;
	char *root;
	struct imastream_pkg pkg;
	char *nevra;
	bool in_psm;
	bool nofiledigest;
	int rootfd;	/* the transaction's root, or -1 */
	bool take_over; /* %_imastream_take_over: rpm takes over what imastream installed */
	/* rpm runs as root, so it chowns every file to its header owner. */
	bool rpm_sets_owner;
	/* %_imastream_sync file, and rpm's %_flush_io unset: fsync before the rename. */
	bool sync_files;
	/* %_imastream_sign_threads 1 (the default): signatures made on a second thread. */
	bool sign_ahead;
	/* The chain's signing worker runs (else the nonce worker, when sign_ahead). */
	bool presign;
	/* The package whose files are to be queued at its first file, and whether they were. */
	rpmte te;
	bool queued;
	/* Open files by final name: rpm opens all of a package's files before it posts any. */
	struct afile **files;
	size_t nbuckets, nfiles;
	uint64_t opened;
};

static void log_to_rpm(void *arg, int level, const char *msg)
{
	int rl;

	(void)arg;
	switch (level) {
	case IMASTREAM_LOG_ERR:
		rl = RPMLOG_ERR;
		break;
	case IMASTREAM_LOG_WARNING:
		rl = RPMLOG_WARNING;
		break;
	case IMASTREAM_LOG_NOTICE:
		rl = RPMLOG_NOTICE;
		break;
	case IMASTREAM_LOG_INFO:
		rl = RPMLOG_INFO;
		break;
	default:
		rl = RPMLOG_DEBUG;
		break;
	}
	rpmlog(rl, "imastream: %s\n", msg);
}

static rpmRC to_rc(int err)
{
	return err ? RPMRC_FAIL : RPMRC_OK;
}

/* rpm reports results as 0/non-zero: the chain wants 0 or a negative errno. */
static int to_res(int res)
{
	return res ? -ECANCELED : 0;
}

/* The configuration file read when %_imastream_config is not defined (if it exists). */
#define DEFAULT_CONFIG IMASTREAM_SYSCONFDIR "/imastream.conf"

static bool macro_defined(const char *name)
{
	char expr[80];
	char *v;
	bool defined;

	snprintf(expr, sizeof(expr), "%%{?%s:1}", name);
	v = rpmExpand(expr, NULL);
	defined = v && v[0] == '1';
	free(v);
	return defined;
}

/*
 * Every key of the set may come from %_imastream_KEY.  A defined macro counts even when
 * it expands to nothing: an empty value means what it means in the file (a path or text
 * key becomes unset, a key with a fixed set of values refuses it), never "the default".
 */
static int read_macros(struct adapter *a)
{
	char name[64], where[80];
	int err = 0;

	for (const char *const *k = imastream_config_keys(); *k && !err; k++) {
		char *value;

		snprintf(name, sizeof(name), "_imastream_%s", *k);
		if (!macro_defined(name))
			continue;
		snprintf(where, sizeof(where), "%%{%s}", name);
		value = rpmExpand(where, NULL);
		snprintf(where, sizeof(where), "macro %%%s", name);
		err = value ? imastream_config_set(&a->cfg, *k, value, where, &a->log) : -ENOMEM;
		free(value);
	}
	return err;
}

/* Not keys, but ours: the file to read, one owner per package, durability, threads. */
static const char *const adapter_macros[] = { "config", "take_over", "sync", "sign_threads", NULL };

static bool known_key(const char *key)
{
	for (const char *const *k = imastream_config_keys(); *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	for (const char *const *k = adapter_macros; *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/*
 * A misspelt %_imastream_KEY would be ignored without a word and the system installed in
 * the wrong mode: rpm's macro table is read and the first unknown name stops rpm at init,
 * as an unknown key of the file does.  rpmDumpMacroTable() is the one way librpm lists
 * its macros in 4.18, 4.20 and 6.1 alike (no call enumerates them, and the Lua "macros"
 * table cannot be iterated); each line is "%3d%c NAME", then "<lo>" (6.x modifiers),
 * "(opts)" or a tab and the body, which may run over further lines.
 */
static int check_unknown_macros(struct adapter *a)
{
	static const char prefix[] = "_imastream_";
	char *dump = NULL, *line, *save = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&dump, &size);
	int err = 0;

	if (!f)
		return ims_err(&a->log, -ENOMEM, "cannot list rpm's macros: %s", strerror(errno));
	rpmDumpMacroTable(NULL, f);
	if (fclose(f) != 0 || !dump) {
		free(dump);
		return ims_err(&a->log, -ENOMEM, "cannot list rpm's macros: %s", strerror(errno));
	}
	for (line = strtok_r(dump, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char name[128];
		const char *key;

		if (sscanf(line, "%*d%*1[:=] %127[^\t (<]", name) != 1 ||
		    strncmp(name, prefix, sizeof(prefix) - 1) != 0)
			continue;
		key = name + sizeof(prefix) - 1;
		if (!known_key(key))
			err = ims_err(&a->log, -EINVAL,
				      "macro %%%s is not an imastream setting; the nearest is "
				      "%%_imastream_%s (see imastream-rpm(8))",
				      name, ims_config_nearest_key(key, adapter_macros));
	}
	free(dump);
	return err;
}

/* "key=value" words after the path in %__transaction_imastream. */
static int read_opts(struct adapter *a, const char *opts)
{
	char *copy, *save = NULL, *word;
	int err = 0;

	if (!opts || !opts[0])
		return 0;
	copy = strdup(opts);
	if (!copy)
		return -ENOMEM;
	for (word = strtok_r(copy, " \t", &save); word && !err; word = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(word, '=');

		if (!eq) {
			err = ims_err(&a->log, -EINVAL,
				      "plugin option \"%s\" is not key=value", word);
			break;
		}
		*eq = '\0';
		err = imastream_config_set(&a->cfg, word, eq + 1, "plugin options", &a->log);
	}
	free(copy);
	return err;
}

/*
 * %_imastream_sync: file (unset: the default) or none.  Not a chain key: only rpm
 * renames files the chain labelled without syncing them (imastream install has --sync).
 */
static int read_sync(struct adapter *a)
{
	char *v;
	int err = 0;

	a->sync_files = true;
	if (!macro_defined("_imastream_sync"))
		goto flush_io;
	v = rpmExpand("%{_imastream_sync}", NULL);
	if (!v)
		return -ENOMEM;
	if (strcmp(v, "none") == 0)
		a->sync_files = false;
	else if (strcmp(v, "file") != 0)
		err = ims_err(&a->log, -EINVAL, "macro %%_imastream_sync: '%s' is not file or none",
			      v);
	free(v);
flush_io:
	/* rpm fsyncs every file itself, right after fsm_file_prepare: once is enough. */
	if (a->sync_files && rpmExpandNumeric("%{?_flush_io}") > 0)
		a->sync_files = false;
	return err;
}

/*
 * %_imastream_sign_threads: 1 lets a worker thread prepare the ECDSA nonces of the
 * signatures while rpm writes files; 0 signs on rpm's thread alone. Unset: 1 where rpm
 * may run on two CPUs or more, else 0.
 */
static int read_sign_threads(struct adapter *a)
{
	char *v;
	int err = 0;

	a->sign_ahead = true;
	if (!macro_defined("_imastream_sign_threads")) {
		a->sign_ahead = ims_more_than_one_cpu();
		return 0;
	}
	v = rpmExpand("%{_imastream_sign_threads}", NULL);
	if (!v)
		return -ENOMEM;
	if (strcmp(v, "0") == 0)
		a->sign_ahead = false;
	else if (strcmp(v, "1") != 0)
		err = ims_err(&a->log, -EINVAL,
			      "macro %%_imastream_sign_threads: '%s' is not 0 or 1", v);
	free(v);
	return err;
}

/*
 * The file first: %_imastream_config names it (it must then exist; defined empty, none is
 * read), else the installed one is read when it exists.  Read at init, before rpm enters
 * --root: the host's file, as rpm's own configuration.  Then macros, then options.
 */
static int configure(struct adapter *a, rpmPlugin plugin)
{
	char *path = NULL;
	int err = 0;

	if (macro_defined("_imastream_config")) {
		path = rpmExpand("%{_imastream_config}", NULL);
		if (path && path[0])
			err = imastream_config_load(&a->cfg, path, &a->log);
	} else if (access(DEFAULT_CONFIG, F_OK) == 0 || errno != ENOENT) {
		err = imastream_config_load(&a->cfg, DEFAULT_CONFIG, &a->log);
	}
	free(path);
	if (!err)
		err = check_unknown_macros(a);
	if (!err)
		err = read_macros(a);
	if (!err)
		err = read_opts(a, rpmPluginOpts(plugin));
	if (!err)
		err = read_sync(a);
	if (!err)
		err = read_sign_threads(a);
	return err;
}

static void adapter_free(struct adapter *a);

static rpmRC ims_init(rpmPlugin plugin, rpmts ts)
{
	struct adapter *a;
	int err;

	(void)ts;
	rpmPluginSetData(plugin, NULL);
	a = calloc(1, sizeof(*a));
	if (!a)
		return RPMRC_FAIL;
	a->log.fn = log_to_rpm;
	a->rootfd = -1;
	/* rpm's fsmSetmeta() asks getuid() the same: once here, not once per file. */
	a->rpm_sets_owner = getuid() == 0;
	err = imastream_config_init(&a->cfg);
	if (!err)
		err = configure(a, plugin);
	if (!err && a->cfg.mode == IMASTREAM_MODE_OFF) {
		/* NOTFOUND: rpm unloads the plugin quietly. */
		rpmlog(RPMLOG_DEBUG, "imastream: mode off, not loaded\n");
		adapter_free(a);
		return RPMRC_NOTFOUND;
	}
	if (!err)
		err = imastream_chain_from_config(&a->cfg, &a->log, &a->chain);
	if (err) {
		adapter_free(a);
		return RPMRC_FAIL;
	}
	rpmPluginSetData(plugin, a);
	return RPMRC_OK;
}

/*
 * rpm opens every file of a package before it posts any, so thousands wait at once: a
 * hash table finds each in one step (a tree did ~13 compares of names sharing long
 * prefixes, a third of the plugin's own time on 5,000 small files).
 */
static uint64_t name_key(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return h;
}

static struct afile **bucket(const struct adapter *a, uint64_t key)
{
	return &a->files[key & (a->nbuckets - 1)];
}

/* Adds @af; the table doubles when it holds as many files as buckets. */
static int track(struct adapter *a, struct afile *af)
{
	if (a->nfiles >= a->nbuckets) {
		size_t n = a->nbuckets ? 2 * a->nbuckets : 256;
		struct afile **old = a->files, **b;
		size_t old_n = a->nbuckets;

		a->files = calloc(n, sizeof(*a->files));
		if (!a->files) {
			a->files = old;
			return -ENOMEM;
		}
		a->nbuckets = n;
		for (size_t i = 0; i < old_n; i++) {
			for (struct afile *x = old[i], *next; x; x = next) {
				next = x->next;
				b = bucket(a, x->key);
				x->next = *b;
				*b = x;
			}
		}
		free(old);
	}
	af->seq = a->opened++;
	af->next = *bucket(a, af->key);
	*bucket(a, af->key) = af;
	a->nfiles++;
	return 0;
}

static void untrack(struct adapter *a, struct afile *af)
{
	for (struct afile **p = bucket(a, af->key); *p; p = &(*p)->next) {
		if (*p == af) {
			*p = af->next;
			a->nfiles--;
			return;
		}
	}
}

static void afile_free(struct afile *af)
{
	if (!af)
		return;
	free(af->path);
	free(af->dest);
	free(af);
}

static int later_first(const void *x, const void *y)
{
	const struct afile *a = *(struct afile *const *)x, *b = *(struct afile *const *)y;

	return a->seq < b->seq ? 1 : a->seq > b->seq ? -1 : 0;
}

static void end_file(struct adapter *a, struct afile *af, int res)
{
	untrack(a, af);
	imastream_chain_file_done(a->chain, &af->f, res);
	afile_free(af);
}

/*
 * Ends every file rpm did not post (a failed unpack, unowned directories): the chain's
 * posts still run, latest first, as rpm undoes an unpack.
 */
static void end_open_files(struct adapter *a, int res)
{
	struct afile **all = a->nfiles ? calloc(a->nfiles, sizeof(*all)) : NULL;
	size_t n = 0;

	for (size_t i = 0; all && i < a->nbuckets; i++)
		for (struct afile *af = a->files[i]; af; af = af->next)
			all[n++] = af;
	if (all) {
		qsort(all, n, sizeof(*all), later_first);
		for (size_t i = 0; i < n; i++)
			end_file(a, all[i], res);
		free(all);
	}
	/* Without memory for the order, in any order: every file still gets its post. */
	for (size_t i = 0; a->nfiles && i < a->nbuckets; i++)
		while (a->files[i])
			end_file(a, a->files[i], res);
}

static void adapter_free(struct adapter *a)
{
	if (!a)
		return;
	if (a->chain)
		end_open_files(a, -ECANCELED);
	imastream_chain_free(a->chain);
	free(a->files);
	headerFree(a->pkg.rpm_header);
	imastream_config_release(&a->cfg);
	if (a->rootfd >= 0)
		close(a->rootfd);
	free(a->root);
	free(a->nevra);
	free(a);
}

static void ims_cleanup(rpmPlugin plugin)
{
	adapter_free(rpmPluginGetData(plugin));
	rpmPluginSetData(plugin, NULL);
}

/* The signing worker where it can run, else the nonce worker (quiet when neither can). */
static int start_workers(struct adapter *a)
{
	int err = ims_chain_presign(a->chain, true);

	a->presign = !err;
	if (err == -EOPNOTSUPP)
		err = ims_chain_sign_ahead(a->chain, true);
	return err;
}

static void stop_workers(struct adapter *a)
{
	ims_chain_presign(a->chain, false);
	ims_chain_sign_ahead(a->chain, false);
}

static rpmRC ims_tsm_pre(rpmPlugin plugin, rpmts ts)
{
	struct adapter *a = rpmPluginGetData(plugin);
	rpmtransFlags tf = rpmtsFlags(ts);
	const char *root = rpmtsRootDir(ts);
	int err;

	if (!a)
		return RPMRC_OK;
	free(a->root);
	a->root = strdup(root ? root : "/");
	if (!a->root)
		return RPMRC_FAIL;
	a->txn.size = sizeof(a->txn);
	a->txn.root = a->root;
	a->txn.flags = 0;
	a->txn.rpm_ts = ts;
	a->nofiledigest = tf & RPMTRANS_FLAG_NOFILEDIGEST;
	if (a->nofiledigest)
		a->txn.flags |= IMASTREAM_TXN_NOFILEDIGEST;
	if (tf & RPMTRANS_FLAG_TEST)
		a->txn.flags |= IMASTREAM_TXN_TEST;
	if (tf & RPMTRANS_FLAG_NOCONTEXTS)
		a->txn.flags |= IMASTREAM_TXN_NOCONTEXTS;
	/* One owner per package: what imastream install recorded is not rpm's to change. */
	if (a->rootfd >= 0)
		close(a->rootfd);
	a->rootfd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a->take_over = ims_rpm_take_over_wanted();
	err = a->rootfd < 0 ? ims_err(&a->log, -errno, "%s: cannot open the root: %m", a->root) :
			      ims_rpm_owners_check(ts, a->rootfd, a->root, a->take_over, &a->log);
	if (!err)
		err = ims_probe_root_xattrs(
			&a->cfg, a->txn.root,
			" (set %_imastream_no_xattr_support skip to install anyway)", &a->log);
	if (!err)
		err = ims_probe_root_verity(&a->cfg, a->txn.root, &a->log);
	/* What this transaction replaces may be in this boot's measurement list already. */
	if (!err && !(tf & RPMTRANS_FLAG_TEST))
		err = ims_rpm_boot_record(ts, a->rootfd, &a->log);
	/* Only for the transaction: no thread of ours lives in dnf between transactions.
	 * Started before the chain's tsm_pre, whose post a failure here would skip. */
	if (!err && a->sign_ahead && !(tf & RPMTRANS_FLAG_TEST))
		err = start_workers(a);
	if (!err) {
		err = imastream_chain_tsm_pre(a->chain, &a->txn);
		if (err)
			stop_workers(a);
	}
	return to_rc(err);
}

static rpmRC ims_tsm_post(rpmPlugin plugin, rpmts ts, int res)
{
	struct adapter *a = rpmPluginGetData(plugin);

	(void)ts;
	if (a) {
		stop_workers(a);
		imastream_chain_tsm_post(a->chain, &a->txn, to_res(res));
		a->txn.rpm_ts = NULL;
	}
	return RPMRC_OK;
}

static rpmRC ims_psm_pre(rpmPlugin plugin, rpmte te)
{
	struct adapter *a = rpmPluginGetData(plugin);
	int verified;

	if (!a)
		return RPMRC_OK;
	free(a->nevra);
	a->nevra = strdup(rpmteNEVRA(te) ? rpmteNEVRA(te) : "(unknown)");
	if (!a->nevra)
		return RPMRC_FAIL;
	a->pkg.size = sizeof(a->pkg);
	a->pkg.nevra = a->nevra;
	/* Policy plugins judge the package by its header: one reference per psm pair. */
	headerFree(a->pkg.rpm_header);
	a->pkg.rpm_header = rpmteHeader(te);
	switch (rpmteType(te)) {
	case TR_ADDED:
		a->pkg.op = IMASTREAM_PKG_INSTALL;
		break;
	case TR_REMOVED:
		a->pkg.op = IMASTREAM_PKG_ERASE;
		break;
	default:
		a->pkg.op = IMASTREAM_PKG_OTHER;
		break;
	}
	verified = rpmteVerified(te);
	a->pkg.flags = 0;
	if (!(verified & RPMSIG_UNVERIFIED_TYPE) && (verified & RPMSIG_SIGNATURE_TYPE))
		a->pkg.flags |= IMASTREAM_PKG_HEADER_VERIFIED;
	if (!a->nofiledigest)
		a->pkg.flags |= IMASTREAM_PKG_FILEDIGESTS_CHECKED;
	a->in_psm = true;
	a->te = te;
	a->queued = false;
	return to_rc(imastream_chain_psm_pre(a->chain, &a->pkg));
}

static rpmRC ims_psm_post(rpmPlugin plugin, rpmte te, int res)
{
	struct adapter *a = rpmPluginGetData(plugin);

	if (!a || !a->in_psm)
		return RPMRC_OK;
	end_open_files(a, to_res(res));
	a->te = NULL;
	ims_chain_presign_reset(a->chain);
	if (!res && a->take_over && a->rootfd >= 0 && !(a->txn.flags & IMASTREAM_TXN_TEST))
		ims_rpm_owners_release(te, a->rootfd, &a->log);
	imastream_chain_psm_post(a->chain, &a->pkg, to_res(res));
	a->pkg.rpm_header = headerFree(a->pkg.rpm_header);
	a->in_psm = false;
	return RPMRC_OK;
}

/*
 * rpm forks for a scriptlet after this hook: the worker is stopped first, so that no
 * lock of ours or OpenSSL's is held by a thread the child will not have.
 */
static rpmRC ims_scriptlet_pre(rpmPlugin plugin, const char *s_name, int type)
{
	struct adapter *a = rpmPluginGetData(plugin);

	(void)s_name;
	(void)type;
	if (a)
		stop_workers(a);
	return RPMRC_OK;
}

static rpmRC ims_scriptlet_post(rpmPlugin plugin, const char *s_name, int type, int res)
{
	struct adapter *a = rpmPluginGetData(plugin);

	(void)s_name;
	(void)type;
	(void)res;
	if (!a || !a->sign_ahead || !a->txn.rpm_ts || (a->txn.flags & IMASTREAM_TXN_TEST))
		return RPMRC_OK;
	return to_rc(start_workers(a));
}

static rpmRC ims_scriptlet_fork_post(rpmPlugin plugin, const char *path, int type)
{
	struct adapter *a = rpmPluginGetData(plugin);
	struct imastream_script s = { .size = sizeof(s), .path = path };

	if (!a)
		return RPMRC_OK;
	if (type & RPMSCRIPTLET_FORK)
		s.type |= IMASTREAM_SCRIPT_FORK;
	if (type & RPMSCRIPTLET_EXEC)
		s.type |= IMASTREAM_SCRIPT_EXEC;
	return to_rc(imastream_chain_script_exec(a->chain, &s));
}

/*
 * The final name, built from the directory and base names: rpmfiFN() would do, but on
 * 4.18 calling it inside prepare frees the dest string rpm hands to every plugin.
 */
static char *final_name(rpmfi fi, const char *path)
{
	if (fi && rpmfiDN(fi) && rpmfiBN(fi))
		return rstrscat(NULL, rpmfiDN(fi), rpmfiBN(fi), NULL);
	return path ? strdup(path) : NULL;
}

static struct afile *find(struct adapter *a, const char *dest)
{
	uint64_t key = name_key(dest);

	if (!a->nfiles)
		return NULL;
	for (struct afile *af = *bucket(a, key); af; af = af->next)
		if (af->key == key && strcmp(af->dest, dest) == 0)
			return af;
	return NULL;
}

static unsigned int file_flags(rpmfi fi, rpmFsmOp op)
{
	rpmFileAction action = XFO_ACTION(op);
	unsigned int flags = 0;

	if (XFO_FLAGS(op) & FAF_UNOWNED)
		flags |= IMASTREAM_FILE_UNOWNED;
	if (XFA_SKIPPING(action))
		flags |= IMASTREAM_FILE_SKIP;
	if (action == FA_ERASE)
		flags |= IMASTREAM_FILE_ERASE;
	if (fi) {
		rpmfileAttrs attrs = rpmfiFFlags(fi);

		if (attrs & RPMFILE_CONFIG)
			flags |= IMASTREAM_FILE_CONFIG;
		if (attrs & RPMFILE_GHOST)
			flags |= IMASTREAM_FILE_GHOST;
		if (rpmfiFNlink(fi) > 1)
			flags |= IMASTREAM_FILE_HARDLINK;
	}
	return flags;
}

static struct afile *open_file(struct adapter *a, rpmfi fi, const char *path, const char *dest,
			       mode_t mode, rpmFsmOp op, int *err)
{
	struct afile *af, *old;

	*err = -ENOMEM;
	af = calloc(1, sizeof(*af));
	if (!af)
		return NULL;
	af->path = path ? strdup(path) : NULL;
	af->dest = dest ? strdup(dest) : final_name(fi, path);
	if ((path && !af->path) || !af->dest) {
		afile_free(af);
		return NULL;
	}
	af->key = name_key(af->dest);
	/* The same name again (rpm retried it): end the first one before tracking this one. */
	old = find(a, af->dest);
	if (old) {
		untrack(a, old);
		imastream_chain_file_done(a->chain, &old->f, -ECANCELED);
		afile_free(old);
	}
	if (track(a, af)) {
		afile_free(af);
		return NULL;
	}
	af->f.size = sizeof(af->f);
	af->f.path = af->path;
	af->f.dest = af->dest;
	af->f.fd = -1;
	af->f.mode = mode;
	af->f.flags = file_flags(fi, op);
	af->f.pkg = a->in_psm ? &a->pkg : NULL;
	*err = imastream_chain_file_opened(a->chain, &af->f);
	return af;
}

/*
 * What the signing worker needs of each regular file the package installs, from its
 * header: the digest rpm will check, the owner and mode rpm will set.  Left out: %config
 * files (config_files may want a digest), files carrying the package's signature (it
 * may become security.ima), and, for the EVM signature only, files with capabilities or
 * an owner rpm does not set (not root).  Those are signed on rpm's thread as before.
 */
static int queue_files(struct adapter *a)
{
	rpmfiles files = rpmteFiles(a->te);
	rpmfi fi = files ? rpmfilesIter(files, RPMFI_ITER_FWD) : NULL;
	int fx, err = 0;

	while (!err && fi && (fx = rpmfiNext(fi)) >= 0) {
		struct ims_presign_file pf = { .algo = 0 };
		const struct imastream_hash_info *hi;
		const unsigned char *d;
		const char *caps;
		size_t len = 0, sig_len = 0;
		int algo = 0;
		struct stat sb;

		if (!S_ISREG(rpmfiFMode(fi)) ||
		    (rpmfiFFlags(fi) & (RPMFILE_CONFIG | RPMFILE_GHOST)))
			continue;
		if (rpmfiFSignature(fi, &sig_len) && sig_len)
			continue;
		d = rpmfiFDigest(fi, &algo, &len);
		hi = imastream_hash_by_rpm_id(algo);
		if (!d || !hi || len != hi->digest_size || rpmfiStat(fi, 0, &sb) != 0)
			continue;
		caps = rpmfiFCaps(fi);
		pf.algo = hi->algo;
		pf.digest = d;
		pf.digest_len = len;
		pf.uid = sb.st_uid;
		pf.gid = sb.st_gid;
		pf.mode = sb.st_mode;
		pf.evm = a->rpm_sets_owner && !(caps && caps[0]);
		err = ims_chain_presign_file(a->chain, (size_t)fx, &pf);
	}
	rpmfiFree(fi);
	rpmfilesFree(files);
	return err;
}

static rpmRC ims_fsm_file_pre(rpmPlugin plugin, rpmfi fi, const char *path, mode_t file_mode,
			      rpmFsmOp op)
{
	struct adapter *a = rpmPluginGetData(plugin);
	int err;

	if (!a)
		return RPMRC_OK;
	/* The first file of an install (not a pretrans's or an erase's psm): all at once. */
	if (a->presign && a->te && !a->queued && a->pkg.op == IMASTREAM_PKG_INSTALL &&
	    !a->nofiledigest) {
		a->queued = true;
		/* Without memory for the queue, the files left out are signed here: no failure. */
		queue_files(a);
	}
	open_file(a, fi, path, NULL, file_mode, op, &err);
	return to_rc(err);
}

/* The header digest, when rpm just checked the written bytes against it. */
static void take_known_digest(struct adapter *a, struct afile *af, rpmfi fi, rpmFsmOp op)
{
	const struct imastream_hash_info *hi;
	const unsigned char *d;
	size_t len = 0;
	int algo = 0;
	bool zero = true;

	af->f.known_algo = 0;
	af->f.known_len = 0;
	/* FA_TOUCH rewrote metadata only: nothing was checked in this pass. */
	if (!fi || a->nofiledigest || !S_ISREG(af->f.mode) || XFO_ACTION(op) == FA_TOUCH)
		return;
	d = rpmfiFDigest(fi, &algo, &len);
	hi = imastream_hash_by_rpm_id(algo);
	if (!d || !hi || len != hi->digest_size || len > sizeof(af->f.known_digest))
		return;
	for (size_t i = 0; i < len; i++)
		zero &= d[i] == 0;
	if (zero)
		return;
	memcpy(af->f.known_digest, d, len);
	af->f.known_len = len;
	af->f.known_algo = hi->algo;
}

/*
 * The file's IMA signature from the header (RPMTAG_FILESIGNATURES, hex there; rpm 4.18
 * moves it from the signature header's tag 274 when it reads the package, and rpmfi
 * hands it back decoded), unverified: the ima plugin checks it.  It points into rpm's
 * file set, valid for this hook only.
 */
static void take_pkg_sig(struct afile *af, rpmfi fi)
{
	const unsigned char *sig;
	size_t len = 0;

	af->f.pkg_sig = NULL;
	af->f.pkg_sig_len = 0;
	if (!fi || !S_ISREG(af->f.mode))
		return;
	sig = rpmfiFSignature(fi, &len);
	if (sig && len) {
		af->f.pkg_sig = sig;
		af->f.pkg_sig_len = len;
	}
}

/*
 * On a regular file rpm created, fsmSetmeta() set the owner and mode rpmfiStat() gives
 * and, of the xattrs EVM covers, only security.capability when the header has one; a
 * hard link's inode may have been labelled under another name.  Such a file's EVM input
 * is what rpm and the chain set (the evm plugin checks one file of each package).
 */
static bool rpm_set_all_meta(const struct adapter *a, const struct afile *af, rpmfi fi)
{
	const char *caps = fi ? rpmfiFCaps(fi) : NULL;

	return fi && a->rpm_sets_owner && (af->f.flags & IMASTREAM_FILE_CREATED) &&
	       !(af->f.flags & IMASTREAM_FILE_HARDLINK) && S_ISREG(af->f.mode) &&
	       !(caps && caps[0]);
}

static rpmRC ims_fsm_file_prepare(rpmPlugin plugin, rpmfi fi, int fd, const char *path,
				  const char *dest, mode_t file_mode, rpmFsmOp op)
{
	struct adapter *a = rpmPluginGetData(plugin);
	struct afile *af;
	struct stat sb;
	int err, rc;

	if (!a)
		return RPMRC_OK;
	af = find(a, dest ? dest : path);
	if (!af) {
		/* No pre for this one (rpm never skips it, but be safe): start it now. */
		af = open_file(a, fi, path, dest, file_mode, op, &err);
		if (err)
			return RPMRC_FAIL;
	}
	if (path && (!af->path || strcmp(af->path, path) != 0)) {
		char *copy = strdup(path);

		if (!copy)
			return RPMRC_FAIL;
		free(af->path);
		af->path = copy;
		af->f.path = copy;
	}
	af->f.fd = fd;
	af->f.mode = file_mode;
	/* rpm wrote a new file under a temp name (O_EXCL), renamed to dest at commit. */
	if (path && dest && strcmp(path, dest) != 0)
		af->f.flags |= IMASTREAM_FILE_CREATED;
	/*
	 * Owner, mode and size as rpm left them.  As root, rpm's fsmSetmeta() has just set
	 * them from rpmfiStat() (the header's owner by name, its mode, and its size, which is
	 * what rpm wrote), so that answer costs no system call; otherwise (rpm not root, an
	 * unowned directory) from the fd, or the path without one.
	 */
	if (fi && a->rpm_sets_owner)
		rc = rpmfiStat(fi, 0, &sb);
	else
		rc = fd >= 0 ? fstat(fd, &sb) : (path ? lstat(path, &sb) : -1);
	if (rc == 0) {
		af->f.uid = sb.st_uid;
		af->f.gid = sb.st_gid;
		af->f.mode = sb.st_mode;
		af->f.content_size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
		if (rpm_set_all_meta(a, af, fi))
			af->f.flags |= IMASTREAM_FILE_META_KNOWN;
	}
	take_known_digest(a, af, fi, op);
	take_pkg_sig(af, fi);
	/* The worker's signatures of this file, made from rpm's header: fsm_file_pre queued them. */
	ims_chain_presign_current(a->chain, fi && a->queued ? rpmfiFX(fi) : -1);
	err = imastream_chain_file_closed(a->chain, &af->f);
	ims_chain_presign_current(a->chain, -1);
	/* Content and labels on the disk before the rename that gives them the final name. */
	if (!err && a->sync_files && fd >= 0 && S_ISREG(af->f.mode) && fsync(fd))
		err = ims_err(&a->log, -errno, "%s: fsync: %m (%s)", af->f.path,
			      a->nevra ? a->nevra : "?");
	/* rpm closes its fd after this hook: never keep it, nor its file set's bytes. */
	af->f.fd = -1;
	af->f.pkg_sig = NULL;
	af->f.pkg_sig_len = 0;
	return to_rc(err);
}

/* rpm closed its descriptor after prepare: fs-verity can be enabled now, by the final path. */
static void enable_verity(struct adapter *a, struct afile *af)
{
	int fd = open(af->f.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		ims_err(&a->log, -errno, "%s: cannot open it to enable fs-verity: %s (%s)",
			af->f.path, strerror(errno), a->nevra ? a->nevra : "?");
		return;
	}
	/* Logged as an error: rpm goes on, and the file stays unrunnable under a verity policy. */
	ims_verity_enable(fd, af->f.path, &a->log);
	close(fd);
}

static rpmRC ims_fsm_file_post(rpmPlugin plugin, rpmfi fi, const char *path, mode_t file_mode,
			       rpmFsmOp op, int res)
{
	struct adapter *a = rpmPluginGetData(plugin);
	struct afile *af;
	char *dest;

	(void)file_mode;
	(void)op;
	if (!a)
		return RPMRC_OK;
	/* 4.18.0 passes a NULL path for unowned directories: psm_post ends those. */
	dest = fi ? final_name(fi, path) : (path ? strdup(path) : NULL);
	if (!dest)
		return RPMRC_OK;
	af = find(a, dest);
	free(dest);
	if (!af)
		return RPMRC_OK;
	untrack(a, af);
	if (path) {
		/* Now the final name (a %config may have become .rpmnew). */
		af->f.path = path;
	}
	if (res == RPMRC_OK && path && ims_file_wants_verity(&af->f))
		enable_verity(a, af);
	imastream_chain_file_done(a->chain, &af->f, to_res(res));
	afile_free(af);
	return RPMRC_OK;
}

/* The plugin's one export, rpm's hook table (policy/execcon.c's libselinux table looks alike). */
IMASTREAM_API struct rpmPluginHooks_s imastream_hooks = {
	.init = ims_init,
	.cleanup = ims_cleanup,
	.tsm_pre = ims_tsm_pre,
	.tsm_post = ims_tsm_post,
	.psm_pre = ims_psm_pre,
	.psm_post = ims_psm_post,
	.scriptlet_pre = ims_scriptlet_pre,
	.scriptlet_fork_post = ims_scriptlet_fork_post,
	.scriptlet_post = ims_scriptlet_post,
	.fsm_file_pre = ims_fsm_file_pre,
	.fsm_file_prepare = ims_fsm_file_prepare,
	.fsm_file_post = ims_fsm_file_post,
};
