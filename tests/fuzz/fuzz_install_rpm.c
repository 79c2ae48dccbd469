// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: arbitrary bytes as an rpm package, through the header checks, the
 * payload reader and the extractor, into a fresh root that is removed afterwards.  The
 * header digest check is off so that mutations reach the file list and the payload.
 */
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/rpmlog.h>

#include "imastream/extract.h"
#include "imastream/install_rpm.h"

static char base[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Declared sizes reach fallocate(): keep every file small, and failing, not fatal. */
	struct rlimit fsize = { 16 << 20, 16 << 20 };

	(void)argc;
	(void)argv;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &fsize);
	snprintf(base, sizeof(base), "/tmp/imastream-fuzz-install.XXXXXX");
	if (!mkdtemp(base))
		abort();
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imastream_extract *x = NULL;
	char root[128];
	int fd, rootfd;

	fd = memfd_create("fuzz.rpm", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET))
		abort();
	snprintf(root, sizeof(root), "%s/root", base);
	if (mkdir(root, 0755))
		abort();
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN, NULL, NULL, &x))
		abort();
	imastream_install_rpm(x, fd, "fuzz.rpm",
			      IMASTREAM_INSTALL_NO_HEADER_DIGEST | IMASTREAM_INSTALL_ONE_THREAD);
	imastream_extract_free(x);
	/*
	 * librpm keeps every error and warning it logged in a global list: dropped after each
	 * input, so that libFuzzer's leak check per input stays on and names the leaking one.
	 */
	rpmlogClose();
	close(rootfd);
	close(fd);
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
