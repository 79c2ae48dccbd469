/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain's configuration from the command line: --config, then the options in order. */
#ifndef IMASTREAM_CLI_SETTINGS_H
#define IMASTREAM_CLI_SETTINGS_H

#include <stdbool.h>

#include "cli/options.h"
#include "imastream/chain.h"

#define CLI_MAX_SETTINGS 64

/* A configuration setting from the command line, applied after --config. */
struct cli_setting {
	const char *key;
	char *value;
	char where[64];  /* the option as the user typed it: "-a", "--hashalgo" */
};

/*
 * What install and relabel take to configure the chain (imastream-rpm(8)'s keys), and
 * the root and how much to say, which they take alike.
 */
struct cli_settings {
	const char *cmd;
	struct cli_setting s[CLI_MAX_SETTINGS];
	unsigned int n;
	const char *config_file;    /* --config FILE; "" reads none */
	const char *default_config; /* read when it exists and no --config is given, or NULL */
	bool prompt;     /* -p: ask for the passphrase */
	struct cli_root root; /* --root, --dbpath, --no-wait */
	struct cli_say say;   /* --progress, --quiet, -v, --format; CLI_SAY_INIT */
};

/*
 * cli_parse_next() for install and relabel: the next option that is none of those
 * struct cli_settings holds (--mode, -a, -k, -c, --pass*, --evm, --portable, -t,
 * --plugins, --xattr-user, --allow-weak, -o, --config; --root, --dbpath, --no-wait;
 * --progress, --quiet, -v, --format).  CLI_OPT_ERROR also after a usage error of theirs.
 */
int cli_settings_parse_next(struct cli_settings *cs, struct cli_parser *p);

/*
 * The configuration: defaults, then --config, then the options in the order given (the
 * passphrase asked for first with -p), then the cross-key checks.
 * Return: CLI_OK with @cfg ready (release it), CLI_USAGE after one line, CLI_FAILED.
 */
int cli_settings_config(struct cli_settings *cs, struct imastream_config *cfg,
			const struct imastream_log *log);

/* For cli_config_names_to_options(): the option the user typed for @key, if any. */
const char *cli_settings_typed(void *arg, const char *key);

/*
 * A library message on stderr, as cli_error() prints it; "needs a key (_imastream_key)"
 * names what an rpm user sets, so each such key becomes the option the user typed.
 */
void cli_settings_say(struct cli_settings *cs, const char *msg);

#endif /* IMASTREAM_CLI_SETTINGS_H */
