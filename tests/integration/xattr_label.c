// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Test helper: labels one file with the xattr/ API alone (digest, IMA signature, EVM
 * portable signature), signing with OpenSSL straight into the xattr buffer, so that a
 * real kernel can judge the bytes xattr/ produces.
 *
 * Usage: xattr_label hash|imasig|evm KEY.pem CERT.der ALGO FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

static void print_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "xattr_label: %s\n", msg);
}

static const struct imastream_log log_ = { print_log, NULL };

static void die(const char *what)
{
	fprintf(stderr, "xattr_label: %s\n", what);
	exit(99);
}

static uint32_t cert_keyid(const char *path)
{
	const ASN1_OCTET_STRING *skid;
	const unsigned char *p;
	FILE *f = fopen(path, "rb");
	X509 *x = f ? d2i_X509_fp(f, NULL) : NULL;
	uint32_t id;

	if (f)
		fclose(f);
	if (!x || !(skid = X509_get0_subject_key_id(x)) || ASN1_STRING_length(skid) < 4)
		die("cannot read the certificate's subject key identifier");
	p = ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4;
	id = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	X509_free(x);
	return id;
}

/* Signs @dig into @buf + 9 and writes the 9-byte header in front: no copy of the signature. */
static size_t sign_into(EVP_PKEY *key, const struct imastream_hash_info *hi, int type,
			uint32_t keyid, const uint8_t *dig, size_t dig_len, uint8_t *buf, size_t size)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
	size_t sig_len = size - IMASTREAM_SIG_HDR_SIZE;

	if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_signature_md(ctx, EVP_get_digestbyname(hi->name)) <= 0 ||
	    EVP_PKEY_sign(ctx, buf + IMASTREAM_SIG_HDR_SIZE, &sig_len, dig, dig_len) <= 0)
		die("signing failed");
	EVP_PKEY_CTX_free(ctx);
	if (imastream_sig_header_encode(type, hi->algo, keyid, sig_len, buf, &log_))
		exit(99);
	return IMASTREAM_SIG_HDR_SIZE + sig_len;
}

int main(int argc, char **argv)
{
	uint8_t content_dig[64], evm_dig[64], value[IMASTREAM_SIG_HDR_SIZE + 1024], buf[65536];
	const struct imastream_hash_info *hi;
	struct imastream_xattr_writer w;
	struct imastream_evm_input in = { .size = sizeof(in) };
	EVP_MD_CTX *mdctx;
	EVP_PKEY *key = NULL;
	unsigned int dl = 0;
	size_t len, evm_len;
	uint32_t keyid = 0;
	const char *mode;
	ssize_t n;
	FILE *f;
	int fd;

	if (argc != 6)
		die("usage: xattr_label hash|imasig|evm KEY.pem CERT.der ALGO FILE");
	mode = argv[1];
	hi = imastream_hash_by_name(argv[4]);
	if (!hi)
		die("unknown algorithm");
	if (strcmp(mode, "hash")) {
		f = fopen(argv[2], "r");
		key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
		if (f)
			fclose(f);
		if (!key)
			die("cannot load the key");
		keyid = cert_keyid(argv[3]);
	}
	fd = open(argv[5], O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		die("cannot open the file");
	mdctx = EVP_MD_CTX_new();
	if (!mdctx || !EVP_DigestInit_ex(mdctx, EVP_get_digestbyname(hi->name), NULL))
		die("digest init failed");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		EVP_DigestUpdate(mdctx, buf, n);
	if (n < 0 || !EVP_DigestFinal_ex(mdctx, content_dig, &dl))
		die("cannot hash the file");
	EVP_MD_CTX_free(mdctx);

	imastream_xattr_writer_init(&w, 0, &log_);
	if (!strcmp(mode, "hash")) {
		if (imastream_ima_digest_encode(hi->algo, content_dig, dl, value, sizeof(value), &len,
						&log_))
			exit(99);
	} else {
		len = sign_into(key, hi, IMASTREAM_XATTR_DIGSIG, keyid, content_dig, dl, value,
				sizeof(value));
	}
	if (imastream_xattr_write(&w, fd, argv[5], IMASTREAM_ATTR_IMA, value, len, NULL))
		exit(99);
	if (!strcmp(mode, "evm")) {
		/* After security.ima, as the kernel covers it: collect what is on the inode now. */
		if (imastream_evm_collect(fd, argv[5], 0, &in, &log_) ||
		    imastream_evm_digest_portable(&in, hi->algo, evm_dig, sizeof(evm_dig), &evm_len,
						  &log_))
			exit(99);
		imastream_evm_input_release(&in);
		len = sign_into(key, hi, IMASTREAM_XATTR_EVM_PORTABLE, keyid, evm_dig, evm_len, value,
				sizeof(value));
		if (imastream_xattr_write(&w, fd, argv[5], IMASTREAM_ATTR_EVM, value, len, NULL))
			exit(99);
	}
	close(fd);
	EVP_PKEY_free(key);
	return 0;
}
