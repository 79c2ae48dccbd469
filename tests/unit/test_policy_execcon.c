// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of the scriptlet exec context (plugin/builtin/policy/execcon.c) against a stand-in
 * SELinux: disabled, permissive, enforcing, with and without a policy transition, and each
 * libselinux call failing.  This machine's kernel has no SELinux, so the enforcing path is
 * only exercised here, never against a real policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/builtin/policy/policy.h"
#include "tests/unit/test.h"

/* The stand-in kernel and policy. */
static struct {
	int enabled, enforcing;
	const char *current;    /* our context */
	const char *file;       /* every file's context */
	const char *transition; /* what compute_create gives; NULL: our own context */
	int fail;               /* which call fails with EACCES: 1 getcon ... 4 setexeccon */
	char exec[256];         /* what setexeccon was given */
	int setexec_calls;
	int live;               /* contexts handed out, not yet freed */
} fake;

static char *give(const char *con)
{
	fake.live++;
	return strdup(con);
}

static int f_enabled(void)
{
	return fake.enabled;
}

static int f_enforcing(void)
{
	return fake.enforcing;
}

static int f_getcon(char **con)
{
	if (fake.fail == 1) {
		errno = EACCES;
		return -1;
	}
	*con = give(fake.current);
	return 0;
}

static int f_getfilecon(const char *path, char **con)
{
	(void)path;
	if (fake.fail == 2) {
		errno = ENODATA;
		return -1;
	}
	*con = give(fake.file);
	return 0;
}

static int f_compute(const char *scon, const char *fcon, char **newcon)
{
	ASSERT(strcmp(scon, fake.current) == 0);
	ASSERT(strcmp(fcon, fake.file) == 0);
	if (fake.fail == 3) {
		errno = EINVAL;
		return -1;
	}
	*newcon = give(fake.transition ? fake.transition : fake.current);
	return 0;
}

static int f_check(const char *con)
{
	return strstr(con, "unknown_t") ? -1 : 0;
}

static int f_setexeccon(const char *con)
{
	fake.setexec_calls++;
	if (fake.fail == 4) {
		errno = EACCES;
		return -1;
	}
	snprintf(fake.exec, sizeof(fake.exec), "%s", con);
	return 0;
}

static void f_freecon(char *con)
{
	fake.live--;
	free(con);
}

static const struct ims_selinux_ops ops = {
	.enabled = f_enabled,
	.enforcing = f_enforcing,
	.getcon = f_getcon,
	.getfilecon = f_getfilecon,
	.compute_exec = f_compute,
	.check = f_check,
	.setexeccon = f_setexeccon,
	.freecon = f_freecon,
};

static char last[1024];
static int last_level;

static void keep(void *arg, int level, const char *msg)
{
	(void)arg;
	last_level = level;
	snprintf(last, sizeof(last), "%s", msg);
}

static const struct imastream_log test_log = { .fn = keep };

static void reset(int enabled, int enforcing)
{
	memset(&fake, 0, sizeof(fake));
	fake.enabled = enabled;
	fake.enforcing = enforcing;
	fake.current = "system_u:system_r:rpm_t:s0";
	fake.file = "system_u:object_r:shell_exec_t:s0";
	last[0] = '\0';
	last_level = 0;
}

/* decide() with @setting; returns its error, the context in @ctx ("" for none). */
static int decide(const char *setting, char *ctx, size_t size, int *how)
{
	char *c = NULL, why[256];
	int err = ims_execcon_decide(&ops, setting, "/bin/sh", &c, how, why, sizeof(why));

	snprintf(ctx, size, "%s", c ? c : "");
	if (err)
		snprintf(last, sizeof(last), "%s", why);
	free(c);
	ASSERT_EQ(fake.live, 0);
	return err;
}

static void test_disabled(void)
{
	char ctx[256];
	int how = -1;

	/* This machine's case: no context whatever is configured, nothing is called. */
	reset(0, 0);
	ASSERT_EQ(decide(NULL, ctx, sizeof(ctx), &how), 0);
	ASSERT_EQ(how, IMS_EXECCON_DISABLED);
	ASSERT(ctx[0] == '\0');
	ASSERT_EQ(decide("staff_u:staff_r:staff_t:s0", ctx, sizeof(ctx), &how), 0);
	ASSERT_EQ(how, IMS_EXECCON_DISABLED);
	ASSERT_EQ(ims_execcon_apply(&ops, "auto", "/bin/sh", &test_log), 0);
	ASSERT_EQ(fake.setexec_calls, 0);
	ASSERT(strstr(last, "exec context none (SELinux disabled)"));
	/* init: a well-formed context is accepted and said to be unused; a bad one refused. */
	ASSERT_EQ(ims_execcon_check_setting(&ops, NULL, &test_log), 0);
	ASSERT(strcmp(last, "scriptctx: SELinux is disabled: scriptlets get no exec context") == 0);
	ASSERT_EQ(ims_execcon_check_setting(&ops, "system_u:system_r:unknown_t:s0", &test_log), 0);
	ASSERT(strstr(last, "is not applied"));
	ASSERT_EQ(ims_execcon_check_setting(&ops, "rpm_script_t", &test_log), -EINVAL);
	ASSERT(strstr(last, "\"rpm_script_t\" is not auto, none or USER:ROLE:TYPE[:RANGE]"));
	ASSERT_EQ(ims_execcon_check_setting(&ops, "a::c", &test_log), -EINVAL);
}

static void test_enabled(void)
{
	char ctx[256];
	int how;

	/* The policy defines a transition for the interpreter: take it. */
	reset(1, 1);
	fake.transition = "system_u:system_r:sh_script_t:s0";
	ASSERT_EQ(decide("auto", ctx, sizeof(ctx), &how), 0);
	ASSERT_EQ(how, IMS_EXECCON_TRANSITION);
	ASSERT(strcmp(ctx, "system_u:system_r:sh_script_t:s0") == 0);
	/* None defined: our user, role and range with rpm_script_t. */
	fake.transition = NULL;
	fake.current = "unconfined_u:unconfined_r:rpm_t:s0-s0:c0.c1023";
	ASSERT_EQ(decide(NULL, ctx, sizeof(ctx), &how), 0);
	ASSERT_EQ(how, IMS_EXECCON_FALLBACK);
	ASSERT(strcmp(ctx, "unconfined_u:unconfined_r:rpm_script_t:s0-s0:c0.c1023") == 0);
	/* A configured context is taken as it is; none means none. */
	ASSERT_EQ(decide("system_u:system_r:install_t:s0", ctx, sizeof(ctx), &how), 0);
	ASSERT_EQ(how, IMS_EXECCON_CONFIGURED);
	ASSERT(strcmp(ctx, "system_u:system_r:install_t:s0") == 0);
	ASSERT_EQ(decide("none", ctx, sizeof(ctx), &how), 0);
	ASSERT_EQ(how, IMS_EXECCON_NONE);
	ASSERT(ctx[0] == '\0');
	/* apply() hands the decision to setexeccon. */
	ASSERT_EQ(ims_execcon_apply(&ops, NULL, "/bin/sh", &test_log), 0);
	ASSERT(strcmp(fake.exec, "unconfined_u:unconfined_r:rpm_script_t:s0-s0:c0.c1023") == 0);
	ASSERT(strstr(last, "(no transition: rpm_script_t)"));
	ASSERT_EQ(ims_execcon_apply(&ops, "none", "/bin/sh", &test_log), 0);
	ASSERT_EQ(fake.setexec_calls, 1);
	/* init: the policy must know a configured context. */
	ASSERT_EQ(ims_execcon_check_setting(&ops, "system_u:system_r:install_t:s0", &test_log), 0);
	ASSERT_EQ(ims_execcon_check_setting(&ops, "system_u:system_r:unknown_t:s0", &test_log),
		  -EINVAL);
	ASSERT(strstr(last, "is not a context of the loaded policy"));
}

static void test_failures(void)
{
	static const struct {
		int call, err;
		const char *why;
	} cases[] = {
		{ 1, -EACCES, "cannot read our own context: Permission denied" },
		{ 2, -ENODATA, "cannot read the file context of /bin/sh" },
		{ 3, -EINVAL, "no exec context from system_u:system_r:rpm_t:s0 for system_u:object_r:shell_exec_t:s0" },
		{ 4, -EACCES, "cannot set exec context system_u:system_r:rpm_script_t:s0" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* Enforcing: the scriptlet fails, with one error line saying what failed. */
		reset(1, 1);
		fake.fail = cases[i].call;
		ASSERT_EQ(ims_execcon_apply(&ops, "auto", "/bin/sh", &test_log), cases[i].err);
		ASSERT_EQ(last_level, IMASTREAM_LOG_ERR);
		ASSERT(strstr(last, "scriptctx: /bin/sh: SELinux is enforcing and "));
		ASSERT(strstr(last, cases[i].why));
		ASSERT_EQ(fake.live, 0);
		/* Permissive: a notice, and the scriptlet runs in the inherited context. */
		reset(1, 0);
		fake.fail = cases[i].call;
		ASSERT_EQ(ims_execcon_apply(&ops, "auto", "/bin/sh", &test_log), 0);
		ASSERT_EQ(last_level, IMASTREAM_LOG_NOTICE);
		ASSERT(strstr(last, "SELinux is permissive: the scriptlet runs in the inherited context"));
		ASSERT(strstr(last, cases[i].why));
		ASSERT_EQ(fake.live, 0);
	}
	/* No program named and no configured context: nothing to look the policy up by. */
	reset(1, 1);
	ASSERT_EQ(ims_execcon_apply(&ops, NULL, NULL, &test_log), -EINVAL);
	ASSERT(strstr(last, "scriptctx: scriptlet: SELinux is enforcing and the driver named no program"));
}

/* The real libselinux on this machine: whatever it says, the decision is consistent. */
static void test_this_machine(void)
{
	char *c = NULL, why[256];
	int how = -1;
	int err = ims_execcon_decide(&ims_libselinux_ops, NULL, "/bin/sh", &c, &how, why,
				     sizeof(why));

	if (ims_libselinux_ops.enabled() <= 0) {
		ASSERT_EQ(err, 0);
		ASSERT_EQ(how, IMS_EXECCON_DISABLED);
		ASSERT(c == NULL);
		printf("this machine: SELinux disabled, scriptlets get no exec context\n");
	} else {
		printf("this machine: SELinux enabled, /bin/sh scriptlets: %s (%s)\n",
		       c ? c : why, ims_execcon_how_name(how));
	}
	free(c);
}

int main(void)
{
	test_disabled();
	test_enabled();
	test_failures();
	test_this_machine();
	printf("ok\n");
	return 0;
}
