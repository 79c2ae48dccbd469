// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The SELinux exec context of a scriptlet, for the scriptctx plugin: which context (a
 * configured one, or the policy's transition from our context to the interpreter's file
 * context, else our context with the rpm_script_t type, the convention of rpm's selinux
 * plugin), or none when SELinux is disabled.  libselinux is reached through a table of
 * calls, so that tests can stand in for an enforcing kernel this machine does not have.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <selinux/context.h>
#include <selinux/selinux.h>

#include "plugin/builtin/policy/policy.h"

static int lib_enabled(void)
{
	return is_selinux_enabled();
}

static int lib_enforcing(void)
{
	return security_getenforce();
}

static int lib_getcon(char **con)
{
	return getcon(con);
}

static int lib_getfilecon(const char *path, char **con)
{
	return getfilecon(path, con) < 0 ? -1 : 0;
}

static int lib_compute_exec(const char *scon, const char *fcon, char **newcon)
{
	security_class_t process = string_to_security_class("process");

	if (!process) {
		errno = EINVAL;
		return -1;
	}
	return security_compute_create(scon, fcon, process, newcon);
}

static int lib_check(const char *con)
{
	return security_check_context(con);
}

static int lib_setexeccon(const char *con)
{
	return setexeccon(con);
}

static void lib_freecon(char *con)
{
	freecon(con);
}

/* The real calls.  plugin/rpm/adapter.c's hook table looks alike: another interface. */
const struct ims_selinux_ops ims_libselinux_ops = {
	.enabled = lib_enabled,
	.enforcing = lib_enforcing,
	.getcon = lib_getcon,
	.getfilecon = lib_getfilecon,
	.compute_exec = lib_compute_exec,
	.check = lib_check,
	.setexeccon = lib_setexeccon,
	.freecon = lib_freecon,
};

const char *ims_execcon_how_name(int how)
{
	static const char *const names[] = {
		[IMS_EXECCON_DISABLED] = "SELinux disabled",
		[IMS_EXECCON_NONE] = "none configured",
		[IMS_EXECCON_CONFIGURED] = "configured",
		[IMS_EXECCON_TRANSITION] = "policy transition",
		[IMS_EXECCON_FALLBACK] = "no transition: " IMS_EXECCON_FALLBACK_TYPE,
	};

	return how >= 0 && how < (int)ARRAY_SIZE(names) ? names[how] : "?";
}

/* "user:role:type[:range]" with the first three parts non-empty. */
static bool well_formed(const char *con)
{
	context_t c = context_new(con);
	bool ok;

	if (!c)
		return false;
	ok = context_user_get(c) && context_user_get(c)[0] && context_role_get(c) &&
	     context_role_get(c)[0] && context_type_get(c) && context_type_get(c)[0];
	context_free(c);
	return ok;
}

int ims_execcon_check_setting(const struct ims_selinux_ops *ops, const char *setting,
			      const struct imastream_log *log)
{
	bool enabled = ops->enabled() > 0;

	if (!setting || strcmp(setting, "auto") == 0 || strcmp(setting, "none") == 0) {
		if (!enabled && (!setting || strcmp(setting, "none") != 0))
			ims_logf(log, IMASTREAM_LOG_INFO,
				 "scriptctx: SELinux is disabled: scriptlets get no exec context");
		return 0;
	}
	if (!well_formed(setting))
		return ims_err(log, -EINVAL,
			       "scriptctx: script_exec_context \"%s\" is not auto, none or USER:ROLE:TYPE[:RANGE]",
			       setting);
	if (!enabled) {
		ims_logf(log, IMASTREAM_LOG_INFO,
			 "scriptctx: SELinux is disabled: script_exec_context %s is not applied",
			 setting);
		return 0;
	}
	if (ops->check(setting) != 0)
		return ims_err(log, -EINVAL,
			       "scriptctx: script_exec_context \"%s\" is not a context of the loaded policy",
			       setting);
	return 0;
}

/* Says why there is no context, in @why; returns the negative errno @err. */
static int ims_printf(4, 5) failed(char *why, size_t size, int err, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(why, size, "%s: %s", what, strerror(-err));
	return err;
}

static int saved_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* The policy's choice for a scriptlet run by @path, as rpm's selinux plugin makes it. */
static int from_policy(const struct ims_selinux_ops *ops, const char *path, char **ctx_ret,
		       int *how_ret, char *why, size_t why_size)
{
	char *mine = NULL, *file = NULL, *next = NULL;
	context_t c = NULL;
	int err = 0;

	errno = 0;
	if (ops->getcon(&mine) < 0) {
		err = failed(why, why_size, saved_errno(), "cannot read our own context");
		goto out;
	}
	if (ops->getfilecon(path, &file) < 0) {
		err = failed(why, why_size, saved_errno(), "cannot read the file context of %s", path);
		goto out;
	}
	if (ops->compute_exec(mine, file, &next) < 0) {
		err = failed(why, why_size, saved_errno(), "no exec context from %s for %s", mine,
			     file);
		goto out;
	}
	if (strcmp(mine, next) != 0) {
		*ctx_ret = strdup(next);
		*how_ret = IMS_EXECCON_TRANSITION;
	} else {
		/* No transition defined for this interpreter: keep our user, role and range. */
		c = context_new(mine);
		if (!c || context_type_set(c, IMS_EXECCON_FALLBACK_TYPE) != 0) {
			err = failed(why, why_size, -EINVAL, "cannot make a context of type %s from %s",
				     IMS_EXECCON_FALLBACK_TYPE, mine);
			goto out;
		}
		*ctx_ret = strdup(context_str(c));
		*how_ret = IMS_EXECCON_FALLBACK;
	}
	if (!*ctx_ret)
		err = failed(why, why_size, -ENOMEM, "out of memory");
out:
	if (c)
		context_free(c);
	if (next)
		ops->freecon(next);
	if (file)
		ops->freecon(file);
	if (mine)
		ops->freecon(mine);
	return err;
}

int ims_execcon_decide(const struct ims_selinux_ops *ops, const char *setting, const char *path,
		       char **ctx_ret, int *how_ret, char *why, size_t why_size)
{
	*ctx_ret = NULL;
	if (why_size)
		why[0] = '\0';
	if (setting && strcmp(setting, "none") == 0) {
		*how_ret = IMS_EXECCON_NONE;
		return 0;
	}
	if (ops->enabled() <= 0) {
		*how_ret = IMS_EXECCON_DISABLED;
		return 0;
	}
	if (setting && strcmp(setting, "auto") != 0) {
		*how_ret = IMS_EXECCON_CONFIGURED;
		*ctx_ret = strdup(setting);
		return *ctx_ret ? 0 : failed(why, why_size, -ENOMEM, "out of memory");
	}
	if (!path)
		return failed(why, why_size, -EINVAL, "the driver named no program");
	return from_policy(ops, path, ctx_ret, how_ret, why, why_size);
}

int ims_execcon_apply(const struct ims_selinux_ops *ops, const char *setting, const char *path,
		      const struct imastream_log *log)
{
	const char *name = path ? path : "scriptlet";
	char *ctx = NULL, why[1024];
	int how = IMS_EXECCON_DISABLED, err;

	err = ims_execcon_decide(ops, setting, path, &ctx, &how, why, sizeof(why));
	if (!err && ctx && ops->setexeccon(ctx) < 0) {
		errno = errno ? errno : EIO;
		err = failed(why, sizeof(why), saved_errno(), "cannot set exec context %s", ctx);
	}
	if (!err)
		ims_logf(log, IMASTREAM_LOG_DEBUG, "scriptctx: %s: exec context %s (%s)", name,
			 ctx ? ctx : "none", ims_execcon_how_name(how));
	else if (ops->enforcing() > 0)
		ims_err(log, err, "scriptctx: %s: SELinux is enforcing and %s", name, why);
	else {
		/* Permissive: the kernel would only log the denial, so the scriptlet runs. */
		ims_logf(log, IMASTREAM_LOG_NOTICE,
			 "scriptctx: %s: %s; SELinux is permissive: the scriptlet runs in the inherited context",
			 name, why);
		err = 0;
	}
	free(ctx);
	return err;
}
