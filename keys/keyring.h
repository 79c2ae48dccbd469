/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keys/ offers beyond imastream/keys.h, inside the build only: the kernel keyrings
 * (certificates imported into _ima, _evm or .ima, their listing, a keyring found by name),
 * for the command's keys subcommand.
 */
#ifndef IMASTREAM_KEYS_KEYRING_H
#define IMASTREAM_KEYS_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/keys.h"

/* One key of a keyring, as imastream_keyring_list() reports it. */
struct imastream_keyring_entry {
	int32_t serial;
	char type[32]; /* "asymmetric", "keyring", "user", ... */
	char description[256];
	/*
	 * For an asymmetric key from an X.509 certificate, the kernel writes the
	 * certificate's subjectKeyIdentifier (or its serial number when it has none) as
	 * hex at the end of the description; has_keyid says whether the last four bytes
	 * of it are an id the kernel also matches for "id:%08x" (checked with a search).
	 */
	uint32_t keyid;
	bool has_keyid;
};

/**
 * imastream_keyring_import - add a certificate to a keyring as an asymmetric key
 * @cert: a PEM or DER X.509 certificate; it is handed to the kernel as DER
 * @key_serial_ret: the new key's serial (may be NULL)
 *
 * The effect of "keyctl padd asymmetric '' RING < cert.der" or "evmctl import".
 * Return: 0; -EINVAL when @cert holds no certificate; -EKEYREJECTED when the kernel
 * refuses it (a restricted trusted keyring wants a key signed by a built-in key);
 * -EOPNOTSUPP when the kernel has no asymmetric key type; -EACCES/-EPERM when not
 * allowed; other -errno of add_key(2).
 */
int imastream_keyring_import(const char *ring, const void *cert, size_t len,
			     const struct imastream_log *log, int32_t *key_serial_ret);

/**
 * imastream_keyring_import_file - imastream_keyring_import() of the certificate in @path
 *
 * Its messages name @path; where the kernel lacks the certificate's key algorithm they
 * name the algorithm and what to do instead.  Return: as imastream_keyring_import(), and
 * -errno when @path cannot be read.
 */
int imastream_keyring_import_file(const char *ring, const char *path,
				  const struct imastream_log *log, int32_t *key_serial_ret);

/**
 * imastream_keyring_list - what a keyring holds, in the kernel's order
 * @entries_ret: an array freed with free(); NULL when @n_ret is 0
 * Return: 0, -ENOKEY when the ring does not exist, -ENOMEM, -errno of keyctl(2).
 */
int imastream_keyring_list(const char *ring, const struct imastream_log *log,
			   struct imastream_keyring_entry **entries_ret, size_t *n_ret);

/**
 * imastream_keyring_resolve - find (or create, for '_' names) a keyring
 * @create: create a missing '_' keyring under @u
 * Return: 0; -ENOKEY when it does not exist (and may not or could not be created);
 * -ENOTDIR when a serial names a key that is not a keyring; -EINVAL for a malformed
 * name; -errno of keyctl(2).
 */
int imastream_keyring_resolve(const char *ring, bool create, const struct imastream_log *log,
			      int32_t *serial_ret);

#endif /* IMASTREAM_KEYS_KEYRING_H */
