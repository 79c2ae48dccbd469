/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the policy plugins: the chain's trust domains and verdicts, and their text helpers. */
#ifndef IMASTREAM_PLUGIN_BUILTIN_POLICY_H
#define IMASTREAM_PLUGIN_BUILTIN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/hooks.h"
#include "plugin/core/trust_domains.h"

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
