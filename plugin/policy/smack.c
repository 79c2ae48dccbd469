// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The smack plugin: Smack labels (security.SMACK64, SMACK64EXEC, SMACK64MMAP,
 * SMACK64TRANSMUTE) from per-package manifests, written on the file before security.ima
 * and security.evm (its rank puts it among the labels), so that EVM covers them.
 * Manifests are read at init from the configured folder: psm and file hooks may run
 * inside the target root's chroot.  The format is in imastream-rpm(8), section smack.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rpm/header.h>
#include <rpm/rpmtag.h>

#include "plugin/plugins.h"
#include "plugin/policy/policy.h"

#define SMACK_LABEL_MAX 255
#define MANIFEST_SUFFIX ".manifest"

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
	const struct manifest *current; /* the manifest of the package in progress */
};

static void rule_free(struct rule *r)
{
	free(r->path);
	free(r->access);
	free(r->exec);
	free(r->mmap);
}

static void smack_cleanup(void *state)
{
	struct smack *s = state;

	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		for (size_t j = 0; j < s->manifests[i].n; j++)
			rule_free(&s->manifests[i].rules[j]);
		free(s->manifests[i].rules);
		free(s->manifests[i].package);
	}
	free(s->manifests);
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

static int load_manifest(struct smack *s, const char *dir, const char *file)
{
	char path[4096], where[4200], line[4096];
	struct manifest *m, *grown;
	unsigned int lineno = 0;
	FILE *f;
	int err = 0;

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
	f = fopen(path, "re");
	if (!f)
		return ims_err(s->log, -errno, "smack: cannot open %s: %s", path, strerror(errno));
	while (!err && fgets(line, sizeof(line), f)) {
		struct rule *rules;
		char *hash, *p;

		lineno++;
		snprintf(where, sizeof(where), "smack: %s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			err = ims_err(s->log, -EINVAL, "%s: line too long", where);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (!*p)
			continue;
		rules = realloc(m->rules, (m->n + 1) * sizeof(*rules));
		if (!rules) {
			err = -ENOMEM;
			break;
		}
		m->rules = rules;
		memset(&m->rules[m->n], 0, sizeof(*rules));
		m->n++;
		err = parse_rule(&m->rules[m->n - 1], p, where, s->log);
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

static int smack_init(struct imastream_init_args *args, void **state_ret)
{
	struct smack *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->log = args->log;
	if (!args->cfg->smack_manifests)
		err = ims_err(s->log, -EINVAL, "smack: no smack_manifests folder configured");
	else
		err = load_manifests(s, args->cfg->smack_manifests);
	if (err) {
		smack_cleanup(s);
		return err;
	}
	*state_ret = s;
	return 0;
}

static int smack_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct smack *s = state;
	const char *name = NULL;

	s->current = NULL;
	if (pkg->op != IMASTREAM_PKG_INSTALL || !pkg->rpm_header)
		return 0;
	name = headerGetString(pkg->rpm_header, RPMTAG_NAME);
	for (size_t i = 0; name && i < s->n; i++)
		if (strcmp(s->manifests[i].package, name) == 0)
			s->current = &s->manifests[i];
	return 0;
}

static void smack_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	struct smack *s = state;

	(void)pkg;
	(void)res;
	s->current = NULL;
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

const struct imastream_plugin_ops ims_smack_plugin = {
	.name = "smack",
	.rank = IMASTREAM_RANK_LABELS,
	.init = smack_init,
	.cleanup = smack_cleanup,
	.psm_pre = smack_psm_pre,
	.psm_post = smack_psm_post,
	.file_closed = smack_file_closed,
};
