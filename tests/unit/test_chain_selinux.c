// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The selinux plugin labels files from a file_contexts the test writes (this kernel runs
 * no SELinux): by final name and mode, on the fd or (symlinks) by path, with the NUL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "tests/unit/test.h"

static int n_errors;
static char last_error[512];

static void count_errors(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_ERR) {
		n_errors++;
		snprintf(last_error, sizeof(last_error), "%s", msg);
	}
}

static const struct imastream_log test_log = { count_errors, NULL };

/* Runs one object through the chain and returns its security.selinux ("" if none). */
static const char *label_of(struct imastream_chain *chain, const char *path, const char *dest,
			    mode_t mode, int fd)
{
	static char got[256];
	struct imastream_file f = { .size = sizeof(f), .path = path, .dest = dest, .fd = fd, .mode = mode };
	ssize_t n;

	ASSERT_EQ(imastream_chain_file_opened(chain, &f), 0);
	ASSERT_EQ(imastream_chain_file_closed(chain, &f), 0);
	imastream_chain_file_done(chain, &f, 0);
	n = lgetxattr(path, "security.selinux", got, sizeof(got) - 1);
	if (n < 0) {
		ASSERT_EQ(errno, ENODATA);
		return "";
	}
	/* The kernel stores the NUL: so must we. */
	ASSERT(n > 0 && got[n - 1] == '\0');
	return got;
}

static struct imastream_chain *make_chain(struct imastream_config *cfg, unsigned int txn_flags)
{
	struct imastream_txn txn = { sizeof(txn), "/", txn_flags };
	struct imastream_chain *chain;

	ASSERT_EQ(imastream_chain_new(cfg, &test_log, &chain), 0);
	ASSERT_EQ(imastream_chain_add_list(chain, "selinux"), 0);
	ASSERT_EQ(imastream_chain_init(chain), 0);
	ASSERT_EQ(imastream_chain_tsm_pre(chain, &txn), 0);
	return chain;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct imastream_config cfg;
	struct imastream_chain *chain;
	char dir[256], fc[300], cmd[300];
	int fd;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/test_selinux.XXXXXX", tmp);
	ASSERT(mkdtemp(dir));
	ASSERT_EQ(chdir(dir), 0);
	snprintf(fc, sizeof(fc), "%s/file_contexts", dir);
	f = fopen(fc, "w");
	ASSERT(f);
	fputs("/opt/x(/.*)?\t\tsystem_u:object_r:usr_t:s0\n"
	      "/opt/x/bin(/.*)?\t--\tsystem_u:object_r:bin_t:s0\n"
	      "/opt/x/bin\t\t-d\tsystem_u:object_r:bin_dir_t:s0\n"
	      "/opt/x/link\t\t-l\tsystem_u:object_r:link_t:s0\n"
	      "/opt/x/unlabelled\t<<none>>\n", f);
	ASSERT_EQ(fclose(f), 0);

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(imastream_config_set(&cfg, "file_contexts", fc, NULL, NULL), 0);
	chain = make_chain(&cfg, 0);

	/* A regular file on rpm's kind of descriptor: write-only. */
	fd = open("tool;1234abcd", O_WRONLY | O_CREAT | O_EXCL, 0200);
	ASSERT(fd >= 0);
	ASSERT(strcmp(label_of(chain, "tool;1234abcd", "/opt/x/bin/tool", S_IFREG | 0755, fd),
		      "system_u:object_r:bin_t:s0") == 0);
	close(fd);
	/* A directory: the mode picks the -d rule. */
	ASSERT_EQ(mkdir("bin", 0755), 0);
	fd = open("bin", O_RDONLY | O_DIRECTORY);
	ASSERT(strcmp(label_of(chain, "bin", "/opt/x/bin", S_IFDIR | 0755, fd),
		      "system_u:object_r:bin_dir_t:s0") == 0);
	close(fd);
	/* A symlink has no descriptor: labelled by path, never followed. */
	ASSERT_EQ(symlink("tool;1234abcd", "link;1234abcd"), 0);
	ASSERT(strcmp(label_of(chain, "link;1234abcd", "/opt/x/link", S_IFLNK | 0777, -1),
		      "system_u:object_r:link_t:s0") == 0);
	ASSERT(strcmp(label_of(chain, "tool;1234abcd", "/opt/x/bin/tool", S_IFREG | 0755, -1),
		      "system_u:object_r:bin_t:s0") == 0);
	/* <<none>> and paths without a rule get no label. */
	fd = open("plain", O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT(strcmp(label_of(chain, "plain", "/opt/x/unlabelled", S_IFREG | 0644, fd), "") == 0);
	ASSERT(strcmp(label_of(chain, "plain", "/elsewhere", S_IFREG | 0644, fd), "") == 0);
	close(fd);
	imastream_chain_tsm_post(chain, NULL, 0);
	imastream_chain_free(chain);
	ASSERT_EQ(n_errors, 0);

	/* --nocontexts: nothing is labelled. */
	chain = make_chain(&cfg, IMASTREAM_TXN_NOCONTEXTS);
	fd = open("other", O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT(strcmp(label_of(chain, "other", "/opt/x/bin/other", S_IFREG | 0755, fd), "") == 0);
	close(fd);
	imastream_chain_free(chain);

	/* A missing file_contexts fails init, in one line naming it. */
	ASSERT_EQ(imastream_config_set(&cfg, "file_contexts", "/nonexistent/fc", NULL, NULL), 0);
	ASSERT_EQ(imastream_chain_new(&cfg, &test_log, &chain), 0);
	ASSERT_EQ(imastream_chain_add_list(chain, "selinux"), 0);
	ASSERT(imastream_chain_init(chain) < 0);
	imastream_chain_free(chain);
	ASSERT_EQ(n_errors, 1);
	ASSERT(strstr(last_error, "/nonexistent/fc"));

	imastream_config_release(&cfg);
	ASSERT_EQ(chdir("/"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
	return 0;
}
