// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream sign-digests: on the signing host, signs a digest manifest's digests into a signatures file, never seeing a package. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/replace.h"
#include "cli/signers.h"
#include "imastream/hash.h"
#include "imastream/keys.h"
#include "imastream/signpkg.h"

static const struct cli_use sign_digests_options[] = {
	{ CLI_OPT_GROUP, .group = cli_signers_options },
	{ CLI_OPT_OUTPUT, "write the signatures file to FILE (- for standard\n"
			  "output), replaced whole or left as it was (required)" },
	{ CLI_OPT_ALLOW_WEAK, "sign md5 digests too (refused otherwise)" },
	{ CLI_OPT_JOBS, "sign with N threads (1 to 64; default: one per CPU),\n"
			"the key loaded once; a pkcs11 key signs from one at a\n"
			"time" },
	{ CLI_OPT_QUIET, "no summary line" },
	{ CLI_OPT_FORMAT, "text (default) or json: the summary as a JSON object on\n"
			  "standard output (not with --output -)" },
	{ CLI_OPT_VERBOSE },
	{ CLI_OPT_HELP },
	{ 0 },
};

/* The spelling, -o SIGS; elsewhere -o is --set, which this command does not take. */
static const struct cli_alias sign_digests_aliases[] = {
	{ CLI_OPT_OUTPUT, 'o', NULL, "--output (elsewhere -o is --set)" },
	{ 0 },
};

static const struct cli_spec sign_digests_spec = {
	.cmd = "sign-digests",
	.synopsis =
	"Usage: imastream sign-digests --key KEY [--cert CERT]\n"
	"                              [-p | --pass-file FILE | --pass-env VAR]\n"
	"                              [--keyid HEX] [-j N] [--quiet]\n"
	"                              --output SIGS MANIFEST\n"
	"\n"
	"On the signing host: signs every file digest of MANIFEST (made by 'imastream\n"
	"sign-package --export-digests'; - for standard input) with KEY, and writes the\n"
	"signatures file SIGS for 'imastream sign-package --import-signatures'. No\n"
	"package is needed. MANIFEST is untrusted input: anything but the one accepted\n"
	"form, or over the format's limits, is refused in one line and nothing is\n"
	"written. The key is loaded once; signatures are made by N threads.\n",
	.uses = sign_digests_options,
	.aliases = sign_digests_aliases,
	.epilog =
	"Exit status: 0 if every digest was signed and SIGS written, 1 if MANIFEST is\n"
	"refused, the key cannot be loaded, a signature cannot be made or SIGS cannot be\n"
	"written (one line; SIGS is then left as it was), 2 for a usage error.\n",
};

/* Work is handed out in runs of this many digests: few lock round trips, even spread. */
#define CHUNK 512

struct digest_run;

struct digest_worker {
	struct digest_run *run;
	struct cli_capture msgs; /* what its failure said */
	pthread_t thread;
	int err;
};

struct digest_run {
	struct imastream_signpkg_manifest *m;
	size_t n_files;
	unsigned int jobs;
	struct digest_worker workers[CLI_MAX_JOBS];
	struct cli_signers signers; /* signers.ps[i] is worker i's */
	pthread_mutex_t lock; /* next, failed */
	size_t next;
	bool failed;
};

/* Takes runs of digests until none is left or a worker failed: the first failure ends it. */
static void *worker_main(void *arg)
{
	struct digest_worker *w = arg;
	struct digest_run *run = w->run;

	cli_capture_begin(&w->msgs);
	for (;;) {
		size_t first;

		pthread_mutex_lock(&run->lock);
		first = run->failed ? run->n_files : run->next;
		if (first < run->n_files)
			run->next += CHUNK;
		pthread_mutex_unlock(&run->lock);
		if (first >= run->n_files)
			break;
		w->err = imastream_signpkg_manifest_sign(run->m, first,
							 run->n_files - first < CHUNK ?
							 run->n_files - first : CHUNK,
							 &run->signers.ps[w - run->workers], &cli_log);
		if (w->err) {
			pthread_mutex_lock(&run->lock);
			run->failed = true;
			pthread_mutex_unlock(&run->lock);
			break;
		}
	}
	cli_capture_end();
	return NULL;
}

/* Signs every digest; on failure prints the first failing worker's line.  Return: 0 or -1. */
static int sign_all(struct digest_run *run)
{
	unsigned int started = 0;
	int err = 0;

	pthread_mutex_init(&run->lock, NULL);
	for (unsigned int i = 0; i < run->jobs; i++)
		run->workers[i].run = run;
	for (unsigned int i = 0; run->jobs > 1 && i < run->jobs; i++) {
		int e = pthread_create(&run->workers[i].thread, NULL, worker_main, &run->workers[i]);

		if (e) {
			cli_error("cannot start thread %u: %s", i + 1, strerror(e));
			break;
		}
		started++;
	}
	if (!started)
		worker_main(&run->workers[0]);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(run->workers[i].thread, NULL);
	for (unsigned int i = 0; i < (started ? started : 1); i++) {
		if (run->workers[i].err && !err) {
			cli_capture_flush(&run->workers[i].msgs, true);
			err = -1;
		}
		cli_capture_free(&run->workers[i].msgs);
	}
	pthread_mutex_destroy(&run->lock);
	return err;
}

/* Every weak algorithm the manifest uses must be allowed. */
static int check_algos(const struct imastream_signpkg_manifest *m, bool allow_weak)
{
	unsigned int mask = imastream_signpkg_manifest_algos(m);

	for (int algo = 0; mask; algo++, mask >>= 1)
		if ((mask & 1) && cli_check_weak_algo("sign-digests", algo, allow_weak) != CLI_OK)
			return CLI_USAGE;
	return CLI_OK;
}

/* What the command line asks for, besides the number of jobs (in the run). */
struct sign_digests_opts {
	struct cli_key key;
	struct cli_say say;
	const char *output, *manifest;
	bool allow_weak;
};

/* The command line into @o and @run: -1 to go on, or the exit status. */
static int parse_options(struct sign_digests_opts *o, struct digest_run *run, int argc, char **argv)
{
	struct cli_parser p;
	int c;

	cli_parse_start(&p, &sign_digests_spec, argc, argv);
	while ((c = cli_parse_next_key(&p, &o->key, &o->say)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_OUTPUT:
			o->output = p.arg;
			break;
		case CLI_OPT_ALLOW_WEAK:
			o->allow_weak = true;
			break;
		case CLI_OPT_JOBS:
			if (!cli_parse_jobs(&p, &run->jobs))
				return CLI_USAGE;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (!o->key.opts.key)
		return cli_usage_error("sign-digests", "no --key given");
	if (!o->output)
		return cli_usage_error("sign-digests", "no --output given");
	if (o->say.json && !strcmp(o->output, "-"))
		return cli_usage_error(
			"sign-digests",
			"--format json writes to standard output: give --output a FILE");
	if (cli_parse_operands(&p) != argc - 1)
		return cli_usage_error("sign-digests", "give one MANIFEST");
	if (cli_key_check_pass("sign-digests", &o->key) != CLI_OK)
		return CLI_USAGE;
	o->manifest = argv[argc - 1];
	if (!strcmp(o->manifest, "-") && o->key.prompt)
		return cli_usage_error("sign-digests", "-p asks on the terminal: give the manifest as a file, or use --pass-file or --pass-env");
	return -1;
}

/* The summary: a --format json object, or one line with the rates unless --quiet. */
static void report(const struct sign_digests_opts *o, const struct digest_run *run, size_t n_pkgs,
		   double secs, double cpu_secs)
{
	if (o->say.json) {
		struct cli_json j = { 0 };

		cli_json_begin(&j, "summary");
		cli_json_str(&j, "command", "sign-digests");
		cli_json_uint(&j, "packages", n_pkgs);
		cli_json_uint(&j, "signatures", run->n_files);
		cli_json_uint(&j, "threads", run->jobs);
		cli_json_seconds(&j, "elapsed_s", secs);
		cli_json_seconds(&j, "cpu_s", cpu_secs);
		cli_json_put(&j, stdout);
		cli_json_free(&j);
	} else if (!o->say.quiet)
		cli_say("sign-digests",
			"%zu package%s, %zu signatures, %u thread%s, %.3f s, %.0f signatures/s, "
			"%.0f per CPU second",
			n_pkgs, n_pkgs == 1 ? "" : "s", run->n_files, run->jobs,
			run->jobs == 1 ? "" : "s", secs,
			secs > 0 ? (double)run->n_files / secs : 0.0,
			cpu_secs > 0 ? (double)run->n_files / cpu_secs : 0.0);
}

int cmd_sign_digests(int argc, char **argv)
{
	static struct digest_run run; /* the workers array is large; one run per process */
	struct sign_digests_opts o = { .key = CLI_KEY_INIT, .say = CLI_SAY_INIT };
	struct cli_replace out;
	struct timespec t0, cpu0;
	size_t n_pkgs = 0;
	double secs, cpu_secs;
	int err, rc = CLI_FAILED;

	run.jobs = cli_default_jobs();
	rc = parse_options(&o, &run, argc, argv);
	if (rc >= 0)
		return rc;
	rc = CLI_FAILED;
	cli_set_verbose(o.say.verbose);
	/* The untrusted input first: a refused manifest never gets as far as the key. */
	if (imastream_signpkg_manifest_load(o.manifest, IMASTREAM_SIGNPKG_DIGESTS, &cli_log,
					    &run.m))
		return CLI_FAILED;
	imastream_signpkg_manifest_count(run.m, &n_pkgs, &run.n_files);
	if (check_algos(run.m, o.allow_weak) != CLI_OK) {
		rc = CLI_USAGE;
		goto out;
	}
	/* Where the signatures go, before the key and the signing, not after them. */
	if (cli_replace_check("sign-digests", o.output))
		goto out;
	if (cli_key_prompt("sign-digests", &o.key))
		goto out;
	/* A remote key (p11-kit's client) writes to a socket: a lost server fails, not kills. */
	signal(SIGPIPE, SIG_IGN);
	if (run.jobs > (run.n_files + CHUNK - 1) / CHUNK)
		run.jobs = run.n_files > CHUNK ? (unsigned int)((run.n_files + CHUNK - 1) / CHUNK) : 1;
	/* The key loaded once, a handle per worker (as sign-package -j has them). */
	err = cli_signers_load(&run.signers, &o.key.opts, run.jobs);
	cli_pass_forget();
	if (err)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	if (sign_all(&run))
		goto out;
	secs = cli_seconds_since(CLOCK_MONOTONIC, &t0);
	/* All threads' CPU time: signatures per CPU second is the per-core rate, load or not. */
	cpu_secs = cli_seconds_since(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	if (cli_replace_open(&out, "sign-digests", o.output))
		goto out;
	err = imastream_signpkg_manifest_write_signatures(run.m, out.out);
	if (err)
		cli_say("sign-digests", "%s: cannot write: %s",
			strcmp(o.output, "-") ? o.output : "standard output", strerror(-err));
	if (cli_replace_close(&out, "sign-digests", err))
		goto out;
	report(&o, &run, n_pkgs, secs, cpu_secs);
	rc = CLI_OK;
out:
	cli_signers_free(&run.signers);
	imastream_signpkg_manifest_free(run.m);
	return rc;
}
