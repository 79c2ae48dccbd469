// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Benchmark: what the install record (the data `imastream policy keylime --record` reads)
 * costs `imastream install`: the same install with the record and without it
 * (IMASTREAM_SINK_NO_RECORD), alternating in one process, each into a fresh root.
 *
 *   bench_install_record [-o KEY=VALUE]... [-1 on|off] ROUNDS DIR PKG.rpm
 *
 * Each install does what `imastream install --root R --allow-unsigned --quiet PKG` does
 * (root transaction, chain from the configuration, sink, journaled extractor, syncfs) and
 * is timed whole, wall and CPU (every thread); the root is removed untimed.  Prints the
 * medians, and record/no-record as the median of each round's ratio (the two installs of
 * a round run back to back, so a load that comes and goes weighs on both); BENCH_CSV
 * gets a row for each.  -1 runs one variant only (for a profiler or a counter) and
 * prints its times.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "imastream/chain_sink.h"
#include "imastream/extract.h"
#include "imastream/install_rpm.h"
#include "imastream/root.h"

#define MAX_ROUNDS 1000
#define MAX_SETTINGS 16

static void print_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_WARNING)
		fprintf(stderr, "bench-install-record: %s\n", msg);
}

static const struct imastream_log log_to_stderr = { print_log, NULL };

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* One install of @pkg into the empty root @root, as imastream install does it. */
static int install(const struct imastream_config *cfg, const char *root, const char *pkg,
		   bool record)
{
	struct imastream_chain_sink_opts opts = {
		.size = sizeof(opts), .root = root, .cfg = cfg,
		.flags = IMASTREAM_SINK_ALLOW_UNSIGNED | (record ? 0 : IMASTREAM_SINK_NO_RECORD),
	};
	struct imastream_root_txn *txn = NULL;
	struct imastream_chain *chain = NULL;
	struct imastream_chain_sink *cs = NULL;
	struct imastream_extract *x = NULL;
	int rootfd, fd, err;

	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	err = imastream_root_txn_begin(rootfd, root, 0, &log_to_stderr, NULL, &txn);
	if (!err)
		err = imastream_chain_from_config(cfg, &log_to_stderr, &chain);
	if (!err)
		err = imastream_chain_sink_new(chain, rootfd, &opts, &log_to_stderr, &cs);
	if (!err)
		err = imastream_extract_new(rootfd, IMASTREAM_EXTRACT_SYNCFS | IMASTREAM_EXTRACT_JOURNAL,
					    imastream_chain_sink_entry_sink(cs), &log_to_stderr, &x);
	if (!err) {
		fd = open(pkg, O_RDONLY | O_CLOEXEC);
		err = fd < 0 ? -errno : imastream_install_rpm(x, fd, pkg, 0);
		if (fd >= 0)
			close(fd);
	}
	if (!err && syncfs(rootfd))
		err = -errno;
	imastream_extract_free(x);
	imastream_chain_sink_free(cs, err);
	imastream_chain_free(chain);
	imastream_root_txn_end(txn, err);
	close(rootfd);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}

int main(int argc, char **argv)
{
	static double wall[2][MAX_ROUNDS], cpu[2][MAX_ROUNDS], wall_ratio[MAX_ROUNDS],
		cpu_ratio[MAX_ROUNDS];
	const char *names[2] = { "without record", "with record" };
	struct imastream_config cfg;
	char root[4096];
	double w[2], c[2], wr, cr;
	int opt, rounds, only = -1;

	if (imastream_config_init(&cfg))
		return 1;
	while ((opt = getopt(argc, argv, "o:1:")) != -1) {
		char *eq = opt == 'o' ? strchr(optarg, '=') : NULL;

		if (opt == '1' && (!strcmp(optarg, "on") || !strcmp(optarg, "off"))) {
			only = !strcmp(optarg, "on");
			continue;
		}
		if (!eq)
			goto usage;
		*eq = '\0';
		if (imastream_config_set(&cfg, optarg, eq + 1, "-o", &log_to_stderr))
			return 2;
	}
	if (argc - optind != 3)
		goto usage;
	rounds = atoi(argv[optind]);
	if (rounds < 1 || rounds > MAX_ROUNDS || imastream_config_check(&cfg, &log_to_stderr))
		goto usage;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			int rec = (k + r) % 2; /* the order turns each round */
			double w0, c0;
			int err;

			if (only >= 0 && rec != only) {
				wall[rec][r] = cpu[rec][r] = 1;
				continue;
			}
			snprintf(root, sizeof(root), "%s/root.XXXXXX", argv[optind + 1]);
			if (!mkdtemp(root)) {
				perror(root);
				return 1;
			}
			sync();
			w0 = clock_s(CLOCK_MONOTONIC);
			c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
			err = install(&cfg, root, argv[optind + 2], rec);
			cpu[rec][r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
			wall[rec][r] = clock_s(CLOCK_MONOTONIC) - w0;
			if (err) {
				fprintf(stderr, "bench-install-record: install %s failed: %s\n",
					names[rec], strerror(-err));
				return 1;
			}
			if (nftw(root, remove_one, 64, FTW_DEPTH | FTW_PHYS)) {
				perror(root);
				return 1;
			}
		}
	}
	/* Paired before median() sorts the series. */
	for (int r = 0; r < rounds; r++) {
		wall_ratio[r] = wall[1][r] / wall[0][r];
		cpu_ratio[r] = cpu[1][r] / cpu[0][r];
	}
	for (int k = 0; k < 2; k++) {
		if (only >= 0 && k != only)
			continue;
		w[k] = median(wall[k], rounds);
		c[k] = median(cpu[k], rounds);
		printf("  imastream install %-15s wall median %7.3f s, cpu %7.3f s\n", names[k],
		       w[k], c[k]);
	}
	if (only >= 0)
		return 0;
	wr = median(wall_ratio, rounds);
	cr = median(cpu_ratio, rounds);
	printf("  record / no record, median of the %d rounds' ratios: wall %6.4fx, cpu %6.4fx"
	       "  target <= 1.01x: %s\n", rounds, wr, cr, wr <= 1.01 ? "met" : "MISSED");
	printf("  (ratio of the medians: wall %6.4fx, cpu %6.4fx)\n", w[1] / w[0], c[1] / c[0]);
	/* No CSV row: wall time cannot show 1% here; the script plots the counts. */
	imastream_config_release(&cfg);
	return wr <= 1.01 ? 0 : 3;
usage:
	fprintf(stderr, "usage: bench_install_record [-o KEY=VALUE]... [-1 on|off] ROUNDS DIR PKG.rpm\n");
	return 2;
}
