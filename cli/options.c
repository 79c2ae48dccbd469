// SPDX-License-Identifier: LGPL-2.1-or-later
/* The option vocabulary of the imastream command, its parser and the --help option lists. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/evmctl.h"
#include "cli/options.h"
#include "imastream/chain.h"
#include "imastream/hash.h"
#include "plugin/core/driver.h"

/*
 * The vocabulary.  Where evmctl has a spelling for the same meaning, it is the letter
 * (-a, -k, -n, -p, -r, -v) or the alias here; the few per-command exceptions are
 * struct cli_alias entries of the command, listed under "Also accepted" in its --help.
 * The entries look alike by design: one per option, each its own spelling and meaning.
 */
static const struct cli_option vocabulary[] = {
	{ CLI_OPT_HELP, 'h', "help", no_argument, NULL, "print this help" },
	{ CLI_OPT_VERBOSE, 'v', "verbose", no_argument, NULL, "say more (repeatable)" },
	{ CLI_OPT_QUIET, 0, "quiet", no_argument, NULL, "no progress line and no summary" },
	{ CLI_OPT_PROGRESS, 0, "progress", no_argument, NULL,
	  "the progress line even when stderr is not a terminal" },
	{ CLI_OPT_RECURSIVE, 'r', "recursive", no_argument, NULL,
	  "walk directories; symlinks, FIFOs, sockets and devices\n"
	  "are skipped (named with -v), as evmctl skips them;\n"
	  "symlinks are never followed" },
	{ CLI_OPT_JOBS, 'j', "jobs", required_argument, "N",
	  "work on N files at a time (1 to 64; default: one per\n"
	  "CPU); the output keeps the walk order" },
	{ CLI_OPT_DRY_RUN, 'n', "dry-run", no_argument, NULL, "print the values, write nothing" },
	{ CLI_OPT_NO_NAMES, 0, "no-names", no_argument, NULL,
	  "print the values without the file names, byte for byte\n"
	  "as evmctl prints them" },
	{ CLI_OPT_HASH_ALGO, 'a', "hash-algo", required_argument, "ALGO",
	  "the digest algorithm (default sha256)", "hashalgo", "hash_algo" },
	{ CLI_OPT_XATTR_USER, 0, "xattr-user", no_argument, NULL,
	  "user.ima and user.evm instead of security.ima and\nsecurity.evm" },
	{ CLI_OPT_KEY, 'k', "key", required_argument, "KEY",
	  "the private key: a PEM or DER file (mode 0600 or\n"
	  "stricter), pkcs11:URI, kernel:SERIAL, kernel:RING:DESC\n"
	  "or an OpenSSL store URI",
	  NULL, "key" },
	{ CLI_OPT_CERT, 'c', "cert", required_argument, "CERT",
	  "the key's certificate: the key id comes from its\n"
	  "subjectKeyIdentifier, and it must match the key",
	  "keyid-from-cert", "cert" },
	{ CLI_OPT_KEYID, 0, "keyid", required_argument, "HEX",
	  "the key id to write (1 to 8 hex digits) instead" },
	{ CLI_OPT_PASS, 'p', "pass", optional_argument, NULL,
	  "ask for the passphrase or PIN on the terminal; evmctl's\n"
	  "--pass=SECRET is refused: other users can read it" },
	{ CLI_OPT_PASS_FILE, 0, "pass-file", required_argument, "FILE",
	  "passphrase or PIN: the first line of FILE", NULL, "key_pass_file" },
	{ CLI_OPT_PASS_ENV, 0, "pass-env", required_argument, "VAR",
	  "passphrase or PIN: the value of environment variable VAR", NULL, "key_pass_env" },
	{ CLI_OPT_EVM, 0, "evm", required_argument, "MODE", "what to do with security.evm", NULL,
	  "evm" },
	{ CLI_OPT_PORTABLE, 0, "portable", no_argument, NULL,
	  "--evm portable, in evmctl's spelling" },
	{ CLI_OPT_TRUST, 't', "trust", required_argument, "PATH",
	  "trusted certificates: a PEM or DER file, or a directory\nof them", NULL, "trust" },
	{ CLI_OPT_ROOT, 0, "root", required_argument, "DIR", "the root directory of an install" },
	{ CLI_OPT_KEYRING, 0, "keyring", required_argument, "RING", "a kernel keyring" },
	{ CLI_OPT_OUTDIR, 0, "outdir", required_argument, "DIR",
	  "write into DIR instead of in place" },
	{ CLI_OPT_MODE, 0, "mode", required_argument, "MODE",
	  "hash, sign or off: what security.ima holds (hash)", NULL, "mode" },
	{ CLI_OPT_SET, 'o', "set", required_argument, "KEY=VALUE",
	  "any configuration key of imastream-rpm(8) (repeatable)" },
	{ CLI_OPT_CONFIG, 0, "config", required_argument, "FILE",
	  "\"key = value\" lines, read before the options above" },
	{ CLI_OPT_PLUGINS, 0, "plugins", required_argument, "LIST",
	  "the chain, in order (selinux,ima,evm)", NULL, "plugins" },
	{ CLI_OPT_PGP_KEY, 0, "pgp-key", required_argument, "FILE",
	  "an armored OpenPGP public key trusted for header signatures" },
	{ CLI_OPT_ALLOW_UNSIGNED, 0, "allow-unsigned", no_argument, NULL,
	  "accept unsigned headers and unknown keys" },
	{ CLI_OPT_REPLACE_FILES, 0, "replace-files", no_argument, NULL,
	  "replace files that another package owns" },
	{ CLI_OPT_NO_CHOWN, 0, "no-chown", no_argument, NULL, "keep the caller's ownership" },
	{ CLI_OPT_NODIGEST, 0, "nodigest", no_argument, NULL,
	  "do not check the header digests (as rpm's)" },
	{ CLI_OPT_NOFILEDIGEST, 0, "nofiledigest", no_argument, NULL,
	  "do not check the file digests (as rpm's)" },
	{ CLI_OPT_RPMDB, 0, "rpmdb", no_argument, NULL,
	  "the packages of the root's rpm database (its %_dbpath)" },
	{ CLI_OPT_RECORD, 0, "record", no_argument, NULL,
	  "the packages 'imastream install' recorded under the root" },
	{ CLI_OPT_OUTPUT, 0, "output", required_argument, "FILE",
	  "write to FILE (replaced whole, or left as it was)\ninstead of standard output" },
	{ CLI_OPT_EXCLUDE, 0, "exclude", required_argument, "REGEX",
	  "paths matching REGEX (POSIX extended, from the start)\nare not judged (repeatable)" },
	{ CLI_OPT_PATH_PREFIX, 0, "path-prefix", required_argument, "DIR",
	  "where the attested system sees the root (default /)" },
	{ CLI_OPT_BASE, 0, "base", required_argument, "POLICY",
	  "a keylime runtime policy whose digests, excludes,\nkeyrings and keys are merged in" },
	{ CLI_OPT_POLICY, 0, "policy", required_argument, "FILE",
	  "a keylime runtime policy (JSON)" },
	{ CLI_OPT_MEASUREMENTS, 0, "log", required_argument, "FILE",
	  "an IMA ascii measurement list\n(/sys/kernel/security/ima/ascii_runtime_measurements)" },
	{ CLI_OPT_QUOTE, 0, "quote", required_argument, "FILE",
	  "a TPM quote: the TPMS_ATTEST tpm2_quote -m writes" },
	{ CLI_OPT_QUOTE_SIG, 0, "quote-sig", required_argument, "FILE",
	  "the quote's signature: the TPMT_SIGNATURE tpm2_quote -s\nwrites (-f tss, its default)" },
	{ CLI_OPT_QUOTE_PCRS, 0, "quote-pcrs", required_argument, "FILE",
	  "the quoted PCR values tpm2_quote -o writes" },
	{ CLI_OPT_QUOTE_PCRS_FORMAT, 0, "quote-pcrs-format", required_argument, "FORMAT",
	  "serialized (the default of tpm2_quote -F) or values" },
	{ CLI_OPT_AK, 0, "ak", required_argument, "FILE",
	  "the attestation key's public key (PEM) the quote is\nsigned with" },
	{ CLI_OPT_NONCE, 0, "nonce", required_argument, "HEX",
	  "the verifier's fresh nonce, which the quote must hold\n(tpm2_quote -q HEX)" },
	{ CLI_OPT_LOG_HASH_ALGO, 0, "log-hash-algo", required_argument, "ALGO",
	  "the IMA log's template hash algorithm: sha1 (the\ndefault), sha256, sha384 or sha512" },
	{ CLI_OPT_ALLOW_WEAK, 0, "allow-weak", no_argument, NULL,
	  "accept md5, a weak digest (refused\notherwise)" },
	{ CLI_OPT_EXPORT_DIGESTS, 0, "export-digests", required_argument, "FILE",
	  "write the packages' digest manifest to FILE (- for\nstandard output) instead of "
	  "signing" },
	{ CLI_OPT_IMPORT_SIGNATURES, 0, "import-signatures", required_argument, "SIGS",
	  "store the signatures of a signatures file (from\nsign-digests) instead of signing" },
	{ CLI_OPT_VERITY, 0, "verity", no_argument, NULL,
	  "the fs-verity file digest (SHA-256, 4 KiB blocks, no\nsalt) instead of the file's plain "
	  "digest" },
	{ CLI_OPT_FORMAT, 0, "format", required_argument, "FORMAT",
	  "text (default) or json: one JSON object per line" },
	{ CLI_OPT_MODIFIED_CONFIG, 0, "label-modified-config", no_argument, NULL,
	  "label %config files changed since install with their\ncurrent content (refused "
	  "otherwise)" },
	{ CLI_OPT_NO_WAIT, 0, "no-wait", no_argument, NULL,
	  "fail when another rpm or imastream transaction holds\nthe root's lock, instead of "
	  "waiting" },
	{ CLI_OPT_SYNC, 0, "sync", required_argument, "MODE",
	  "how written data is made durable: fs, file or none" },
	{ CLI_OPT_SIGN_THREADS, 0, "sign-threads", required_argument, "N",
	  "1: a second thread prepares the ECDSA signatures'\nnonces; 0: none (default: 1 on "
	  "two CPUs or more)" },
	{ CLI_OPT_DBPATH, 0, "dbpath", required_argument, "DB",
	  "rpm's database below the root is DB (as rpm --dbpath;\ndefault rpm's %_dbpath): read "
	  "there, and locked with\nDB/.rpm.lock as rpm does" },
	{ CLI_OPT_TAKE_OVER, 0, "take-over", no_argument, NULL,
	  "install a package rpm's database has, then remove rpm's\nentry (as rpm -e --justdb)" },
	{ CLI_OPT_APPRAISE_TYPE, 0, "appraise-type", required_argument, "TYPE",
	  "what an IMA policy rule's appraise_type demands of\nsecurity.ima" },
	{ CLI_OPT_LABELS, 0, "labels", required_argument, "MODE",
	  "auto, require or none: whether security.selinux must be\nthere" },
	{ CLI_OPT_PENDING, 0, "pending", no_argument, NULL,
	  "write the labels a build in a user namespace left\npending in the root" },
	{ CLI_OPT_NOCONFIG, 0, "noconfig", no_argument, NULL,
	  "leave %config files out, as rpm -V --noconfig does" },
	{ CLI_OPT_ACCEPT_CONFIG, 0, "accept-config", required_argument, "PATH",
	  "accept the edit of the %config file PATH: its digest\nrecorded for the audit and the "
	  "policy, then labelled" },
	{ CLI_OPT_MUTABLE, 0, "mutable", required_argument, "LIST",
	  "the root's mutable files (imastream-mutable-files(5)):\n"
	  "%ghost files and LIST's state excluded, LIST's\ngenerated files at their current "
	  "digest" },
};

#define N_VOCABULARY (sizeof(vocabulary) / sizeof(vocabulary[0]))

const struct cli_option *cli_option(enum cli_opt id)
{
	for (size_t i = 0; i < N_VOCABULARY; i++)
		if (vocabulary[i].id == id)
			return &vocabulary[i];
	return NULL;
}

const char *cli_option_for_config_key(const char *key)
{
	static char spelled[N_VOCABULARY][32];

	for (size_t i = 0; i < N_VOCABULARY; i++) {
		if (!vocabulary[i].config_key || strcmp(vocabulary[i].config_key, key))
			continue;
		snprintf(spelled[i], sizeof(spelled[i]), "--%s", vocabulary[i].name);
		return spelled[i];
	}
	return NULL;
}

char *cli_config_names_to_options(const char *msg,
				  const char *(*typed)(void *arg, const char *key), void *arg)
{
	static const char prefix[] = "_imastream_";
	const char *p = msg, *hit;
	char *out = NULL;
	size_t size = 0;
	FILE *f;

	if (!strstr(msg, prefix))
		return NULL;
	f = open_memstream(&out, &size);
	if (!f)
		return NULL;
	while ((hit = strstr(p, prefix))) {
		const char *name = hit + strlen(prefix), *option;
		size_t len = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
		char key[64];

		if (hit > p && hit[-1] == '%')
			hit--;
		fwrite(p, 1, (size_t)(hit - p), f);
		snprintf(key, sizeof(key), "%.*s", (int)len, name);
		option = typed ? typed(arg, key) : NULL;
		if (!option)
			option = cli_option_for_config_key(key);
		if (option)
			fputs(option, f);
		else
			fprintf(f, "-o %s=...", key);
		p = name + len;
	}
	fputs(p, f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

#define MAX_USES 48

/* Appends the rows of @list to @out, a CLI_OPT_GROUP row's in its place (one level). */
static void add_uses(const struct cli_use *list, const struct cli_use **out, size_t *n,
		     bool in_group)
{
	for (const struct cli_use *u = list; u && u->id; u++) {
		if (u->id == CLI_OPT_GROUP && !in_group) {
			add_uses(u->group, out, n, true);
			continue;
		}
		/* A table too large for the parser, or a group in a group: a programming error. */
		if (*n == MAX_USES || u->id == CLI_OPT_GROUP)
			abort();
		out[(*n)++] = u;
	}
}

/* The options @spec takes, its own (groups in place) and then its shared group, in --help order. */
static size_t spec_uses(const struct cli_spec *spec, const struct cli_use **out)
{
	size_t n = 0;

	add_uses(spec->uses, out, &n, false);
	add_uses(spec->shared, out, &n, false);
	return n;
}

static const struct cli_spec *help_spec(const struct cli_spec *spec)
{
	return spec->help_spec ? spec->help_spec : spec;
}

/* Adds one long spelling that means @id. */
static void add_long(struct cli_parser *p, size_t *n, const char *name, int has_arg, int id)
{
	if (*n + 1 >= CLI_MAX_LONGOPTS)
		abort(); /* a table too large for the parser: a programming error */
	p->longopts[(*n)++] = (struct option){ name, has_arg, NULL, id };
}

/* Adds one short spelling that means @id. */
static void add_short(struct cli_parser *p, size_t *n, char letter, int has_arg, int id)
{
	if (!letter)
		return;
	if (*n + 4 >= sizeof(p->shortopts) || (unsigned char)letter >= sizeof(p->by_letter) /
	    sizeof(p->by_letter[0]))
		abort();
	p->shortopts[(*n)++] = letter;
	if (has_arg != no_argument)
		p->shortopts[(*n)++] = ':';
	if (has_arg == optional_argument)
		p->shortopts[(*n)++] = ':';
	p->shortopts[*n] = '\0';
	p->by_letter[(unsigned char)letter] = id;
}

void cli_parse_start(struct cli_parser *p, const struct cli_spec *spec, int argc, char **argv)
{
	const struct cli_use *uses[MAX_USES];
	size_t nl = 0, ns = 0, n;

	memset(p, 0, sizeof(*p));
	p->spec = spec;
	p->argc = argc;
	p->argv = argv;
	/* ':' first: a missing argument comes back as ':', told apart from an unknown option. */
	p->shortopts[ns++] = ':';
	n = spec_uses(spec, uses);
	for (size_t i = 0; i < n; i++) {
		const struct cli_option *o = cli_option(uses[i]->id);

		add_long(p, &nl, o->name, o->has_arg, o->id);
		if (o->alias)
			add_long(p, &nl, o->alias, o->has_arg, o->id);
		add_short(p, &ns, o->letter, o->has_arg, o->id);
	}
	for (const struct cli_alias *a = spec->aliases; a && a->id; a++) {
		const struct cli_option *o = cli_option(a->id);

		if (a->name)
			add_long(p, &nl, a->name, o->has_arg, o->id);
		add_short(p, &ns, a->letter, o->has_arg, o->id);
	}
	p->longopts[nl] = (struct option){ 0 };
	optind = 0; /* glibc: start afresh, also after an earlier parse of other arguments */
	opterr = 0;
}

/* The option word at argv[optind - 1] without any "=value". */
static void last_word(const struct cli_parser *p, char *buf, size_t size)
{
	const char *w = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "?";

	snprintf(buf, size, "%.*s", (int)strcspn(w, "="), w);
}

/* An option this command does not take: evmctl's get what to use instead. */
static void unknown_option(const struct cli_parser *p, const char *word)
{
	const char *hint = cli_evmctl_option_hint(word);

	if (hint)
		cli_usage_error(p->spec->cmd, "%s is evmctl's option, not taken here: %s", word,
				hint);
	else
		cli_usage_error(p->spec->cmd, "unknown option %s", word);
}

int cli_parse_next(struct cli_parser *p)
{
	int index = -1, c;

	c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, &index);
	p->arg = optarg;
	if (c == -1) {
		p->operands = optind;
		return CLI_OPT_END;
	}
	if (c == '?') {
		if (optopt >= CLI_OPT_HELP) {
			char word[64];

			last_word(p, word, sizeof(word));
			cli_usage_error(p->spec->cmd, "%s takes no argument", word);
			return CLI_OPT_ERROR;
		}
		if (optopt) {
			char word[3] = { '-', (char)optopt, '\0' };

			unknown_option(p, word);
		} else {
			char word[64];

			last_word(p, word, sizeof(word));
			unknown_option(p, word);
		}
		return CLI_OPT_ERROR;
	}
	if (c == ':') {
		int id = optopt < CLI_OPT_HELP && optopt > 0 ? p->by_letter[optopt] : optopt;
		const struct cli_option *o = cli_option(id);
		char word[64];

		if (optopt < CLI_OPT_HELP)
			snprintf(word, sizeof(word), "-%c", optopt);
		else
			last_word(p, word, sizeof(word));
		cli_usage_error(p->spec->cmd, "%s needs %s", word, o && o->arg ? o->arg : "a value");
		return CLI_OPT_ERROR;
	}
	if (index >= 0) {
		/* The word the option came from: before its argument when that was separate. */
		const char *word = p->argv[optind - (p->arg && p->arg == p->argv[optind - 1] ? 2 : 1)];

		snprintf(p->spelled, sizeof(p->spelled), "%.*s", (int)strcspn(word, "="), word);
		/*
		 * No abbreviations: "--key" must not become --keyring where a command has no
		 * --key, and a new option must not change what an old abbreviation meant.
		 */
		if (strcmp(p->spelled + 2, p->longopts[index].name)) {
			unknown_option(p, p->spelled);
			return CLI_OPT_ERROR;
		}
	} else {
		snprintf(p->spelled, sizeof(p->spelled), "-%c", c);
		c = p->by_letter[c];
	}
	if (c == CLI_OPT_PASS && p->arg) {
		cli_usage_error(p->spec->cmd, "%s takes no passphrase on the command line, where other users can read it; use -p alone to be asked, --pass-file or --pass-env",
				p->spelled);
		return CLI_OPT_ERROR;
	}
	if (c == CLI_OPT_HELP)
		cli_print_help(help_spec(p->spec), stdout);
	return c;
}

int cli_parse_operands(const struct cli_parser *p)
{
	return p->operands;
}

/* Help text column: the option spellings on the left, what they do from here. */
#define HELP_COLUMN 24

/* "  -k, --key KEY" with its help, continuation lines indented to the column. */
static void print_entry(FILE *out, char letter, const char *name, const char *arg,
			const char *help)
{
	char left[96];
	int n;

	if (letter && name)
		n = snprintf(left, sizeof(left), "  -%c, --%s", letter, name);
	else if (letter)
		n = snprintf(left, sizeof(left), "  -%c", letter);
	else
		n = snprintf(left, sizeof(left), "      --%s", name);
	if (arg)
		n += snprintf(left + n, sizeof(left) - (size_t)n, " %s", arg);
	fputs(left, out);
	if (n >= HELP_COLUMN - 1) {
		fputc('\n', out);
		n = 0;
	}
	for (const char *line = help; *line;) {
		size_t len = strcspn(line, "\n");

		fprintf(out, "%*s%.*s\n", HELP_COLUMN - n, "", (int)len, line);
		n = 0;
		line += len;
		if (*line)
			line++;
	}
}

void cli_print_help(const struct cli_spec *spec, FILE *out)
{
	const struct cli_use *uses[MAX_USES];
	bool aliases = spec->aliases && spec->aliases->id;
	size_t n = spec_uses(spec, uses);

	fputs(spec->synopsis, out);
	fputs("\nOptions:\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct cli_option *o = cli_option(uses[i]->id);

		print_entry(out, o->letter, o->name, o->arg,
			    uses[i]->help ? uses[i]->help : o->meaning);
		aliases |= o->alias != NULL;
	}
	if (aliases) {
		fputs("\nAlso accepted (evmctl's spellings and older ones):\n", out);
		for (size_t i = 0; i < n; i++) {
			const struct cli_option *o = cli_option(uses[i]->id);
			char help[64];

			if (!o->alias)
				continue;
			snprintf(help, sizeof(help), "--%s, in evmctl's spelling", o->name);
			print_entry(out, 0, o->alias, o->arg, help);
		}
		for (const struct cli_alias *a = spec->aliases; a && a->id; a++)
			print_entry(out, a->letter, a->name, cli_option(a->id)->arg, a->help);
	}
	if (spec->epilog) {
		fputc('\n', out);
		fputs(spec->epilog, out);
	}
}

bool cli_parse_jobs(const struct cli_parser *p, unsigned int *jobs_ret)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(p->arg, &end, 10);
	if (errno || *end || !*p->arg || p->arg[0] == '-' || n < 1 || n > CLI_MAX_JOBS) {
		cli_usage_error(p->spec->cmd, "%s takes a number from 1 to %d, not '%s'", p->spelled,
				CLI_MAX_JOBS, p->arg);
		return false;
	}
	*jobs_ret = (unsigned int)n;
	return true;
}

int cli_parse_switch(const struct cli_parser *p, unsigned int *flags, unsigned int off)
{
	if (strcmp(p->arg, "0") && strcmp(p->arg, "1"))
		return cli_usage_error(p->spec->cmd, "%s takes 0 or 1, not '%s'", p->spelled,
				       p->arg);
	*flags = p->arg[0] == '0' ? *flags | off : *flags & ~off;
	return CLI_OK;
}

bool cli_parse_keyid(const struct cli_parser *p, uint32_t *keyid_ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(p->arg, &end, 16);
	/* Zero is what evmctl and the kernel read as "no key id". */
	if (errno || *end || !*p->arg || strlen(p->arg) > 8 || p->arg[0] == '-' ||
	    p->arg[0] == '+' || v == 0) {
		cli_usage_error(p->spec->cmd, "%s takes 1 to 8 hex digits, not zero, not '%s'",
				p->spelled, p->arg);
		return false;
	}
	*keyid_ret = (uint32_t)v;
	return true;
}

int cli_say_option(const struct cli_parser *p, int c, struct cli_say *s)
{
	switch (c) {
	case CLI_OPT_PROGRESS:
	case CLI_OPT_QUIET:
		/* Both would leave one of them silently unheeded. */
		if (s->show == (c == CLI_OPT_QUIET)) {
			cli_usage_error(p->spec->cmd, "--progress and --quiet: give one of them");
			return -1;
		}
		s->show = c == CLI_OPT_PROGRESS;
		s->quiet = c == CLI_OPT_QUIET;
		return 1;
	case CLI_OPT_VERBOSE:
		s->verbose++;
		return 1;
	case CLI_OPT_FORMAT:
		if (cli_format_option(p->spec->cmd, p->spelled, p->arg, &s->json) != CLI_OK)
			return -1;
		return 1;
	default:
		return 0;
	}
}

int cli_parse_next_taking(struct cli_parser *p, cli_take_fn *take, void *group)
{
	int c, taken;

	do {
		c = cli_parse_next(p);
		taken = take(group, p, c);
	} while (taken > 0);
	return taken < 0 ? CLI_OPT_ERROR : c;
}

struct key_say {
	struct cli_key *key;
	struct cli_say *say;
};

static int take_key_say(void *group, const struct cli_parser *p, int c)
{
	const struct key_say *ks = group;
	int taken = cli_key_option(p, c, ks->key);

	return taken ? taken : cli_say_option(p, c, ks->say);
}

int cli_parse_next_key(struct cli_parser *p, struct cli_key *k, struct cli_say *s)
{
	struct key_say ks = { k, s };

	return cli_parse_next_taking(p, take_key_say, &ks);
}

int cli_root_option(const struct cli_parser *p, int c, struct cli_root *r)
{
	switch (c) {
	case CLI_OPT_ROOT:
		r->dir = p->arg;
		return 1;
	case CLI_OPT_DBPATH:
		r->dbpath = p->arg;
		return 1;
	case CLI_OPT_NO_WAIT:
		r->no_wait = true;
		return 1;
	default:
		return 0;
	}
}

unsigned int cli_default_jobs(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 1 ? 1 : cpus > CLI_MAX_JOBS ? CLI_MAX_JOBS : (unsigned int)cpus;
}

int cli_key_option(const struct cli_parser *p, int c, struct cli_key *k)
{
	switch (c) {
	case CLI_OPT_KEY:
		k->opts.key = p->arg;
		return 1;
	case CLI_OPT_CERT:
		k->opts.cert = p->arg;
		return 1;
	case CLI_OPT_PASS:
		k->prompt = true;
		return 1;
	case CLI_OPT_PASS_FILE:
		k->opts.pass_file = p->arg;
		return 1;
	case CLI_OPT_PASS_ENV:
		k->opts.pass_env = p->arg;
		return 1;
	case CLI_OPT_KEYID:
		if (!cli_parse_keyid(p, &k->opts.keyid))
			return -1;
		k->opts.has_keyid = true;
		return 1;
	default:
		return 0;
	}
}

int cli_key_check_pass(const char *cmd, const struct cli_key *k)
{
	if (k->prompt + !!k->opts.pass_file + !!k->opts.pass_env > 1)
		return cli_usage_error(cmd, "give one of -p, --pass-file and --pass-env");
	return CLI_OK;
}

int cli_key_prompt(const char *cmd, struct cli_key *k)
{
	return k->prompt ? cli_pass_prompt(cmd, k->opts.key, &k->opts.pass_env) : CLI_OK;
}

int cli_check_weak_algo(const char *cmd, int algo, bool allowed)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(algo);

	if (allowed || !hi || !imastream_hash_algo_weak(algo))
		return CLI_OK;
	return cli_usage_error(cmd, "%s is a weak digest algorithm: use sha256, or pass --allow-weak",
			       hi->name);
}
