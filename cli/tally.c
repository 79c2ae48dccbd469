// SPDX-License-Identifier: LGPL-2.1-or-later
/* The counts and time of the summary lines: hash, sign and verify -r also draw a progress line. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

double cli_seconds_since(clockid_t clock, const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(clock, &now);
	return seconds_between(t0, &now);
}

void cli_tally_start(struct cli_tally *t)
{
	clock_gettime(CLOCK_MONOTONIC, &t->start);
	t->last = (struct timespec){ 0 }; /* the first file draws the line at once */
}

void cli_tally_file(struct cli_tally *t, uint64_t bytes, unsigned long failures)
{
	struct timespec now;
	double mib, elapsed;
	char text[160];

	t->files++;
	t->bytes += bytes;
	if (!t->draw)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* Ten updates a second are plenty, and keep the terminal out of the hot path. */
	if (seconds_between(&t->last, &now) < 0.1)
		return;
	t->last = now;
	elapsed = seconds_between(&t->start, &now);
	mib = (double)t->bytes / (1024.0 * 1024.0);
	snprintf(text, sizeof(text), "imastream %s: %lu files, %.1f MiB, %lu failures, %.1f MiB/s",
		 t->cmd, t->files, mib, failures, elapsed > 0 ? mib / elapsed : 0.0);
	cli_progress_draw(text);
}

const char *cli_human_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s");
		return buf;
	}
	for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]); u++)
		v /= 1024;
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

const char *cli_eta(double done, double total, double elapsed, char *buf, size_t size)
{
	double left;

	buf[0] = 0;
	if (total <= 0 || done <= 0 || done > total)
		return buf;
	/* At the rate so far; a guess says nothing before a second has passed. */
	left = elapsed * (total - done) / done;
	if (elapsed < 1.0 || done == total)
		snprintf(buf, size, "%.0f%%", 100.0 * done / total);
	else if (left < 100)
		snprintf(buf, size, "%.0f%%, %.0f s left", 100.0 * done / total, left);
	else
		snprintf(buf, size, "%.0f%%, %.0f min left", 100.0 * done / total, left / 60);
	return buf;
}

void cli_tally_end(struct cli_tally *t, unsigned long failures)
{
	char size[32];

	cli_progress_clear();
	if (!t->summary)
		return;
	cli_say(t->cmd, "%lu file%s, %s, %lu failure%s, %.2f s", t->files, t->files == 1 ? "" : "s",
		cli_human_size(t->bytes, size, sizeof(size)), failures, failures == 1 ? "" : "s",
		cli_seconds_since(CLOCK_MONOTONIC, &t->start));
}
