/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Signing keys, key ids, certificate trust stores and kernel keyrings (keys/). */
#ifndef IMASTREAM_KEYS_H
#define IMASTREAM_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Key ids.  IMA and EVM signatures carry a 32-bit key id (stored big-endian) that the
 * kernel uses to find the verifying key: it searches the keyring for "id:%08x", a match
 * on the *trailing* bytes of an asymmetric key's ids, which for an X.509 certificate
 * means the last four bytes of its subjectKeyIdentifier.  Therefore:
 *
 *  1. an explicit key id given by the caller always wins;
 *  2. otherwise, when a certificate is known (a separate file, or a PEM certificate
 *     appended to the private key file as evmctl accepts), the key id is the last four
 *     bytes of that certificate's subjectKeyIdentifier: the kernel's rule;
 *  3. otherwise (a bare key, or a certificate without subjectKeyIdentifier) it is
 *     evmctl 1.4's rule: SHA-1 over the contents of the subjectPublicKey BIT STRING
 *     (DER RSAPublicKey for RSA, the uncompressed point 04||X||Y for EC), bytes 16..19.
 *
 * Rules 2 and 3 agree for certificates made with subjectKeyIdentifier=hash (RFC 5280
 * method 1, OpenSSL's default); they differ for a forced subjectKeyIdentifier, and then
 * only rule 2 is what the kernel will match.
 */

/*
 * Where a signing key comes from.  Zero-initialise with @size set, then fill in what
 * applies: struct imastream_key_opts o = { .size = sizeof(o), .key = ... }.
 */
struct imastream_key_opts {
	/*
	 * sizeof(struct imastream_key_opts) as the caller was built: options added later
	 * go at the end, and one the caller's size does not cover is zero, its default
	 * (room to grow, libimastream(3)); imastream_signer_new() refuses a size below the
	 * first version.
	 */
	size_t size;
	/*
	 * The key, one of:
	 *  - a path to a PEM (or DER) private key: RSA 2048..4096 bits, ECDSA P-256 or
	 *    P-384, optionally encrypted, optionally followed by its PEM certificate.  The
	 *    file must not be readable or writable by group or others.  A path that
	 *    contains a colon is written with a directory part ("./a:b");
	 *  - "pkcs11:..." (RFC 7512): loaded through the OpenSSL pkcs11 engine (libp11),
	 *    the PIN comes from the passphrase source;
	 *  - "kernel:SERIAL" or "kernel:RING:DESCRIPTION": an asymmetric key held by the
	 *    kernel, used through keyctl_pkey_sign(2) so that the private key never enters
	 *    this process.  SERIAL is decimal or 0x-hex; RING is a keyring as written
	 *    below (kernel keyrings) and DESCRIPTION is the key's description or
	 *    "id:XXXXXXXX" (the kernel's partial key id match);
	 *  - any other "scheme:..." URI (two or more characters before the colon): opened
	 *    with OSSL_STORE_open_ex(), i.e. by whatever OpenSSL provider registered that
	 *    scheme in openssl.cnf, e.g. tpm2-openssl's "handle:0x81000001".
	 */
	const char *key;
	/* Optional certificate (PEM or DER) of the key; refused if it does not match. */
	const char *cert;
	/* Passphrase or PIN: the first line of this file... */
	const char *pass_file;
	/* ...or the value of this environment variable (its name, not the secret). */
	const char *pass_env;
	/* Explicit key id (rule 1 above), used when has_keyid is true. */
	uint32_t keyid;
	bool has_keyid;
};

/* A loaded signing key.  Not thread-safe: use one per thread. */
struct imastream_signer;

/**
 * imastream_signer_new - load a signing key once
 * @opts: where the key, its certificate and its passphrase come from
 * @log: where to explain failures, one line each (may be NULL)
 * @ret: the signer, freed with imastream_signer_free()
 *
 * Private key bytes read from files are zeroed as soon as they are parsed.
 *
 * Return: 0; -EINVAL for a bad option, a damaged key, an encrypted key without a
 * passphrase, a certificate that is not a certificate; -EFBIG for a file over 1 MiB;
 * -EPERM for a key or passphrase file readable or writable by group or others;
 * -EKEYREJECTED for a wrong passphrase or a certificate that does not match the key;
 * -EOPNOTSUPP for a key type, size or curve the kernel cannot verify, or a key source
 * this system cannot reach (no pkcs11 engine, no provider for a URI scheme, no
 * asymmetric key type in the kernel); -ENOKEY for a key not found; -ENOMEM; -errno
 * of open(2)/read(2).
 */
IMASTREAM_API int imastream_signer_new(const struct imastream_key_opts *opts,
				       const struct imastream_log *log,
				       struct imastream_signer **ret);
/**
 * imastream_signer_dup - a second handle on the same loaded key, for another thread
 * @s: a signer
 * @ret: the new handle, freed with imastream_signer_free() (in any order with @s)
 *
 * The key is not read or parsed again: the handles share it (OpenSSL keys are
 * reference-counted and safe to sign with from several threads, each with its own
 * context; a kernel key is just a serial).  Each handle has its own signing contexts, so
 * each may be used by one thread at a time.
 * Return: 0; -EOPNOTSUPP, without a message, for a pkcs11 engine key (an engine session
 * is not safe to share across threads: sign from one thread); -ENOMEM.
 */
IMASTREAM_API int imastream_signer_dup(const struct imastream_signer *s,
				       struct imastream_signer **ret);
/* Releases the key; private material held by this process is zeroed.  NULL is fine. */
IMASTREAM_API void imastream_signer_free(struct imastream_signer *s);

/**
 * imastream_signer_sign - sign a digest the way the kernel verifies it
 * @hash_algo: the kernel id (enum imastream_hash_algo) of the digest's algorithm
 * @digest: the digest, exactly the algorithm's size
 * @sig_out: receives the raw signature: RSA PKCS#1 v1.5 with DigestInfo, or a DER
 *           ECDSA-Sig-Value; this is the part after the 9-byte signature v2 header
 * @sig_cap: room in @sig_out; imastream_signer_max_sig_size() is always enough
 * @sig_len_ret: the signature's length
 *
 * Return: 0; -EINVAL for an unknown algorithm or a digest of the wrong size;
 * -ENOSPC when @sig_cap is too small; -EIO when the signing backend fails.
 */
IMASTREAM_API int imastream_signer_sign(struct imastream_signer *s, int hash_algo,
					const uint8_t *digest, size_t digest_len,
					uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret);
/* The largest signature this key can produce, in bytes (256 for RSA-2048). */
IMASTREAM_API size_t imastream_signer_max_sig_size(const struct imastream_signer *s);
/* The key id that goes into signature headers (host order; store it big-endian). */
IMASTREAM_API uint32_t imastream_signer_keyid(const struct imastream_signer *s);
/* A short name of the key: "RSA-2048", "ECDSA-P256", "ECDSA-P384". */
IMASTREAM_API const char *imastream_signer_key_type(const struct imastream_signer *s);

/**
 * imastream_keyid_from_cert - key id of a certificate (rule 2, else rule 3 above)
 * @buf: a PEM or DER X.509 certificate (the first one, for PEM)
 * @from_skid_ret: set to whether the subjectKeyIdentifier was used (may be NULL)
 * Return: 0, -EINVAL when @buf holds no certificate, -ENOMEM.
 */
IMASTREAM_API int imastream_keyid_from_cert(const void *buf, size_t len,
					    const struct imastream_log *log, uint32_t *keyid_ret,
					    bool *from_skid_ret);

/*
 * Trust store: certificates that verify IMA and EVM signatures, looked up by key id
 * with the rules above (subjectKeyIdentifier when present, else evmctl's rule).
 */
struct imastream_trust;

/* Return: 0 or -ENOMEM.  Free with imastream_trust_free() (NULL is fine). */
IMASTREAM_API int imastream_trust_new(const struct imastream_log *log,
				      struct imastream_trust **ret);
IMASTREAM_API void imastream_trust_free(struct imastream_trust *t);
/**
 * imastream_trust_add_path - add certificates from a file or a directory
 * @path: a PEM file (one or more certificates) or a DER file, or a directory whose
 *        regular files are read that way (not recursively; hidden files skipped)
 * Certificates whose key cannot verify IMA signatures (Ed25519, DSA, small RSA) are
 * kept, so that verify() can say so instead of "unknown key id".  In a directory,
 * files that hold no certificate are skipped (logged at INFO level).
 * Return: 0 when at least one certificate was added; -EINVAL when a file (or every file
 * of a directory) holds no certificate; -ENOMEM; -errno of stat/open/read/opendir.
 */
IMASTREAM_API int imastream_trust_add_path(struct imastream_trust *t, const char *path);
/* Adds the certificates of one PEM or DER buffer.  Return: as for add_path(). */
IMASTREAM_API int imastream_trust_add_mem(struct imastream_trust *t, const void *buf,
					  size_t len, const char *what);
/**
 * imastream_trust_add_pubkey - add a bare public key (no certificate)
 * @der: a DER SubjectPublicKeyInfo, as keylime's verification keys hold them
 * @keyid: the key id signatures name it by, or NULL for evmctl's rule (rule 3 above)
 * Return: 0; -EINVAL when @der is not exactly one public key; -ENOMEM.
 */
IMASTREAM_API int imastream_trust_add_pubkey(struct imastream_trust *t, const void *der, size_t len,
					     const uint32_t *keyid);
/**
 * imastream_trust_verify - check a raw signature over a digest
 * @keyid: the key id from the signature header (host order)
 * @sig: the raw signature (after the 9-byte header)
 *
 * Every certificate with @keyid is tried (ids may collide).
 * Return: 0 when it verifies; -ENOKEY when no certificate has @keyid; -EBADMSG when
 * the signature does not verify; -EKEYREJECTED when the only certificates with @keyid
 * hold a key that cannot verify this kind of signature; -EINVAL for an unknown
 * algorithm or a digest of the wrong size.  Messages name the key id.
 */
IMASTREAM_API int imastream_trust_verify(const struct imastream_trust *t, int hash_algo,
					 const uint8_t *digest, size_t digest_len,
					 const uint8_t *sig, size_t sig_len, uint32_t keyid);

/*
 * Kernel keyrings.  A RING is written as:
 *  - "_ima", "_evm" or any other name starting with '_': a keyring of that name linked
 *    under the user keyring (@u), created there if missing (keyctl newring semantics),
 *    which is where the kernel finds _ima/_evm when it has no trusted .ima/.evm ring;
 *  - ".ima", ".evm" or any other name starting with '.': a kernel-made keyring found
 *    by name (as /proc/keys lists it); never created;
 *  - "@u", "@s", "@us", "@t", "@p": the user, session, user-session, thread or
 *    process keyring;
 *  - a serial number, decimal or 0x-hex.
 */

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_KEYS_H */
