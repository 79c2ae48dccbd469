/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's progress: its counters, told to the caller's callback as they move. */
#ifndef IMASTREAM_INSTALLER_SINK_PROGRESS_H
#define IMASTREAM_INSTALLER_SINK_PROGRESS_H

#include <stddef.h>

#include "imastream/chain_sink.h"

/* The counters and the callback (imastream_chain_sink_opts' progress, or NULL). */
struct ims_sink_progress {
	struct imastream_sink_progress p;
	void (*fn)(void *arg, const struct imastream_sink_progress *p);
	void *arg;
};

/* Every counter 0, no package yet; @fn (may be NULL) is told with @arg. */
void ims_sink_progress_init(struct ims_sink_progress *sp,
			    void (*fn)(void *arg, const struct imastream_sink_progress *p),
			    void *arg);
/* A package begins: @name (the extractor's, valid until its end) names it; nothing is told. */
void ims_sink_progress_package(struct ims_sink_progress *sp, const char *name);
/* @len content bytes written; told. */
void ims_sink_progress_bytes(struct ims_sink_progress *sp, size_t len);
/* One more object complete; told. */
void ims_sink_progress_file(struct ims_sink_progress *sp);
/* The package ended with @status (counted when 0); told, then it has no name any more. */
void ims_sink_progress_end(struct ims_sink_progress *sp, int status);
/* The last call: done is set and told. */
void ims_sink_progress_done(struct ims_sink_progress *sp);

#endif /* IMASTREAM_INSTALLER_SINK_PROGRESS_H */
