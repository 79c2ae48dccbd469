// SPDX-License-Identifier: LGPL-2.1-or-later
/* A small string → int table: duplicate detection and hard-link lookup per package. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "installed/private.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static size_t find_slot(char *const *keys, size_t size, const char *key)
{
	size_t i = hash_str(key) & (size - 1);

	while (keys[i] && strcmp(keys[i], key))
		i = (i + 1) & (size - 1);
	return i;
}

int ims_strmap_get(const struct ims_strmap *m, const char *key)
{
	size_t i;

	if (!m->size)
		return -1;
	i = find_slot(m->keys, m->size, key);
	return m->keys[i] ? m->values[i] : -1;
}

static int grow(struct ims_strmap *m)
{
	size_t nsize = m->size ? m->size * 2 : 64, i, j;
	char **nkeys = calloc(nsize, sizeof(*nkeys));
	int *nvalues = calloc(nsize, sizeof(*nvalues));

	if (!nkeys || !nvalues) {
		free(nkeys);
		free(nvalues);
		return -ENOMEM;
	}
	for (i = 0; i < m->size; i++) {
		if (!m->keys[i])
			continue;
		j = find_slot(nkeys, nsize, m->keys[i]);
		nkeys[j] = m->keys[i];
		nvalues[j] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = nkeys;
	m->values = nvalues;
	m->size = nsize;
	return 0;
}

int ims_strmap_add(struct ims_strmap *m, const char *key, int value)
{
	size_t i;
	int err;

	/* Keep the load under one half, so probes stay short. */
	if ((m->used + 1) * 2 > m->size) {
		err = grow(m);
		if (err)
			return err;
	}
	i = find_slot(m->keys, m->size, key);
	if (m->keys[i])
		return -EEXIST;
	m->keys[i] = strdup(key);
	if (!m->keys[i])
		return -ENOMEM;
	m->values[i] = value;
	m->used++;
	return 0;
}

void ims_strmap_set(struct ims_strmap *m, const char *key, int value)
{
	size_t i;

	if (!m->size)
		return;
	i = find_slot(m->keys, m->size, key);
	if (m->keys[i])
		m->values[i] = value;
}

void ims_strmap_clear(struct ims_strmap *m)
{
	for (size_t i = 0; i < m->size; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
}
