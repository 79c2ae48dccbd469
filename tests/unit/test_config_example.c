// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The shipped example configuration (etc/imastream.conf) and the rpm macros file
 * (plugin/rpm/macros.transaction_imastream) against the code: each names every key of
 * imastream_config_keys() exactly once and nothing else, with the code's default, and the
 * example loads into a configuration equal to imastream_config_init()'s.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imastream/chain.h"
#include "tests/unit/test.h"

#define MAX_KEYS 128

struct listed {
	char key[64];
	char value[256];
	int count;
};

static void log_line(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "imastream: %s\n", msg);
}

static const struct imastream_log log_ = { log_line, NULL };

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

static struct listed *find(struct listed *l, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (strcmp(l[i].key, key) == 0)
			return &l[i];
	return NULL;
}

static int add(struct listed *l, int n, const char *key, const char *value)
{
	struct listed *x = find(l, n, key);

	if (x) {
		x->count++;
		return n;
	}
	ASSERT(n < MAX_KEYS && strlen(key) < sizeof(l->key) && strlen(value) < sizeof(l->value));
	strcpy(l[n].key, key);
	strcpy(l[n].value, value);
	l[n].count = 1;
	return n + 1;
}

/* "key = value" lines of the example (comments skipped). */
static int read_example(const char *path, struct listed *l)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *eq;

		if (hash)
			*hash = '\0';
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		n = add(l, n, trim(line), trim(eq + 1));
	}
	fclose(f);
	return n;
}

/* "%_imastream_KEY VALUE" lines of the macros file, commented out or not. */
static int read_macros(const char *path, struct listed *l)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *key, *value;

		if (*p == '#')
			p++;
		if (strncmp(p, "%_imastream_", 12) != 0)
			continue;
		key = p + 12;
		value = key + strcspn(key, " \t\n");
		if (*value)
			*value++ = '\0';
		/* The file to read settings from is the macros' own key, not a setting. */
		if (strcmp(key, "config") == 0)
			continue;
		n = add(l, n, key, trim(value));
	}
	fclose(f);
	return n;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Every field, so that a key whose listed value is not its default shows up. */
static void assert_same_config(const struct imastream_config *a, const struct imastream_config *b)
{
	ASSERT_EQ(a->mode, b->mode);
	ASSERT_EQ(a->hash_algo, b->hash_algo);
	ASSERT(same_str(a->key, b->key));
	ASSERT(same_str(a->key_pass_file, b->key_pass_file));
	ASSERT(same_str(a->key_pass_env, b->key_pass_env));
	ASSERT(same_str(a->cert, b->cert));
	ASSERT(same_str(a->trust, b->trust));
	ASSERT_EQ(a->evm, b->evm);
	ASSERT(same_str(a->plugins, b->plugins));
	ASSERT_EQ(a->no_xattr, b->no_xattr);
	ASSERT_EQ(a->config_files, b->config_files);
	ASSERT_EQ(a->package_sigs, b->package_sigs);
	ASSERT_EQ(a->package_sig_failure, b->package_sig_failure);
	ASSERT_EQ(a->package_sig_algos, b->package_sig_algos);
	ASSERT_EQ(a->user_xattrs, b->user_xattrs);
	ASSERT_EQ(a->allow_weak_algos, b->allow_weak_algos);
	/* The plugins' keys (NULL for the core's, compared above). */
	for (const char *const *k = imastream_config_keys(); *k; k++)
		ASSERT(same_str(imastream_config_get(a, *k), imastream_config_get(b, *k)));
	ASSERT_EQ(a->verity, b->verity);
	ASSERT_EQ(a->userns_xattrs, b->userns_xattrs);
}

/* @l names every key of the code exactly once, and nothing else. */
static void assert_all_keys(const char *what, struct listed *l, int n)
{
	int nkeys = 0;

	for (const char *const *k = imastream_config_keys(); *k; k++, nkeys++) {
		struct listed *x = find(l, n, *k);

		if (!x || x->count != 1) {
			fprintf(stderr, "%s: key %s listed %d times, not once\n", what, *k,
				x ? x->count : 0);
			exit(1);
		}
	}
	for (int i = 0; i < n; i++) {
		bool known = false;

		for (const char *const *k = imastream_config_keys(); *k; k++)
			known |= strcmp(*k, l[i].key) == 0;
		if (!known) {
			fprintf(stderr, "%s: %s is not a key of the code\n", what, l[i].key);
			exit(1);
		}
	}
	ASSERT_EQ(n, nkeys);
}

int main(void)
{
	static struct listed example[MAX_KEYS], macros[MAX_KEYS];
	const char *srcdir = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
	char conf[4096], mac[4096];
	struct imastream_config defaults, loaded;
	int n, m;

	snprintf(conf, sizeof(conf), "%s/etc/imastream.conf", srcdir);
	snprintf(mac, sizeof(mac), "%s/plugin/rpm/macros.transaction_imastream", srcdir);

	n = read_example(conf, example);
	assert_all_keys(conf, example, n);
	/* Loaded as it is, by the code's own loader, it changes nothing. */
	ASSERT_EQ(imastream_config_init(&defaults), 0);
	ASSERT_EQ(imastream_config_init(&loaded), 0);
	ASSERT_EQ(imastream_config_load(&loaded, conf, &log_), 0);
	assert_same_config(&defaults, &loaded);
	/* Each key alone too: no later line may undo an earlier wrong one. */
	for (int i = 0; i < n; i++) {
		struct imastream_config one;

		ASSERT_EQ(imastream_config_init(&one), 0);
		ASSERT_EQ(imastream_config_set(&one, example[i].key, example[i].value, "example",
					       &log_), 0);
		assert_same_config(&defaults, &one);
		imastream_config_release(&one);
	}

	m = read_macros(mac, macros);
	assert_all_keys(mac, macros, m);
	for (int i = 0; i < m; i++) {
		struct listed *x = find(example, n, macros[i].key);

		if (strcmp(x->value, macros[i].value) != 0) {
			fprintf(stderr, "%s: %%_imastream_%s is \"%s\", the default is \"%s\"\n", mac,
				macros[i].key, macros[i].value, x->value);
			exit(1);
		}
	}
	imastream_config_release(&defaults);
	imastream_config_release(&loaded);
	printf("ok: %d keys, example and macros file agree with the code's defaults\n", n);
	return 0;
}
