// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain's per-chain resources (plugin/core/resource.h), as the trust domains use
 * them: loaded once at the first request, a failed load said once and returned again,
 * told of each package before any plugin's psm_pre and after every psm_post, freed once
 * with the chain, and refused in one line past IMS_CHAIN_MAX_RESOURCES kinds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "imastream/chain.h"
#include "plugin/core/resource.h"
#include "tests/unit/test.h"
#include "tests/unit/test_log.h"

/* What happened, in order: one letter a call ("L" load, "B"/"E" a package's begin and
 * end, "p"/"q" the plugin's psm_pre and psm_post, "F" free). */
static char events[64];

static void event(char c)
{
	size_t n = strlen(events);

	ASSERT(n + 1 < sizeof(events));
	events[n] = c;
}

static int state_token = 42;
static int res_load(const struct imastream_config *cfg, const struct imastream_log *log,
		    void **state_ret)
{
	(void)cfg;
	(void)log;
	event('L');
	*state_ret = &state_token;
	return 0;
}

static void res_free(void *state)
{
	ASSERT(state == &state_token);
	event('F');
}

static void res_begin(void *state, const struct imastream_pkg *pkg)
{
	ASSERT(state == &state_token && pkg);
	event('B');
}

static void res_end(void *state)
{
	ASSERT(state == &state_token);
	event('E');
}

static const struct ims_chain_resource_ops good = {
	.name = "good",
	.load = res_load,
	.free = res_free,
	.pkg_begin = res_begin,
	.pkg_end = res_end,
};

static unsigned int failed_loads;
static int res_load_fails(const struct imastream_config *cfg, const struct imastream_log *log,
			  void **state_ret)
{
	(void)cfg;
	(void)state_ret;
	failed_loads++;
	log->fn(log->arg, IMASTREAM_LOG_ERR, "failing: cannot load");
	return -EIO;
}

static const struct ims_chain_resource_ops failing = {
	.name = "failing",
	.load = res_load_fails,
	.free = res_free,
	.pkg_begin = res_begin,
	.pkg_end = res_end,
};

/* Plain loaders for filling the chain's room; never told of packages. */
static int res_load_plain(const struct imastream_config *cfg, const struct imastream_log *log,
			  void **state_ret)
{
	(void)cfg;
	(void)log;
	*state_ret = &failed_loads;
	return 0;
}

static void res_free_plain(void *state)
{
	ASSERT(state == &failed_loads);
}

static const struct ims_chain_resource_ops plain[3] = {
	{ .name = "plain0", .load = res_load_plain, .free = res_free_plain },
	{ .name = "plain1", .load = res_load_plain, .free = res_free_plain },
	{ .name = "plain2", .load = res_load_plain, .free = res_free_plain },
};

/* The plugin: asks for the resources in init, as the policy plugins do. */
static int probe_init(struct imastream_init_args *args, void **state_ret)
{
	void *st = NULL, *again = NULL;

	ASSERT_EQ(ims_chain_resource(args->chain, &good, &st), 0);
	ASSERT_EQ(ims_chain_resource(args->chain, &good, &again), 0);
	ASSERT(st == &state_token && again == st);
	*state_ret = NULL;
	return 0;
}

static int probe_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	(void)state;
	(void)pkg;
	event('p');
	return 0;
}

static void probe_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	(void)state;
	(void)pkg;
	(void)res;
	event('q');
}

static const struct imastream_plugin_ops probe_ops = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "probe",
	.rank = IMASTREAM_RANK_ANY,
	.init = probe_init,
	.psm_pre = probe_psm_pre,
	.psm_post = probe_psm_post,
};

int main(void)
{
	struct imastream_pkg pkg = { sizeof(pkg), "p-1.0-1.noarch", IMASTREAM_PKG_INSTALL, 0 };
	struct imastream_config cfg;
	struct imastream_chain *chain;
	void *st;

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
	ASSERT_EQ(imastream_chain_add(chain, &probe_ops), 0);
	ASSERT_EQ(imastream_chain_init(chain), 0);
	ASSERT_EQ(strcmp(events, "L"), 0);

	/* A failed load: said once, not retried, its error returned to every caller. */
	n_lines = 0;
	ASSERT_EQ(ims_chain_resource(chain, &failing, &st), -EIO);
	ASSERT_EQ(ims_chain_resource(chain, &failing, &st), -EIO);
	ASSERT_EQ(failed_loads, 1u);
	ASSERT_EQ(n_lines, 1);

	/* Two psm pairs: the resource hears of each package around the plugins' hooks; the
	 * failed one is never called. */
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(imastream_chain_psm_pre(chain, &pkg), 0);
		imastream_chain_psm_post(chain, &pkg, 0);
	}
	ASSERT_EQ(strcmp(events, "LBpqEBpqE"), 0);

	/* Room for IMS_CHAIN_MAX_RESOURCES kinds: good, failing and two more; then one line. */
	ASSERT_EQ(IMS_CHAIN_MAX_RESOURCES, 4);
	ASSERT_EQ(ims_chain_resource(chain, &plain[0], &st), 0);
	ASSERT_EQ(ims_chain_resource(chain, &plain[1], &st), 0);
	n_lines = 0;
	last[0] = '\0';
	ASSERT_EQ(ims_chain_resource(chain, &plain[2], &st), -ENOSPC);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "plain2"));
	ASSERT_EQ(ims_chain_resource(chain, NULL, &st), -EINVAL);

	/* Freed once, with the chain; the failed one has nothing to free. */
	imastream_chain_free(chain);
	ASSERT_EQ(strcmp(events, "LBpqEBpqEF"), 0);
	imastream_config_release(&cfg);
	printf("PASS: chain resources: loaded once, told of each package, freed once\n");
	return 0;
}
