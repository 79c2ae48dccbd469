/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Trust domains judged from a package header's OpenPGP signature: the policy plugins' and the installer's. */
#ifndef IMASTREAM_PLUGIN_CORE_TRUST_DOMAINS_H
#define IMASTREAM_PLUGIN_CORE_TRUST_DOMAINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

struct ims_domains;

/* A trust domain: a name, a rank (higher is more trusted) and its OpenPGP keys. */
struct ims_domain {
	char *name;
	int rank;
};

/* What a package's header signature says. */
struct ims_verdict {
	/* The domain whose key verified the header signature, or NULL. */
	const struct ims_domain *domain;
	/* No domain key verified it, the rpm keyring given to ims_header_judge() did. */
	bool keyring;
	/* 16 hex digits of the issuer key id of the signature that verified, else of the
	 * first one; "" for an unsigned header. */
	char keyid[17];
	/* Why nothing verified it: "unsigned", "unknown key", "bad signature",
	 * "unreadable signature"; NULL when something did. */
	const char *why;
};

/**
 * ims_domains_load - parse "NAME=RANK:KEYFILE[:KEYFILE...]" words and load the keys
 * @spec: the trust_domains value (words separated by blanks); NULL or "" gives none
 * @where: names the setting in messages
 * Keys are read here, at init: file hooks and psm hooks may run inside a chroot.
 * Return: 0, -EINVAL (bad syntax, a duplicate name, a file without a public key), -errno.
 */
int ims_domains_load(const char *spec, const char *where, const struct imastream_log *log,
		     struct ims_domains **ret);
void ims_domains_free(struct ims_domains *d);
unsigned int ims_domains_count(const struct ims_domains *d);
/* The highest rank of any domain; 0 with none. */
int ims_domains_top_rank(const struct ims_domains *d);

/* A header's OpenPGP signature packets, decoded: rpm 6's RPMTAG_OPENPGP list when the
 * header has one, else RPMTAG_RSAHEADER, else RPMTAG_DSAHEADER. */
#define IMS_MAX_HEADER_SIGS 8
struct ims_header_sigs {
	unsigned int n;
	uint8_t *sig[IMS_MAX_HEADER_SIGS];
	size_t len[IMS_MAX_HEADER_SIGS];
};

/* Return: 0 (hs->n is 0 for an unsigned header), -EINVAL without a header, -ENOMEM. */
int ims_header_sigs_read(void *header, struct ims_header_sigs *hs);
void ims_header_sigs_free(struct ims_header_sigs *hs);

/**
 * ims_header_judge - who signed a package header (a librpm Header)
 * @d: trust domains (may be NULL)
 * @rpm_keyring: an rpmKeyring tried when no domain key verifies (may be NULL)
 *
 * Verifies the header's OpenPGP signatures (ims_header_sigs_read()) over the immutable
 * header region with rpm's pgp functions.  With several verifying keys the
 * highest-ranked domain wins.
 * Return: 0 with @v filled (v->domain NULL when no domain key verifies), -EINVAL for a
 * signed header without an immutable region, -ENOMEM.
 */
int ims_header_judge(const struct ims_domains *d, void *rpm_keyring, void *header,
		     struct ims_verdict *v);
/* ims_header_judge() against our domains only, never rpm's keyring. */
int ims_domains_judge(const struct ims_domains *d, void *header, struct ims_verdict *v);

#endif
