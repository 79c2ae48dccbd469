/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The C benchmarks' CSV rows for bench/plot.sh, in the format bench/bench-csv.sh writes. */
#ifndef IMASTREAM_BENCH_CSV_H
#define IMASTREAM_BENCH_CSV_H

#include <stdio.h>
#include <stdlib.h>

/*
 * Appends one row to the file $BENCH_CSV names (nothing when it is unset): @throughput in
 * @unit for @series at x = @value of @param, and for a peer's row @ratio, how many times
 * faster imastream is (pass a negative @ratio on imastream's own rows).  A @value that is
 * not a number (a key type, "cold") makes the plot's x axis categorical.
 */
static inline void bench_csv_at(const char *param, const char *value, const char *series,
				double throughput, const char *unit, double ratio)
{
	const char *path = getenv("BENCH_CSV");
	FILE *f;
	long size;

	if (!path || !path[0])
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	if (size == 0)
		fprintf(f, "param,value,series,throughput,unit,ratio\n");
	fprintf(f, "%s,%s,%s,%.6g,%s,", param, value, series, throughput, unit);
	if (ratio >= 0)
		fprintf(f, "%.4g", ratio);
	fprintf(f, "\n");
	fclose(f);
}

/* The same at a numeric x. */
static inline void bench_csv(const char *param, double value, const char *series, double throughput,
			     const char *unit, double ratio)
{
	char x[32];

	snprintf(x, sizeof(x), "%.6g", value);
	bench_csv_at(param, x, series, throughput, unit, ratio);
}

#endif /* IMASTREAM_BENCH_CSV_H */
