// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: arbitrary bytes as the Smack manifest a package carries in its header
 * (RPMTAG_POLICIES, type "smack"), through the smack plugin's package start: base64,
 * line splitting, rule and label parsing, and the release of what was parsed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmbase64.h>
#include <rpm/rpmtag.h>

#include "imastream/chain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct imastream_config cfg;
static struct imastream_chain *chain;

static void setup(void)
{
	if (imastream_config_init(&cfg) ||
	    imastream_config_set(&cfg, "smack_package_manifests", "yes", "fuzz", NULL) ||
	    imastream_chain_new(&cfg, NULL, &chain) || imastream_chain_add_list(chain, "smack") ||
	    imastream_chain_init(chain))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *type = "smack";
	uint32_t index = 0;
	struct imastream_pkg pkg = { .size = sizeof(pkg), .nevra = "fuzz-1-1.noarch", .op = IMASTREAM_PKG_INSTALL };
	char *b64;
	Header h;
	int rc;

	if (!chain)
		setup();
	/* Half the inputs are taken as base64 text as they are, to reach its error paths. */
	if (size && data[0] == '!') {
		b64 = strndup((const char *)data + 1, size - 1);
	} else {
		b64 = rpmBase64Encode(data, size, 0);
	}
	h = headerNew();
	if (!b64 || !h)
		abort();
	headerPutString(h, RPMTAG_NAME, "fuzz");
	headerPutString(h, RPMTAG_POLICIES, b64);
	headerPutString(h, RPMTAG_POLICYTYPES, type);
	headerPutUint32(h, RPMTAG_POLICYTYPESINDEXES, &index, 1);
	pkg.rpm_header = h;
	rc = imastream_chain_psm_pre(chain, &pkg);
	imastream_chain_psm_post(chain, &pkg, rc);
	headerFree(h);
	free(b64);
	return 0;
}
