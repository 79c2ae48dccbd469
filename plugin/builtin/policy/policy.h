/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the policy plugins: trust domains judged from a package's header signature. */
#ifndef IMASTREAM_PLUGIN_BUILTIN_POLICY_H
#define IMASTREAM_PLUGIN_BUILTIN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The chain's trust domains (judge.c), a resource of the chain (plugin/core/resource.h):
 * loaded once per chain from the trust_domains key, at the first call (a plugin's init:
 * keys are read before any chroot), and one verdict per package, judged at psm_pre
 * before any plugin's psm_pre runs.  A failed load is said once and returned to every
 * later caller.
 */
struct ims_trust;
int ims_chain_trust(struct imastream_chain *chain, struct ims_trust **ret);
int ims_chain_domains(struct imastream_chain *chain, const struct ims_domains **ret);
/**
 * ims_chain_verdict - the verdict on @pkg's header, judged once per package
 * Return: 0 with @v filled, or the judgement's error (-EINVAL: a signed header without
 * an immutable region, also returned for a package without a header; -ENOMEM).
 */
int ims_chain_verdict(struct imastream_chain *chain, const struct imastream_pkg *pkg,
		      struct ims_verdict *v);

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

/*
 * The calls the scriptctx plugin makes to SELinux (libselinux's conventions: -1 and errno
 * on failure, contexts released with freecon), so that tests can stand in for a kernel
 * running SELinux.  compute_exec is security_compute_create() for the process class.
 */
struct ims_selinux_ops {
	int (*enabled)(void);   /* > 0: SELinux is enabled */
	int (*enforcing)(void); /* > 0: enforcing */
	int (*getcon)(char **con);
	int (*getfilecon)(const char *path, char **con);
	int (*compute_exec)(const char *scon, const char *fcon, char **newcon);
	int (*check)(const char *con); /* 0: the loaded policy knows the context */
	int (*setexeccon)(const char *con);
	void (*freecon)(char *con);
};

extern const struct ims_selinux_ops ims_libselinux_ops;

/* The type a scriptlet runs as when the policy defines no transition (rpm's convention). */
#define IMS_EXECCON_FALLBACK_TYPE "rpm_script_t"

/* How a scriptlet's exec context was chosen. */
enum {
	IMS_EXECCON_DISABLED,   /* SELinux is disabled: none */
	IMS_EXECCON_NONE,       /* script_exec_context = none */
	IMS_EXECCON_CONFIGURED, /* script_exec_context = USER:ROLE:TYPE[:RANGE] */
	IMS_EXECCON_TRANSITION, /* the policy's transition to the program's file context */
	IMS_EXECCON_FALLBACK,   /* no transition: our context with IMS_EXECCON_FALLBACK_TYPE */
};

const char *ims_execcon_how_name(int how);

/**
 * ims_execcon_check_setting - check script_exec_context at init
 * @setting: NULL or "auto" (from the policy), "none", or a context
 * A context must be well formed, and known to the policy when SELinux is enabled.
 * Return: 0 or -EINVAL (logged).
 */
int ims_execcon_check_setting(const struct ims_selinux_ops *ops, const char *setting,
			      const struct imastream_log *log);

/**
 * ims_execcon_decide - the exec context for the scriptlet program @path
 * @ctx_ret: a malloc'd context to set, or NULL for none (see @how_ret)
 * @how_ret: IMS_EXECCON_*
 * @why: on failure, what failed (NUL-terminated, truncated to @why_size)
 * Return: 0, or a negative errno of the failed SELinux call (-ENOMEM).
 */
int ims_execcon_decide(const struct ims_selinux_ops *ops, const char *setting, const char *path,
		       char **ctx_ret, int *how_ret, char *why, size_t why_size);

/**
 * ims_execcon_apply - decide and setexeccon(), in the scriptlet's child before exec
 * A failure fails the scriptlet when SELinux is enforcing; when permissive it is logged
 * as a notice and the scriptlet runs in the inherited context (as with rpm's plugin).
 * Return: 0 or the negative errno (logged).
 */
int ims_execcon_apply(const struct ims_selinux_ops *ops, const char *setting, const char *path,
		      const struct imastream_log *log);

#endif /* IMASTREAM_PLUGIN_BUILTIN_POLICY_H */
