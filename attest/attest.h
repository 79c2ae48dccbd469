/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Keylime runtime policies and IMA measurement logs: what imastream policy writes and imastream attest checks. */
#ifndef IMASTREAM_ATTEST_H
#define IMASTREAM_ATTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"
#include "imastream/hash.h"

/*
 * One line of /sys/kernel/security/ima/ascii_runtime_measurements:
 *	PCR TEMPLATE-HASH TEMPLATE-NAME TEMPLATE-DATA
 * where the data of the templates judged here is
 *	ima	SHA1-HEX NAME
 *	ima-ng	ALGO:HEX NAME
 *	ima-sig	ALGO:HEX NAME [SIGNATURE-HEX]	(the security.ima value, when signed)
 *	ima-buf	ALGO:HEX NAME BUFFER-HEX
 * NAME holds no blank: the kernel records each as '_' (attest_kernel_name()); it keeps
 * every other byte, so a tab or a non-ASCII byte stays and a newline breaks the line.
 * Strings point into the parsed line.
 */
#define ATTEST_MAX_SIG 1024

struct attest_entry {
	unsigned int pcr;
	const char *template;
	const char *algo;          /* "sha256"; "sha1" for the ima template */
	int hash_algo;             /* kernel hash id of algo */
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t digest_len;
	const char *name;
	uint8_t sig[ATTEST_MAX_SIG]; /* ima-sig: the security.ima value */
	size_t sig_len;
	const char *buf_hex; /* ima-buf: the buffer, hex */
};

/*
 * Parses @line (no newline; modified in place) into @e.
 * Return: 0; -EINVAL with @why set for a malformed line; -EOPNOTSUPP with @why set for
 * a template whose data is not one of the above.
 */
int attest_parse_line(char *line, struct attest_entry *e, const char **why);

/*
 * @path as the kernel records it in a measurement's name field: each blank becomes '_',
 * every other byte stays (no escaping).  @out holds strlen(@path) + 1 bytes; returns @out.
 */
char *attest_kernel_name(char *out, const char *path);

/* ima.log_hash_alg: the template hash algorithms keylime's schema allows. */
#define ATTEST_LOG_HASH_ALGS "sha1, sha256, sha384 or sha512"
bool attest_log_hash_alg_known(const char *name);

/* A keylime runtime policy (meta.version 1), in memory. */
struct attest_policy;

int attest_policy_new(const char *log_hash_alg, struct attest_policy **ret);
void attest_policy_free(struct attest_policy *p);
/*
 * Allows @digest for @path (duplicates are kept once, when written), listed under the
 * name the kernel logs for it (attest_kernel_name()).
 * Return: 0; -EILSEQ if @path is not well-formed UTF-8 (JSON cannot spell it); -ENOMEM.
 */
int attest_policy_add_digest(struct attest_policy *p, const char *path,
			     const uint8_t *digest, size_t len);
/* Adds an exclude (a regular expression matched at the start of a path). Return: 0, -EINVAL. */
int attest_policy_add_exclude(struct attest_policy *p, const char *regex, const char **why);
/* Adds a verification key: a DER SubjectPublicKeyInfo with the key id signatures name. */
int attest_policy_add_key(struct attest_policy *p, const uint8_t *der, size_t len, uint32_t keyid);
/* How many paths the policy lists. */
size_t attest_policy_paths(const struct attest_policy *p);
/* Writes the policy as JSON, paths sorted. Return: 0, or -errno (said on @log). */
int attest_policy_write(const struct attest_policy *p, int fd, const struct imastream_log *log);
/*
 * Reads a keylime runtime policy (JSON).  Checks the fields keylime requires and their
 * types, compiles the excludes, and loads the verification keys.
 * Return: 0; -EINVAL (said on @log, naming @what and the field); -ENOMEM; -errno.
 */
int attest_policy_read(const char *buf, size_t len, const char *what,
		       const struct imastream_log *log, struct attest_policy **ret);

/*
 * Merges @base (read by attest_policy_read()) into @p as keylime's generator merges its
 * --base-policy: digests, keyrings, ima-buf, excludes, ignored keyrings and verification
 * keys united, ima.log_hash_alg taken from @base (refused when @log_hash_alg_given differs).
 * Return: 0; -EINVAL when @base's digests are not in @hash_algo (said naming @what); -ENOMEM.
 */
int attest_policy_merge(struct attest_policy *p, const struct attest_policy *base,
			bool log_hash_alg_given, int hash_algo, const char *what,
			const struct imastream_log *log);

/* What the policy says of one measurement. */
enum attest_verdict {
	ATTEST_MATCH,        /* the digest is one the policy allows for the path */
	ATTEST_SIGNED,       /* ima-sig: a verification key verifies the signature */
	ATTEST_EXCLUDED,     /* an exclude matches the path */
	ATTEST_IGNORED,      /* boot_aggregate without policy values, an ignored keyring */
	ATTEST_NOT_IN_POLICY,
	ATTEST_DIGEST_MISMATCH,
};

/* Judges @e by keylime's rules; @why explains a failure or an ignored entry. */
enum attest_verdict attest_judge(const struct attest_policy *p, const struct attest_entry *e,
				 const char **why);
static inline bool attest_verdict_ok(enum attest_verdict v)
{
	return v <= ATTEST_IGNORED;
}

#endif /* IMASTREAM_ATTEST_H */
