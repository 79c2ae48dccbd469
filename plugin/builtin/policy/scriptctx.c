// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The scriptctx plugin: scriptlets run with no_new_privs and a seccomp filter that makes
 * the configured system calls (module loading, kexec, ptrace, mounting, bpf by default)
 * fail with EPERM, and, where SELinux is enabled, an exec context (execcon.c).  The filter
 * is built once at init; script_exec, which rpm calls in the forked scriptlet child before
 * exec, only loads it, so the parent is never confined.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <seccomp.h>

#include "plugin/builtin/plugins.h"
#include "plugin/builtin/policy/policy.h"

/*
 * Module loading, kexec, tracing other processes, changing mounts (the new mount API
 * too, or the old one's denial would be moot) and loading BPF programs.
 */
#define DEFAULT_DENY "init_module,finit_module,delete_module,kexec_load,kexec_file_load," \
		     "ptrace,mount,umount2,pivot_root,fsopen,fsconfig,fsmount,move_mount,"  \
		     "open_tree,bpf"

struct scriptctx {
	const struct imastream_log *log;
	scmp_filter_ctx filter;
	unsigned int n_rules;
	const char *exec_context; /* the configuration's script_exec_context */
	const struct ims_selinux_ops *selinux;
	bool nocontexts; /* rpm --nocontexts: no exec context this transaction */
};

static void scriptctx_cleanup(void *state)
{
	struct scriptctx *s = state;

	if (!s)
		return;
	if (s->filter)
		seccomp_release(s->filter);
	free(s);
}

/* The other ABIs of this machine, so that a 32-bit scriptlet is filtered the same way. */
static void add_compat_arches(scmp_filter_ctx filter)
{
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		seccomp_arch_add(filter, SCMP_ARCH_X86);
		seccomp_arch_add(filter, SCMP_ARCH_X32);
	} else if (seccomp_arch_native() == SCMP_ARCH_AARCH64) {
		seccomp_arch_add(filter, SCMP_ARCH_ARM);
	}
}

static int build_filter(struct scriptctx *s, const char *list)
{
	const char *p = list, *w;
	char name[64];
	size_t len;
	int err;

	s->filter = seccomp_init(SCMP_ACT_ALLOW);
	if (!s->filter)
		return ims_err(s->log, -ENOMEM, "scriptctx: cannot create a seccomp filter");
	add_compat_arches(s->filter);
	if (strcmp(list, "none") == 0)
		return 0;
	while ((w = ims_next_word(&p, &len))) {
		int nr;

		if (len >= sizeof(name))
			return ims_err(s->log, -EINVAL, "scriptctx: seccomp_deny: \"%.*s\" is not a system call",
				       (int)len, w);
		memcpy(name, w, len);
		name[len] = '\0';
		nr = seccomp_syscall_resolve_name(name);
		if (nr == __NR_SCMP_ERROR)
			return ims_err(s->log, -EINVAL,
				       "scriptctx: seccomp_deny: \"%s\" is not a system call of this machine",
				       name);
		err = seccomp_rule_add(s->filter, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (err)
			return ims_err(s->log, err, "scriptctx: cannot deny %s: %s", name, strerror(-err));
		s->n_rules++;
	}
	return 0;
}

static int scriptctx_init(struct imastream_init_args *args, void **state_ret)
{
	const char *list = imastream_config_get(args->cfg, "seccomp_deny");
	struct scriptctx *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->log = args->log;
	s->exec_context = imastream_config_get(args->cfg, "script_exec_context");
	s->selinux = &ims_libselinux_ops;
	err = build_filter(s, list);
	if (!err)
		err = ims_execcon_check_setting(s->selinux, s->exec_context, s->log);
	if (err) {
		scriptctx_cleanup(s);
		return err;
	}
	*state_ret = s;
	return 0;
}

static int scriptctx_tsm_pre(void *state, const struct imastream_txn *txn)
{
	struct scriptctx *s = state;

	s->nocontexts = txn->flags & IMASTREAM_TXN_NOCONTEXTS;
	return 0;
}

/* In the scriptlet's child, before exec: what fails here fails the scriptlet. */
static int scriptctx_script_exec(void *state, const struct imastream_script *script)
{
	struct scriptctx *s = state;
	int err;

	/*
	 * All three take effect at exec.  With no_new_privs the kernel allows the SELinux
	 * transition only where the policy grants process2:nnp_transition (imastream-rpm(8)).
	 */
	err = ims_execcon_apply(s->selinux, s->nocontexts ? "none" : s->exec_context,
				script->path, s->log);
	if (err)
		return err;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return ims_err(s->log, -errno, "scriptctx: %s: cannot set no_new_privs: %s",
			       script->path ? script->path : "scriptlet", strerror(errno));
	err = seccomp_load(s->filter);
	if (err)
		return ims_err(s->log, err, "scriptctx: %s: cannot load the seccomp filter: %s",
			       script->path ? script->path : "scriptlet", strerror(-err));
	return 0;
}

/* Both checked at init: the system calls and the contexts are the running system's. */
static const struct imastream_plugin_key scriptctx_keys[] = {
	{ .name = "seccomp_deny", .def = DEFAULT_DENY,
	  .help = "syscalls scriptlets get EPERM for, comma-separated" },
	{ .name = "script_exec_context", .def = "auto",
	  .help = "auto | none | USER:ROLE:TYPE[:RANGE]: scriptlets' SELinux exec context" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_scriptctx_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "scriptctx",
	.rank = IMASTREAM_RANK_ANY,
	.keys = scriptctx_keys,
	.init = scriptctx_init,
	.cleanup = scriptctx_cleanup,
	.tsm_pre = scriptctx_tsm_pre,
	.script_exec = scriptctx_script_exec,
};
