/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the chain core offers the built-in plugins beyond imastream/hooks.h: resources a
 * plugin keeps per chain rather than per plugin (the policy plugins' trust domains),
 * loaded once at the first request and told where each package's psm pair begins and
 * ends.  The core knows a resource only by these ops: what it is belongs to the plugins.
 */
#ifndef IMASTREAM_PLUGIN_CORE_RESOURCE_H
#define IMASTREAM_PLUGIN_CORE_RESOURCE_H

#include "imastream/chain.h"
#include "imastream/hooks.h"

/* A chain holds at most this many resources (one kind each). */
#define IMS_CHAIN_MAX_RESOURCES 4

struct ims_chain_resource_ops {
	const char *name; /* for messages */
	/* Loads the resource from the chain's configuration; 0 or -errno, said in one line. */
	int (*load)(const struct imastream_config *cfg, const struct imastream_log *log,
		    void **state_ret);
	void (*free)(void *state);
	/* Optional: in psm_pre, before any plugin's psm_pre. */
	void (*pkg_begin)(void *state, const struct imastream_pkg *pkg);
	/* Optional: in psm_post, after every plugin's psm_post. */
	void (*pkg_end)(void *state);
};

/**
 * ims_chain_resource - the chain's resource of kind @ops, loaded at the first request
 * A failed load is not retried: its one line has been said, and every later request
 * returns the same error.  Freed with the chain, after every plugin's cleanup.
 * Return: 0 with *@state_ret set, the load's error, -ENOSPC when the chain already holds
 * IMS_CHAIN_MAX_RESOURCES other kinds, -EINVAL.
 */
int ims_chain_resource(struct imastream_chain *chain, const struct ims_chain_resource_ops *ops,
		       void **state_ret);

#endif /* IMASTREAM_PLUGIN_CORE_RESOURCE_H */
