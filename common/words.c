// SPDX-License-Identifier: LGPL-2.1-or-later
/* The words of a setting's value, separated by commas or blanks. */
#include <string.h>

#include "common/private.h"

const char *ims_next_word(const char **p, size_t *len_ret)
{
	const char *s = *p;
	size_t len;

	while (*s == ',' || *s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	len = strcspn(s, ", \t");
	*p = s + len;
	*len_ret = len;
	return s;
}
