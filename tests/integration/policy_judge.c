// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Test driver of test_policy_judge.sh: reads packages with librpm (no check of rpm's
 * own), prints the trust verdict of each header, then runs the chain's psm hooks with
 * the named plugins, so that the policy code runs in our (sanitizer) build, not in rpm.
 * Usage: policy_judge "KEY=VALUE;..." PLUGINS PKG...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>

#include "imastream/chain.h"
#include "plugin/builtin/policy/policy.h"

static void print_log(void *arg, int level, const char *msg)
{
	(void)arg;
	printf("log%d: %s\n", level, msg);
}

static const struct imastream_log out_log = { .fn = print_log };

static Header read_header(rpmts ts, const char *path)
{
	FD_t fd = Fopen(path, "r.ufdio");
	Header h = NULL;

	if (!fd || Ferror(fd)) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(99);
	}
	if (rpmReadPackageFile(ts, fd, path, &h) != RPMRC_OK && !h) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(99);
	}
	Fclose(fd);
	return h;
}

/* "key=value;key=value" into the configuration. */
static void configure(struct imastream_config *cfg, const char *settings)
{
	char *copy = strdup(settings), *save = NULL, *kv;

	for (kv = strtok_r(copy, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || imastream_config_set(cfg, (*eq = '\0', kv), eq + 1, "args", &out_log))
			exit(99);
	}
	free(copy);
}

int main(int argc, char **argv)
{
	struct imastream_config cfg;
	struct imastream_chain *chain = NULL;
	struct ims_domains *domains = NULL;
	struct imastream_txn txn = { .size = sizeof(txn), .root = "/" };
	rpmts ts;
	int err;

	if (argc < 4) {
		fprintf(stderr, "usage: %s SETTINGS PLUGINS PKG...\n", argv[0]);
		return 99;
	}
	if (rpmReadConfigFiles(NULL, NULL) || imastream_config_init(&cfg))
		return 99;
	configure(&cfg, argv[1]);
	if (ims_domains_load(imastream_config_get(&cfg, "trust_domains"), "trust_domains", &out_log,
			     &domains))
		return 99;
	ts = rpmtsCreate();
	/* Our judgement only: rpm checks neither digests nor signatures here. */
	rpmtsSetVSFlags(ts, RPMVSF_MASK_NOSIGNATURES | RPMVSF_MASK_NODIGESTS);
	err = imastream_chain_new(&cfg, &out_log, &chain);
	if (!err)
		err = imastream_chain_add_list(chain, argv[2]);
	if (!err)
		err = imastream_chain_init(chain);
	printf("init %d\n", err);
	if (!err)
		err = imastream_chain_tsm_pre(chain, &txn);
	for (int i = 3; !err && i < argc; i++) {
		Header h = read_header(ts, argv[i]);
		struct imastream_pkg pkg = { .size = sizeof(pkg), .op = IMASTREAM_PKG_INSTALL,
					     .rpm_header = h };
		char *nevra = headerGetAsString(h, RPMTAG_NEVRA);
		struct ims_verdict v;
		int rc;

		pkg.nevra = nevra;
		rc = ims_domains_judge(domains, h, &v);
		printf("%s judge %d domain=%s key=%s why=%s\n", nevra, rc,
		       v.domain ? v.domain->name : "-", v.keyid[0] ? v.keyid : "-",
		       v.why ? v.why : "-");
		rc = imastream_chain_psm_pre(chain, &pkg);
		printf("%s psm_pre %d\n", nevra, rc);
		imastream_chain_psm_post(chain, &pkg, rc);
		free(nevra);
		headerFree(h);
	}
	if (chain)
		imastream_chain_tsm_post(chain, &txn, err);
	imastream_chain_free(chain);
	ims_domains_free(domains);
	imastream_config_release(&cfg);
	rpmtsFree(ts);
	rpmFreeRpmrc();
	rpmFreeMacros(NULL);
	return err ? 1 : 0;
}
