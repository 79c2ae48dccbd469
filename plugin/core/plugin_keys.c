// SPDX-License-Identifier: LGPL-2.1-or-later
/* The keys the built-in plugins declare in their ops: kept per configuration, with defaults. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/core/driver.h"
#include "plugin/core/private.h"

/* One key of some plugin and the text set for it (NULL: its default holds). */
struct ims_key_value {
	const struct imastream_plugin_key *key;
	char *value;
};

struct imastream_config_values {
	unsigned int n;
	struct ims_key_value v[];
};

/* Calls @fn for every key of every built-in plugin, in registry order. */
static void each_plugin_key(void (*fn)(const struct imastream_plugin_key *key, void *arg),
			    void *arg)
{
	const struct imastream_plugin_ops *ops;

	for (unsigned int i = 0; (ops = imastream_plugin_at(i)); i++)
		for (const struct imastream_plugin_key *k = ops->keys; k && k->name; k++)
			fn(k, arg);
}

static void count_key(const struct imastream_plugin_key *key, void *arg)
{
	(void)key;
	(*(unsigned int *)arg)++;
}

static void add_key(const struct imastream_plugin_key *key, void *arg)
{
	struct imastream_config_values *t = arg;

	t->v[t->n++].key = key;
}

int ims_config_values_new(struct imastream_config_values **ret)
{
	struct imastream_config_values *t;
	unsigned int n = 0;

	each_plugin_key(count_key, &n);
	t = calloc(1, sizeof(*t) + n * sizeof(t->v[0]));
	if (!t)
		return -ENOMEM;
	each_plugin_key(add_key, t);
	*ret = t;
	return 0;
}

void ims_config_values_free(struct imastream_config_values *t)
{
	if (!t)
		return;
	for (unsigned int i = 0; i < t->n; i++)
		free(t->v[i].value);
	free(t);
}

static struct ims_key_value *find(const struct imastream_config_values *t, const char *key)
{
	for (unsigned int i = 0; t && i < t->n; i++)
		if (strcmp(t->v[i].key->name, key) == 0)
			return (struct ims_key_value *)&t->v[i];
	return NULL;
}

bool ims_config_values_has(const struct imastream_config_values *t, const char *key)
{
	return find(t, key) != NULL;
}

int ims_config_values_set(struct imastream_config_values *t, const char *key, const char *value,
			  const char *where, const struct imastream_log *log)
{
	struct ims_key_value *kv = find(t, key);
	const char *wrong;
	char *copy = NULL;

	if (!kv)
		return -ENOENT;
	/* An empty value unsets (the default holds again), as for the core's text keys. */
	if (value[0]) {
		wrong = kv->key->check ? kv->key->check(value) : NULL;
		if (wrong)
			return ims_err(log, -EINVAL, "%s: %s \"%s\" %s", where, key, value, wrong);
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free(kv->value);
	kv->value = copy;
	return 0;
}

const char *imastream_config_get(const struct imastream_config *cfg, const char *key)
{
	const struct ims_key_value *kv;

	if (!cfg || !key)
		return NULL;
	kv = find(cfg->values, key);
	if (!kv)
		return NULL;
	return kv->value ? kv->value : kv->key->def;
}

/*
 * imastream_config_keys() returns one array for the life of the process: the core's
 * keys and the plugins', joined once.  The registry is constant, so the result is too.
 */
#define MAX_KEYS 96

static const char *all_keys[MAX_KEYS + 1];
static pthread_once_t all_keys_once = PTHREAD_ONCE_INIT;

static void list_key(const struct imastream_plugin_key *key, void *arg)
{
	unsigned int *n = arg;

	/* More keys than room is a build mistake: test_chain_config finds each key. */
	if (*n < MAX_KEYS)
		all_keys[(*n)++] = key->name;
}

static void join_keys(void)
{
	unsigned int n = 0;

	for (const char *const *k = ims_config_core_keys(); *k && n < MAX_KEYS; k++)
		all_keys[n++] = *k;
	each_plugin_key(list_key, &n);
	all_keys[n] = NULL;
}

const char *const *imastream_config_keys(void)
{
	pthread_once(&all_keys_once, join_keys);
	return all_keys;
}
