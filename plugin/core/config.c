// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain's configuration: one validated key set shared by rpm macros and the config file. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashers/backend.h"
#include "plugin/core/driver.h"
#include "plugin/core/private.h"

#define DEFAULT_PLUGINS "selinux,ima,evm"

int imastream_config_init_sized(struct imastream_config *cfg, size_t size)
{
	int err;

	/* Smaller than the first sized struct: not a struct imastream_config at all. */
	if (!cfg || size < IMS_CONFIG_SIZE_1)
		return -EINVAL;
	/* Only the caller's bytes: an older program's struct ends before ours. */
	memset(cfg, 0, size);
	cfg->size = size;
	cfg->mode = IMASTREAM_MODE_HASH;
	cfg->hash_algo = IMASTREAM_HASH_SHA256;
	cfg->no_xattr = IMASTREAM_NO_XATTR_FAIL;
	cfg->package_sigs = IMASTREAM_PKGSIG_AUTO;
	cfg->config_files = IMASTREAM_CONFIG_FILES_HASH;
	cfg->package_sig_failure = IMASTREAM_PKGSIG_REFUSE;
	/* rpm's default file digest, which sign-package signs over unless told otherwise. */
	cfg->package_sig_algos = IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256);
	if (IMS_HAS_MEMBER(cfg, struct imastream_config, userns_xattrs))
		cfg->userns_xattrs = IMASTREAM_USERNS_XATTRS_PENDING;
	cfg->plugins = strdup(DEFAULT_PLUGINS);
	err = cfg->plugins ? ims_config_values_new(&cfg->values) : -ENOMEM;
	if (err)
		imastream_config_release(cfg);
	return err;
}

void imastream_config_release(struct imastream_config *cfg)
{
	if (!cfg || cfg->size < IMS_CONFIG_SIZE_1)
		return;
	free(cfg->key);
	free(cfg->key_pass_file);
	free(cfg->key_pass_env);
	free(cfg->cert);
	free(cfg->trust);
	free(cfg->plugins);
	ims_config_values_free(cfg->values);
	memset(cfg, 0, cfg->size);
}

/* Maps @value to the index of a word in @words (NULL-terminated), or -1. */
static int pick(const char *value, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(value, words[i]) == 0)
			return i;
	return -1;
}

static int set_string(char **field, const char *value)
{
	char *copy = NULL;

	/* An empty value unsets, in the file and as a macro ("%_imastream_key %{nil}"). */
	if (value[0]) {
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

/*
 * "sha256,sha512": the digests the chain computes so that package signatures in those
 * algorithms can be checked.  Each one is hashed for every file whose signature uses it
 * and the driver's header digest does not give it, so the list stays short.
 */
static int parse_algos(const char *value, uint32_t *mask_ret)
{
	char buf[128], *save = NULL, *word;
	uint32_t mask = 0;
	unsigned int n = 0;

	if (strlen(value) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, value);
	for (word = strtok_r(buf, ", ", &save); word; word = strtok_r(NULL, ", ", &save)) {
		const struct imastream_hash_info *hi = imastream_hash_by_name(word);

		if (!hi)
			return -EINVAL;
		if (!(mask & IMASTREAM_HASH_BIT(hi->algo)))
			n++;
		mask |= IMASTREAM_HASH_BIT(hi->algo);
	}
	/* With hash_algo, the chain computes at most four digests per file. */
	if (n == 0 || n > IMASTREAM_PKGSIG_MAX_ALGOS)
		return -EINVAL;
	*mask_ret = mask;
	return 0;
}

/* A chain list: names separated by commas, each a C identifier; checked for content later. */
static bool valid_list(const char *value)
{
	if (!value[0])
		return false;
	for (const char *p = value; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != ',' && *p != ' ')
			return false;
	return true;
}

/* "a, b or c": the values a key takes, for its error line. */
static const char *join_words(const char *const *words, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; words[i] && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s",
				      i == 0	    ? "" :
				      !words[i + 1] ? " or " :
						      ", ",
				      words[i]);
	return buf;
}

/* The algorithms this build knows, for the line that refuses another. */
static const char *hash_names(char *buf, size_t size)
{
	const char *names[32];
	unsigned int n = 0;
	const struct imastream_hash_info *hi;

	while (n + 1 < ARRAY_SIZE(names) && (hi = imastream_hash_info_at(n)) != NULL)
		names[n++] = hi->name;
	names[n] = NULL;
	return join_words(names, buf, size);
}

/* The one line that refuses @value for @key: empty, not one of @choices, or wrong. */
static int bad_value(const char *where, const char *key, const char *value,
		     const char *const *choices, const struct imastream_log *log)
{
	char list[160];

	/* A key with a fixed set of values has no "unset": empty is a mistake, not the default. */
	if (!value[0])
		return ims_err(log, -EINVAL,
			       "%s: empty value for %s: leave the setting out for its default",
			       where, key);
	/* No key holds a secret (passphrases come from a file or variable): echo is safe. */
	if (choices)
		return ims_err(log, -EINVAL, "%s: invalid value \"%s\" for %s (%s)", where, value,
			       key, join_words(choices, list, sizeof(list)));
	return ims_err(log, -EINVAL, "%s: invalid value \"%s\" for %s", where, value, key);
}

/* A member of a newer struct imastream_config than the caller was built with. */
static int too_old(const char *where, const char *key, const struct imastream_log *log)
{
	return ims_err(log, -EINVAL, "%s: %s needs a program built with a newer imastream/chain.h",
		       where, key);
}

/* Core key @key set to the @v-th of its values (ims_config_core_values()). */
static int set_choice(struct imastream_config *cfg, const char *key, int v, const char *where,
		      const struct imastream_log *log)
{
	if (strcmp(key, "mode") == 0)
		cfg->mode = v;
	else if (strcmp(key, "evm") == 0)
		cfg->evm = v == 1;
	else if (strcmp(key, "no_xattr_support") == 0)
		cfg->no_xattr = v;
	else if (strcmp(key, "config_files") == 0)
		cfg->config_files = v;
	else if (strcmp(key, "xattr_namespace") == 0)
		cfg->user_xattrs = v == 1;
	else if (strcmp(key, "package_sigs") == 0)
		cfg->package_sigs = v;
	else if (strcmp(key, "package_sig_failure") == 0)
		cfg->package_sig_failure = v == 1 ? IMASTREAM_PKGSIG_FALLBACK : IMASTREAM_PKGSIG_REFUSE;
	else if (strcmp(key, "weak_algos") == 0)
		cfg->allow_weak_algos = v == 1;
	else if (strcmp(key, "verity") == 0 &&
		 !IMS_HAS_MEMBER(cfg, struct imastream_config, verity))
		return too_old(where, key, log);
	else if (strcmp(key, "verity") == 0)
		cfg->verity = v == 1;
	else if (strcmp(key, "userns_xattrs") == 0 &&
		 !IMS_HAS_MEMBER(cfg, struct imastream_config, userns_xattrs))
		return too_old(where, key, log);
	else if (strcmp(key, "userns_xattrs") == 0)
		cfg->userns_xattrs = v;
	return 0;
}

/* The field a core key naming a file, a key or a variable sets, or NULL. */
static char **string_field(struct imastream_config *cfg, const char *key)
{
	if (strcmp(key, "key") == 0)
		return &cfg->key;
	/* Never the passphrase itself: where to read it from, as evmctl and keys/ take it. */
	if (strcmp(key, "key_pass_file") == 0)
		return &cfg->key_pass_file;
	if (strcmp(key, "key_pass_env") == 0)
		return &cfg->key_pass_env;
	if (strcmp(key, "cert") == 0)
		return &cfg->cert;
	if (strcmp(key, "trust") == 0)
		return &cfg->trust;
	return NULL;
}

/* The core's keys whose values are neither a fixed set nor a free string. */
static int set_checked(struct imastream_config *cfg, const char *key, const char *value,
		       const char *where, const struct imastream_log *log)
{
	const struct imastream_hash_info *hi;
	char list[160];

	if (strcmp(key, "hash_algo") == 0) {
		hi = imastream_hash_by_name(value);
		if (!value[0])
			return bad_value(where, key, value, NULL, log);
		if (!hi)
			return ims_err(log, -EINVAL, "%s: unknown hash algorithm \"%s\" (%s)",
				       where, value, hash_names(list, sizeof(list)));
		cfg->hash_algo = hi->algo;
		return 0;
	}
	if (strcmp(key, "package_sig_algos") == 0) {
		if (parse_algos(value, &cfg->package_sig_algos) < 0)
			return ims_err(log, -EINVAL,
				       "%s: invalid value \"%s\" for package_sig_algos: 1 to %d of "
				       "%s, separated by commas",
				       where, value, IMASTREAM_PKGSIG_MAX_ALGOS,
				       hash_names(list, sizeof(list)));
		return 0;
	}
	if (strcmp(key, "plugins") == 0)
		return valid_list(value) ? set_string(&cfg->plugins, value) :
					   bad_value(where, key, value, NULL, log);
	return -ENOENT;
}

int imastream_config_set(struct imastream_config *cfg, const char *key, const char *value,
			 const char *where, const struct imastream_log *log)
{
	const char *const *values;
	char **field;
	int err, v;

	if (!cfg || cfg->size < IMS_CONFIG_SIZE_1 || !key || !value)
		return -EINVAL;
	if (!where)
		where = key;
	values = ims_config_core_values(key);
	if (values) {
		v = pick(value, values);
		return v < 0 ? bad_value(where, key, value, values, log) :
			       set_choice(cfg, key, v, where, log);
	}
	field = string_field(cfg, key);
	if (field)
		return set_string(field, value);
	err = set_checked(cfg, key, value, where, log);
	if (err != -ENOENT)
		return err;
	err = ims_config_values_set(cfg->values, key, value, where, log);
	if (err != -ENOENT)
		return err;
	/* Plugins are built in (none is loaded at run time): no other key can exist. */
	return ims_err(log, -EINVAL,
		       "%s: unknown configuration key \"%s\" (neither the core's nor a built-in "
		       "plugin's; the nearest is %s)",
		       where, key, ims_config_nearest_key(key, NULL));
}

/* Strips leading and trailing blanks in place. */
static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* The keys a config file has set so far, for its refusal of one set twice. */
struct seen_key {
	char *key, *value;
	unsigned int line;
};

static void seen_free(struct seen_key *seen, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ims_memzero(seen[i].value, strlen(seen[i].value));
		free(seen[i].key);
		free(seen[i].value);
	}
	free(seen);
}

/*
 * A key set twice to different values: which one the file means is anybody's guess, so
 * it is refused, naming both lines.  The same value twice is harmless and taken.
 */
static int note_key(struct seen_key **seen, size_t *n, const char *key, const char *value,
		    const char *path, unsigned int lineno, const struct imastream_log *log)
{
	struct seen_key *grown;

	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*seen)[i].key, key))
			continue;
		if (strcmp((*seen)[i].value, value))
			return ims_err(log, -EINVAL,
				       "%s:%u: %s is set again, to another value than on line %u: "
				       "set it once",
				       path, lineno, key, (*seen)[i].line);
		return 0;
	}
	grown = realloc(*seen, (*n + 1) * sizeof(**seen));
	if (!grown)
		return -ENOMEM;
	*seen = grown;
	grown[*n] = (struct seen_key){ strdup(key), strdup(value), lineno };
	if (!grown[*n].key || !grown[*n].value) {
		free(grown[*n].key);
		free(grown[*n].value);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

int imastream_config_load(struct imastream_config *cfg, const char *path,
			  const struct imastream_log *log)
{
	char line[4096], where[512];
	unsigned int lineno = 0;
	struct seen_key *seen = NULL;
	size_t n_seen = 0;
	FILE *f;
	int fd, err = 0;

	/* Never waits on a FIFO: the rpm plugin reads this with the transaction lock held. */
	fd = ims_open_regular(AT_FDCWD, path, O_RDONLY, 0);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		err = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		return ims_err(log, err, "cannot open config file %s: %s", path,
			       ims_open_strerror(err));
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *value, *eq, *hash;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			err = ims_err(log, -EINVAL, "%s: line too long", where);
			goto out;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			err = ims_err(log, -EINVAL, "%s: expected \"key = value\"", where);
			goto out;
		}
		*eq = '\0';
		key = trim(key);
		value = trim(eq + 1);
		err = note_key(&seen, &n_seen, key, value, path, lineno, log);
		if (!err)
			err = imastream_config_set(cfg, key, value, where, log);
		if (err)
			goto out;
	}
	if (ferror(f))
		err = ims_err(log, -EIO, "cannot read config file %s", path);
out:
	ims_memzero(line, sizeof(line));
	seen_free(seen, n_seen);
	fclose(f);
	return err;
}

bool imastream_hash_algo_weak(int algo)
{
	/* Collisions cost seconds, and the kernel refuses md5 signatures. */
	return algo == IMASTREAM_HASH_MD5;
}

int imastream_config_check(const struct imastream_config *cfg, const struct imastream_log *log)
{
	if (cfg->mode == IMASTREAM_MODE_SIGN && !cfg->key)
		return ims_err(log, -EINVAL, "mode sign needs a key (_imastream_key)");
	if (cfg->evm && !cfg->key)
		return ims_err(log, -EINVAL, "evm portable needs a key (_imastream_key)");
	/* The kernel appraises fs-verity files by a signature only (appraise_type=sigv3). */
	if (IMS_CONFIG_VERITY(cfg) && cfg->mode != IMASTREAM_MODE_SIGN)
		return ims_err(log, -EINVAL, "verity = on needs mode = sign: a digest_type=verity policy accepts only signatures");
	/* Nothing could verify one: every signed package would be refused at its first file. */
	if (cfg->package_sigs == IMASTREAM_PKGSIG_VERIFY && !cfg->trust)
		return ims_err(log, -EINVAL,
			       "package_sigs = verify needs trust, the certificates that check the "
			       "packages' file signatures (or package_sigs = auto: verify when "
			       "trust is set)");
	/* Package file signatures sign content digests: no kernel takes them for a verity file. */
	if (IMS_CONFIG_VERITY(cfg) && cfg->package_sigs == IMASTREAM_PKGSIG_VERIFY)
		return ims_err(log, -EINVAL, "verity = on cannot use the package's file signatures (package_sigs = verify): they sign content digests, not fs-verity digests");
	if (!cfg->allow_weak_algos) {
		const struct imastream_hash_info *hi = imastream_hash_by_algo(cfg->hash_algo);

		if (hi && imastream_hash_algo_weak(hi->algo))
			return ims_err(log, -EINVAL,
				       "hash_algo %s is a weak digest: use sha256, or set weak_algos = allow",
				       hi->name);
		for (int algo = 0; algo < 32; algo++) {
			if (!(cfg->package_sig_algos & IMASTREAM_HASH_BIT(algo)) ||
			    !imastream_hash_algo_weak(algo))
				continue;
			hi = imastream_hash_by_algo(algo);
			return ims_err(log, -EINVAL,
				       "package_sig_algos lists %s, a weak digest: drop it, or set weak_algos = allow",
				       hi ? hi->name : "a weak algorithm");
		}
	}
	return 0;
}
