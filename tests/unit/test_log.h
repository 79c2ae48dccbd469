/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A log for unit tests that counts lines and keeps the last one, to assert on errors. */
#ifndef IMASTREAM_TEST_LOG_H
#define IMASTREAM_TEST_LOG_H

#include <stdio.h>

#include "imastream/common.h"

static int n_lines;
static char last[512];

static void remember(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	n_lines++;
	snprintf(last, sizeof(last), "%s", msg);
}

static const struct imastream_log log_ = { remember, NULL };

#endif /* IMASTREAM_TEST_LOG_H */
