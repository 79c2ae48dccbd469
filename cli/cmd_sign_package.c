// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream sign-package: adds IMA file signatures to rpm packages, as rpmsign --signfiles. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/pkglist.h"
#include "cli/replace.h"
#include "cli/signers.h"
#include "imastream/hash.h"
#include "imastream/keys.h"
#include "imastream/signpkg.h"

static const struct cli_use sign_package_options[] = {
	{ CLI_OPT_GROUP, .group = cli_signers_options },
	{ CLI_OPT_HASH_ALGO, "sign digests in ALGO (sha1, sha224, sha256, sha384,\n"
			     "sha512, sm3; md5 with --allow-weak); default sha256,\n"
			     "as the kernel expects. When ALGO is the package's\n"
			     "file digest algorithm its digests are signed as the\n"
			     "header has them, without reading the payload;\n"
			     "otherwise the payload is decompressed once and each\n"
			     "file hashed with both, checking the package's digest\n"
			     "before signing" },
	{ CLI_OPT_ALLOW_WEAK },
	{ CLI_OPT_OUTDIR, "write the signed packages into DIR instead of in place" },
	{ CLI_OPT_EXPORT_DIGESTS, "sign nothing, need no key: write each package's\n"
				  "identity and file digests, a digest manifest for a\n"
				  "signing host, to FILE (- for standard output)" },
	{ CLI_OPT_IMPORT_SIGNATURES, "sign nothing, need no key: store each package's\n"
				     "signatures from SIGS (made by 'imastream sign-digests'\n"
				     "from its exported digests), each checked first: made\n"
				     "for this very package (NEVRA and header SHA-256), one\n"
				     "per file, and valid with --cert (required)" },
	{ CLI_OPT_JOBS, "sign N packages at a time (1 to 64; default: one per\n"
			"CPU), the key loaded once; messages keep the order of\n"
			"the packages, as with -j 1" },
	{ CLI_OPT_FORMAT, "text (default) or json: a JSON object per package on\n"
			  "standard output, then a summary object" },
	{ CLI_OPT_PROGRESS },
	{ CLI_OPT_QUIET },
	{ CLI_OPT_VERBOSE, "one line per package on what was signed" },
	{ CLI_OPT_HELP },
	{ 0 },
};

/* -o was --outdir before it meant --set; kept for the scripts that use it. */
static const struct cli_alias sign_package_aliases[] = {
	{ CLI_OPT_OUTDIR, 'o', NULL, "--outdir: the old spelling (elsewhere -o is --set)" },
	{ 0 },
};

static const struct cli_spec sign_package_spec = {
	.cmd = "sign-package",
	.synopsis =
	"Usage: imastream sign-package --key KEY [--cert CERT]\n"
	"                              [-p | --pass-file FILE | --pass-env VAR]\n"
	"                              [--keyid HEX] [-a ALGO] [--outdir DIR] [-j N]\n"
	"                              [--progress | --quiet] [-v] PKG.rpm|DIR...\n"
	"       imastream sign-package --export-digests FILE PKG.rpm|DIR...\n"
	"       imastream sign-package --import-signatures SIGS --cert CERT\n"
	"                              [--outdir DIR] [-j N] PKG.rpm|DIR...\n"
	"\n"
	"Signs the digest of every file in each rpm package with KEY and stores the IMA\n"
	"signatures (security.ima values) in the package's signature header, where rpm\n"
	"4.18's 'rpmsign --signfiles' puts them and the stock rpm ima plugin installs\n"
	"them from. The header and the payload are not changed, so their digests and any\n"
	"OpenPGP signature stay valid. Each package is checked before it is rewritten,\n"
	"through a temporary file renamed into place. A DIR stands for the *.rpm files\n"
	"under it (not *.src.rpm), in name order. With more than one package, a progress\n"
	"line on a terminal; a summary on stderr (for one package, when it was signed).\n",
	.uses = sign_package_options,
	.aliases = sign_package_aliases,
	.epilog =
	"Exit status: 0 if every package was signed (or exported), 1 if the --outdir\n"
	"cannot be written (checked first), the key cannot be loaded, a DIR cannot be\n"
	"read or holds no package, or any package failed (each failure is one line on\n"
	"stderr, that package is untouched and the others are still done), 2 for a\n"
	"usage error.\n",
};

/* One package's outcome, kept until the main thread reports it in list order. */
struct pkg_outcome {
	struct imastream_signpkg_result res;
	struct cli_capture msgs; /* what signing it said, printed when it is reported */
	size_t clash;            /* with --outdir: 1 + the index of an earlier same name */
	bool ok;
	bool done;
};

struct pkg_worker {
	struct pkg_run *run;
	pthread_t thread;
};

struct pkg_run {
	char **paths;
	size_t n;
	struct pkg_outcome *out;
	struct imastream_signpkg_opts opts; /* the signer is set per worker */
	/* --import-signatures: no signer; the signatures and the certificate they need. */
	const struct imastream_signpkg_manifest *sigs;
	const struct imastream_trust *trust;
	unsigned int jobs;
	struct pkg_worker workers[CLI_MAX_JOBS];
	struct cli_signers signers; /* signers.ps[i] is worker i's */
	pthread_mutex_t lock; /* next and every out[].done */
	pthread_cond_t done;
	size_t next;
	struct cli_json *json; /* --format json: a record per package here */
};

/* Any thread: signs package @i, holding back what it says for the report. */
static void sign_one_package(struct pkg_worker *w, size_t i)
{
	struct pkg_run *run = w->run;
	struct pkg_outcome *o = &run->out[i];
	struct imastream_signpkg_opts opts = run->opts;

	o->res.size = sizeof(o->res); /* how much of it the library may fill */
	cli_capture_begin(&o->msgs);
	if (o->clash) {
		cli_error("%s: same file name as %s: both would be written into %s; not signed",
			  run->paths[i], run->paths[o->clash - 1], opts.outdir);
	} else if (run->sigs) {
		o->ok = imastream_signpkg_import_signatures(run->paths[i], run->sigs, run->trust,
							    &opts, &o->res) == 0;
	} else {
		opts.signer = &run->signers.ps[w - run->workers];
		o->ok = imastream_sign_package(run->paths[i], &opts, &o->res) == 0;
	}
	cli_capture_end();
}

static void *worker_main(void *arg)
{
	struct pkg_worker *w = arg;
	struct pkg_run *run = w->run;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&run->lock);
		i = run->next++;
		pthread_mutex_unlock(&run->lock);
		if (i >= run->n)
			break;
		sign_one_package(w, i);
		pthread_mutex_lock(&run->lock);
		run->out[i].done = true;
		pthread_cond_broadcast(&run->done);
		pthread_mutex_unlock(&run->lock);
	}
	return NULL;
}

/*
 * --import-signatures: the signatures file (untrusted: strictly parsed) and the
 * certificate, loaded once for every worker; nothing signs.
 */
static int load_import(struct pkg_run *run, const char *file, const char *cert,
		       struct imastream_signpkg_manifest **sigs, struct imastream_trust **trust)
{
	int err = imastream_trust_new(&cli_log, trust);

	if (!err)
		err = imastream_trust_add_path(*trust, cert);
	if (!err)
		err = imastream_signpkg_manifest_load(file, IMASTREAM_SIGNPKG_SIGNATURES, &cli_log,
						      sigs);
	if (err)
		return err;
	run->sigs = *sigs;
	run->trust = *trust;
	return 0;
}

static void free_workers(struct pkg_run *run)
{
	cli_signers_free(&run->signers);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* By the name a package gets in --outdir, then by its place in the list. */
static int by_base_name(const void *a, const void *b, void *arg)
{
	const struct pkg_run *run = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	int c = strcmp(base_name(run->paths[ia]), base_name(run->paths[ib]));

	return c ? c : ia < ib ? -1 : ia > ib;
}

/* With --outdir, two packages of one name would overwrite each other: the later is refused. */
static int find_clashes(struct pkg_run *run)
{
	size_t *idx;

	if (!run->opts.outdir || run->n < 2)
		return 0;
	idx = malloc(run->n * sizeof(*idx));
	if (!idx) {
		cli_error("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < run->n; i++)
		idx[i] = i;
	qsort_r(idx, run->n, sizeof(*idx), by_base_name, run);
	for (size_t i = 1, first = 0; i < run->n; i++) {
		if (strcmp(base_name(run->paths[idx[first]]), base_name(run->paths[idx[i]])))
			first = i;
		else
			run->out[idx[i]].clash = idx[first] + 1;
	}
	free(idx);
	return 0;
}


struct pkg_totals {
	unsigned long packages, files, signatures, failures;
	struct timespec start;
	double last_draw;
	bool draw;
};

/* Main thread, in list order: what package @i said, its -v line, the progress line. */
static void report(struct pkg_run *run, size_t i, int verbose, struct pkg_totals *t)
{
	struct pkg_outcome *o = &run->out[i];
	const struct imastream_signpkg_result *res = &o->res;
	double elapsed;
	char text[200], eta[48];

	if (run->json) {
		cli_json_begin(run->json, "package");
		cli_json_str(run->json, "path", run->paths[i]);
		cli_json_str(run->json, "result", o->ok ? "ok" : "fail");
		if (o->ok) {
			cli_json_uint(run->json, "files", res->files);
			cli_json_uint(run->json, "signed", res->signed_files);
			cli_json_str(run->json, "algo", imastream_hash_by_algo(res->algo)->name);
		} else if (o->msgs.n) {
			cli_json_str(run->json, "error", o->msgs.msgs[o->msgs.n - 1].msg);
		}
		cli_json_put(run->json, stdout);
		fflush(stdout);
	}
	cli_capture_flush(&o->msgs, !o->ok);
	t->packages++;
	if (!o->ok) {
		t->failures++;
	} else {
		t->files += res->files;
		t->signatures += res->signed_files;
		if (verbose && run->sigs)
			cli_error("%s: %u of %u files given their imported signatures (%s)%s",
				  run->paths[i], res->signed_files, res->files,
				  imastream_hash_by_algo(res->algo)->name,
				  res->replaced ? ", previous file signatures replaced" : "");
		else if (verbose)
			cli_error("%s: %u of %u files signed (%s, key id %08x)%s%s", run->paths[i],
				  res->signed_files, res->files,
				  imastream_hash_by_algo(res->algo)->name, run->signers.ps[0].keyid,
				  res->replaced ? ", previous file signatures replaced" : "",
				  res->rehashed ? ", contents re-hashed from the payload" : "");
		if (verbose && res->openpgp)
			cli_error("%s: OpenPGP signature kept: it covers the header, which is unchanged",
				  run->paths[i]);
	}
	if (!t->draw)
		return;
	elapsed = cli_seconds_since(CLOCK_MONOTONIC, &t->start);
	/* Ten updates a second are plenty. */
	if (elapsed - t->last_draw < 0.1 && t->packages < run->n)
		return;
	t->last_draw = elapsed;
	snprintf(text, sizeof(text),
		 "imastream sign-package: %lu/%zu packages (%s), %lu signatures, %lu failures, "
		 "%.1f packages/s",
		 t->packages, run->n,
		 cli_eta((double)t->packages, (double)run->n, elapsed, eta, sizeof(eta)),
		 t->signatures, t->failures, elapsed > 0 ? (double)t->packages / elapsed : 0.0);
	cli_progress_draw(text);
}

/* Signs every package of @run with jobs workers; reports in list order. */
static void run_all(struct pkg_run *run, int verbose, struct pkg_totals *t)
{
	unsigned int started = 0;

	pthread_mutex_init(&run->lock, NULL);
	pthread_cond_init(&run->done, NULL);
	for (unsigned int i = 0; i < run->jobs; i++)
		run->workers[i].run = run;
	for (unsigned int i = 0; run->jobs > 1 && i < run->jobs; i++) {
		int err = pthread_create(&run->workers[i].thread, NULL, worker_main,
					 &run->workers[i]);

		if (err) {
			/* Fewer workers still do it all; none, and the main thread signs. */
			cli_error("cannot start thread %u: %s", i + 1, strerror(err));
			break;
		}
		started++;
	}
	for (size_t i = 0; i < run->n; i++) {
		if (!started) {
			sign_one_package(&run->workers[0], i);
		} else {
			pthread_mutex_lock(&run->lock);
			while (!run->out[i].done)
				pthread_cond_wait(&run->done, &run->lock);
			pthread_mutex_unlock(&run->lock);
		}
		report(run, i, verbose, t);
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(run->workers[i].thread, NULL);
	pthread_cond_destroy(&run->done);
	pthread_mutex_destroy(&run->lock);
}

/*
 * --export-digests: each package's manifest records, in list order; FILE is written
 * through a temporary file renamed over it, so a reader sees the old or the new one.  A
 * package that fails is one line and is left out; the others are still exported.
 */
static int export_digests(const struct cli_pkglist *list, const char *file, unsigned long *failed)
{
	struct cli_replace r;
	int err;

	err = cli_replace_open(&r, "sign-package", file);
	if (err)
		return err;
	err = imastream_signpkg_manifest_start(r.out);
	for (size_t i = 0; i < list->n && !err; i++) {
		int e = imastream_signpkg_export_digests(list->paths[i], r.out, &cli_log);

		if (e == -EIO)
			err = e;
		else if (e)
			(*failed)++;
	}
	if (err)
		cli_say("sign-package", "%s: cannot write: %s", strcmp(file, "-") ? file :
			"standard output", strerror(-err));
	return cli_replace_close(&r, "sign-package", err);
}

/* What the command line asks for, besides the library's options (in the run). */
struct sign_package_opts {
	struct cli_key key;
	struct cli_say say;
	const char *export_file, *import_file;
	bool allow_weak;
	char **pkgs; /* the package operands */
	int n_pkgs;
};

/* The command line into @o and @run: -1 to go on, or the exit status. */
static int parse_options(struct sign_package_opts *o, struct pkg_run *run, int argc, char **argv)
{
	const struct imastream_hash_info *hi;
	struct cli_parser p;
	int c;

	cli_parse_start(&p, &sign_package_spec, argc, argv);
	while ((c = cli_parse_next_key(&p, &o->key, &o->say)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_HASH_ALGO:
			hi = imastream_hash_by_name(p.arg);
			if (!hi)
				return cli_usage_error("sign-package",
						       "unknown hash algorithm '%s' (sha1, "
						       "sha224, sha256, sha384, sha512, sm3; md5 "
						       "with --allow-weak)",
						       p.arg);
			run->opts.algo = hi->algo;
			break;
		case CLI_OPT_OUTDIR:
			run->opts.outdir = p.arg;
			break;
		case CLI_OPT_EXPORT_DIGESTS:
			o->export_file = p.arg;
			break;
		case CLI_OPT_IMPORT_SIGNATURES:
			o->import_file = p.arg;
			break;
		case CLI_OPT_JOBS:
			if (!cli_parse_jobs(&p, &run->jobs))
				return CLI_USAGE;
			break;
		case CLI_OPT_ALLOW_WEAK:
			o->allow_weak = true;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (o->import_file && (o->key.opts.key || o->export_file || run->opts.algo))
		return cli_usage_error("sign-package",
				       "--import-signatures signs nothing: it takes no %s",
				       o->key.opts.key ? "--key" :
				       o->export_file  ? "--export-digests" :
							 "--hash-algo");
	if (o->import_file && !o->key.opts.cert)
		return cli_usage_error("sign-package", "--import-signatures needs --cert: each signature is checked with it before it is stored");
	if (o->export_file && (o->key.opts.key || run->opts.outdir))
		return cli_usage_error("sign-package",
				       "--export-digests signs nothing: it takes no %s",
				       o->key.opts.key ? "--key" : "--outdir");
	if (o->export_file && o->say.json)
		return cli_usage_error(
			"sign-package",
			"--export-digests writes a digest manifest, not --format json");
	o->pkgs = argv + cli_parse_operands(&p);
	o->n_pkgs = argc - cli_parse_operands(&p);
	return -1;
}

/* --export-digests: every package's digests into a manifest, nothing signed. */
static int run_export(const struct sign_package_opts *o)
{
	struct cli_pkglist list = { 0 };
	unsigned long export_failed = 0;
	int err = 0;

	if (o->n_pkgs <= 0)
		return cli_usage_error("sign-package", "no package given");
	cli_set_verbose(o->say.verbose);
	for (int i = 0; i < o->n_pkgs && !err; i++)
		err = cli_pkglist_add(&list, o->pkgs[i]);
	if (!err)
		err = export_digests(&list, o->export_file, &export_failed);
	err = err || export_failed || list.failed;
	cli_pkglist_free(&list);
	return err ? CLI_FAILED : CLI_OK;
}

/* What signing needs, checked before the key is asked for: CLI_OK, or the exit status. */
static int check_sign_args(struct sign_package_opts *o, const struct pkg_run *run)
{
	if (!o->key.opts.key && !o->import_file)
		return cli_usage_error("sign-package", "no --key given");
	if (run->opts.algo &&
	    cli_check_weak_algo("sign-package", run->opts.algo, o->allow_weak) != CLI_OK)
		return CLI_USAGE;
	if (o->n_pkgs <= 0)
		return cli_usage_error("sign-package", "no package given");
	if (cli_key_check_pass("sign-package", &o->key) != CLI_OK)
		return CLI_USAGE;
	/* Where the packages go, once and before the key: not once per package after it. */
	if (run->opts.outdir && cli_dir_check("sign-package", "--outdir", run->opts.outdir))
		return CLI_FAILED;
	return o->import_file ? CLI_OK : cli_key_prompt("sign-package", &o->key);
}

/* The summary: a --format json object, or one line (for a list, or a run without failure). */
static void report_summary(const struct sign_package_opts *o, const struct pkg_totals *t,
			   const struct cli_pkglist *list, bool many, struct cli_json *json_out)
{
	unsigned long failures = t->failures + list->failed;

	if (o->say.json) {
		cli_json_begin(json_out, "summary");
		cli_json_str(json_out, "command", "sign-package");
		cli_json_uint(json_out, "packages", t->packages + list->failed);
		cli_json_uint(json_out, "files", t->files);
		cli_json_uint(json_out, "signatures", t->signatures);
		cli_json_uint(json_out, "failed", failures);
		cli_json_seconds(json_out, "elapsed_s",
				 cli_seconds_since(CLOCK_MONOTONIC, &t->start));
		cli_json_put(json_out, stdout);
		fflush(stdout);
	} else if (o->say.show != 0 && (many || !failures)) {
		cli_say("sign-package",
			"%lu package%s, %lu files, %lu signatures, %lu failure%s, %.2f s",
			t->packages, t->packages == 1 ? "" : "s", t->files, t->signatures, failures,
			failures == 1 ? "" : "s", cli_seconds_since(CLOCK_MONOTONIC, &t->start));
	}
}

int cmd_sign_package(int argc, char **argv)
{
	static struct pkg_run run; /* the workers array is large; one run per process */
	struct sign_package_opts o = { .key = CLI_KEY_INIT, .say = CLI_SAY_INIT };
	struct cli_pkglist list = { 0 };
	struct pkg_totals t = { 0 };
	struct imastream_signpkg_manifest *sigs = NULL;
	struct imastream_trust *trust = NULL;
	struct cli_json json_out = { 0 };
	bool many;
	int err = 0, ret;

	run.opts.size = sizeof(run.opts);
	run.jobs = cli_default_jobs();
	ret = parse_options(&o, &run, argc, argv);
	if (ret >= 0)
		return ret;
	if (o.say.json)
		run.json = &json_out;
	if (o.export_file)
		return run_export(&o);
	ret = check_sign_args(&o, &run);
	if (ret != CLI_OK)
		return ret;
	cli_set_verbose(o.say.verbose);
	run.opts.log = &cli_log;
	/*
	 * A remote key (p11-kit's client module) writes to a socket: should the server go
	 * away, that write must fail the packages still being signed, one line each, rather
	 * than kill the run and leave their temporary files behind.
	 */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The key is loaded once, before any package is read: a bad key fails early.  The
	 * other workers get handles on it; a key that cannot be shared between threads (a
	 * pkcs11 engine key) is used by one worker at a time, while the reading, checking and
	 * writing of packages still run in parallel.
	 */
	err = o.import_file ? load_import(&run, o.import_file, o.key.opts.cert, &sigs, &trust) :
			      cli_signers_load(&run.signers, &o.key.opts, run.jobs);
	cli_pass_forget();
	if (err) {
		free_workers(&run);
		imastream_signpkg_manifest_free(sigs);
		imastream_trust_free(trust);
		return CLI_FAILED;
	}
	/* The whole list first: its order is the output's, whatever the number of jobs. */
	for (int i = 0; i < o.n_pkgs && !err; i++)
		err = cli_pkglist_add(&list, o.pkgs[i]);
	many = list.n > 1 || list.dirs;
	run.paths = list.paths;
	run.n = list.n;
	run.out = calloc(run.n ? run.n : 1, sizeof(*run.out));
	if (!err && !run.out) {
		cli_error("out of memory");
		err = -ENOMEM;
	}
	if (!err)
		err = find_clashes(&run);
	if (!err) {
		if (run.jobs > run.n)
			run.jobs = run.n ? (unsigned int)run.n : 1;
		clock_gettime(CLOCK_MONOTONIC, &t.start);
		t.draw = many && cli_progress_wanted(o.say.show);
		run_all(&run, o.say.verbose, &t);
		cli_progress_clear();
		report_summary(&o, &t, &list, many, &json_out);
	}
	if (list.failed)
		err = err ? err : -ENOENT;
	cli_json_free(&json_out);
	free(run.out);
	free_workers(&run);
	imastream_signpkg_manifest_free(sigs);
	imastream_trust_free(trust);
	cli_pkglist_free(&list);
	return err || t.failures ? CLI_FAILED : CLI_OK;
}
