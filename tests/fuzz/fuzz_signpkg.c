// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: imastream_sign_package() on arbitrary package bytes, end to end. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "imastream/signpkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A fixed 72-byte "signature": the fuzzer is after the parser and writer, not crypto. */
static int fake_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len,
		     uint8_t *sig, size_t sig_size, size_t *sig_len_ret)
{
	(void)arg, (void)algo;
	if (sig_size < 72 || digest_len > 72)
		return -ENOSPC;
	memset(sig, 0x30, 72);
	memcpy(sig, digest, digest_len);
	*sig_len_ret = 72;
	return 0;
}

static char outdir[] = "/tmp/fuzz_signpkg.XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct imastream_signpkg_signer signer = {
		sizeof(signer), fake_sign, NULL, 0x01020304
	};
	struct imastream_signpkg_opts opts = { sizeof(opts), &signer, 0, outdir, NULL };
	char path[64];
	int fd;

	if (outdir[sizeof(outdir) - 2] == 'X' && !mkdtemp(outdir))
		abort();
	fd = memfd_create("pkg", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	imastream_sign_package(path, &opts, NULL);
	close(fd);
	/* The output, if any, is named after the fd; remove it so nothing piles up. */
	snprintf(path, sizeof(path), "%s/%d", outdir, fd);
	unlink(path);
	return 0;
}
