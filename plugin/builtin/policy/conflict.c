// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The conflict plugin: a file owned by a package of a higher-ranked trust domain is never
 * replaced by a package of a lower one, even with rpm --replacefiles.  Owners come from
 * the rpm database of the target root (the driver's rpmts), their domain from the header
 * signature stored there.  The check runs at package start over the header's file list,
 * so that a refused package has not written a single file.  The file_conflict hook serves
 * drivers that find conflicts themselves (imastream install, from its own record): the
 * owner they name is ranked from the rpm database if it has one, else from the packages
 * this chain judged earlier; an owner ranked by neither is trusted to nobody but the
 * highest-ranked domain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>
#include <rpm/rpmts.h>

#include "plugin/builtin/plugins.h"
#include "plugin/builtin/policy/policy.h"

/* Owners judged during one package: an rpmdb record judged once, whatever it owns. */
#define OWNER_CACHE 32

struct owner {
	unsigned int instance;
	int rank;
	const char *domain;
	char *nevra;
};

/* A package this chain judged at package start: a later one may name it as an owner. */
struct judged {
	char *name, *nevra;
	int rank;
	const char *domain;
};

struct conflict {
	const struct imastream_log *log;
	struct imastream_chain *chain;
	const struct ims_domains *domains; /* the chain's */
	rpmts ts;
	/* The package in progress. */
	int rank;
	const char *domain;
	struct owner owners[OWNER_CACHE];
	unsigned int n_owners;
	struct judged *judged;
	size_t n_judged;
	int top_rank; /* the highest rank of any domain */
};

static void forget_owners(struct conflict *c)
{
	for (unsigned int i = 0; i < c->n_owners; i++)
		free(c->owners[i].nevra);
	c->n_owners = 0;
}

static void conflict_cleanup(void *state)
{
	struct conflict *c = state;

	if (!c)
		return;
	forget_owners(c);
	for (size_t i = 0; i < c->n_judged; i++) {
		free(c->judged[i].name);
		free(c->judged[i].nevra);
	}
	free(c->judged);
	free(c);
}

static int conflict_init(struct imastream_init_args *args, void **state_ret)
{
	struct conflict *c;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->log = args->log;
	c->chain = args->chain;
	err = ims_chain_domains(c->chain, &c->domains);
	if (!err && !ims_domains_count(c->domains))
		err = ims_err(c->log, -EINVAL,
			      "conflict: no trust_domains configured: there is nothing to rank by");
	if (err) {
		conflict_cleanup(c);
		return err;
	}
	c->top_rank = ims_domains_top_rank(c->domains);
	*state_ret = c;
	return 0;
}

static int conflict_tsm_pre(void *state, const struct imastream_txn *txn)
{
	struct conflict *c = state;

	c->ts = txn->rpm_ts;
	return 0;
}

static void conflict_tsm_post(void *state, const struct imastream_txn *txn, int res)
{
	struct conflict *c = state;

	(void)txn;
	(void)res;
	c->ts = NULL;
}

/* The rank of a verdict's domain; 0 ("-") outside every domain or when judging failed. */
static void rank_of(int judged, const struct ims_verdict *v, int *rank, const char **domain)
{
	*rank = 0;
	*domain = "-";
	if (judged == 0 && v->domain) {
		*rank = v->domain->rank;
		*domain = v->domain->name;
	}
}

/* The package being installed: the chain's verdict on it. */
static void rank_pkg(struct conflict *c, const struct imastream_pkg *pkg)
{
	struct ims_verdict v;

	rank_of(ims_chain_verdict(c->chain, pkg, &v), &v, &c->rank, &c->domain);
}

static const struct owner *owner_of(struct conflict *c, Header h)
{
	unsigned int instance = headerGetInstance(h);
	struct ims_verdict v;
	struct owner *o;

	for (unsigned int i = 0; i < c->n_owners; i++)
		if (c->owners[i].instance == instance)
			return &c->owners[i];
	if (c->n_owners == OWNER_CACHE)
		forget_owners(c);
	o = &c->owners[c->n_owners];
	o->nevra = headerGetAsString(h, RPMTAG_NEVRA);
	if (!o->nevra)
		return NULL;
	o->instance = instance;
	/* An owner is another package: judged here, once per rpmdb record. */
	rank_of(ims_domains_judge(c->domains, h, &v), &v, &o->rank, &o->domain);
	c->n_owners++;
	return o;
}

/*
 * Refuses @path if a higher-ranked package owns it in the target root's database;
 * @found (may be NULL) tells whether the database knows any owner.
 */
static int check_path(struct conflict *c, const struct imastream_pkg *pkg, const char *path,
		      bool *found)
{
	rpmdbMatchIterator mi;
	Header h;
	int err = 0;

	mi = rpmtsInitIterator(c->ts, RPMDBI_INSTFILENAMES, path, 0);
	while (!err && (h = rpmdbNextIterator(mi))) {
		const struct owner *o = owner_of(c, h);

		if (found)
			*found = true;
		if (!o)
			err = -ENOMEM;
		else if (o->rank > c->rank)
			err = ims_err(c->log, -EPERM,
				      "conflict: rule higher-domain-owner: package %s (domain %s, rank %d) may not replace %s owned by %s (domain %s, rank %d)",
				      pkg->nevra, c->domain, c->rank, path, o->nevra, o->domain,
				      o->rank);
	}
	rpmdbFreeIterator(mi);
	return err;
}

/* Notes the package's rank under its name and nevra, for later file_conflict calls. */
static int remember(struct conflict *c, const struct imastream_pkg *pkg)
{
	const char *name = headerGetString(pkg->rpm_header, RPMTAG_NAME);
	struct judged *grown, *j;

	for (size_t i = 0; i < c->n_judged; i++) {
		j = &c->judged[i];
		if (strcmp(j->nevra, pkg->nevra) == 0) {
			j->rank = c->rank;
			j->domain = c->domain;
			return 0;
		}
	}
	grown = realloc(c->judged, (c->n_judged + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->judged = grown;
	j = &c->judged[c->n_judged];
	j->name = strdup(name ? name : pkg->nevra);
	j->nevra = strdup(pkg->nevra);
	j->rank = c->rank;
	j->domain = c->domain;
	if (!j->name || !j->nevra) {
		free(j->name);
		free(j->nevra);
		return -ENOMEM;
	}
	c->n_judged++;
	return 0;
}

/* A package that failed owns nothing: forget it. */
static void conflict_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	struct conflict *c = state;

	if (!res || pkg->op != IMASTREAM_PKG_INSTALL)
		return;
	for (size_t i = 0; i < c->n_judged; i++) {
		if (strcmp(c->judged[i].nevra, pkg->nevra) != 0)
			continue;
		free(c->judged[i].name);
		free(c->judged[i].nevra);
		/* Keep the order: the latest judged under a name is the one that counts. */
		memmove(&c->judged[i], &c->judged[i + 1], (--c->n_judged - i) * sizeof(*c->judged));
		return;
	}
}

/* The latest package judged under @owner (a name or a nevra), or NULL. */
static const struct judged *judged_as(const struct conflict *c, const char *owner)
{
	for (size_t i = c->n_judged; i-- > 0;)
		if (strcmp(c->judged[i].name, owner) == 0 || strcmp(c->judged[i].nevra, owner) == 0)
			return &c->judged[i];
	return NULL;
}

static int conflict_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct conflict *c = state;
	struct rpmtd_s names, modes;
	int err = 0;

	if (pkg->op != IMASTREAM_PKG_INSTALL || !pkg->rpm_header)
		return 0;
	forget_owners(c);
	rank_pkg(c, pkg);
	err = remember(c, pkg);
	if (err || !c->ts)
		return err;
	rpmtdReset(&names);
	rpmtdReset(&modes);
	if (!headerGet(pkg->rpm_header, RPMTAG_FILENAMES, &names, HEADERGET_EXT))
		return 0;
	headerGet(pkg->rpm_header, RPMTAG_FILEMODES, &modes, HEADERGET_MINMEM);
	while (!err && rpmtdNext(&names) >= 0) {
		const char *path = rpmtdGetString(&names);
		uint16_t *mode = NULL;

		if (rpmtdSetIndex(&modes, rpmtdGetIndex(&names)) >= 0)
			mode = rpmtdGetUint16(&modes);
		/* Directories are shared, never replaced. */
		if (!path || (mode && S_ISDIR(*mode)))
			continue;
		err = check_path(c, pkg, path, NULL);
	}
	rpmtdFreeData(&names);
	rpmtdFreeData(&modes);
	return err;
}

/*
 * A driver that finds conflicts itself names the owner: ranked from the database, else
 * from the packages judged earlier in this chain, else unknown.
 */
static int conflict_file_conflict(void *state, const struct imastream_conflict *cf)
{
	struct conflict *c = state;
	const struct judged *j;
	bool found = false;
	int err;

	if (!cf->pkg || !cf->pkg->rpm_header || !cf->path)
		return 0;
	rank_pkg(c, cf->pkg);
	if (c->ts) {
		err = check_path(c, cf->pkg, cf->path, &found);
		if (err || found)
			return err;
	}
	if (!cf->owner)
		return 0;
	j = judged_as(c, cf->owner);
	if (j) {
		if (j->rank <= c->rank)
			return 0;
		return ims_err(c->log, -EPERM,
			       "conflict: rule higher-domain-owner: package %s (domain %s, rank %d) may not replace %s owned by %s (domain %s, rank %d)",
			       cf->pkg->nevra, c->domain, c->rank, cf->path, j->nevra, j->domain,
			       j->rank);
	}
	if (c->rank >= c->top_rank)
		return 0;
	return ims_err(c->log, -EPERM,
		       "conflict: rule unknown-owner-domain: package %s (domain %s, rank %d) may not replace %s owned by %s, whose domain is unknown (not in the rpm database nor judged in this run; only rank %d may)",
		       cf->pkg->nevra, c->domain, c->rank, cf->path, cf->owner, c->top_rank);
}

const struct imastream_plugin_ops ims_conflict_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "conflict",
	.rank = IMASTREAM_RANK_ANY,
	.init = conflict_init,
	.cleanup = conflict_cleanup,
	.tsm_pre = conflict_tsm_pre,
	.tsm_post = conflict_tsm_post,
	.psm_pre = conflict_psm_pre,
	.psm_post = conflict_psm_post,
	.file_conflict = conflict_file_conflict,
};
