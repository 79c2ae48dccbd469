// SPDX-License-Identifier: LGPL-2.1-or-later
/* Runs a command under a seccomp filter that fails one system call with one errno, as a kernel without the feature behind it would: syscall_errno NAME ERRNO COMMAND [ARG...]. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	int nr, err;

	if (argc < 4) {
		fprintf(stderr, "usage: syscall_errno SYSCALL ERRNO COMMAND [ARG...]\n");
		return 2;
	}
	nr = seccomp_syscall_resolve_name(argv[1]);
	err = atoi(argv[2]);
	if (nr == __NR_SCMP_ERROR || err <= 0 || err > 4095) {
		fprintf(stderr, "syscall_errno: unknown system call %s or bad errno %s\n", argv[1],
			argv[2]);
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned int)err), nr, 0) < 0 ||
	    seccomp_load(ctx) < 0) {
		fprintf(stderr, "syscall_errno: cannot load the seccomp filter\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[3], argv + 3);
	fprintf(stderr, "syscall_errno: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
