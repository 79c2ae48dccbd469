// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Guest-side fs-verity helper for the kernel acceptance tests: turns fs-verity on for
 * files the host prepared, and asks the kernel for a file's fs-verity digest.
 *
 * Usage: verityctl enable FILE...    FS_IOC_ENABLE_VERITY, SHA-256, 4 KiB blocks, no salt
 *        verityctl measure FILE      prints "sha256:HEX", the digest the kernel holds
 *
 * The host this project is tested on has no CONFIG_FS_VERITY, so a file can only get
 * fs-verity inside the VM; busybox has no fsverity applet. Linked statically (it runs
 * in a busybox initramfs without a libc). Exits 0, or 1 with one line on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/fsverity.h>

static int enable(const char *path)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = 4096,
	};
	/* The kernel refuses while any writable descriptor is open: read-only here. */
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || ioctl(fd, FS_IOC_ENABLE_VERITY, &arg) < 0) {
		fprintf(stderr, "verityctl: enable %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static int measure(const char *path)
{
	struct {
		struct fsverity_digest d;
		unsigned char room[64];
	} m = { .d.digest_size = sizeof(m.room) };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, FS_IOC_MEASURE_VERITY, &m) < 0) {
		fprintf(stderr, "verityctl: measure %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	if (m.d.digest_algorithm != FS_VERITY_HASH_ALG_SHA256) {
		fprintf(stderr, "verityctl: measure %s: algorithm %u, not SHA-256\n", path,
			m.d.digest_algorithm);
		return 1;
	}
	printf("sha256:");
	for (unsigned int i = 0; i < m.d.digest_size; i++)
		printf("%02x", m.room[i]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc >= 3 && strcmp(argv[1], "enable") == 0) {
		for (int i = 2; i < argc; i++)
			rc |= enable(argv[i]);
		return rc;
	}
	if (argc == 3 && strcmp(argv[1], "measure") == 0)
		return measure(argv[2]);
	fprintf(stderr, "usage: verityctl enable FILE... | verityctl measure FILE\n");
	return 1;
}
