/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the rpm reader's parts share: a package being read, its entries' check, the payload pipeline; for installer/rpm*.c alone. */
#ifndef IMASTREAM_INSTALLER_RPM_READ_H
#define IMASTREAM_INSTALLER_RPM_READ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <rpm/header.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmio.h>

#include "imastream/extract.h"
#include "installer/private.h"

#define CHUNK_SIZE (256 * 1024)

/* What one package read needs: the package, its header data and owner lookups. */
struct pkgread {
	struct imastream_extract *x;
	const struct imastream_log *log;
	const char *name;
	unsigned int flags;
	Header h;
	rpmfiles files;
	int fc;
	int digest_algo;	/* kernel id, 0 when file digests are not checked */
	struct ims_ids ids;	/* owner names, from the root's etc/passwd and etc/group */
	uint8_t *delivered;	/* per header entry: returned by the archive reader */
	char last_rpm_msg[256]; /* librpm's last message, to explain its failures */

	/* The package lists "/" itself (owns_root): the root's mode and owner. */
	bool owns_root;
	mode_t root_mode;
	uid_t root_uid;
	gid_t root_gid;
};

/* One line about header entry @fx, as every policy refusal is reported. */
#define file_err(r, fx, err, fmt, ...)                                                        \
	({                                                                                    \
		char *fn_ = rpmfilesFN((r)->files, (fx));                                     \
		int e_ = ims_err((r)->log, (err), "%s: %s: " fmt, (r)->name, fn_ ? fn_ : "?", \
				 ##__VA_ARGS__);                                              \
		free(fn_);                                                                    \
		e_;                                                                           \
	})

/* Whether header entry @fx is a %ghost (rpm_check.c). */
bool ims_rpm_is_ghost(struct pkgread *r, int fx);
/* Whether @path names the root itself ("/"), which a package may own (rpm_check.c). */
bool ims_rpm_is_root(const char *path);
/* Checks every header entry before anything is written; returns the content total (rpm_check.c). */
int ims_rpm_check_files(struct pkgread *r, int rootfd, uint64_t *total_ret);

/*
 * The payload loop runs as a pipeline on two threads: a reader thread decompresses
 * and walks the archive (rpmfiNext, rpmfiArchiveRead) into a few large buffers, and
 * the calling thread hashes, writes and drives the chain (the extractor and its sink
 * are only ever called from the caller's thread).  Decompression is the longest stage
 * (perf-anchors §2.6), so hashing and writing hide behind it on a second core.
 * IMASTREAM_INSTALL_ONE_THREAD runs the same stages in turn, for comparison.
 */
enum ev_type {
	EV_ENTRY,
	EV_DATA,
	EV_END,
	EV_DONE,
	EV_ERROR
};

struct event {
	enum ev_type type;
	int fx;	    /* EV_ENTRY, EV_ERROR (the entry being read, or -1) */
	int buf;    /* EV_DATA: index in pipeline.bufs */
	size_t len; /* EV_DATA */
	int rc;	    /* EV_ERROR: an RPMERR_* code */
};

/*
 * Small files take a buffer each, so the reader runs NBUFS files ahead at most.  Each
 * side wakes the other only in batches (WAKE_BATCH events queued, half the buffers
 * free), and always before it sleeps itself: a wake-up per file cost a futex call and a
 * context switch on both sides, more than writing a 16 KiB file.
 */
#define NBUFS 32
#define QLEN 64
#define WAKE_BATCH 8

struct pipeline {
	struct pkgread *r;
	rpmfi fi;
	FD_t pfd;
	bool threaded;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct event q[QLEN];
	unsigned int head, count;
	uint8_t *bufs[NBUFS];
	bool buf_busy[NBUFS];
	unsigned int nfree; /* buffers not busy */
	bool stop;	    /* the consumer gave up: the reader ends at its next step */
	/* who sleeps on cond: a wake-up per event costs a futex call and a context switch */
	bool reader_waits, consumer_waits;
	/* the reader's position: the entry being read and the content left of it */
	int fx;
	rpm_loff_t left;
	/* one-thread mode: the events of the current step (at most two) */
	struct event pending[2];
	unsigned int npending, next;
};

/* The reader thread's body; the consumer's next event, and a buffer it is done with (rpm_pipeline.c). */
void *ims_rpm_reader_thread(void *arg);
struct event ims_rpm_pipeline_pop(struct pipeline *pl);
void ims_rpm_pipeline_put_buf(struct pipeline *pl, int b);

#endif /* IMASTREAM_INSTALLER_RPM_READ_H */
