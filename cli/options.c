// SPDX-License-Identifier: LGPL-2.1-or-later
/* The option vocabulary of the imastream command, its parser and the --help option lists. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/evmctl.h"
#include "cli/options.h"

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
