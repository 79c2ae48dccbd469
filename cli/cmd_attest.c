// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream attest check: judges an IMA measurement list against a keylime runtime policy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/attest.h"
#include "cli/cli.h"
#include "cli/cmd_attest_tpm.h"
#include "cli/options.h"

/* A policy larger than this is not one a verifier would load either. */
#define MAX_POLICY_SIZE (1024L * 1024 * 1024)

static const struct cli_use attest_options[] = {
	{ CLI_OPT_POLICY, NULL },
	{ CLI_OPT_MEASUREMENTS, "an IMA measurement list, ascii\n"
				"(/sys/kernel/security/ima/ascii_runtime_measurements);\n"
				"with a quote, binary too (binary_runtime_measurements)" },
	{ CLI_OPT_VERBOSE, "print every entry, not only the failures" },
	{ CLI_OPT_FORMAT, "text (default) or json: a JSON object per entry, passed\n"
			  "or not, on standard output, then a summary object" },
	{ CLI_OPT_HELP },
	{ 0 },
};

static const struct cli_spec attest_spec = {
	.cmd = "attest",
	.synopsis =
		"Usage: imastream attest check --policy FILE --log MEASUREMENTS [-v]\n"
		"         [--quote MSG --quote-sig SIG --quote-pcrs PCRS --ak PEM --nonce HEX]\n"
		"\n"
		"With a TPM quote (what tpm2_quote -m, -s and -o write), first verifies its\n"
		"signature with the attestation key, its nonce and its PCR digest, then\n"
		"replays the list (ascii or binary, any bank) into PCR 10 of every quoted\n"
		"bank and checks boot_aggregate against the quoted PCRs 0-9, as keylime's\n"
		"verifier does; the first check that fails is said in one line, exit 1.\n"
		"\n"
		"Judges each entry of an IMA ascii measurement list (templates ima, ima-ng,\n"
		"ima-sig, ima-buf; any file digest algorithm) by keylime's rules: an entry\n"
		"whose path an exclude matches passes; an ima-sig entry whose signature a\n"
		"verification key verifies passes; otherwise its digest must be one the\n"
		"policy lists for its path. boot_aggregate passes unless the policy lists it:\n"
		"the verifier checks it against the TPM's quote. A name is one field, as the\n"
		"kernel writes it (a blank as '_'); the policy must pass keylime's schema.\n"
		"Prints one line per failure:\n"
		"  PATH: FAIL: REASON (ALGO:DIGEST)\n"
		"and a summary on stderr.\n",
	.uses = attest_options,
	.shared = cli_attest_tpm_uses,
	.epilog = "Exit status: 0 when every entry passed, 1 when any failed, a line of the\n"
		  "list is malformed, the list is empty or a check of the quote failed, 2 for\n"
		  "a usage error, a policy that cannot be read, or a --log that is no\n"
		  "measurement list (JSON, other text; without a quote, a binary list too).\n",
};

static char *read_policy(const char *file, size_t *len_ret)
{
	FILE *f = fopen(file, "rb");
	struct stat st;
	char *buf;

	if (!f || fstat(fileno(f), &st)) {
		cli_say("attest", "%s: %s", file, strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_POLICY_SIZE) {
		cli_say("attest", "%s: not a regular file of at most 1 GiB", file);
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		cli_say("attest", "%s: cannot read it whole", file);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len_ret = (size_t)st.st_size;
	return buf;
}

struct counts {
	unsigned long entries, passed, excluded, ignored, failed;
};

/* --format json: every entry's record goes here instead of the text lines. */
static struct cli_json *entry_json;

static void entry_record(const struct attest_entry *e, unsigned long lineno, const char *result,
			 const char *why)
{
	cli_json_begin(entry_json, "entry");
	cli_json_uint(entry_json, "line", lineno);
	if (e) {
		cli_json_str(entry_json, "name", e->name);
		cli_json_str(entry_json, "algo", e->algo);
		cli_json_hex(entry_json, "digest", e->digest, e->digest_len);
	}
	cli_json_str(entry_json, "result", result);
	if (why)
		cli_json_str(entry_json, "reason", why);
	cli_json_put(entry_json, stdout);
}

static void report(struct cli_line *l, const struct attest_entry *e, const char *verdict,
		   const char *why)
{
	cli_line_name(l, e->name);
	cli_line_text(l, ": ");
	cli_line_text(l, verdict);
	if (why) {
		cli_line_text(l, ": ");
		cli_line_text(l, why);
	}
	cli_line_text(l, " (");
	cli_line_text(l, e->algo);
	cli_line_text(l, ":");
	cli_line_hex(l, e->digest, e->digest_len);
	cli_line_text(l, ")");
	cli_line_put(l, stdout);
}

static void check_line(const struct attest_policy *pol, char *line, unsigned long lineno,
		       const char *log_file, bool verbose, struct counts *n)
{
	static const char *const names[] = {
		[ATTEST_MATCH] = "OK",
		[ATTEST_SIGNED] = "OK (signed)",
		[ATTEST_EXCLUDED] = "OK (excluded)",
		[ATTEST_IGNORED] = "OK (ignored)",
	};
	struct attest_entry *e = malloc(sizeof(*e));
	struct cli_line l = { 0 };
	enum attest_verdict v;
	const char *why;

	if (!e) {
		cli_say("attest", "out of memory");
		n->failed++;
		return;
	}
	n->entries++;
	if (attest_parse_line(line, e, &why)) {
		if (entry_json)
			entry_record(NULL, lineno, "fail", why);
		cli_say("attest", "%s:%lu: %s", log_file, lineno, why);
		n->failed++;
		free(e);
		return;
	}
	v = attest_judge(pol, e, &why);
	if (entry_json) {
		static const char *const results[] = {
			[ATTEST_MATCH] = "ok",
			[ATTEST_SIGNED] = "signed",
			[ATTEST_EXCLUDED] = "excluded",
			[ATTEST_IGNORED] = "ignored",
		};

		entry_record(e, lineno, attest_verdict_ok(v) ? results[v] : "fail", why);
		verbose = false;
	}
	if (attest_verdict_ok(v)) {
		n->passed += v <= ATTEST_SIGNED;
		n->excluded += v == ATTEST_EXCLUDED;
		n->ignored += v == ATTEST_IGNORED;
		if (verbose)
			report(&l, e, names[v], why);
	} else {
		n->failed++;
		if (!entry_json)
			report(&l, e, "FAIL", why);
	}
	cli_line_free(&l);
	free(e);
}

/*
 * The first entry of --log tells whether it is a measurement list at all: a binary list,
 * a JSON file (the policy given twice) or any other file is said once, not once a line.
 * Return: true after that one line.
 */
bool cli_attest_not_a_list(const char *line, size_t len, const char *log_file)
{
	const char *p = line + strspn(line, " \t\r");
	size_t pcr = strspn(line, "0123456789"), hash;

	if (memchr(line, '\0', len)) {
		cli_say("attest",
			"%s: a binary file, not the text measurement list: give the kernel's "
			"ascii_runtime_measurements, not binary_runtime_measurements",
			log_file);
		return true;
	}
	if (*p == '{' || *p == '[') {
		cli_say("attest",
			"%s: a JSON file (a policy?), not an IMA measurement list: give --log the "
			"kernel's ascii_runtime_measurements",
			log_file);
		return true;
	}
	/* "PCR TEMPLATE-HASH ...": a malformed entry after that is the entry's to say. */
	hash = pcr && line[pcr] == ' ' ? strspn(line + pcr + 1, "0123456789abcdef") : 0;
	if (hash < 40 || line[pcr + 1 + hash] != ' ') {
		cli_say("attest",
			"%s: not an IMA measurement list (its first line is no \"PCR TEMPLATE-HASH "
			"TEMPLATE ...\" entry): give the kernel's ascii_runtime_measurements",
			log_file);
		return true;
	}
	return false;
}

/* What attest check's command line asks for, besides a quote's options (in the tpm). */
struct check_opts {
	const char *policy_file, *log_file;
	bool verbose, json;
};

/* The command line into @o and @tpm: -1 to go on, or the exit status. */
static int parse_check_options(struct check_opts *o, struct cli_attest_tpm *tpm, int argc,
			       char **argv)
{
	struct cli_parser p;
	int c;

	cli_parse_start(&p, &attest_spec, argc, argv);
	while ((c = cli_parse_next_taking(&p, cli_attest_tpm_option, tpm)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_HELP:
			return CLI_OK;
		case CLI_OPT_POLICY:
			o->policy_file = p.arg;
			break;
		case CLI_OPT_MEASUREMENTS:
			o->log_file = p.arg;
			break;
		case CLI_OPT_VERBOSE:
			o->verbose = true;
			break;
		case CLI_OPT_FORMAT:
			if (cli_format_option("attest", p.spelled, p.arg, &o->json) != CLI_OK)
				return CLI_USAGE;
			break;
		case CLI_OPT_ERROR:
			return CLI_USAGE;
		default:
			return cli_usage_error("attest", "%s is not an option of attest check",
					       p.spelled);
		}
	}
	if (!o->policy_file || !o->log_file)
		return cli_usage_error("attest",
				       "check needs --policy FILE and --log MEASUREMENTS");
	if (cli_attest_tpm_options_done(tpm) != CLI_OK)
		return CLI_USAGE;
	if (cli_parse_operands(&p) < argc)
		return cli_usage_error("attest", "check takes no operand: %s",
				       argv[cli_parse_operands(&p)]);
	return -1;
}

/* Every entry of the list judged by the policy, counted in @n: CLI_OK, or CLI_USAGE when
 * the file is no measurement list (said). */
static int check_lines(const struct attest_policy *pol, FILE *log, const struct check_opts *o,
		       struct counts *n)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t got;

	while ((got = getline(&line, &cap, log)) >= 0) {
		lineno++;
		if (got && line[got - 1] == '\n')
			line[--got] = '\0';
		if (!got)
			continue;
		if (!n->entries && cli_attest_not_a_list(line, (size_t)got, o->log_file)) {
			free(line);
			return CLI_USAGE;
		}
		check_line(pol, line, lineno, o->log_file, o->verbose, n);
	}
	if (!n->entries && !ferror(log))
		cli_say("attest", "%s: empty: no measurement to check", o->log_file);
	if (ferror(log)) {
		cli_say("attest", "%s: read error at line %lu", o->log_file, lineno + 1);
		n->failed++;
	}
	free(line);
	return CLI_OK;
}

/* The summary: a --format json object, or one line. */
static void report_check(const struct check_opts *o, const struct counts *n,
			 const struct timespec *t0, struct cli_json *out)
{
	if (o->json) {
		cli_json_begin(out, "summary");
		cli_json_str(out, "command", "attest");
		cli_json_uint(out, "entries", n->entries);
		cli_json_uint(out, "matched", n->passed);
		cli_json_uint(out, "excluded", n->excluded);
		cli_json_uint(out, "ignored", n->ignored);
		cli_json_uint(out, "failed", n->failed);
		cli_json_seconds(out, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, t0));
		cli_json_put(out, stdout);
		cli_json_free(out);
		entry_json = NULL;
	} else {
		cli_say("attest",
			"%lu entries: %lu matched, %lu excluded, %lu ignored, %lu failed, %.2f s",
			n->entries, n->passed, n->excluded, n->ignored, n->failed,
			cli_seconds_since(CLOCK_MONOTONIC, t0));
	}
}

static int attest_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	struct attest_policy *pol = NULL;
	struct counts n = { 0 };
	struct cli_json out = { 0 };
	struct timespec t0;
	struct cli_attest_tpm tpm = { 0 };
	char *buf, *judged = NULL;
	size_t len;
	FILE *log;
	int c;

	c = parse_check_options(&o, &tpm, argc, argv);
	if (c >= 0)
		return c;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (o.json)
		entry_json = &out;
	buf = read_policy(o.policy_file, &len);
	if (!buf)
		return CLI_USAGE;
	c = attest_policy_read(buf, len, o.policy_file, &cli_log, &pol);
	free(buf);
	if (c)
		return CLI_USAGE;
	/* With a quote, the policy judges the list only once it replays to the quote. */
	if (cli_attest_tpm_given(&tpm)) {
		c = cli_attest_tpm_check(&tpm, o.log_file, &log, &judged);
		if (c != CLI_OK) {
			attest_policy_free(pol);
			return c;
		}
	} else {
		log = fopen(o.log_file, "r");
	}
	if (!log) {
		cli_say("attest", "%s: %s", o.log_file, strerror(errno));
		attest_policy_free(pol);
		return CLI_USAGE;
	}
	c = check_lines(pol, log, &o, &n);
	fclose(log);
	free(judged);
	attest_policy_free(pol);
	if (c != CLI_OK)
		return c;
	report_check(&o, &n, &t0, &out);
	return n.failed || !n.entries ? CLI_FAILED : CLI_OK;
}

int cmd_attest(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return attest_check(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cli_print_help(&attest_spec, stdout);
		return CLI_OK;
	}
	if (argc < 2)
		return cli_usage_error("attest", "no subcommand given (check)");
	return cli_usage_error("attest", "%s: unknown subcommand (check)", argv[1]);
}
