// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain's configuration from the command line, shared by install and relabel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/settings.h"

static bool add(struct cli_settings *cs, const char *key, const char *value, const char *where)
{
	if (cs->n == CLI_MAX_SETTINGS) {
		cli_usage_error(cs->cmd, "more than %d settings", CLI_MAX_SETTINGS);
		return false;
	}
	cs->s[cs->n] = (struct cli_setting){ key, (char *)value };
	snprintf(cs->s[cs->n].where, sizeof(cs->s[cs->n].where), "%s", where);
	cs->n++;
	return true;
}

/* -o KEY=VALUE: split in place. */
static bool add_kv(struct cli_settings *cs, char *kv, const char *where)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv) {
		cli_usage_error(cs->cmd, "%s takes KEY=VALUE, not '%s'", where, kv);
		return false;
	}
	*eq = '\0';
	return add(cs, kv, eq + 1, where);
}

/* A configuration option: 1 taken, 0 not one, -1 a usage error (said). */
static int config_option(struct cli_settings *cs, const struct cli_parser *p, int c)
{
	const struct cli_option *o = cli_option(c);
	bool ok;

	/* --mode, -a, -k, -c, --pass-file, --pass-env, --evm, -t, --plugins. */
	if (o && o->config_key)
		return add(cs, o->config_key, p->arg, p->spelled) ? 1 : -1;
	switch (c) {
	case CLI_OPT_PASS:
		cs->prompt = true;
		return 1;
	case CLI_OPT_PORTABLE:
		ok = add(cs, "evm", "portable", p->spelled);
		break;
	case CLI_OPT_XATTR_USER:
		ok = add(cs, "xattr_namespace", "user", p->spelled);
		break;
	case CLI_OPT_ALLOW_WEAK:
		ok = add(cs, "weak_algos", "allow", p->spelled);
		break;
	case CLI_OPT_SET:
		ok = add_kv(cs, p->arg, p->spelled);
		break;
	case CLI_OPT_CONFIG:
		cs->config_file = p->arg;
		return 1;
	default:
		return 0;
	}
	return ok ? 1 : -1;
}

static int take_settings(void *group, const struct cli_parser *p, int c)
{
	struct cli_settings *cs = group;
	int taken = config_option(cs, p, c);

	if (!taken)
		taken = cli_root_option(p, c, &cs->root);
	return taken ? taken : cli_say_option(p, c, &cs->say);
}

int cli_settings_parse_next(struct cli_settings *cs, struct cli_parser *p)
{
	return cli_parse_next_taking(p, take_settings, cs);
}

const char *cli_settings_typed(void *arg, const char *key)
{
	const struct cli_settings *cs = arg;

	for (unsigned int i = cs->n; i-- > 0;)
		if (!strcmp(cs->s[i].key, key) && strcmp(cs->s[i].where, "-o") &&
		    strcmp(cs->s[i].where, "--set"))
			return cs->s[i].where;
	return NULL;
}

void cli_settings_say(struct cli_settings *cs, const char *msg)
{
	char *named = cli_config_names_to_options(msg, cli_settings_typed, cs);

	cli_error("%s", named ? named : msg);
	free(named);
}

/*
 * As the rpm plugin reads its file: one named must exist ("" names none); the default is
 * read when it exists, and any other reason it cannot be opened is said.
 */
static int config_load(const struct cli_settings *cs, struct imastream_config *cfg,
		       const struct imastream_log *log)
{
	const char *path = cs->config_file ? cs->config_file : cs->default_config;

	if (!path || !path[0])
		return 0;
	if (!cs->config_file && access(path, F_OK) && errno == ENOENT)
		return 0;
	return imastream_config_load(cfg, path, log);
}

int cli_settings_config(struct cli_settings *cs, struct imastream_config *cfg,
			const struct imastream_log *log)
{
	if (cs->prompt) {
		const char *var, *key = "the key";
		int err;

		for (unsigned int i = 0; i < cs->n; i++)
			if (!strcmp(cs->s[i].key, "key"))
				key = cs->s[i].value;
		err = cli_pass_prompt(cs->cmd, key, &var);
		if (err)
			return err;
		if (!add(cs, "key_pass_env", var, "-p"))
			return CLI_USAGE;
		cs->prompt = false;
	}
	if (imastream_config_init(cfg)) {
		cli_error("out of memory");
		return CLI_FAILED;
	}
	if (config_load(cs, cfg, log))
		goto usage;
	for (unsigned int i = 0; i < cs->n; i++)
		if (imastream_config_set(cfg, cs->s[i].key, cs->s[i].value, cs->s[i].where, log))
			goto usage;
	if (imastream_config_check(cfg, log))
		goto usage;
	/* A key typed for a run that signs nothing was meant for a mode not asked for. */
	if (cli_settings_typed(cs, "key") && cfg->mode != IMASTREAM_MODE_SIGN && !cfg->evm) {
		cli_usage_error(cs->cmd,
				"%s %s: mode %s and evm none sign nothing: add --mode sign or "
				"--evm portable, or leave the key out",
				cli_settings_typed(cs, "key"), cfg->key,
				cfg->mode == IMASTREAM_MODE_OFF ? "off" : "hash");
		imastream_config_release(cfg);
		return CLI_USAGE;
	}
	return CLI_OK;
usage:
	imastream_config_release(cfg);
	return CLI_USAGE;
}
