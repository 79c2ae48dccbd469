// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The smack plugin: Smack labels (security.SMACK64, SMACK64EXEC, SMACK64MMAP,
 * SMACK64TRANSMUTE) from per-package manifests, written on the file before security.ima
 * and security.evm (its rank puts it among the labels), so that EVM covers them.
 * Manifests are read at init from the configured folder (psm and file hooks may run
 * inside the target root's chroot), or, where allowed, from the package's own header: a
 * manifest rpmbuild put in RPMTAG_POLICIES with "%semodule -t smack" (base64, covered by
 * the header signature).  Labels must be on each file when it is written, before EVM,
 * so the manifest has to be known at package start: the payload comes too late.  The
 * format is in imastream-rpm(8), section smack.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmbase64.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "plugin/builtin/plugins.h"
#include "plugin/builtin/policy/policy.h"

#define SMACK_LABEL_MAX 255
#define MANIFEST_SUFFIX ".manifest"
/* The POLICYTYPES entry that marks a RPMTAG_POLICIES module as a Smack manifest. */
#define PACKAGE_MANIFEST_TYPE "smack"
#define MAX_LINE 4096

struct rule {
	char *path;      /* an absolute path, or the folder of a recursive rule */
	bool below;      /* recursive ("DIR" then "/" and two stars): all strictly below DIR */
	char *access;    /* SMACK64, or NULL */
	char *exec;      /* SMACK64EXEC (regular files only), or NULL */
	char *mmap;      /* SMACK64MMAP (regular files only), or NULL */
	bool transmute;  /* SMACK64TRANSMUTE=TRUE (directories only) */
};

struct manifest {
	char *package;
	struct rule *rules;
	size_t n;
};

struct smack {
	const struct imastream_log *log;
	struct manifest *manifests;
	size_t n;
	/* smack_package_manifests: no (-1), yes (0), or the trust rank a package needs. */
	int own_min_rank;
	struct imastream_chain *chain;
	const struct ims_domains *domains; /* the chain's, when manifests are ranked */
	struct manifest own; /* the manifest the package in progress carries */
	const struct manifest *current; /* the manifest of the package in progress */
};

static void rule_free(struct rule *r)
{
	free(r->path);
	free(r->access);
	free(r->exec);
	free(r->mmap);
}

static void manifest_free(struct manifest *m)
{
	for (size_t j = 0; j < m->n; j++)
		rule_free(&m->rules[j]);
	free(m->rules);
	free(m->package);
	memset(m, 0, sizeof(*m));
}

static void smack_cleanup(void *state)
{
	struct smack *s = state;

	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		manifest_free(&s->manifests[i]);
	free(s->manifests);
	manifest_free(&s->own);
	free(s);
}

/* The kernel's rules for a label: 1..255 bytes, printable, none of blank / " ' \. */
static bool valid_label(const char *l)
{
	size_t n = strlen(l);

	if (!n || n > SMACK_LABEL_MAX || l[0] == '-')
		return false;
	for (const char *p = l; *p; p++)
		if (!isgraph((unsigned char)*p) || strchr("/\"'\\", *p))
			return false;
	return true;
}

static int dup_label(char **field, const char *l, const char *where,
		     const struct imastream_log *log)
{
	if (!valid_label(l))
		return ims_err(log, -EINVAL, "%s: \"%s\" is not a Smack label", where, l);
	*field = strdup(l);
	return *field ? 0 : -ENOMEM;
}

/* "PATH ACCESS|- [exec=LABEL] [mmap=LABEL] [transmute]" */
static int parse_rule(struct rule *r, char *line, const char *where,
		      const struct imastream_log *log)
{
	char *save = NULL, *path, *access, *word;
	size_t len;
	int err = 0;

	path = strtok_r(line, " \t\r\n", &save);
	access = strtok_r(NULL, " \t\r\n", &save);
	if (!path || !access || path[0] != '/')
		return ims_err(log, -EINVAL, "%s: expected \"/PATH LABEL [exec=LABEL] [mmap=LABEL] [transmute]\"",
			       where);
	len = strlen(path);
	if (len >= 3 && strcmp(path + len - 3, "/**") == 0) {
		r->below = true;
		path[len == 3 ? 1 : len - 3] = '\0';
	}
	r->path = strdup(path);
	if (!r->path)
		return -ENOMEM;
	if (strcmp(access, "-") != 0)
		err = dup_label(&r->access, access, where, log);
	while (!err && (word = strtok_r(NULL, " \t\r\n", &save))) {
		if (strncmp(word, "exec=", 5) == 0 && !r->exec)
			err = dup_label(&r->exec, word + 5, where, log);
		else if (strncmp(word, "mmap=", 5) == 0 && !r->mmap)
			err = dup_label(&r->mmap, word + 5, where, log);
		else if (strcmp(word, "transmute") == 0)
			r->transmute = true;
		else
			err = ims_err(log, -EINVAL, "%s: unknown or repeated attribute \"%s\"", where,
				      word);
	}
	return err;
}

/* One manifest line (comments and blank lines allowed) into @m. */
static int add_line(struct manifest *m, char *line, const char *where,
		    const struct imastream_log *log)
{
	struct rule *rules;
	char *hash, *p;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	for (p = line; isspace((unsigned char)*p); p++)
		;
	if (!*p)
		return 0;
	rules = realloc(m->rules, (m->n + 1) * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	m->rules = rules;
	memset(&m->rules[m->n], 0, sizeof(*rules));
	m->n++;
	return parse_rule(&m->rules[m->n - 1], p, where, log);
}

static int load_manifest(struct smack *s, const char *dir, const char *file)
{
	char path[4096], where[4200], line[MAX_LINE];
	struct manifest *m, *grown;
	unsigned int lineno = 0;
	FILE *f;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	grown = realloc(s->manifests, (s->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	s->manifests = grown;
	m = &s->manifests[s->n];
	memset(m, 0, sizeof(*m));
	m->package = strndup(file, strlen(file) - strlen(MANIFEST_SUFFIX));
	if (!m->package)
		return -ENOMEM;
	s->n++;
	fd = ims_open_regular(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW, 0);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		err = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		return ims_err(s->log, err, "smack: cannot open %s: %s", path,
			       ims_open_strerror(err));
	}
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		snprintf(where, sizeof(where), "smack: %s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f))
			err = ims_err(s->log, -EINVAL, "%s: line too long", where);
		else
			err = add_line(m, line, where, s->log);
	}
	if (!err && ferror(f))
		err = ims_err(s->log, -EIO, "smack: cannot read %s", path);
	fclose(f);
	return err;
}

static int load_manifests(struct smack *s, const char *dir)
{
	struct dirent *e;
	DIR *d;
	int err = 0;

	d = opendir(dir);
	if (!d)
		return ims_err(s->log, -errno, "smack: cannot open the manifest folder %s: %s", dir,
			       strerror(errno));
	while (!err && (e = readdir(d))) {
		size_t n = strlen(e->d_name), k = strlen(MANIFEST_SUFFIX);

		if (n > k && strcmp(e->d_name + n - k, MANIFEST_SUFFIX) == 0 && e->d_name[0] != '.')
			err = load_manifest(s, dir, e->d_name);
	}
	closedir(d);
	return err;
}

/* smack_package_manifests = no | yes | RANK: -1, 0 or the rank; -EINVAL for anything else. */
static int parse_own_min_rank(const char *v, int *ret)
{
	char *end;
	long rank;

	if (strcmp(v, "no") == 0) {
		*ret = -1;
		return 0;
	}
	if (strcmp(v, "yes") == 0) {
		*ret = 0;
		return 0;
	}
	errno = 0;
	rank = strtol(v, &end, 10);
	if (errno || end == v || *end || rank < 0 || rank > 1000000)
		return -EINVAL;
	*ret = (int)rank;
	return 0;
}

static const char *check_own(const char *value)
{
	int rank;

	return parse_own_min_rank(value, &rank) ? "is not no, yes or a rank 0..1000000" : NULL;
}

/* A rank needs trust_domains to judge packages by. */
static int parse_own(struct smack *s, const struct imastream_config *cfg)
{
	const char *v = imastream_config_get(cfg, "smack_package_manifests");

	/* Checked when set (check_own), so the default parses too. */
	if (parse_own_min_rank(v, &s->own_min_rank) < 0)
		return -EINVAL;
	if (strcmp(v, "no") == 0 || strcmp(v, "yes") == 0)
		return 0;
	if (ims_chain_domains(s->chain, &s->domains))
		return -EINVAL;
	if (!ims_domains_count(s->domains))
		return ims_err(s->log, -EINVAL,
			       "smack: smack_package_manifests = %d needs trust_domains to rank packages by",
			       s->own_min_rank);
	return 0;
}

static int smack_init(struct imastream_init_args *args, void **state_ret)
{
	const char *folder;
	struct smack *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->log = args->log;
	s->chain = args->chain;
	folder = imastream_config_get(args->cfg, "smack_manifests");
	err = parse_own(s, args->cfg);
	if (!err && !folder && s->own_min_rank < 0)
		err = ims_err(s->log, -EINVAL,
			      "smack: no smack_manifests folder configured and smack_package_manifests is no");
	else if (!err && folder)
		err = load_manifests(s, folder);
	if (err) {
		smack_cleanup(s);
		return err;
	}
	*state_ret = s;
	return 0;
}

/* Parses the base64 manifest @b64 the package carries into s->own. */
static int parse_own_manifest(struct smack *s, const struct imastream_pkg *pkg, const char *b64)
{
	char where[512], line[MAX_LINE];
	unsigned int lineno = 0;
	size_t len = 0, at = 0;
	void *text = NULL;
	int err = 0;

	if (rpmBase64Decode(b64, &text, &len) != 0)
		return ims_err(s->log, -EINVAL,
			       "smack: rule package-manifest: package %s: its Smack manifest is not base64",
			       pkg->nevra);
	s->own.package = strdup(pkg->nevra);
	if (!s->own.package)
		err = -ENOMEM;
	while (!err && at < len) {
		const char *start = (const char *)text + at;
		const char *nl = memchr(start, '\n', len - at);
		size_t n = nl ? (size_t)(nl - start) : len - at;

		lineno++;
		snprintf(where, sizeof(where),
			 "smack: rule package-manifest: package %s: its manifest, line %u",
			 pkg->nevra, lineno);
		if (n >= sizeof(line) || memchr(start, '\0', n))
			err = ims_err(s->log, -EINVAL, "%s: line too long or with a NUL byte", where);
		else {
			memcpy(line, start, n);
			line[n] = '\0';
			err = add_line(&s->own, line, where, s->log);
		}
		at += n + 1;
	}
	free(text);
	return err;
}

/* The manifest module of RPMTAG_POLICIES whose type is "smack", or NULL; -EINVAL for two. */
static int find_own(struct smack *s, const struct imastream_pkg *pkg, Header h, char **b64_ret)
{
	struct rpmtd_s mods, types, idx;
	int err = 0, found = -1;

	*b64_ret = NULL;
	rpmtdReset(&mods);
	rpmtdReset(&types);
	rpmtdReset(&idx);
	if (!headerGet(h, RPMTAG_POLICIES, &mods, HEADERGET_MINMEM))
		return 0;
	headerGet(h, RPMTAG_POLICYTYPES, &types, HEADERGET_MINMEM);
	headerGet(h, RPMTAG_POLICYTYPESINDEXES, &idx, HEADERGET_MINMEM);
	while (!err && rpmtdNext(&types) >= 0) {
		const char *type = rpmtdGetString(&types);
		uint32_t *k;

		if (!type || strcmp(type, PACKAGE_MANIFEST_TYPE) != 0 ||
		    rpmtdSetIndex(&idx, rpmtdGetIndex(&types)) < 0 || !(k = rpmtdGetUint32(&idx)))
			continue;
		if (found >= 0 && (uint32_t)found != *k)
			err = ims_err(s->log, -EINVAL,
				      "smack: rule package-manifest: package %s carries more than one Smack manifest",
				      pkg->nevra);
		found = (int)*k;
	}
	if (!err && found >= 0) {
		if (rpmtdSetIndex(&mods, found) < 0 || !rpmtdGetString(&mods))
			err = ims_err(s->log, -EINVAL,
				      "smack: rule package-manifest: package %s: its Smack manifest entry is missing",
				      pkg->nevra);
		else if (!(*b64_ret = strdup(rpmtdGetString(&mods))))
			err = -ENOMEM;
	}
	rpmtdFreeData(&mods);
	rpmtdFreeData(&types);
	rpmtdFreeData(&idx);
	return err;
}

/* Whether the package's trust domain may have its own manifest honoured. */
static int own_allowed(struct smack *s, const struct imastream_pkg *pkg)
{
	struct ims_verdict v;
	int err;

	if (s->own_min_rank <= 0 && !s->domains)
		return 0;
	err = ims_chain_verdict(s->chain, pkg, &v);
	if (err)
		return ims_err(s->log, err, "smack: package %s: cannot check its header signature",
			       pkg->nevra);
	if (v.domain && v.domain->rank >= s->own_min_rank)
		return 0;
	if (v.domain)
		return ims_err(s->log, -EPERM,
			       "smack: rule package-manifest: package %s (domain %s, rank %d < %d) may not label its files with its own Smack manifest",
			       pkg->nevra, v.domain->name, v.domain->rank, s->own_min_rank);
	return ims_err(s->log, -EPERM,
		       "smack: rule package-manifest: package %s (no trust domain: %s) may not label its files with its own Smack manifest",
		       pkg->nevra, v.why);
}

static int smack_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct smack *s = state;
	const char *name = NULL;
	char *b64 = NULL;
	int err;

	s->current = NULL;
	manifest_free(&s->own);
	if (pkg->op != IMASTREAM_PKG_INSTALL || !pkg->rpm_header)
		return 0;
	name = headerGetString(pkg->rpm_header, RPMTAG_NAME);
	for (size_t i = 0; name && i < s->n; i++)
		if (strcmp(s->manifests[i].package, name) == 0)
			s->current = &s->manifests[i];
	if (s->own_min_rank < 0)
		return 0;
	err = find_own(s, pkg, pkg->rpm_header, &b64);
	if (err || !b64)
		return err;
	/* The administrator's manifest wins over the one the package brings. */
	if (s->current) {
		ims_logf(s->log, IMASTREAM_LOG_INFO,
			 "smack: package %s: the configured manifest replaces the one it carries",
			 pkg->nevra);
	} else {
		err = own_allowed(s, pkg);
		if (!err)
			err = parse_own_manifest(s, pkg, b64);
		if (!err)
			s->current = &s->own;
		else
			manifest_free(&s->own);
	}
	free(b64);
	return err;
}

static void smack_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	struct smack *s = state;

	(void)pkg;
	(void)res;
	s->current = NULL;
	manifest_free(&s->own);
}

/* The first rule of the manifest that covers @path. */
static const struct rule *match(const struct manifest *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct rule *r = &m->rules[i];

		if (r->below ? ims_path_under(path, r->path) && strcmp(path, r->path) != 0 :
			       strcmp(path, r->path) == 0)
			return r;
	}
	return NULL;
}

static int set_label(struct imastream_file *f, const char *name, const char *value)
{
	/* Smack stores labels without a trailing NUL, and EVM hashes them as stored. */
	return imastream_file_set_xattr(f, name, value, strlen(value));
}

static int smack_file_closed(void *state, struct imastream_file *f)
{
	struct smack *s = state;
	const struct rule *r;
	int err = 0;

	if (!s->current || !f->dest || (f->flags & (IMASTREAM_FILE_ERASE | IMASTREAM_FILE_SKIP)))
		return 0;
	r = match(s->current, f->dest);
	if (!r)
		return 0;
	/* In EVM's order, though each is a separate xattr. */
	if (r->access)
		err = set_label(f, "security.SMACK64", r->access);
	if (!err && r->exec && S_ISREG(f->mode))
		err = set_label(f, "security.SMACK64EXEC", r->exec);
	if (!err && r->transmute && S_ISDIR(f->mode))
		err = set_label(f, "security.SMACK64TRANSMUTE", "TRUE");
	if (!err && r->mmap && S_ISREG(f->mode))
		err = set_label(f, "security.SMACK64MMAP", r->mmap);
	if (err)
		ims_err(s->log, err, "smack: package %s: cannot label %s: %s",
			f->pkg ? f->pkg->nevra : "-", f->dest, strerror(-err));
	return err;
}

static const struct imastream_plugin_key smack_keys[] = {
	{ .name = "smack_manifests", .help = "folder of per-package Smack manifests NAME.manifest" },
	{ .name = "smack_package_manifests", .def = "no", .check = check_own,
	  .help = "no | yes | RANK: honour a manifest the package carries (RANK: only from "
		  "trust domains ranked at least RANK)" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_smack_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "smack",
	.rank = IMASTREAM_RANK_LABELS,
	.keys = smack_keys,
	.init = smack_init,
	.cleanup = smack_cleanup,
	.psm_pre = smack_psm_pre,
	.psm_post = smack_psm_post,
	.file_closed = smack_file_closed,
};
