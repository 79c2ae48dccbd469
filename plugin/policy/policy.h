/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the policy plugins: trust domains judged from a package's header signature. */
#ifndef IMASTREAM_PLUGIN_POLICY_H
#define IMASTREAM_PLUGIN_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/hooks.h"

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
	/* 16 hex digits of the signature's issuer key id, "" for an unsigned header. */
	char keyid[17];
	/* Why there is no domain: "unsigned", "unknown key", "bad signature". */
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

/**
 * ims_domains_judge - which domain signed a package header (a librpm Header)
 *
 * Verifies the header's OpenPGP signature (RPMTAG_RSAHEADER, else RPMTAG_DSAHEADER) over
 * the immutable header region with rpm's pgp functions, against our keys only, never
 * rpm's keyring.  With several verifying keys the highest-ranked domain wins.
 * Return: 0 with @v filled (v->domain NULL when no domain key verifies), -EINVAL for a
 * header without an immutable region, -ENOMEM.
 */
int ims_domains_judge(const struct ims_domains *d, void *header, struct ims_verdict *v);

/*
 * Percent-encodes @len bytes of @in into @out (NUL-terminated, truncated to @size): every
 * byte outside '!'..'~', the '%' itself and any byte of @extra (may be NULL) become "%XX"
 * (upper-case hex), so a hostile name with blanks or newlines stays one field of one
 * line.  3 * @len + 1 bytes always suffice.  Returns the encoded length (without NUL).
 */
size_t ims_escape(const void *in, size_t len, const char *extra, char *out, size_t size);

/* "a,b c" → the next word of a list separated by commas or blanks; NULL at the end. */
const char *ims_next_word(const char **p, size_t *len_ret);

/* Whether @path is @prefix or below it ("/boot" covers "/boot/x", not "/bootx"). */
bool ims_path_under(const char *path, const char *prefix);

#endif /* IMASTREAM_PLUGIN_POLICY_H */
