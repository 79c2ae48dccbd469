// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Probe run inside a scriptlet by test_policy_scriptctx.sh: tries system calls with
 * arguments that fail harmlessly without a filter (ENOENT, EBADF, ESRCH, EINVAL) and
 * prints "NAME ERRNO" per call, so that EPERM can only come from the seccomp filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "ok";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case EBADF:
		return "EBADF";
	case ESRCH:
		return "ESRCH";
	case EINVAL:
		return "EINVAL";
	case EFAULT:
		return "EFAULT";
	default:
		return strerror(e);
	}
}

static void report(const char *name, long rc)
{
	printf("%s %s\n", name, errname(rc < 0 ? errno : 0));
}

int main(void)
{
	report("mount", mount("none", "/nonexistent-imastream-probe", "tmpfs", 0, NULL));
	report("umount2", umount2("/nonexistent-imastream-probe", 0));
	report("finit_module", syscall(SYS_finit_module, -1, "", 0));
	report("delete_module", syscall(SYS_delete_module, "nonexistent_imastream_probe", O_NONBLOCK));
	report("ptrace", ptrace(PTRACE_PEEKDATA, 0x7ffffff0, NULL, NULL));
	report("bpf", syscall(SYS_bpf, -1, NULL, 0));
	report("getppid", getppid() > 0 ? 0 : -1);
	printf("no_new_privs %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	return 0;
}
