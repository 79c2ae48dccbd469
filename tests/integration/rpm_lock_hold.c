// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Takes rpm's own transaction lock for a root through librpm (rpmtxnBegin, what rpm -i
 * --root takes), prints "locked PID" and holds it until standard input ends; or prints
 * "busy" and exits 1 when another transaction holds it.  With DBPATH, as rpm --dbpath
 * DBPATH finds it (%{_rpmlock_path}: DBPATH/.rpm.lock).  For test_install_lock.sh.
 */
#include <stdio.h>
#include <unistd.h>

#include <rpm/rpmlib.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>

int main(int argc, char **argv)
{
	rpmts ts;
	rpmtxn txn;
	char buf[64];

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: rpm_lock_hold ROOT [DBPATH] <HOLD-UNTIL-EOF\n");
		return 2;
	}
	if (rpmReadConfigFiles(NULL, NULL))
		return 2;
	if (argc == 3) /* what rpm's --dbpath does (rpmcliAllArgCallback) */
		rpmPushMacro(NULL, "_dbpath", NULL, argv[2], RMIL_CMDLINE);
	ts = rpmtsCreate();
	if (rpmtsSetRootDir(ts, argv[1]))
		return 2;
	/* Not a terminal on stdin: librpm does not wait, it fails at once.  (Read or write,
	 * librpm takes the same exclusive lock; READ leaves the signals alone.) */
	txn = rpmtxnBegin(ts, RPMTXN_READ);
	if (!txn) {
		puts("busy");
		return 1;
	}
	printf("locked %d\n", (int)getpid());
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	rpmtxnEnd(txn);
	rpmtsFree(ts);
	return 0;
}
