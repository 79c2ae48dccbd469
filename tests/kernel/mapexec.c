// SPDX-License-Identifier: LGPL-2.1-or-later
// Guest helper of test_kernel_image.sh: maps each file named on standard input (one a
// line) executable, as the dynamic loader maps a program or a library, so that the
// kernel appraises it under the policy's MMAP_CHECK rule without running it.
//
// Prints "REFUSED PATH ERRNO-TEXT" for each file the kernel refused (EACCES, EPERM),
// "ERROR PATH ERRNO-TEXT" for one it could not open, then "mapped N refused N errors N".
// Exit 0 when nothing was refused and nothing failed, else 1.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	char path[4096];
	unsigned long mapped = 0, refused = 0, errors = 0;

	while (fgets(path, sizeof(path), stdin)) {
		path[strcspn(path, "\n")] = '\0';
		if (!path[0])
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			printf("ERROR %s %s\n", path, strerror(errno));
			errors++;
			continue;
		}
		// One page, whatever the size: the appraisal judges the whole file at mmap.
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			if (errno == EACCES || errno == EPERM) {
				printf("REFUSED %s %s\n", path, strerror(errno));
				refused++;
			} else {
				printf("ERROR %s %s\n", path, strerror(errno));
				errors++;
			}
		} else {
			munmap(p, 4096);
			mapped++;
		}
		close(fd);
	}
	printf("mapped %lu refused %lu errors %lu\n", mapped, refused, errors);
	return refused || errors;
}
