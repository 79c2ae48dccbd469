// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The trust plugin: at package start a package gets the trust domain whose key signed its
 * header (checked by us, not by rpm's keyring); packages outside every domain are refused
 * (or allowed at rank 0), and a domain below the privileged rank may not install setuid
 * or setgid files, file capabilities, or anything under a protected path.  rpm 4.18 calls
 * no verify hook, so this runs in psm_pre, before any file of the package is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rpm/header.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "plugin/builtin/plugins.h"
#include "plugin/builtin/policy/policy.h"

struct trust {
	const struct imastream_log *log;
	struct imastream_chain *chain;
	const struct ims_domains *domains; /* the chain's */
	bool allow_unknown;
	int privileged_rank;
	const char *protected; /* the configuration's list, which outlives us */
};

static void trust_cleanup(void *state)
{
	struct trust *t = state;

	if (!t)
		return;
	free(t);
}

static int parse_rank(const char *text, int *rank)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0 || v > 1000000)
		return -EINVAL;
	*rank = (int)v;
	return 0;
}

static const char *check_rank(const char *value)
{
	int rank;

	return parse_rank(value, &rank) ? "is not 0..1000000" : NULL;
}

static const char *check_unknown(const char *value)
{
	return strcmp(value, "refuse") == 0 || strcmp(value, "allow") == 0 ?
		       NULL : "is not refuse or allow";
}

static int trust_init(struct imastream_init_args *args, void **state_ret)
{
	const struct imastream_config *cfg = args->cfg;
	struct trust *t;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->log = args->log;
	t->chain = args->chain;
	t->protected = imastream_config_get(cfg, "trust_protected");
	/* Both checked when set (check_rank, check_unknown), so their defaults parse too. */
	err = parse_rank(imastream_config_get(cfg, "trust_privileged_rank"), &t->privileged_rank);
	t->allow_unknown = strcmp(imastream_config_get(cfg, "trust_unknown"), "allow") == 0;
	if (!err)
		err = ims_chain_domains(t->chain, &t->domains);
	if (!err && !ims_domains_count(t->domains) && !t->allow_unknown)
		err = ims_err(t->log, -EINVAL,
			      "trust: no trust_domains configured: every package would be refused");
	if (err) {
		trust_cleanup(t);
		return err;
	}
	*state_ret = t;
	return 0;
}

/* The first protected prefix @path lies strictly below, or NULL. */
static const char *protected_prefix(const struct trust *t, const char *path, char *buf,
				    size_t size)
{
	const char *p = t->protected ? t->protected : "", *w;
	size_t len;

	while ((w = ims_next_word(&p, &len))) {
		if (len >= size)
			continue;
		memcpy(buf, w, len);
		buf[len] = '\0';
		if (ims_path_under(path, buf) && strcmp(path, buf) != 0)
			return buf;
	}
	return NULL;
}

/* The rules a domain below the privileged rank must keep, over the header's file list. */
static int check_files(struct trust *t, const struct imastream_pkg *pkg, Header h,
		       const char *domain, int rank)
{
	struct rpmtd_s names, modes, caps;
	char prefix[4096];
	int err = 0;

	rpmtdReset(&names);
	rpmtdReset(&modes);
	rpmtdReset(&caps);
	if (!headerGet(h, RPMTAG_FILENAMES, &names, HEADERGET_EXT))
		return 0; /* no files */
	headerGet(h, RPMTAG_FILEMODES, &modes, HEADERGET_MINMEM);
	headerGet(h, RPMTAG_FILECAPS, &caps, HEADERGET_MINMEM);
	while (!err && rpmtdNext(&names) >= 0) {
		int i = rpmtdGetIndex(&names);
		const char *path = rpmtdGetString(&names);
		uint16_t mode = 0;
		const char *cap = NULL, *rule = NULL, *pp;

		if (rpmtdSetIndex(&modes, i) >= 0 && rpmtdGetUint16(&modes))
			mode = *rpmtdGetUint16(&modes);
		if (rpmtdSetIndex(&caps, i) >= 0)
			cap = rpmtdGetString(&caps);
		if (!path)
			continue;
		if (mode & S_ISUID)
			rule = "setuid";
		else if ((mode & S_ISGID) && !S_ISDIR(mode))
			rule = "setgid";
		else if (cap && cap[0])
			rule = "file-capabilities";
		if (rule) {
			err = ims_err(t->log, -EPERM,
				      "trust: rule %s: package %s (domain %s, rank %d < %d) may not install %s (mode %06o%s%s)",
				      rule, pkg->nevra, domain, rank, t->privileged_rank, path, mode,
				      cap && cap[0] ? ", capabilities " : "", cap && cap[0] ? cap : "");
			break;
		}
		pp = protected_prefix(t, path, prefix, sizeof(prefix));
		if (pp)
			err = ims_err(t->log, -EPERM,
				      "trust: rule protected-path: package %s (domain %s, rank %d < %d) may not install %s (under %s)",
				      pkg->nevra, domain, rank, t->privileged_rank, path, pp);
	}
	rpmtdFreeData(&names);
	rpmtdFreeData(&modes);
	rpmtdFreeData(&caps);
	return err;
}

static int trust_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct trust *t = state;
	struct ims_verdict v;
	const char *domain = "-";
	int rank = 0, err;

	if (pkg->op != IMASTREAM_PKG_INSTALL)
		return 0;
	if (!pkg->rpm_header) {
		if (t->allow_unknown)
			return 0;
		return ims_err(t->log, -EPERM,
			       "trust: rule unknown-source: package %s: the driver gave no header to check",
			       pkg->nevra);
	}
	err = ims_chain_verdict(t->chain, pkg, &v);
	if (err)
		return ims_err(t->log, err, "trust: package %s: cannot check its header signature",
			       pkg->nevra);
	if (v.domain) {
		domain = v.domain->name;
		rank = v.domain->rank;
		ims_logf(t->log, IMASTREAM_LOG_INFO, "trust: package %s: domain %s (rank %d, key %s)",
			 pkg->nevra, domain, rank, v.keyid);
	} else if (!t->allow_unknown) {
		return ims_err(t->log, -EPERM,
			       "trust: rule unknown-source: package %s is in no trust domain (%s%s%s)",
			       pkg->nevra, v.why, v.keyid[0] ? ", key " : "", v.keyid);
	} else {
		ims_logf(t->log, IMASTREAM_LOG_NOTICE,
			 "trust: package %s is in no trust domain (%s%s%s): allowed at rank 0",
			 pkg->nevra, v.why, v.keyid[0] ? ", key " : "", v.keyid);
	}
	if (rank >= t->privileged_rank)
		return 0;
	return check_files(t, pkg, pkg->rpm_header, domain, rank);
}

/* trust_domains is the chain's resource (judge.c), declared here as the trust plugin's. */
static const struct imastream_plugin_key trust_keys[] = {
	{ .name = "trust_domains",
	  .help = "\"NAME=RANK:KEYFILE[:KEYFILE...]\" words: armored OpenPGP keys" },
	{ .name = "trust_unknown", .def = "refuse", .check = check_unknown,
	  .help = "refuse | allow: packages outside every domain" },
	{ .name = "trust_privileged_rank", .def = "50", .check = check_rank,
	  .help = "rank a domain needs for setuid/setgid, file capabilities and protected paths" },
	{ .name = "trust_protected", .help = "path prefixes only a privileged domain may install to" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_trust_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "trust",
	.rank = IMASTREAM_RANK_ANY,
	.keys = trust_keys,
	.init = trust_init,
	.cleanup = trust_cleanup,
	.psm_pre = trust_psm_pre,
};
