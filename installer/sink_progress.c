// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's progress: packages, objects and bytes, told after every chunk and object. */
#include "installer/sink_progress.h"

static void tell(struct ims_sink_progress *sp)
{
	if (sp->fn)
		sp->fn(sp->arg, &sp->p);
}

void ims_sink_progress_init(struct ims_sink_progress *sp,
			    void (*fn)(void *arg, const struct imastream_sink_progress *p),
			    void *arg)
{
	*sp = (struct ims_sink_progress){ .fn = fn, .arg = arg };
}

void ims_sink_progress_package(struct ims_sink_progress *sp, const char *name)
{
	sp->p.package = name;
}

void ims_sink_progress_bytes(struct ims_sink_progress *sp, size_t len)
{
	sp->p.bytes += len;
	tell(sp);
}

void ims_sink_progress_file(struct ims_sink_progress *sp)
{
	sp->p.files++;
	tell(sp);
}

void ims_sink_progress_end(struct ims_sink_progress *sp, int status)
{
	if (!status)
		sp->p.packages++;
	tell(sp);
	sp->p.package = NULL; /* the extractor frees the name after this call */
}

void ims_sink_progress_done(struct ims_sink_progress *sp)
{
	sp->p.done = true;
	tell(sp);
}
