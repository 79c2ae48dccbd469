// SPDX-License-Identifier: LGPL-2.1-or-later
/* Tells a forked child from the process that started a worker thread, without a system call. */
#include <pthread.h>
#include <unistd.h>

#include "common/private.h"

static unsigned long forks;
static bool watch_failed;
static pthread_once_t watching = PTHREAD_ONCE_INIT;

/* In the child, which has one thread: nothing else writes it. */
static void count_fork(void)
{
	forks++;
}

/* glibc drops the handler when the object that registered it is unloaded (dlclose). */
static void watch(void)
{
	watch_failed = pthread_atfork(NULL, NULL, count_fork) != 0;
}

unsigned long ims_forks(void)
{
	pthread_once(&watching, watch);
	/* Without the handler, the pid tells them apart, at a system call each time. */
	return watch_failed ? (unsigned long)getpid() : forks;
}
