// SPDX-License-Identifier: LGPL-2.1-or-later
/* The trust domains as a resource of the chain: loaded once, one verdict per package. */
/* Not attest/judge.c, which judges IMA measurements against a keylime policy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/builtin/policy/policy.h"
#include "plugin/core/resource.h"

struct ims_trust {
	const struct imastream_log *log;
	struct ims_domains *domains;
	/* The package in its psm pair: its header, and what judging it gave. */
	const void *header;
	bool judged;
	int err;
	struct ims_verdict verdict;
};

static int trust_load(const struct imastream_config *cfg, const struct imastream_log *log,
		      void **ret)
{
	struct ims_trust *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	err = ims_domains_load(imastream_config_get(cfg, "trust_domains"), "trust_domains", log,
			       &t->domains);
	if (err) {
		free(t);
		return err;
	}
	t->log = log;
	ims_logf(log, IMASTREAM_LOG_DEBUG, "trust domains loaded: %u", ims_domains_count(t->domains));
	*ret = t;
	return 0;
}

static void trust_free(void *state)
{
	struct ims_trust *t = state;

	if (!t)
		return;
	ims_domains_free(t->domains);
	free(t);
}

/* The package's psm pair ended: its verdict is forgotten. */
static void trust_forget(void *state)
{
	struct ims_trust *t = state;

	t->judged = false;
	t->header = NULL;
}

static void judge(struct ims_trust *t, const struct imastream_pkg *pkg)
{
	t->header = pkg->rpm_header;
	t->judged = true;
	t->err = ims_domains_judge(t->domains, pkg->rpm_header, &t->verdict);
	ims_logf(t->log, IMASTREAM_LOG_DEBUG, "package %s: header judged: %s", pkg->nevra,
		 t->err ? strerror(-t->err) : t->verdict.domain ? t->verdict.domain->name :
		 t->verdict.why);
}

/*
 * At psm_pre, before any plugin's: one verdict per package.  Installs and erases are
 * judged (an erase by the header the rpm database keeps).
 */
static void trust_judge_pkg(void *state, const struct imastream_pkg *pkg)
{
	struct ims_trust *t = state;

	trust_forget(t);
	if (pkg->rpm_header && (pkg->op == IMASTREAM_PKG_INSTALL || pkg->op == IMASTREAM_PKG_ERASE))
		judge(t, pkg);
}

static const struct ims_chain_resource_ops trust_resource = {
	.name = "trust domains",
	.load = trust_load,
	.free = trust_free,
	.pkg_begin = trust_judge_pkg,
	.pkg_end = trust_forget,
};

int ims_chain_trust(struct imastream_chain *chain, struct ims_trust **ret)
{
	void *state;
	int err = ret ? ims_chain_resource(chain, &trust_resource, &state) : -EINVAL;

	if (!err)
		*ret = state;
	return err;
}

int ims_chain_domains(struct imastream_chain *chain, const struct ims_domains **ret)
{
	struct ims_trust *t;
	int err = ims_chain_trust(chain, &t);

	if (!err)
		*ret = t->domains;
	return err;
}

int ims_chain_verdict(struct imastream_chain *chain, const struct imastream_pkg *pkg,
		      struct ims_verdict *v)
{
	struct ims_trust *t;
	int err = ims_chain_trust(chain, &t);

	memset(v, 0, sizeof(*v));
	v->why = "unsigned";
	if (err)
		return err;
	if (!pkg || !pkg->rpm_header)
		return -EINVAL;
	if (t->judged && t->header == pkg->rpm_header) {
		*v = t->verdict;
		return t->err;
	}
	/* Another header, or outside a psm pair: judged now, not kept (a freed header's
	 * address may come back as another package's). */
	return ims_domains_judge(t->domains, pkg->rpm_header, v);
}
