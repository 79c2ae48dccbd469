// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's package: its header's signature, rpm's ownership and scriptlets judged, and its name and NEVRA. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/chain_sink.h"
#include "installer/sink_header_trust.h"
#include "installer/private.h"
#include "installer/sink_package.h"

int ims_sink_package_init(struct ims_sink_package *p, int rootfd, const char *root,
			  unsigned int flags, const char *const *pgp_keys,
			  const struct imastream_log *log)
{
	int err;

	*p = (struct ims_sink_package){ .log = log, .root = root, .flags = flags };
	err = ims_rpm_config();
	if (err)
		return ims_err(log, err, "cannot read rpm's configuration");
	p->ts = rpmtsCreate();
	if (!p->ts)
		return -ENOMEM;
	if (rpmtsSetRootDir(p->ts, root))
		return ims_err(log, -EINVAL, "%s: not usable as rpm's root directory", root);
	err = ims_rpmdb_exists(rootfd, root, log);
	if (err < 0)
		return err;
	p->rpmdb = err;
	if (flags & IMASTREAM_SINK_NO_SIGNATURES)
		return 0;
	return ims_header_trust_new(pgp_keys, p->rpmdb ? p->ts : NULL, log, &p->trust);
}

void ims_sink_package_release(struct ims_sink_package *p)
{
	ims_header_trust_free(p->trust);
	headerFree(p->h);
	if (p->ts)
		rpmtsFree(p->ts);
	free(p->h_for);
	free(p->name);
	free(p->nevra);
	memset(p, 0, sizeof(*p));
}

/* Scriptlets are not run by this installer: say so once per package that has some. */
static void warn_scriptlets(const struct imastream_log *log, const char *name, Header h)
{
	static const struct {
		rpmTagVal tag;
		const char *name;
	} scripts[] = {
		{ RPMTAG_PRETRANS, "%pretrans" },
		{ RPMTAG_PREIN, "%pre" },
		{ RPMTAG_POSTIN, "%post" },
		{ RPMTAG_POSTTRANS, "%posttrans" },
		{ RPMTAG_PREINPROG, "%pre" },
		{ RPMTAG_POSTINPROG, "%post" },
		{ RPMTAG_TRIGGERSCRIPTS, "triggers" },
		{ RPMTAG_FILETRIGGERSCRIPTS, "file triggers" },
	};
	char list[128] = "";

	for (size_t i = 0; i < ARRAY_SIZE(scripts); i++) {
		if (!headerIsEntry(h, scripts[i].tag) || strstr(list, scripts[i].name))
			continue;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 list[0] ? " " : "", scripts[i].name);
	}
	if (list[0])
		ims_logf(log, IMASTREAM_LOG_WARNING, "%s: scriptlets are not run (%s)", name, list);
}

int ims_sink_package_header(struct ims_sink_package *p, struct imastream_chain *chain,
			    const char *name, void *rpm_header)
{
	Header h = rpm_header;

	headerFree(p->h);
	free(p->h_for);
	p->h = headerLink(h);
	p->h_for = strdup(name);
	p->sig_ok = false;
	p->take_over = false;
	if (!p->h_for)
		return -ENOMEM;
	if (p->trust) {
		int err = ims_header_trust_check(p->trust, chain, name, h,
						 p->flags & IMASTREAM_SINK_ALLOW_UNSIGNED,
						 &p->sig_ok);

		if (err)
			return err;
	}
	/* One owner per package: what rpm installed is upgraded by rpm, unless asked. */
	if (p->rpmdb && headerGetString(h, RPMTAG_NAME)) {
		const char *n = headerGetString(h, RPMTAG_NAME);

		if (!(p->flags & IMASTREAM_SINK_TAKE_OVER)) {
			int err = ims_rpmdb_refuse_owned(p->ts, p->root, name, n, p->log);

			if (err)
				return err;
		} else {
			int err = ims_rpmdb_takeover_check(p->ts, p->root, name, h,
							   &p->take_over_offset, p->log);

			if (err < 0)
				return err;
			p->take_over = err == 1;
		}
	}
	warn_scriptlets(p->log, name, h);
	return 0;
}

int ims_sink_package_begin(struct ims_sink_package *p, const char *name, unsigned int txn_flags,
			   struct imastream_pkg *pkg)
{
	bool rpm = p->h && p->h_for && !strcmp(p->h_for, name);

	free(p->name);
	free(p->nevra);
	p->name = p->nevra = NULL;
	if (rpm) {
		const char *n = headerGetString(p->h, RPMTAG_NAME);

		p->name = strdup(n ? n : name);
		p->nevra = headerGetAsString(p->h, RPMTAG_NEVRA);
	} else {
		p->name = strdup(name);
		p->nevra = strdup(name);
	}
	if (!p->name || !p->nevra)
		return -ENOMEM;
	*pkg = (struct imastream_pkg){ .size = sizeof(*pkg),
				       .nevra = p->nevra,
				       .op = IMASTREAM_PKG_INSTALL };
	if (rpm) {
		pkg->rpm_header = p->h;
		if (p->sig_ok || !(p->flags & IMASTREAM_SINK_NO_HEADER_DIGEST))
			pkg->flags |= IMASTREAM_PKG_HEADER_VERIFIED;
		if (!(txn_flags & IMASTREAM_TXN_NOFILEDIGEST))
			pkg->flags |= IMASTREAM_PKG_FILEDIGESTS_CHECKED;
	}
	return 0;
}

void ims_sink_package_end(struct ims_sink_package *p, int rootfd, int status)
{
	/* Installed and recorded: rpm's entry of the old version goes (one line if not). */
	if (!status && p->take_over)
		ims_rpmdb_forget(rootfd, p->root, p->name, p->take_over_offset, p->log);
	p->take_over = false;
	p->h = headerFree(p->h);
	free(p->h_for);
	p->h_for = NULL;
}
