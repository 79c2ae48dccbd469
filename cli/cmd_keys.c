// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream keys: import certificates into kernel keyrings, list them, print key ids. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "imastream/keys.h"
#include "keys/keyring.h"

#define DEFAULT_RING "_ima"

static const struct cli_use keys_options[] = {
	{ CLI_OPT_KEYRING, "the keyring for import, or to list (default " DEFAULT_RING ")" },
	{ CLI_OPT_KEY, "id: the private key whose key id to print" },
	{ CLI_OPT_CERT, "a certificate, PEM or DER; with --key it must match the\n"
			"key, and its subjectKeyIdentifier gives the key id" },
	{ CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE },
	{ CLI_OPT_PASS_ENV },
	/* --format and -v in keys' words, as every command says what it prints. */
	{ CLI_OPT_FORMAT, "text (default) or json: a JSON object per key on\n"
			  "standard output, then a summary object" },
	{ CLI_OPT_VERBOSE, "say more (import: the new key's key id)" },
	{ CLI_OPT_HELP },
	{ 0 },
};

/* -k was the keyring before it meant --key in every command. */
static const struct cli_alias keyring_aliases[] = {
	{ CLI_OPT_KEYRING, 'k', NULL, "--keyring, in import and list: the old spelling" },
	{ 0 },
};

static const struct cli_spec keys_spec = {
	.cmd = "keys",
	.synopsis =
	"Usage: imastream keys import [--keyring RING] CERT\n"
	"       imastream keys import CERT RING\n"
	"       imastream keys list [RING]\n"
	"       imastream keys id --cert CERT\n"
	"       imastream keys id --key KEY [--cert CERT]\n"
	"                         [-p | --pass-file FILE | --pass-env VAR]\n"
	"\n"
	"  import   add an X.509 certificate (PEM or DER) to a kernel keyring as an\n"
	"           asymmetric key, like 'evmctl import CERT RING' or 'keyctl padd\n"
	"           asymmetric'; prints the new key's serial number\n"
	"  list     list a keyring: serial, type, key id, description\n"
	"  id       print the 8-hex-digit key id that signatures made with KEY carry,\n"
	"           or that the kernel matches for CERT\n"
	"\n"
	"RING: _ima (default), _evm or any _NAME (found or created under the user\n"
	"      keyring), .ima, .evm or any .NAME (a kernel keyring, found by name), @u,\n"
	"      @s, @us, @t, @p, or a serial number.\n"
	"KEY:  a PEM private key file (mode 0600 or stricter), a pkcs11: URI,\n"
	"      kernel:SERIAL, kernel:RING:DESCRIPTION, or an OpenSSL provider URI such as\n"
	"      handle:0x81000001.\n",
	.uses = keys_options,
	.aliases = keyring_aliases,
	.epilog =
	"Exit status: 0 on success, 1 when the operation failed (one line on stderr says\n"
	"why), 2 for a usage error.\n",
};

static const struct cli_use ring_options[] = {
	{ CLI_OPT_KEYRING }, { CLI_OPT_FORMAT }, { CLI_OPT_VERBOSE }, { CLI_OPT_HELP }, { 0 },
};

static const struct cli_spec import_spec = {
	.cmd = "keys import", .help_spec = &keys_spec, .uses = ring_options,
	.aliases = keyring_aliases,
};

static const struct cli_spec list_spec = {
	.cmd = "keys list", .help_spec = &keys_spec, .uses = ring_options,
	.aliases = keyring_aliases,
};

static const struct cli_use id_options[] = {
	{ CLI_OPT_KEY },       { CLI_OPT_CERT },     { CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE }, { CLI_OPT_PASS_ENV }, { CLI_OPT_FORMAT },
	{ CLI_OPT_VERBOSE },   { CLI_OPT_HELP },     { 0 },
};

static const struct cli_spec id_spec = {
	.cmd = "keys id", .help_spec = &keys_spec, .uses = id_options,
};

/* --format json: where the records go, and when the command started (for the summary). */
struct keys_json {
	struct cli_json out;
	struct timespec start;
};

/* The last record: how many keys were reported and how many operations failed. */
static int put_summary(struct keys_json *j, const char *cmd, const char *ring, unsigned long keys,
		       int ret)
{
	cli_json_begin(&j->out, "summary");
	cli_json_str(&j->out, "command", cmd);
	if (ring)
		cli_json_str(&j->out, "keyring", ring);
	cli_json_uint(&j->out, "keys", keys);
	cli_json_uint(&j->out, "failed", ret == CLI_OK ? 0 : 1);
	cli_json_seconds(&j->out, "elapsed_s", cli_seconds_since(CLOCK_MONOTONIC, &j->start));
	if (cli_json_put(&j->out, stdout) && ret == CLI_OK)
		ret = CLI_FAILED;
	cli_json_free(&j->out);
	return ret;
}

/* A key id as the text form prints it, or null. */
static void put_keyid(struct cli_json *out, bool known, uint32_t keyid)
{
	char id[16];

	snprintf(id, sizeof(id), "%08x", keyid);
	cli_json_str(out, "keyid", known ? id : NULL);
}

static int read_file(const char *path, unsigned char **buf_ret, size_t *len_ret)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		cli_error("%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			unsigned char *nbuf;

			cap = cap ? cap * 2 : 8192;
			nbuf = cap <= (1u << 20) ? realloc(buf, cap) : NULL;
			if (!nbuf) {
				cli_error("%s: too large for a certificate", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nbuf;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		cli_error("%s: read error", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*buf_ret = buf;
	*len_ret = len;
	return 0;
}

static int keys_import(const char *ring, const char *cert_path, int verbose, struct keys_json *json)
{
	unsigned char *cert;
	size_t len;
	int32_t serial;
	uint32_t keyid = 0;
	bool skid = false, have_id = false;
	int err;

	/* The file's own name in every message, the missing kernel algorithm's too. */
	err = imastream_keyring_import_file(ring, cert_path, &cli_log, &serial);
	if (err && !json)
		return CLI_FAILED;
	if ((verbose || json) && !err && read_file(cert_path, &cert, &len) == 0) {
		have_id = imastream_keyid_from_cert(cert, len, &cli_log, &keyid, &skid) == 0;
		free(cert);
	}
	if (json) {
		cli_json_begin(&json->out, "key");
		cli_json_str(&json->out, "path", cert_path);
		cli_json_str(&json->out, "result", err ? "fail" : "ok");
		if (!err) {
			cli_json_uint(&json->out, "serial", (uint64_t)serial);
			put_keyid(&json->out, have_id, keyid);
			if (have_id)
				cli_json_bool(&json->out, "subject_key_identifier", skid);
		}
		if (cli_json_put(&json->out, stdout))
			err = -EIO;
		return put_summary(json, "keys import", ring, err ? 0 : 1,
				   err ? CLI_FAILED : CLI_OK);
	}
	/* Only the serial on stdout, as evmctl import and keyctl padd print it. */
	printf("%d\n", serial);
	if (verbose && have_id)
		cli_error("key %d, key id %08x%s, added to keyring %s", serial, keyid,
			  skid ? "" : " (no subjectKeyIdentifier)", ring);
	return CLI_OK;
}

static int keys_list(const char *ring, struct keys_json *json)
{
	struct imastream_keyring_entry *e = NULL;
	struct cli_line line = { 0 };
	int ret = CLI_OK;
	size_t n = 0;

	if (imastream_keyring_list(ring, &cli_log, &e, &n))
		return json ? put_summary(json, "keys list", ring, 0, CLI_FAILED) : CLI_FAILED;
	for (size_t i = 0; json && i < n; i++) {
		cli_json_begin(&json->out, "key");
		cli_json_uint(&json->out, "serial", (uint64_t)e[i].serial);
		cli_json_str(&json->out, "type", e[i].type);
		put_keyid(&json->out, e[i].has_keyid, e[i].keyid);
		cli_json_str(&json->out, "description", e[i].description);
		if (cli_json_put(&json->out, stdout))
			ret = CLI_FAILED;
	}
	if (json) {
		free(e);
		return put_summary(json, "keys list", ring, n, ret);
	}
	for (size_t i = 0; i < n; i++) {
		char id[16] = "-", head[96];

		if (e[i].has_keyid)
			snprintf(id, sizeof(id), "%08x", e[i].keyid);
		snprintf(head, sizeof(head), "%d %s %s ", e[i].serial, e[i].type, id);
		cli_line_text(&line, head);
		/* The description is whatever its owner chose: escaped as names are. */
		cli_line_name(&line, e[i].description);
		cli_line_put(&line, stdout);
	}
	cli_line_free(&line);
	free(e);
	return CLI_OK;
}

/* 0 when @buf holds a certificate; else the line says what @name holds instead. */
static int cert_named(const void *buf, size_t len, const char *name)
{
	struct imastream_trust *t = NULL;
	int err;

	err = imastream_trust_new(&cli_log, &t);
	if (!err)
		err = imastream_trust_add_mem(t, buf, len, name);
	imastream_trust_free(t);
	return err;
}

/* The key id of --cert alone, or of --key (matched against --cert if given). */
static int key_id_of(const struct imastream_key_opts *opts, uint32_t *keyid, bool *skid)
{
	struct imastream_signer *s;
	unsigned char *cert;
	size_t len;
	int err;

	if (!opts->key) {
		if (read_file(opts->cert, &cert, &len))
			return CLI_FAILED;
		/* Parsed as a trust store first for messages that name the file. */
		err = cert_named(cert, len, opts->cert);
		if (!err)
			err = imastream_keyid_from_cert(cert, len, &cli_log, keyid, skid);
		free(cert);
		if (err)
			return CLI_FAILED;
		if (!*skid)
			cli_error("warning: %s has no subjectKeyIdentifier; the kernel cannot match this key id",
				  opts->cert);
		return CLI_OK;
	}
	if (imastream_signer_new(opts, &cli_log, &s))
		return CLI_FAILED;
	*keyid = imastream_signer_keyid(s);
	imastream_signer_free(s);
	return CLI_OK;
}

static int keys_id(const struct imastream_key_opts *opts, struct keys_json *json)
{
	uint32_t keyid = 0;
	bool skid = true;
	int ret = key_id_of(opts, &keyid, &skid);

	if (!json) {
		if (ret == CLI_OK)
			printf("%08x\n", keyid);
		return ret;
	}
	cli_json_begin(&json->out, "key");
	cli_json_str(&json->out, "key", opts->key);
	cli_json_str(&json->out, "cert", opts->cert);
	cli_json_str(&json->out, "result", ret == CLI_OK ? "ok" : "fail");
	if (ret == CLI_OK) {
		put_keyid(&json->out, true, keyid);
		if (!opts->key)
			cli_json_bool(&json->out, "subject_key_identifier", skid);
	}
	if (cli_json_put(&json->out, stdout) && ret == CLI_OK)
		ret = CLI_FAILED;
	return put_summary(json, "keys id", NULL, ret == CLI_OK ? 1 : 0, ret);
}

int cmd_keys(int argc, char **argv)
{
	struct cli_key key = CLI_KEY_INIT;
	struct keys_json json_out = { 0 };
	struct keys_json *json = NULL;
	struct cli_say say = CLI_SAY_INIT;
	const struct cli_spec *spec;
	const char *ring = NULL, *sub;
	struct cli_parser p;
	int c, first, n, err;

	if (argc < 2)
		return cli_usage_error("keys", "no keys command given: import, list or id");
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		cli_print_help(&keys_spec, stdout);
		return CLI_OK;
	}
	if (!strcmp(sub, "import"))
		spec = &import_spec;
	else if (!strcmp(sub, "list"))
		spec = &list_spec;
	else if (!strcmp(sub, "id"))
		spec = &id_spec;
	else
		return cli_usage_error("keys", "unknown keys command '%s': import, list or id", sub);
	cli_set_command(spec->cmd);
	cli_parse_start(&p, spec, argc - 1, argv + 1);
	while ((c = cli_parse_next_key(&p, &key, &say)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_KEYRING:
			ring = p.arg;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	cli_set_verbose(say.verbose);
	if (say.json) {
		json = &json_out;
		clock_gettime(CLOCK_MONOTONIC, &json->start);
	}
	first = cli_parse_operands(&p) + 1; /* in argv, past the subcommand */
	n = argc - first;
	if (spec == &import_spec) {
		/* evmctl's order, CERT RING, or --keyring RING CERT. */
		if (n < 1 || n > 2 || (n == 2 && ring))
			return cli_usage_error(spec->cmd, "wants CERT [RING], or --keyring RING CERT");
		return keys_import(n == 2 ? argv[first + 1] :
				   ring	  ? ring :
					    DEFAULT_RING,
				   argv[first], say.verbose, json);
	}
	if (spec == &list_spec) {
		if (n > 1 || (ring && n))
			return cli_usage_error(spec->cmd, "wants at most one keyring");
		return keys_list(n ? argv[first] : ring ? ring : DEFAULT_RING, json);
	}
	if (n || (!key.opts.key && !key.opts.cert) ||
	    (!key.opts.key && (key.prompt || key.opts.pass_file || key.opts.pass_env)))
		return cli_usage_error(spec->cmd, "wants --cert CERT, or --key KEY with its options");
	if (cli_key_check_pass(spec->cmd, &key) != CLI_OK)
		return CLI_USAGE;
	err = cli_key_prompt(spec->cmd, &key);
	if (err)
		return err;
	return keys_id(&key.opts, json);
}
