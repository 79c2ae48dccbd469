// SPDX-License-Identifier: LGPL-2.1-or-later
/* The audit of an installed root: each file against its rpm header, its security.ima and security.evm. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>

#include "common/private.h"
#include "filesig/verifier.h"
#include "imastream/audit.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "imastream/rpmdb.h"
#include "installed/accepted.h"
#include "installed/ordered_pool.h"
#include "installed/private.h"
#include "xattr/codec.h"

/* Enough threads for the cores of most machines; each file in flight holds two descriptors. */
#define MAX_WORKERS 8
#define MAX_INFLIGHT 64

/* What one worker thread owns: its own verifier (its buffers), hasher and their state. */
struct audit_worker {
	struct imastream_verifier *verifier;
	struct imastream_hasher *hasher; /* the header's algorithm and security.ima's */
	uint32_t hasher_mask;
};

/* One regular file between its opening (caller's thread) and its report (likewise). */
struct audit_item {
	struct audit_item *next_free;
	struct imastream_audit_file af;
	struct ims_installed in;
	char *path, *nevra;
	bool content; /* open and regular: to hash and verify */
	const struct imastream_hash_info *hi;
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST]; /* the header's digest */
	size_t want_len;
	const struct imastream_accepted_file *accepted; /* an accepted edit of it, or NULL */
	bool accepted_match;				/* its content is the accepted edit's */
};

struct audit {
	const char *root;
	int rootfd;
	struct ims_ids ids;
	unsigned int verify_flags;
	struct audit_worker *workers;
	unsigned int nworkers;
	struct ims_pool *pool;
	struct audit_item *free_items;
	void (*fn)(void *arg, const struct imastream_audit_file *f);
	void *arg;
	const struct imastream_log *log;
	struct imastream_accepted *accepted;
	struct ims_rpmdb_owner *owners; /* for rpm -V's shared files; NULL: none opened yet */
	bool owners_failed;
};

/* The file's security.ima (or user.ima), read once for the hashing and the verifier. */
struct ima_value {
	uint8_t bytes[1024]; /* the kernel allocates what it is offered */
	size_t len;          /* 0: none read here (absent, longer: left to the verifier) */
};

/* Reads @fd's security.ima into @iv: its algorithm, 0 when none can be read. */
static int ima_algo(const struct audit *a, int fd, struct ima_value *iv)
{
	const char *name = imastream_xattr_name(IMASTREAM_ATTR_IMA,
						a->verify_flags & IMASTREAM_FILESIG_USER);
	struct imastream_xattr_info info = { .size = sizeof(info) };
	ssize_t n = fgetxattr(fd, name, iv->bytes, sizeof(iv->bytes));

	iv->len = n > 0 ? (size_t)n : 0;
	if (n <= 0 || imastream_xattr_decode(iv->bytes, (size_t)n, &info, NULL))
		return 0;
	return imastream_hash_by_algo(info.algo) ? info.algo : 0;
}

/*
 * Reads the content once for every digest the audit needs: the header's and the one
 * security.ima holds, which the verifier then takes from *@hashed (this file's hasher,
 * or NULL when nothing was read).
 * Return: 1 the header's digest matches, 0 it does not, -errno.
 */
static int hash_content(const struct audit *a, struct audit_worker *w, const struct audit_item *it,
			struct ima_value *iv, const struct imastream_hasher **hashed,
			bool *accepted)
{
	const struct imastream_hash_info *hi = it->hi;
	const uint8_t *digest;
	size_t len;
	uint32_t mask = 0;
	int algo, err;
	bool header;

	*hashed = NULL;
	header = it->want_len && hi && it->want_len == hi->digest_size;
	if (header)
		mask |= IMASTREAM_HASH_BIT(hi->algo);
	algo = ima_algo(a, it->in.fd, iv);
	if (algo)
		mask |= IMASTREAM_HASH_BIT(algo);
	if (!mask)
		return 0;
	if (mask != w->hasher_mask) {
		imastream_hasher_free(w->hasher);
		w->hasher = NULL;
		w->hasher_mask = 0;
		err = imastream_hasher_new(mask, NULL, &w->hasher);
		/* An algorithm this OpenSSL lacks: the verifier says so for security.ima. */
		if (err == -EOPNOTSUPP && header && algo) {
			mask = IMASTREAM_HASH_BIT(hi->algo);
			err = imastream_hasher_new(mask, a->log, &w->hasher);
		}
		if (err)
			return err;
		w->hasher_mask = mask;
	}
	err = imastream_hash_fd(w->hasher, it->in.fd);
	if (err)
		return err;
	*hashed = w->hasher;
	if (!header || imastream_hasher_digest(w->hasher, hi->algo, &digest, &len))
		return 0;
	/* An accepted edit: the digest in the header's algorithm, the size, both as accepted. */
	if (it->accepted && it->accepted->algo == hi->algo && it->accepted->digest_len == len &&
	    it->accepted->size == (uint64_t)it->in.st.st_size)
		*accepted = !memcmp(digest, it->accepted->digest, len);
	return len == it->want_len && !memcmp(digest, it->want, len);
}

/* Whether the file has a security.selinux: OK, MISSING or -errno. */
static int label_present(int fd)
{
	ssize_t n = fgetxattr(fd, "security.selinux", NULL, 0);

	if (n > 0)
		return IMASTREAM_VERIFY_OK;
	return n == 0 || errno == ENODATA || errno == ENOTSUP ? IMASTREAM_VERIFY_MISSING : -errno;
}

/*
 * INTACT, MODIFIED, or CONFIG_EDITED: a %config file whose content alone changed (size,
 * digest, mtime: what an editor changes), as an administrator edits one.
 */
static int letters_state(const struct imastream_audit_file *af)
{
	char other[10];

	if (af->why)
		return IMASTREAM_AUDIT_MODIFIED;
	if (!strcmp(af->letters, "........."))
		return IMASTREAM_AUDIT_INTACT;
	memcpy(other, af->letters, sizeof(other));
	other[0] = other[2] = other[7] = '.';
	return af->config && af->regular && !strcmp(other, ".........") ?
		       IMASTREAM_AUDIT_CONFIG_EDITED :
		       IMASTREAM_AUDIT_MODIFIED;
}

/* rpm -V's marker: the first of rpmFFlagsString()'s letters (lib/verify.c), or ' '. */
static char rpm_marker(rpmfileAttrs fl)
{
	static const struct {
		rpmfileAttrs bit;
		char c;
	} order[] = {
		{ RPMFILE_DOC, 'd' },	    { RPMFILE_CONFIG, 'c' },	{ RPMFILE_SPECFILE, 's' },
		{ RPMFILE_MISSINGOK, 'm' }, { RPMFILE_NOREPLACE, 'n' }, { RPMFILE_GHOST, 'g' },
		{ RPMFILE_LICENSE, 'l' },   { RPMFILE_README, 'r' },	{ RPMFILE_ARTIFACT, 'a' },
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (fl & order[i].bit)
			return order[i].c;
	return ' ';
}

/*
 * On a worker thread: one read for the header's digest and security.ima's, then the
 * signatures, the slow part, which is why files are spread over threads.
 */
static void audit_work(void *arg, unsigned int worker, void *item)
{
	struct audit *a = arg;
	struct audit_worker *w = &a->workers[worker];
	struct audit_item *it = item;
	struct imastream_audit_file *af = &it->af;
	const struct imastream_hasher *hashed = NULL;
	struct ima_value iv = { .len = 0 };
	int err;

	if (!it->content)
		return;
	/* rpm -V compares the digest whatever the size; '?' when it cannot read the file. */
	err = hash_content(a, w, it, &iv, &hashed, &it->accepted_match);
	if (it->in.vflags & RPMVERIFY_FILEDIGEST) {
		if (err == 0)
			af->letters[2] = '5';
		else if (err < 0)
			af->letters[2] = '?';
	}
	/* Every check stays: the verifier decodes security.ima again and verifies it. */
	if (err >= 0)
		err = ims_verify_file_known(
			w->verifier, it->in.fd, af->path,
			a->verify_flags & ~(IMASTREAM_AUDIT_LABELS | IMASTREAM_AUDIT_NOCONFIG),
			hashed, iv.bytes, iv.len, &af->report);
	if (err >= 0 && (a->verify_flags & IMASTREAM_AUDIT_LABELS) &&
	    (err = label_present(it->in.fd)) >= 0) {
		af->label = err;
		err = 0;
	}
	if (err < 0) {
		af->state = IMASTREAM_AUDIT_ERROR;
		af->why = strerror(-err);
	} else {
		af->verified = true;
		af->state = letters_state(af);
		if (af->state == IMASTREAM_AUDIT_CONFIG_EDITED && it->accepted_match)
			af->state = IMASTREAM_AUDIT_CONFIG_ACCEPTED;
	}
}

/* On the caller's thread, in file order: the report, then the item is reused. */
static void audit_done(void *arg, void *item)
{
	struct audit *a = arg;
	struct audit_item *it = item;

	a->fn(a->arg, &it->af);
	ims_installed_close(&it->in);
	free(it->path);
	free(it->nevra);
	it->path = it->nevra = NULL;
	it->next_free = a->free_items;
	a->free_items = it;
}

/* Whether more than one installed package lists @path; the database opened once. */
static bool shared_path(struct audit *a, const char *path)
{
	if (!a->owners && !a->owners_failed && ims_rpmdb_owner_open(a->root, &a->owners))
		a->owners_failed = true;
	return a->owners && ims_rpmdb_owner_count(a->owners, path) > 1;
}

/* Opens the file and checks its metadata here, queues the rest for a worker. */
static int audit_file(struct audit *a, rpmfi fi, const char *nevra,
		      const struct imastream_hash_info *hi)
{
	struct audit_item *it = a->free_items;
	const unsigned char *want;
	size_t want_len = 0;
	int algo = 0, err;

	if (it)
		a->free_items = it->next_free;
	else if (!(it = malloc(sizeof(*it))))
		return -ENOMEM;
	*it = (struct audit_item){ .path = strdup(rpmfiFN(fi)), .nevra = strdup(nevra) };
	if (!it->path || !it->nevra) {
		free(it->path);
		free(it->nevra);
		free(it);
		return -ENOMEM;
	}
	it->af = (struct imastream_audit_file){ .package = it->nevra, .path = it->path,
						.label = IMASTREAM_VERIFY_SKIPPED,
						.report.size = sizeof(it->af.report) };
	err = ims_installed_open(a->rootfd, fi, &a->ids, nevra, a->log, &it->in);
	/* rpm -V leaves out the mtime of a file more than one package lists (verify.c). */
	if (!err && it->in.letters[7] == 'T' && shared_path(a, rpmfiFN(fi)))
		it->in.letters[7] = '.';
	it->af.config = it->in.config;
	it->af.marker = rpm_marker(rpmfiFFlags(fi));
	it->af.regular = S_ISREG(rpmfiFMode(fi));
	memcpy(it->af.letters, it->in.letters, sizeof(it->af.letters));
	it->af.why = it->in.why;
	if (err) {
		it->af.state = IMASTREAM_AUDIT_ERROR;
		it->af.why = strerror(-err);
	} else if (it->in.state == IMS_INSTALLED_MISSING) {
		it->af.state = IMASTREAM_AUDIT_MISSING;
	} else if (it->in.fd >= 0 && S_ISREG(it->in.st.st_mode)) {
		it->content = true;
		it->hi = hi;
		if (it->in.config)
			it->accepted = imastream_accepted_find(a->accepted, it->path);
		want = rpmfiFDigest(fi, &algo, &want_len);
		if (want && want_len <= sizeof(it->want)) {
			memcpy(it->want, want, want_len);
			it->want_len = want_len;
		}
	} else if (!it->af.regular) {
		/* A directory or a symlink, as rpm -V checks them: its letters alone. */
		it->af.state = letters_state(&it->af);
	} else {
		it->af.state = IMASTREAM_AUDIT_MODIFIED;
	}
	ims_pool_push(a->pool, it);
	return 0;
}

static int audit_header(void *arg, void *rpm_header)
{
	struct audit *a = arg;
	Header h = rpm_header;
	const struct imastream_hash_info *hi;
	char *nevra = headerGetAsString(h, RPMTAG_NEVRA);
	rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_VERIFY);
	int err = 0;

	if (!nevra) {
		rpmfiFree(fi);
		return -ENOMEM;
	}
	hi = fi ? imastream_hash_by_rpm_id(rpmfiDigestAlgo(fi)) : NULL;
	while (!err && fi && rpmfiNext(fi) >= 0) {
		mode_t mode = (mode_t)rpmfiFMode(fi);
		rpmfileAttrs fl = rpmfiFFlags(fi);

		/* rpm -V's entries but %ghost ones (no content of rpm's); --noconfig's skip. */
		if (!(S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode)) || (fl & RPMFILE_GHOST) ||
		    ((fl & RPMFILE_CONFIG) && (a->verify_flags & IMASTREAM_AUDIT_NOCONFIG)))
			continue;
		err = audit_file(a, fi, nevra, hi);
	}
	rpmfiFree(fi);
	free(nevra);
	return err;
}

/* The workers: one a core (a verify costs more than reading a small file), or none. */
static int start_workers(struct audit *a, struct imastream_verifier *v)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int n = cores > 1 ? (unsigned int)(cores < MAX_WORKERS ? cores : MAX_WORKERS) : 0;
	int err;

	a->workers = calloc(n ? n : 1, sizeof(*a->workers));
	if (!a->workers)
		return -ENOMEM;
	a->nworkers = n ? n : 1;
	/* The caller's verifier serves the first worker (or the caller's thread). */
	a->workers[0].verifier = v;
	for (unsigned int i = 1; i < a->nworkers; i++) {
		err = ims_verifier_copy(v, &a->workers[i].verifier);
		if (err)
			return err;
	}
	err = ims_pool_new(n, MAX_INFLIGHT, audit_work, audit_done, a, &a->pool);
	/* Without threads, everything runs here, as it did before there were any. */
	if (err && n)
		err = ims_pool_new(0, 1, audit_work, audit_done, a, &a->pool);
	return err;
}

static void stop_workers(struct audit *a)
{
	ims_pool_free(a->pool);
	while (a->free_items) {
		struct audit_item *it = a->free_items;

		a->free_items = it->next_free;
		free(it);
	}
	for (unsigned int i = 0; a->workers && i < a->nworkers; i++) {
		if (i)
			imastream_verifier_free(a->workers[i].verifier);
		imastream_hasher_free(a->workers[i].hasher);
	}
	free(a->workers);
}

int imastream_audit_rpmdb(const char *root, char *const *names, int nnames,
			  struct imastream_verifier *v, unsigned int verify_flags,
			  void (*fn)(void *arg, const struct imastream_audit_file *f), void *arg,
			  const struct imastream_log *log)
{
	struct audit a = {
		.root = root, .verify_flags = verify_flags, .fn = fn, .arg = arg, .log = log
	};
	int err;

	if (!root || root[0] != '/' || !v || !fn)
		return ims_err(log, -EINVAL, "audit: an absolute root, a verifier and a callback are required");
	a.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a.rootfd < 0)
		return ims_err(log, -errno, "%s: %m", root);
	err = ims_ids_load(&a.ids, a.rootfd, log);
	if (err) {
		ims_ids_clear(&a.ids);
		close(a.rootfd);
		return err;
	}
	/* A record of accepted edits that is not this root's, or cut short: refused. */
	err = imastream_accepted_load(root, a.rootfd, log, &a.accepted);
	if (!err) {
		err = start_workers(&a, v);
		if (err)
			ims_err(log, err, "audit: cannot start: %s", strerror(-err));
		else
			err = imastream_rpmdb_foreach(root, names, nnames, audit_header, &a, log);
		/* Every queued file is reported, also after an error. */
		stop_workers(&a);
	}
	imastream_accepted_free(a.accepted);
	ims_rpmdb_owner_free(a.owners);
	ims_ids_clear(&a.ids);
	close(a.rootfd);
	return err;
}
