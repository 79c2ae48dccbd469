// SPDX-License-Identifier: LGPL-2.1-or-later
/* EVM digest: h_misc bytes, HMAC known answers, collector, and signatures made by evmctl 1.4. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "tests/unit/test_xattr_util.h"
#include "xattr/codec.h"

static struct captured cap;
static const struct imastream_log log_ = { capture_fn, &cap };

static const char selinux[] = "system_u:object_r:bin_t:s0"; /* hashed with its NUL */
static const char caps_hex[] = "0000000200200000000000000000000000000000";

/* The kernel's struct h_misc layout (evm_crypto.c), as evmctl 1.4 hashes it on x86_64. */
static void test_misc_layout(void)
{
	struct imastream_evm_input in = { .size = sizeof(in), .uid = 0, .gid = 0, .mode = 0100644 };
	unsigned char buf[IMASTREAM_EVM_MISC_MAX], exp[24];
	size_t len;

	in.ino = 99;
	in.generation = 7;
	ASSERT_EQ(imastream_evm_misc_encode(&in, true, buf, &len), 0);
	ASSERT_EQ(len, 24);
	test_unhex("0000000000000000" "00000000" "00000000" "00000000" "a481" "0000", exp, 24);
	ASSERT_MEM_EQ(buf, exp, 24);

	in.ino = 1234;
	in.generation = 5678;
	in.uid = 12;
	in.gid = 34;
	in.mode = 0100750;
	ASSERT_EQ(imastream_evm_misc_encode(&in, false, buf, &len), 0);
	test_unhex("d204000000000000" "2e160000" "0c000000" "22000000" "e881" "0000", exp, 24);
	ASSERT_MEM_EQ(buf, exp, 24);

	in.misc_layout = IMASTREAM_EVM_MISC_32;
	ASSERT_EQ(imastream_evm_misc_encode(&in, false, buf, &len), 0);
	ASSERT_EQ(len, 20);
	test_unhex("d2040000" "2e160000" "0c000000" "22000000" "e881" "0000", exp, 20);
	ASSERT_MEM_EQ(buf, exp, 20);

	in.misc_layout = IMASTREAM_EVM_MISC_64;
	in.big_endian = true;
	ASSERT_EQ(imastream_evm_misc_encode(&in, false, buf, &len), 0);
	test_unhex("00000000000004d20000162e0000000c0000002281e80000", exp, 24);
	ASSERT_MEM_EQ(buf, exp, 24);

	in.misc_layout = 5;
	ASSERT_EQ(imastream_evm_misc_encode(&in, false, buf, &len), -EINVAL);
}

/* An input with a label, an IMA hash and caps; uid 12, gid 34, mode 0100750. */
static void sample_input(struct imastream_evm_input *in, unsigned char *ima, unsigned char *caps)
{
	unsigned char d[32];

	memset(in, 0, sizeof(*in));
	in->size = sizeof(*in);
	md("sha256", "hello world\n", 12, d);
	ima[0] = 4;
	ima[1] = 4;
	memcpy(ima + 2, d, 32);
	test_unhex(caps_hex, caps, 20);
	in->xattrs[IMASTREAM_EVM_SELINUX] = (struct imastream_evm_value){ selinux, sizeof(selinux) };
	in->xattrs[IMASTREAM_EVM_IMA] = (struct imastream_evm_value){ ima, 34 };
	in->xattrs[IMASTREAM_EVM_CAPABILITY] = (struct imastream_evm_value){ caps, 20 };
	in->ino = 1234;
	in->generation = 5678;
	in->uid = 12;
	in->gid = 34;
	in->mode = 0100750;
	for (int i = 0; i < 16; i++)
		in->uuid[i] = (uint8_t)i;
}

/* Expected values computed independently with Python's hashlib/hmac. */
static void test_known_answers(void)
{
	static const unsigned char key[] = "0123456789abcdef0123456789abcdef";
	unsigned char ima[34], caps[20], out[64], exp[64];
	struct imastream_evm_input in = { .size = sizeof(in) };
	size_t len;

	sample_input(&in, ima, caps);
	ASSERT_EQ(imastream_evm_digest_portable(&in, IMASTREAM_HASH_SHA256, out, sizeof(out), &len,
						&log_), 0);
	ASSERT_EQ(len, 32);
	test_unhex("f874cfe940cb6c9a82b71122a50f9616111394d753b6b757405ebcc31557eeaa", exp, 32);
	ASSERT_MEM_EQ(out, exp, 32);
	/* The UUID and the inode never reach a portable digest. */
	in.has_uuid = true;
	in.ino = 1;
	ASSERT_EQ(imastream_evm_digest_portable(&in, IMASTREAM_HASH_SHA256, out, sizeof(out), &len,
						&log_), 0);
	ASSERT_MEM_EQ(out, exp, 32);
	in.ino = 1234;

	ASSERT_EQ(imastream_evm_hmac(&in, key, 32, out, &log_), 0);
	test_unhex("02590f70dba8d88c116c9ffc91f626bcc6517a0f3a", exp, 21);
	ASSERT_MEM_EQ(out, exp, 21);
	in.has_uuid = false;
	ASSERT_EQ(imastream_evm_hmac(&in, key, 32, out, &log_), 0);
	test_unhex("02a103aaa9465fefca9c17ed8c5c9608134aba1edc", exp, 21);
	ASSERT_MEM_EQ(out, exp, 21);
	in.has_uuid = true;
	in.misc_layout = IMASTREAM_EVM_MISC_32;
	ASSERT_EQ(imastream_evm_hmac(&in, key, 32, out, &log_), 0);
	test_unhex("02513e6aa5418a8f96b08384cedce710612640c695", exp, 21);
	ASSERT_MEM_EQ(out, exp, 21);

	/* Errors: key length, missing security.ima for portable, unknown algorithm. */
	cap.count = 0;
	ASSERT_EQ(imastream_evm_hmac(&in, key, 0, out, &log_), -EINVAL);
	ASSERT_EQ(imastream_evm_hmac(&in, key, 129, out, &log_), -EINVAL);
	ASSERT_EQ(cap.count, 2);
	ASSERT(!strstr(cap.last, "0123")); /* the key never appears in a message */
	in.xattrs[IMASTREAM_EVM_IMA].value = NULL;
	cap.count = 0;
	ASSERT_EQ(imastream_evm_digest_portable(&in, IMASTREAM_HASH_SHA256, out, sizeof(out), &len,
						&log_), -ENODATA);
	ASSERT_EQ(cap.count, 1);
	ASSERT(strstr(cap.last, "security.ima"));
	ASSERT_EQ(imastream_evm_digest(&in, IMASTREAM_HASH_SHA256, out, sizeof(out), &len, &log_), 0);
	ASSERT_EQ(imastream_evm_digest(&in, 99, out, sizeof(out), &len, &log_), -EINVAL);
	ASSERT_EQ(imastream_evm_digest(&in, IMASTREAM_HASH_SHA256, out, 31, &len, &log_), -ENOSPC);
}

/* Puts a label, caps, security.ima and user.ima on @path, owner 12:34, mode 0750. */
static void decorate(const char *path)
{
	unsigned char ima[34], user_ima[34], caps[20], d[32];

	md("sha256", "hello world\n", 12, d);
	ima[0] = 4;
	ima[1] = 4;
	memcpy(ima + 2, d, 32);
	memcpy(user_ima, ima, 34);
	user_ima[33] ^= 1; /* differs from security.ima, so tests see which one was read */
	test_unhex(caps_hex, caps, 20);
	/* Owner first: chown drops security.capability, as rpm's fsm also knows. */
	ASSERT_EQ(lchown(path, 12, 34), 0);
	ASSERT_EQ(chmod(path, 0750), 0);
	ASSERT_EQ(lsetxattr(path, "security.selinux", selinux, sizeof(selinux), 0), 0);
	ASSERT_EQ(lsetxattr(path, "security.ima", ima, sizeof(ima), 0), 0);
	ASSERT_EQ(lsetxattr(path, "user.ima", user_ima, sizeof(user_ima), 0), 0);
	ASSERT_EQ(lsetxattr(path, "security.capability", caps, sizeof(caps), 0), 0);
}

static void test_collect(const char *dir)
{
	struct imastream_evm_input in = { .size = sizeof(in) };
	char path[512], link[512];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/collect", dir);
	write_file(path, "hello world\n", 12);
	decorate(path);
	ASSERT_EQ(lstat(path, &st), 0);

	ASSERT_EQ(imastream_evm_collect(-1, path, 0, &in, &log_), 0);
	ASSERT_EQ(in.uid, 12);
	ASSERT_EQ(in.gid, 34);
	ASSERT_EQ(in.mode, 0100750);
	ASSERT_EQ(in.ino, st.st_ino);
	ASSERT(!in.has_uuid);
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_SELINUX].len, sizeof(selinux));
	ASSERT_MEM_EQ(in.xattrs[IMASTREAM_EVM_SELINUX].value, selinux, sizeof(selinux));
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_IMA].len, 34);
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_CAPABILITY].len, 20);
	ASSERT(in.xattrs[IMASTREAM_EVM_SMACK64].value == NULL);
	ASSERT(in.xattrs[IMASTREAM_EVM_APPARMOR].value == NULL);
	/* security.ima is the plain sha256 value: it ends in 0x47, user.ima in 0x46. */
	ASSERT_EQ(((const uint8_t *)in.xattrs[IMASTREAM_EVM_IMA].value)[33], 0x47);
	imastream_evm_input_release(&in);
	ASSERT(in.owned == NULL);

	/* By fd, with user.ima and the generation (ext4 has one). */
	fd = open(path, O_RDONLY);
	ASSERT(fd >= 0);
	ASSERT_EQ(imastream_evm_collect(fd, path,
					IMASTREAM_EVM_COLLECT_USER_IMA |
						IMASTREAM_EVM_COLLECT_GENERATION,
					&in, &log_), 0);
	ASSERT_EQ(((const uint8_t *)in.xattrs[IMASTREAM_EVM_IMA].value)[33], 0x46);
	ASSERT_EQ(in.mode, 0100750);
	imastream_evm_input_release(&in);
	close(fd);

	/* By path with the inode ioctls: the file is opened just for them. */
	{
		int err = imastream_evm_collect(-1, path, IMASTREAM_EVM_COLLECT_GENERATION |
							 IMASTREAM_EVM_COLLECT_UUID, &in, &log_);

		/* FS_IOC_GETFSUUID is Linux 6.5+; older kernels say ENOTTY, in one line. */
		ASSERT(err == 0 || err == -ENOTTY);
		if (!err) {
			ASSERT(in.has_uuid);
			ASSERT_EQ(in.mode, 0100750);
			imastream_evm_input_release(&in);
		}
	}
	/* tmpfs-like filesystems have no generation: ENOTTY, said once. procfs has none. */
	cap.count = 0;
	ASSERT_EQ(imastream_evm_collect(-1, "/proc/self/stat", IMASTREAM_EVM_COLLECT_GENERATION,
					&in, &log_), -ENOTTY);
	ASSERT_EQ(cap.count, 1);
	ASSERT(strstr(cap.last, "generation"));

	/* A symlink is described as itself, never as its target. */
	snprintf(link, sizeof(link), "%s/collect-link", dir);
	ASSERT_EQ(symlink("collect", link), 0);
	ASSERT_EQ(imastream_evm_collect(-1, link, 0, &in, &log_), 0);
	ASSERT(S_ISLNK(in.mode));
	ASSERT(in.xattrs[IMASTREAM_EVM_SELINUX].value == NULL);
	imastream_evm_input_release(&in);

	/* A missing file: one line naming it. */
	snprintf(link, sizeof(link), "%s/missing", dir);
	cap.count = 0;
	ASSERT_EQ(imastream_evm_collect(-1, link, 0, &in, &log_), -ENOENT);
	ASSERT_EQ(cap.count, 1);
	ASSERT(strstr(cap.last, "missing"));
	ASSERT_EQ(imastream_evm_collect(-1, NULL, 0, &in, &log_), -EINVAL);
}

/*
 * A file whose xattr names overflow the collector's listxattr buffer: every slot is
 * asked for, as without the list, so none is lost.  On tmpfs, where names cost no block.
 */
static void test_collect_long_list(void)
{
	static const uint8_t exec_label[] = "exec-label", ima[] = { 4, 4, 0xab };
	struct imastream_evm_input in = { .size = sizeof(in) };
	char dir[] = "/dev/shm/test_xattr_evm.XXXXXX", path[64], name[160];
	size_t listed = 0;

	ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/long-list", dir);
	write_file(path, "hello world\n", 12);
	ASSERT_EQ(lsetxattr(path, "security.SMACK64EXEC", exec_label, sizeof(exec_label), 0), 0);
	ASSERT_EQ(lsetxattr(path, "security.ima", ima, sizeof(ima), 0), 0);
	for (int i = 0; listed <= 8192; i++) {
		snprintf(name, sizeof(name), "security.padding-%03d-%0120d", i, 0);
		ASSERT_EQ(lsetxattr(path, name, "", 1, 0), 0);
		listed += strlen(name) + 1;
	}
	ASSERT(llistxattr(path, NULL, 0) > 4096);
	ASSERT_EQ(imastream_evm_collect(-1, path, 0, &in, &log_), 0);
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_SMACK64EXEC].len, sizeof(exec_label));
	ASSERT_MEM_EQ(in.xattrs[IMASTREAM_EVM_SMACK64EXEC].value, exec_label, sizeof(exec_label));
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_IMA].len, sizeof(ima));
	ASSERT(in.xattrs[IMASTREAM_EVM_CAPABILITY].value == NULL);
	imastream_evm_input_release(&in);
	ASSERT_EQ(unlink(path), 0);
	ASSERT_EQ(rmdir(dir), 0);
}

/*
 * Values too large together for the collector's one-call buffer (2 KiB): read again,
 * sized first, each whole.  On tmpfs, where values of any size fit.
 */
static void test_collect_large_values(void)
{
	struct imastream_evm_input in = { .size = sizeof(in) };
	char dir[] = "/dev/shm/test_xattr_evm.XXXXXX", path[64];
	uint8_t exec_label[1500], apparmor[1500];

	for (size_t i = 0; i < sizeof(exec_label); i++) {
		exec_label[i] = (uint8_t)(i * 7);
		apparmor[i] = (uint8_t)(i * 13 + 1);
	}
	ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/large-values", dir);
	write_file(path, "hello world\n", 12);
	ASSERT_EQ(lsetxattr(path, "security.SMACK64EXEC", exec_label, sizeof(exec_label), 0), 0);
	ASSERT_EQ(lsetxattr(path, "security.apparmor", apparmor, sizeof(apparmor), 0), 0);
	ASSERT_EQ(imastream_evm_collect(-1, path, 0, &in, &log_), 0);
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_SMACK64EXEC].len, sizeof(exec_label));
	ASSERT_MEM_EQ(in.xattrs[IMASTREAM_EVM_SMACK64EXEC].value, exec_label, sizeof(exec_label));
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_APPARMOR].len, sizeof(apparmor));
	ASSERT_MEM_EQ(in.xattrs[IMASTREAM_EVM_APPARMOR].value, apparmor, sizeof(apparmor));
	ASSERT(in.xattrs[IMASTREAM_EVM_IMA].value == NULL);
	imastream_evm_input_release(&in);
	/* Exactly the buffer's size: no slot is asked with no room left (size 0). */
	ASSERT_EQ(lsetxattr(path, "security.apparmor", apparmor, 2048 - sizeof(exec_label), 0), 0);
	ASSERT_EQ(lsetxattr(path, "security.ima", "\x04\x04", 2, 0), 0);
	ASSERT_EQ(imastream_evm_collect(-1, path, 0, &in, &log_), 0);
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_APPARMOR].len, 2048 - sizeof(exec_label));
	ASSERT_EQ(in.xattrs[IMASTREAM_EVM_IMA].len, 2);
	ASSERT_MEM_EQ(in.xattrs[IMASTREAM_EVM_IMA].value, "\x04\x04", 2);
	imastream_evm_input_release(&in);
	ASSERT_EQ(unlink(path), 0);
	ASSERT_EQ(rmdir(dir), 0);
}

/* Key id the kernel uses: last four bytes of the certificate's SKID. */
static uint32_t cert_keyid(const char *der_path)
{
	unsigned char der[4096];
	const unsigned char *p = der;
	const ASN1_OCTET_STRING *skid;
	size_t n = read_file(der_path, der, sizeof(der));
	X509 *x = d2i_X509(NULL, &p, n);
	uint32_t id;

	ASSERT(x);
	skid = X509_get0_subject_key_id(x);
	ASSERT(skid && ASN1_STRING_length(skid) >= 4);
	p = ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4;
	id = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
	X509_free(x);
	return id;
}

/*
 * Verifies evmctl's signature in @attr of @path over OUR digest @dig with openssl pkeyutl:
 * passes only if both sides hashed exactly the same bytes.
 */
static int openssl_verifies(const char *dir, const char *path, const char *attr, int type,
			    const char *alg, int algo, const unsigned char *dig, size_t dig_len)
{
	unsigned char v[1024];
	struct imastream_xattr_info info = { .size = sizeof(info) };
	char sig_path[512], dig_path[512];
	ssize_t n = lgetxattr(path, attr, v, sizeof(v));

	ASSERT(n > 0);
	ASSERT_EQ(imastream_xattr_decode(v, n, &info, &log_), 0);
	ASSERT_EQ(info.type, type);
	ASSERT_EQ(info.version, 2);
	ASSERT_EQ(info.algo, algo);
	snprintf(sig_path, sizeof(sig_path), "%s/sig", dir);
	snprintf(dig_path, sizeof(dig_path), "%s/dig", dir);
	ASSERT(info.data == v + 9); /* the raw signature is what follows the 9-byte header */
	write_file(sig_path, info.data, info.data_len);
	write_file(dig_path, dig, dig_len);
	return run("openssl pkeyutl -verify -certin -keyform DER -inkey '%s/cert.der' -in '%s' "
		   "-sigfile '%s' -pkeyopt digest:%s >/dev/null 2>&1",
		   dir, dig_path, sig_path, alg);
}

static void test_vs_evmctl(const char *dir)
{
	static const struct {
		const char *name;
		int algo;
	} algos[] = { { "sha1", IMASTREAM_HASH_SHA1 },
		      { "sha256", IMASTREAM_HASH_SHA256 },
		      { "sha512", IMASTREAM_HASH_SHA512 } };
	static const char uuid_text[] = "28b23254-9f1a-4c2b-8d6e-0123456789ab";
	static const char uuid_hex[] = "28b232549f1a4c2b8d6e0123456789ab";
	char path[512];
	unsigned char dig[64];
	uint32_t keyid;
	size_t len;

	if (run("command -v evmctl >/dev/null && command -v openssl >/dev/null") != 0) {
		fprintf(stderr, "evmctl or openssl missing: cross-check skipped\n");
		return;
	}
	ASSERT_EQ(run("cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem "
		      "-out cert.der -outform DER -days 2 -subj /CN=imastream-test "
		      "-addext subjectKeyIdentifier=hash >/dev/null 2>&1", dir), 0);
	keyid = cert_keyid(strcat(strcpy(path, dir), "/cert.der"));
	snprintf(path, sizeof(path), "%s/signed", dir);
	write_file(path, "hello world\n", 12);
	decorate(path);

	for (size_t a = 0; a < ARRAY_SIZE_(algos); a++) {
		struct imastream_evm_input in = { .size = sizeof(in) };
		unsigned char v[512];
		ssize_t n;

		/* Portable, 64-bit h_misc: user.ima is what evmctl --xattr-user hashes. */
		ASSERT_EQ(run("evmctl sign --portable --xattr-user --generation=0 -a %s "
			      "--key '%s/key.pem' '%s' >/dev/null 2>&1", algos[a].name, dir, path), 0);
		n = lgetxattr(path, "user.evm", v, sizeof(v));
		ASSERT_EQ(n, 9 + 256);
		ASSERT_EQ(v[0], 5);
		ASSERT_EQ((uint32_t)v[3] << 24 | (uint32_t)v[4] << 16 | (uint32_t)v[5] << 8 | v[6], keyid);
		ASSERT_EQ(imastream_evm_collect(-1, path, IMASTREAM_EVM_COLLECT_USER_IMA, &in,
						&log_), 0);
		ASSERT_EQ(imastream_evm_digest_portable(&in, algos[a].algo, dig, sizeof(dig), &len,
							&log_), 0);
		ASSERT_EQ(openssl_verifies(dir, path, "user.evm", 5, algos[a].name,
					   algos[a].algo, dig, len), 0);
		/* The same signature must fail over a digest with one field changed. */
		in.uid++;
		ASSERT_EQ(imastream_evm_digest_portable(&in, algos[a].algo, dig, sizeof(dig), &len,
							&log_), 0);
		ASSERT(openssl_verifies(dir, path, "user.evm", 5, algos[a].name, algos[a].algo,
					dig, len) != 0);
		in.uid--;

		/* Portable, 32-bit h_misc (--m32). */
		ASSERT_EQ(run("evmctl sign --portable --m32 --xattr-user --generation=0 -a %s "
			      "--key '%s/key.pem' '%s' >/dev/null 2>&1", algos[a].name, dir, path), 0);
		in.misc_layout = IMASTREAM_EVM_MISC_32;
		ASSERT_EQ(imastream_evm_digest_portable(&in, algos[a].algo, dig, sizeof(dig), &len,
							&log_), 0);
		ASSERT_EQ(openssl_verifies(dir, path, "user.evm", 5, algos[a].name,
					   algos[a].algo, dig, len), 0);
		imastream_evm_input_release(&in);

		/*
		 * Non-portable (type 3) with ino, generation and UUID given: evmctl 1.4 reads
		 * security.ima here even with --xattr-user, so collect without USER_IMA.
		 */
		ASSERT_EQ(run("evmctl sign --xattr-user --uuid=%s --generation=4711 --ino=31337 "
			      "-a %s --key '%s/key.pem' '%s' >/dev/null 2>&1", uuid_text,
			      algos[a].name, dir, path), 0);
		ASSERT_EQ(imastream_evm_collect(-1, path, 0, &in, &log_), 0);
		in.ino = 31337;
		in.generation = 4711;
		in.has_uuid = true;
		test_unhex(uuid_hex, in.uuid, 16);
		ASSERT_EQ(imastream_evm_digest(&in, algos[a].algo, dig, sizeof(dig), &len, &log_), 0);
		ASSERT_EQ(openssl_verifies(dir, path, "user.evm", 3, algos[a].name, algos[a].algo,
					   dig, len), 0);
		in.generation++;
		ASSERT_EQ(imastream_evm_digest(&in, algos[a].algo, dig, sizeof(dig), &len, &log_), 0);
		ASSERT(openssl_verifies(dir, path, "user.evm", 3, algos[a].name, algos[a].algo, dig,
					len) != 0);

		/* Without a UUID (a bare --uuid leaves it out). */
		ASSERT_EQ(run("evmctl sign --xattr-user --uuid --generation=4711 --ino=31337 "
			      "-a %s --key '%s/key.pem' '%s' >/dev/null 2>&1", algos[a].name, dir,
			      path), 0);
		in.generation = 4711;
		in.has_uuid = false;
		ASSERT_EQ(imastream_evm_digest(&in, algos[a].algo, dig, sizeof(dig), &len, &log_), 0);
		ASSERT_EQ(openssl_verifies(dir, path, "user.evm", 3, algos[a].name, algos[a].algo,
					   dig, len), 0);
		imastream_evm_input_release(&in);
	}
}

int main(void)
{
	const char *dir;

	test_misc_layout();
	test_known_answers();
	if (geteuid() != 0) {
		fprintf(stderr, "not root: security.* xattrs and chown need it; file tests skipped\n");
		return 0;
	}
	dir = make_test_dir();
	test_collect(dir);
	test_collect_long_list();
	test_collect_large_values();
	test_vs_evmctl(dir);
	return 0;
}
