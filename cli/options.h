/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The option vocabulary every imastream command parses with: one spelling, one meaning. */
#ifndef IMASTREAM_CLI_OPTIONS_H
#define IMASTREAM_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "imastream/keys.h"
#include "plugin/core/driver.h"

/*
 * Each option of the command line, whatever command takes it.  A letter or a long name
 * means one thing everywhere; the few older or evmctl spellings that a command keeps
 * (struct cli_alias) are listed as such in its --help and man page.
 */
enum cli_opt {
	CLI_OPT_END = -1,    /* no more options */
	CLI_OPT_ERROR = 0,   /* a usage error, already said in one line */
	CLI_OPT_GROUP = 1,   /* a cli_use row that lists a shared group's rows in place */
	CLI_OPT_HELP = 256,
	CLI_OPT_VERBOSE,
	CLI_OPT_QUIET,
	CLI_OPT_PROGRESS,
	CLI_OPT_RECURSIVE,
	CLI_OPT_JOBS,
	CLI_OPT_DRY_RUN,
	CLI_OPT_NO_NAMES,
	CLI_OPT_HASH_ALGO,
	CLI_OPT_XATTR_USER,
	CLI_OPT_KEY,
	CLI_OPT_CERT,
	CLI_OPT_KEYID,
	CLI_OPT_PASS,
	CLI_OPT_PASS_FILE,
	CLI_OPT_PASS_ENV,
	CLI_OPT_EVM,
	CLI_OPT_PORTABLE,
	CLI_OPT_TRUST,
	CLI_OPT_ROOT,
	CLI_OPT_KEYRING,
	CLI_OPT_OUTDIR,
	CLI_OPT_MODE,
	CLI_OPT_SET,
	CLI_OPT_CONFIG,
	CLI_OPT_PLUGINS,
	CLI_OPT_PGP_KEY,
	CLI_OPT_ALLOW_UNSIGNED,
	CLI_OPT_REPLACE_FILES,
	CLI_OPT_NO_CHOWN,
	CLI_OPT_NODIGEST,
	CLI_OPT_NOFILEDIGEST,
	CLI_OPT_RPMDB,
	CLI_OPT_RECORD,
	CLI_OPT_OUTPUT,
	CLI_OPT_EXCLUDE,
	CLI_OPT_PATH_PREFIX,
	CLI_OPT_BASE,
	CLI_OPT_POLICY,
	CLI_OPT_MEASUREMENTS,
	CLI_OPT_LOG_HASH_ALGO,
	CLI_OPT_ALLOW_WEAK,
	CLI_OPT_EXPORT_DIGESTS,
	CLI_OPT_IMPORT_SIGNATURES,
	CLI_OPT_VERITY,
	CLI_OPT_MODIFIED_CONFIG,
	CLI_OPT_FORMAT,
	CLI_OPT_NO_WAIT,
	CLI_OPT_SYNC,
	CLI_OPT_SIGN_THREADS,
	CLI_OPT_LABELS,
	CLI_OPT_DBPATH,
	CLI_OPT_TAKE_OVER,
	CLI_OPT_APPRAISE_TYPE,
	CLI_OPT_QUOTE,
	CLI_OPT_QUOTE_SIG,
	CLI_OPT_QUOTE_PCRS,
	CLI_OPT_QUOTE_PCRS_FORMAT,
	CLI_OPT_AK,
	CLI_OPT_NONCE,
	CLI_OPT_PENDING,
	CLI_OPT_NOCONFIG,
	CLI_OPT_ACCEPT_CONFIG,
	CLI_OPT_MUTABLE,
	CLI_OPT__LAST,
};

/* An entry of the vocabulary. */
struct cli_option {
	enum cli_opt id;
	char letter;             /* short spelling, or 0 */
	const char *name;        /* long spelling */
	int has_arg;             /* no_argument, required_argument, optional_argument */
	const char *arg;         /* the argument's name in --help ("KEY"), or NULL */
	const char *meaning;     /* what it means, in every command that takes it */
	const char *alias;       /* another long spelling accepted wherever it is (evmctl's) */
	const char *config_key;  /* the configuration key it sets (imastream-rpm(8)), or NULL */
};

/* One option a command takes, with that command's help for it. */
struct cli_use {
	enum cli_opt id;
	const char *help;        /* lines separated by '\n'; NULL: the vocabulary's meaning */
	const struct cli_use *group; /* CLI_OPT_GROUP: rows several commands take, listed
				      * here, in this command's --help order */
};

/* A spelling that means @id in one command only (kept from an older release, or evmctl's). */
struct cli_alias {
	enum cli_opt id;
	char letter;             /* 0, or a short spelling */
	const char *name;        /* NULL, or a long spelling */
	const char *help;        /* why it is there: "old spelling of --outdir" */
};

/* A command's (or subcommand's) options and help text. */
struct cli_spec {
	const char *cmd;         /* "sign", "keys import": the prefix of its usage errors */
	const struct cli_spec *help_spec; /* whose --help it prints (keys'); NULL: its own */
	const char *synopsis;    /* --help up to the option list */
	const struct cli_use *uses;   /* ends with { 0 } */
	const struct cli_use *shared; /* NULL, or a group several commands take, listed after */
	const struct cli_alias *aliases; /* NULL, or ends with { 0 } */
	const char *epilog;      /* --help after the option list (exit status) */
};

#define CLI_MAX_LONGOPTS 64
/* -j: at most this many files at a time. */
#define CLI_MAX_JOBS 64

struct cli_parser {
	const struct cli_spec *spec;
	int argc;
	char **argv;
	char *arg;               /* the option's argument, or NULL */
	char spelled[64];        /* as the user typed it: "-k", "--hashalgo" */
	int operands;            /* where the operands start, once the options are done */
	struct option longopts[CLI_MAX_LONGOPTS];
	char shortopts[CLI_MAX_LONGOPTS * 3];
	int by_letter[128];      /* the id each short spelling means */
};

/*
 * The one rule for weak digest algorithms (imastream_hash_algo_weak(), md5): refused
 * unless the user passed --allow-weak (@allowed).  CLI_OK, or CLI_USAGE after one line.
 */
int cli_check_weak_algo(const char *cmd, int algo, bool allowed);

/* The vocabulary entry of @id. */
const struct cli_option *cli_option(enum cli_opt id);
/* The long option that sets configuration key @key ("--key"), or NULL if none does. */
const char *cli_option_for_config_key(const char *key);

/*
 * A library message names a configuration key the way rpm users set it, "_imastream_KEY"
 * (or "%_imastream_KEY").  This returns the message with each such name replaced by the
 * option a command-line user sets it with: @typed(@arg, KEY) when it returns one (what
 * the user typed), else the vocabulary's long option, else "-o KEY=...".  NULL: the
 * message names no key (or no memory): use it as it is.  Free the result.
 */
char *cli_config_names_to_options(const char *msg,
				  const char *(*typed)(void *arg, const char *key), void *arg);

/* Prepares to parse @argv (argv[0] is the command's name) with @spec. */
void cli_parse_start(struct cli_parser *p, const struct cli_spec *spec, int argc, char **argv);
/*
 * The next option: its id with p->arg and p->spelled set, CLI_OPT_END when the options
 * are done (the operands start at cli_parse_operands()), or CLI_OPT_ERROR after one line
 * on stderr.  --help is printed here, and comes back as CLI_OPT_HELP.
 */
int cli_parse_next(struct cli_parser *p);
/* Where the operands start in argv once cli_parse_next() returned CLI_OPT_END. */
int cli_parse_operands(const struct cli_parser *p);

/* The whole --help text of @spec. */
void cli_print_help(const struct cli_spec *spec, FILE *out);

/*
 * The signing key as its options give it (--key, --cert, -p, --pass-file, --pass-env,
 * --keyid): one parser for every command that loads a key.
 */
struct cli_key {
	struct imastream_key_opts opts;
	bool prompt; /* -p: the passphrase is typed on the terminal (cli_key_prompt()) */
};
#define CLI_KEY_INIT { .opts = { .size = sizeof(struct imastream_key_opts) } }

/* Takes option @c into @k: 1 when it was a key option, 0 when not, -1 after a usage error. */
int cli_key_option(const struct cli_parser *p, int c, struct cli_key *k);
/* At most one passphrase source: CLI_OK, or CLI_USAGE after one line. */
int cli_key_check_pass(const char *cmd, const struct cli_key *k);
/* With -p, asks for the passphrase (cli_pass_prompt()); CLI_OK or its error. */
int cli_key_prompt(const char *cmd, struct cli_key *k);

/*
 * How much a command says: --progress, --quiet, -v and --format, one parser for every
 * command that takes them (a command takes only those its spec lists).
 */
struct cli_say {
	int show;    /* --progress 1, --quiet 0, neither -1: for cli_progress_wanted() */
	bool quiet;  /* --quiet was given: no summary line (--progress with it is refused) */
	int verbose; /* -v, repeatable */
	bool json;   /* --format json */
};
#define CLI_SAY_INIT ((struct cli_say){ .show = -1 })

/* Takes option @c into @s: 1 when it was one of them, 0 when not, -1 after a usage error. */
int cli_say_option(const struct cli_parser *p, int c, struct cli_say *s);

/* An option group's parser: 1 when it took option @c, 0 when not, -1 after a usage error. */
typedef int cli_take_fn(void *group, const struct cli_parser *p, int c);
/*
 * cli_parse_next() that gives each option to @take(@group, ...) first: the next option it
 * does not take, or CLI_OPT_ERROR after a usage error of its.
 */
int cli_parse_next_taking(struct cli_parser *p, cli_take_fn *take, void *group);
/*
 * For a command that loads a key: the next option that is neither one of @k's
 * (cli_key_option()) nor one of @s's (cli_say_option()), as cli_parse_next_taking().
 */
int cli_parse_next_key(struct cli_parser *p, struct cli_key *k, struct cli_say *s);

/* --root, --dbpath and --no-wait: the installed root a command works on, and rpm's lock. */
struct cli_root {
	const char *dir;    /* --root DIR, or NULL */
	const char *dbpath; /* --dbpath DB, or NULL: rpm's %_dbpath */
	bool no_wait;	    /* --no-wait: fail rather than wait for the root's lock */
};

/* Takes option @c into @r: 1 when it was one of them, else 0. */
int cli_root_option(const struct cli_parser *p, int c, struct cli_root *r);

/* -j's default: one job per online CPU, 1 to CLI_MAX_JOBS. */
unsigned int cli_default_jobs(void);

/* Shared option arguments; each prints its own usage error and returns false. */
bool cli_parse_jobs(const struct cli_parser *p, unsigned int *jobs_ret);
bool cli_parse_keyid(const struct cli_parser *p, uint32_t *keyid_ret);
/* A 0|1 option whose 0 sets @off in @flags and 1 clears it (--sign-threads).  Return:
 * CLI_OK, or CLI_USAGE (said). */
int cli_parse_switch(const struct cli_parser *p, unsigned int *flags, unsigned int off);

#endif /* IMASTREAM_CLI_OPTIONS_H */
