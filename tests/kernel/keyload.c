// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Guest-side key loader for the kernel acceptance tests: finds or creates a named
 * keyring (_ima, _evm) in the user keyring and adds DER certificates to it as
 * "asymmetric" keys.
 *
 * Usage: keyload [-d DESCRIPTION] RING FILE.der [FILE.der...]
 *
 * A FILE is an X.509 certificate or, where the kernel has its PKCS#8 parser
 * (pkcs8_key_parser), an unencrypted PKCS#8 private key. The parser names a certificate
 * itself; a private key needs -d, or add_key() fails with EINVAL.
 *
 * It runs as /keyload inside a busybox initramfs, so it is linked statically and talks
 * to the kernel with raw add_key/keyctl system calls: no libkeyutils, no libc extras.
 * With CONFIG_INTEGRITY_TRUSTED_KEYRING unset the kernel looks the ring up by name with
 * request_key() the first time it checks a signature; a ring linked into the user
 * keyring is reachable from every root process through the user session keyring.
 * Prints one line per key: "keyload: RING CERT serial N"; exits 0, or 1 with one line
 * on stderr saying what failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* From <linux/keyctl.h>; spelled out so the file builds without kernel headers. */
#define KEY_SPEC_USER_KEYRING	-4
#define KEYCTL_SEARCH		10

/* Large enough for any certificate the tests use; the kernel's own limit is 1 MiB. */
#define MAX_CERT_SIZE		(64 * 1024)

static long sys_add_key(const char *type, const char *desc, const void *payload,
			size_t plen, int32_t ring)
{
	return syscall(SYS_add_key, type, desc, payload, plen, ring);
}

static long sys_keyctl_search(int32_t ring, const char *type, const char *desc)
{
	return syscall(SYS_keyctl, KEYCTL_SEARCH, ring, type, desc, 0);
}

/* Returns the serial of keyring @name in the user keyring, creating it if missing. */
static long find_or_create_ring(const char *name)
{
	long id;

	id = sys_keyctl_search(KEY_SPEC_USER_KEYRING, "keyring", name);
	if (id >= 0)
		return id;
	/*
	 * add_key() on an existing keyring name would replace it rather than reuse it,
	 * which is why the search comes first.
	 */
	return sys_add_key("keyring", name, NULL, 0, KEY_SPEC_USER_KEYRING);
}

/* Reads @path whole into @buf; returns the length or -1 with errno set. */
static ssize_t read_file(const char *path, unsigned char *buf, size_t size)
{
	ssize_t len = 0, n = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)len < size && (n = read(fd, buf + len, size - len)) > 0)
		len += n;
	if (n < 0 || (size_t)len == size) {
		if ((size_t)len == size)
			errno = EFBIG;
		len = -1;
	}
	close(fd);
	return len;
}

int main(int argc, char **argv)
{
	static unsigned char cert[MAX_CERT_SIZE];
	const char *desc = NULL, *name;
	long ring, key;
	ssize_t len;
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "-d") == 0) {
		desc = argv[2];
		i = 3;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: keyload [-d DESCRIPTION] RING FILE.der [FILE.der...]\n");
		return 1;
	}
	name = argv[i++];
	ring = find_or_create_ring(name);
	if (ring < 0) {
		fprintf(stderr, "keyload: cannot find or create keyring %s: %s\n", name,
			strerror(errno));
		return 1;
	}
	for (; i < argc; i++) {
		len = read_file(argv[i], cert, sizeof(cert));
		if (len <= 0) {
			fprintf(stderr, "keyload: cannot read %s: %s\n", argv[i],
				len == 0 ? "empty file" : strerror(errno));
			return 1;
		}
		/* No description lets the kernel name a certificate "CN: SKID". */
		key = sys_add_key("asymmetric", desc, cert, (size_t)len, (int32_t)ring);
		if (key < 0) {
			fprintf(stderr, "keyload: %s refused by keyring %s: %s\n", argv[i],
				name, strerror(errno));
			return 1;
		}
		printf("keyload: %s %s serial %ld\n", name, argv[i], key);
	}
	return 0;
}
