// SPDX-License-Identifier: LGPL-2.1-or-later
/* signpkg: signs an rpmbuild-made package, checks every signature and the error paths. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "imastream/hash.h"
#include "imastream/signpkg.h"
#include "signpkg/rpmpkg.h"
#include "tests/unit/test.h"

static char topdir[] = "/tmp/test_signpkg.XXXXXX";
static char last_msg[1024];
static int n_msgs;

static void record_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
	n_msgs++;
	fprintf(stderr, "  log: %s\n", msg);
}

static const struct imastream_log test_log = { record_log, NULL };

/* The reference signer: plain OpenSSL, independent of keys/. */
static int openssl_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len,
			uint8_t *sig, size_t sig_size, size_t *sig_len_ret)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(arg, NULL);
	const EVP_MD *md = EVP_get_digestbyname(imastream_hash_by_algo(algo)->openssl_name);
	size_t n = sig_size;
	int ok;

	ok = ctx && md && EVP_PKEY_sign_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
	     EVP_PKEY_sign(ctx, sig, &n, digest, digest_len) > 0;
	EVP_PKEY_CTX_free(ctx);
	if (!ok)
		return -EIO;
	*sig_len_ret = n;
	return 0;
}

static int failing_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len,
			uint8_t *sig, size_t sig_size, size_t *sig_len_ret)
{
	(void)arg, (void)algo, (void)digest, (void)digest_len, (void)sig, (void)sig_size;
	(void)sig_len_ret;
	return -EKEYREJECTED;
}

static int run(const char *cmd)
{
	int rc = system(cmd);

	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static char *path_in(const char *name)
{
	char *p;

	ASSERT(asprintf(&p, "%s/%s", topdir, name) > 0);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ASSERT(f);
	ASSERT(fseek(f, 0, SEEK_END) == 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ASSERT(buf);
	ASSERT(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	uint8_t *buf = slurp(from, &len);
	FILE *f = fopen(to, "wb");

	ASSERT(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0);
	free(buf);
}

static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	ASSERT(fd >= 0 && pread(fd, &b, 1, off) == 1);
	b ^= 0xff;
	ASSERT(pwrite(fd, &b, 1, off) == 1 && close(fd) == 0);
}

/* Counts entries of @dir whose name starts with '.' (temp files), besides . and .. */
static int count_hidden(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ASSERT(d);
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static const char spec[] =
	"Name: sptest\nVersion: 1.0\nRelease: 1\nSummary: t\nLicense: MIT\nBuildArch: noarch\n"
	"%description\nt\n"
	"%install\n"
	"mkdir -p %{buildroot}/opt/sp/dir %{buildroot}/etc\n"
	"echo hello > %{buildroot}/opt/sp/small\n"
	"head -c 300000 /dev/urandom > %{buildroot}/opt/sp/big\n"
	": > %{buildroot}/opt/sp/empty\n"
	"printf '#!/bin/sh\\necho hi\\n' > %{buildroot}/opt/sp/run.sh\n"
	"chmod 755 %{buildroot}/opt/sp/run.sh\n"
	"echo conf=1 > %{buildroot}/etc/sptest.conf\n"
	"ln -s small %{buildroot}/opt/sp/link\n"
	"ln %{buildroot}/opt/sp/big %{buildroot}/opt/sp/big.hardlink\n"
	"%files\n/opt/sp\n%config(noreplace) /etc/sptest.conf\n"
	"%package empty\nSummary: no files\n%description empty\nno files\n%files empty\n";

static char *build_package(void)
{
	char *specfile = path_in("t.spec"), *cmd, *pkg = path_in("RPMS/noarch/sptest-1.0-1.noarch.rpm");
	FILE *f = fopen(specfile, "w");

	ASSERT(f && fputs(spec, f) >= 0 && fclose(f) == 0);
	ASSERT(asprintf(&cmd, "rpmbuild -bb --quiet --define '_topdir %s' %s >/dev/null 2>&1",
			topdir, specfile) > 0);
	if (run(cmd) != 0) {
		fprintf(stderr, "rpmbuild failed: skipping\n");
		exit(TEST_SKIP);
	}
	free(cmd);
	free(specfile);
	return pkg;
}

/* Digest of a file extracted under @root, computed here with OpenSSL. */
static void digest_extracted(const char *root, const char *name, const EVP_MD *md, uint8_t *out)
{
	char *path;
	size_t len;
	uint8_t *buf;

	ASSERT(asprintf(&path, "%s%s", root, name) > 0);
	buf = slurp(path, &len);
	ASSERT(EVP_Digest(buf, len, out, NULL, md, NULL));
	free(buf);
	free(path);
}

/*
 * Checks every file signature of @path against @key.  With @root (the payload extracted
 * by rpm2cpio) the signed digest is recomputed from the content in @algo; otherwise it is
 * the header's.  Returns the number of signatures.
 */
static unsigned int check_signatures(const char *path, EVP_PKEY *key, uint32_t keyid, int algo,
				     const char *root)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(algo);
	const EVP_MD *md = EVP_get_digestbyname(hi->openssl_name);
	struct rpmpkg pkg;
	struct rpmtd_s sigs, digests, names;
	const char *sighex, *dhex, *name;
	unsigned int n = 0, max = 0;

	ASSERT_EQ(rpmpkg_open(&pkg, path, &test_log), 0);
	ASSERT(headerGet(pkg.sigh, IMASTREAM_RPMSIGTAG_FILESIGNATURES, &sigs, HEADERGET_RAW));
	ASSERT(headerGet(pkg.h, RPMTAG_FILEDIGESTS, &digests, HEADERGET_RAW));
	ASSERT(headerGet(pkg.h, RPMTAG_FILENAMES, &names, HEADERGET_EXT));
	ASSERT_EQ(sigs.count, digests.count);
	while ((sighex = rpmtdNextString(&sigs)) && (dhex = rpmtdNextString(&digests)) &&
	       (name = rpmtdNextString(&names))) {
		uint8_t value[1024], digest[IMASTREAM_HASH_MAX_DIGEST];
		size_t len = strlen(sighex) / 2;
		EVP_PKEY_CTX *ctx;

		if (!dhex[0]) {
			ASSERT_EQ(strlen(sighex), 0);
			continue;
		}
		ASSERT(len > 9 && len <= sizeof(value));
		ASSERT_EQ(rpmpkg_unhex(sighex, value, len), 0);
		if (root)
			digest_extracted(root, name, md, digest);
		else
			ASSERT_EQ(rpmpkg_unhex(dhex, digest, hi->digest_size), 0);
		ASSERT_EQ(value[0], 3);
		ASSERT_EQ(value[1], 2);
		ASSERT_EQ(value[2], algo);
		ASSERT_EQ((uint32_t)value[3] << 24 | value[4] << 16 | value[5] << 8 | value[6], keyid);
		ASSERT_EQ(value[7] << 8 | value[8], len - 9);
		ctx = EVP_PKEY_CTX_new(key, NULL);
		ASSERT(ctx && EVP_PKEY_verify_init(ctx) > 0);
		ASSERT(EVP_PKEY_CTX_set_signature_md(ctx, md) > 0);
		ASSERT_EQ(EVP_PKEY_verify(ctx, value + 9, len - 9, digest, hi->digest_size), 1);
		EVP_PKEY_CTX_free(ctx);
		if (len > max)
			max = (unsigned int)len;
		n++;
	}
	ASSERT_EQ(headerGetNumber(pkg.sigh, IMASTREAM_RPMSIGTAG_FILESIGNATURELENGTH), max);
	rpmtdFreeData(&sigs);
	rpmtdFreeData(&digests);
	rpmtdFreeData(&names);
	rpmpkg_close(&pkg);
	return n;
}

/* The header and payload bytes of @a and @b are identical. */
static void check_same_body(const char *a, const char *b)
{
	struct rpmpkg pa, pb;
	size_t la, lb;
	uint8_t *ba = slurp(a, &la), *bb = slurp(b, &lb);

	ASSERT_EQ(rpmpkg_open(&pa, a, &test_log), 0);
	ASSERT_EQ(rpmpkg_open(&pb, b, &test_log), 0);
	ASSERT_EQ(la - (size_t)pa.hdr_off, lb - (size_t)pb.hdr_off);
	ASSERT_MEM_EQ(ba + pa.hdr_off, bb + pb.hdr_off, la - (size_t)pa.hdr_off);
	rpmpkg_close(&pa);
	rpmpkg_close(&pb);
	free(ba);
	free(bb);
}

/* A failing call logs one line naming the package, changes nothing, leaves no temp. */
static void expect_failure(const char *pkg, const struct imastream_signpkg_opts *opts, int err,
			   const char *dir, const char *needle)
{
	size_t before_len, after_len;
	uint8_t *before = slurp(pkg, &before_len), *after;
	int msgs = n_msgs;

	ASSERT_EQ(imastream_sign_package(pkg, opts, NULL), err);
	ASSERT(n_msgs > msgs);
	ASSERT(strstr(last_msg, needle));
	after = slurp(pkg, &after_len);
	ASSERT_EQ(before_len, after_len);
	ASSERT_MEM_EQ(before, after, before_len);
	ASSERT_EQ(count_hidden(dir), 0);
	free(before);
	free(after);
}

int main(void)
{
	EVP_PKEY *rsa, *ec;
	struct imastream_signpkg_signer rsa_signer, ec_signer, bad_signer;
	struct imastream_signpkg_opts opts = { .size = sizeof(opts) };
	struct imastream_signpkg_result res = { .size = sizeof(res) };
	char *pkg, *outdir, *out, *work, *bad, *cmd;
	struct stat st;

	ASSERT(mkdtemp(topdir));
	pkg = build_package();
	outdir = path_in("out");
	work = path_in("work");
	ASSERT(mkdir(outdir, 0755) == 0 && mkdir(work, 0755) == 0);
	out = path_in("out/sptest-1.0-1.noarch.rpm");

	rsa = EVP_RSA_gen(2048);
	ec = EVP_EC_gen("P-256");
	ASSERT(rsa && ec);
	rsa_signer = (struct imastream_signpkg_signer){ sizeof(rsa_signer), openssl_sign, rsa, 0x1234abcd };
	ec_signer = (struct imastream_signpkg_signer){ sizeof(ec_signer), openssl_sign, ec, 0x949fb16a };
	bad_signer = (struct imastream_signpkg_signer){ sizeof(bad_signer), failing_sign, NULL, 1 };

	/* RSA into another folder: the input stays as it was. */
	opts.signer = &rsa_signer;
	opts.outdir = outdir;
	opts.log = &test_log;
	ASSERT_EQ(imastream_sign_package(pkg, &opts, &res), 0);
	/* /etc/sptest.conf, /opt/sp, big, big.hardlink, dir, empty, link, run.sh, small */
	ASSERT_EQ(res.files, 9);
	/* Regular files, %config, the empty one and both hardlinks; not dirs or symlinks. */
	ASSERT_EQ(res.signed_files, 6);
	ASSERT_EQ(res.algo, IMASTREAM_HASH_SHA256);
	ASSERT_EQ(res.max_len, 9 + 256);
	ASSERT_EQ(res.replaced, 0);
	ASSERT_EQ(check_signatures(out, rsa, 0x1234abcd, IMASTREAM_HASH_SHA256, NULL), 6);
	check_same_body(pkg, out);
	ASSERT_EQ(count_hidden(outdir), 0);
	ASSERT(stat(out, &st) == 0 && (st.st_mode & 07777) == 0644);
	ASSERT(asprintf(&cmd, "rpmkeys --checksig %s >/dev/null", out) > 0);
	ASSERT_EQ(run(cmd), 0);
	free(cmd);

	/* EC in place over the RSA-signed package: the signatures are replaced. */
	opts.signer = &ec_signer;
	opts.outdir = NULL;
	ASSERT_EQ(imastream_sign_package(out, &opts, &res), 0);
	ASSERT_EQ(res.replaced, 1);
	ASSERT_EQ(check_signatures(out, ec, 0x949fb16a, IMASTREAM_HASH_SHA256, NULL), 6);
	check_same_body(pkg, out);
	ASSERT_EQ(count_hidden(outdir), 0);

	/* A package without files is written back with its signature header unchanged. */
	{
		char *empty = path_in("RPMS/noarch/sptest-empty-1.0-1.noarch.rpm");
		char *empty_out = path_in("out/sptest-empty-1.0-1.noarch.rpm");
		size_t la, lb;
		uint8_t *a, *b;

		opts.outdir = outdir;
		ASSERT_EQ(imastream_sign_package(empty, &opts, &res), 0);
		ASSERT_EQ(res.files, 0);
		a = slurp(empty, &la);
		b = slurp(empty_out, &lb);
		ASSERT_EQ(la, lb);
		ASSERT_MEM_EQ(a, b, la);
		opts.outdir = NULL;
		free(a);
		free(b);
		free(empty);
		free(empty_out);
	}

	/* Error paths, each on a scratch copy. */
	bad = path_in("work/bad.rpm");
	copy_file(pkg, bad);
	/* Another algorithm: contents re-hashed from the payload, checked with rpm2cpio's. */
	opts.algo = IMASTREAM_HASH_SHA512;
	ASSERT_EQ(imastream_sign_package(out, &opts, &res), 0);
	ASSERT_EQ(res.rehashed, 1);
	ASSERT_EQ(res.algo, IMASTREAM_HASH_SHA512);
	ASSERT_EQ(res.signed_files, 6);
	{
		char *root = path_in("root");

		ASSERT(mkdir(root, 0755) == 0);
		ASSERT(asprintf(&cmd, "cd %s && rpm2cpio %s | cpio -idm --quiet", root, pkg) > 0);
		ASSERT_EQ(run(cmd), 0);
		free(cmd);
		ASSERT_EQ(check_signatures(out, ec, 0x949fb16a, IMASTREAM_HASH_SHA512, root), 6);
		opts.signer = &rsa_signer;
		opts.algo = IMASTREAM_HASH_SHA384;
		ASSERT_EQ(imastream_sign_package(out, &opts, &res), 0);
		ASSERT_EQ(check_signatures(out, rsa, 0x1234abcd, IMASTREAM_HASH_SHA384, root), 6);
		free(root);
	}
	check_same_body(pkg, out);
	opts.algo = 0;

	opts.signer = &bad_signer;
	expect_failure(bad, &opts, -EKEYREJECTED, work, "cannot sign file");
	opts.signer = &rsa_signer;

	opts.outdir = "/nonexistent/dir";
	expect_failure(bad, &opts, -ENOENT, work, "temporary file");
	opts.outdir = NULL;

	{
		struct rpmpkg p;

		/* A flipped byte inside the header: the header digest catches it. */
		ASSERT_EQ(rpmpkg_open(&p, bad, &test_log), 0);
		rpmpkg_close(&p);
		flip_byte(bad, p.hdr_off + (off_t)p.hdr_len - 5);
		expect_failure(bad, &opts, -EINVAL, work, "digest does not match");

		/* A flipped byte in the payload: found while copying; nothing renamed. */
		copy_file(pkg, bad);
		ASSERT_EQ(rpmpkg_open(&p, bad, &test_log), 0);
		rpmpkg_close(&p);
		flip_byte(bad, p.payload_off + 1000);
		expect_failure(bad, &opts, -EINVAL, work, "corrupt package");
		/* The same with re-hashing: found while decompressing, before any signing. */
		opts.algo = IMASTREAM_HASH_SHA512;
		expect_failure(bad, &opts, -EINVAL, work, "corrupt package");
		opts.algo = 0;

		/* Truncated in the payload, and in the header. */
		copy_file(pkg, bad);
		ASSERT(stat(bad, &st) == 0 && truncate(bad, st.st_size - 1000) == 0);
		expect_failure(bad, &opts, -EINVAL, work, "truncated");
		ASSERT(truncate(bad, 500) == 0);
		expect_failure(bad, &opts, -EINVAL, work, "truncated");
	}

	{
		FILE *f = fopen(bad, "w");

		ASSERT(f && fputs("not a package at all, but long enough to hold a lead. ........"
				  "..........................................................",
				  f) >= 0 && fclose(f) == 0);
		expect_failure(bad, &opts, -EINVAL, work, "not an rpm package");
	}

	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ec);
	ASSERT(asprintf(&cmd, "rm -rf %s", topdir) > 0);
	run(cmd);
	free(cmd);
	free(pkg);
	free(out);
	free(outdir);
	free(work);
	free(bad);
	return 0;
}
