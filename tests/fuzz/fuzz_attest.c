// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: the measurement-list line parser and the keylime policy reader on arbitrary bytes. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest/attest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every line: whatever is accepted names a file and carries a digest of its algorithm's size. */
static void fuzz_log(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct attest_entry e;
		const char *why = NULL;
		int err = attest_parse_line(line, &e, &why);

		if (err && !why)
			abort();
		if (!err && (!e.name || !*e.name || e.pcr > 23 || !imastream_hash_by_algo(e.hash_algo) ||
			     e.digest_len != imastream_hash_by_algo(e.hash_algo)->digest_size))
			abort();
	}
	free(text);
}

/* A policy the reader accepts can judge an entry and be written out. */
static void fuzz_policy(const uint8_t *data, size_t size)
{
	static char line[] = "10 0000000000000000000000000000000000000000 ima-ng "
			     "sha256:b6a98d9ce9a2d9149288fa3df42d377c3e42737afdcdaf714e33c0a100b51060 /a";
	struct attest_policy *p = NULL;
	struct attest_entry e;
	const char *why;
	char copy[sizeof(line)];
	int fd;

	if (attest_policy_read((const char *)data, size, "fuzz", NULL, &p))
		return;
	memcpy(copy, line, sizeof(line));
	if (attest_parse_line(copy, &e, &why))
		abort();
	attest_judge(p, &e, &why);
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0 && attest_policy_write(p, fd, NULL))
		abort();
	if (fd >= 0)
		close(fd);
	attest_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	/* The first byte picks the parser: odd ('K') the policy, even ('L') the log. */
	if (data[0] & 1)
		fuzz_policy(data + 1, size - 1);
	else
		fuzz_log(data + 1, size - 1);
	return 0;
}
