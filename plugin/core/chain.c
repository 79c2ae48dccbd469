// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain: plugins in a checked order, hooks dispatched with paired pre/post semantics.
 * It stays whole, over 600 lines: every hook's dispatch follows one contract (plugins in
 * order, a refusal blamed on its plugin, the post hooks of those reached), which a
 * reader checks hook against hook in one place.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "imastream/keys.h"
#include "keys/sign_ahead.h"
#include "plugin/core/driver.h"
#include "plugin/core/private.h"
#include "plugin/core/resource.h"

#define MAX_PLUGINS 16

struct slot {
	const struct imastream_plugin_ops *ops;
	void *state;
	bool inited;
};

/* A per-chain resource of the plugins (resource.h). */
struct resource {
	const struct ims_chain_resource_ops *ops;
	void *state; /* NULL when the load failed */
	int err;
};

struct imastream_chain {
	struct ims_file_services svc; /* configuration, log, digest engine: shared with file.c */
	struct slot slots[MAX_PLUGINS];
	unsigned int n;
	bool initialised;
	/* How many plugins the last tsm_pre/psm_pre reached; -1 when no pre is pending. */
	int tsm_reached;
	int psm_reached;
	struct imastream_signer *signer;
	int signer_err;
	struct ims_presign *presign; /* file signatures made ahead, or NULL */
	/* Resources the plugins asked for (the trust domains), in the order they did. */
	struct resource resources[IMS_CHAIN_MAX_RESOURCES];
	unsigned int n_resources;
};

static const char *const hook_names[IMASTREAM_HOOK_COUNT] = {
	[IMASTREAM_HOOK_INIT] = "init",
	[IMASTREAM_HOOK_CLEANUP] = "cleanup",
	[IMASTREAM_HOOK_TSM_PRE] = "tsm_pre",
	[IMASTREAM_HOOK_TSM_POST] = "tsm_post",
	[IMASTREAM_HOOK_PSM_PRE] = "psm_pre",
	[IMASTREAM_HOOK_PSM_POST] = "psm_post",
	[IMASTREAM_HOOK_SCRIPT_EXEC] = "script_exec",
	[IMASTREAM_HOOK_FILE_OPENED] = "file_opened",
	[IMASTREAM_HOOK_FILE_UPDATED] = "file_updated",
	[IMASTREAM_HOOK_FILE_CLOSED] = "file_closed",
	[IMASTREAM_HOOK_FILE_DONE] = "file_done",
	[IMASTREAM_HOOK_VERIFY] = "verify",
	[IMASTREAM_HOOK_FILE_CONFLICT] = "file_conflict",
};

const char *imastream_hook_name(int hook)
{
	return hook >= 0 && hook < IMASTREAM_HOOK_COUNT ? hook_names[hook] : NULL;
}

int imastream_chain_new(const struct imastream_config *cfg, const struct imastream_log *log,
			struct imastream_chain **ret)
{
	struct imastream_chain *chain;

	/* A configuration imastream_config_init() did not fill has no size. */
	if (!cfg || cfg->size < IMS_CONFIG_SIZE_1 || !ret)
		return -EINVAL;
	chain = calloc(1, sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	chain->svc.cfg = cfg;
	chain->svc.log = log;
	chain->tsm_reached = -1;
	chain->psm_reached = -1;
	*ret = chain;
	return 0;
}

int imastream_chain_add(struct imastream_chain *chain, const struct imastream_plugin_ops *ops)
{
	if (!chain || !ops || !ops->name || chain->initialised)
		return -EINVAL;
	/* Without a size the chain cannot tell which members the plugin's table has. */
	if (ops->size < IMS_PLUGIN_OPS_SIZE_1)
		return ims_err(chain->svc.log, -EINVAL,
			       "chain: plugin %s: its ops have no size (set .size = sizeof(struct imastream_plugin_ops))",
			       ops->name);
	/*
	 * Configuration keys exist for built-in plugins only: the library loads no plugin at
	 * run time, so a configuration holds the keys of the registry and no others.  A
	 * program's own plugin that declares another key would find it unset, its default
	 * included.
	 */
	for (const struct imastream_plugin_key *k = ops->keys; k && k->name; k++)
		if (!ims_config_values_has(chain->svc.cfg->values, k->name))
			return ims_err(chain->svc.log, -EINVAL,
				       "chain: plugin %s declares configuration key %s, which no built-in plugin has: only their keys can be set; read its settings in the program that adds it",
				       ops->name, k->name);
	if (chain->n == MAX_PLUGINS)
		return ims_err(chain->svc.log, -E2BIG, "chain: more than %d plugins", MAX_PLUGINS);
	for (unsigned int i = 0; i < chain->n; i++) {
		const struct imastream_plugin_ops *o = chain->slots[i].ops;

		if (strcmp(o->name, ops->name) == 0)
			return ims_err(chain->svc.log, -EEXIST, "chain: plugin %s listed twice", ops->name);
		/* EVM covers labels and security.ima: what it signs must be written first. */
		if (ops->rank != IMASTREAM_RANK_ANY && o->rank > ops->rank)
			return ims_err(chain->svc.log, -EINVAL,
				       "chain: plugin %s must come before %s (order: labels, ima, evm)",
				       ops->name, o->name);
	}
	chain->slots[chain->n++].ops = ops;
	return 0;
}

int imastream_chain_add_list(struct imastream_chain *chain, const char *list)
{
	char name[64];
	const char *p = list;
	int err;

	if (!chain || !list)
		return -EINVAL;
	while (*p) {
		const struct imastream_plugin_ops *ops;
		size_t len = strcspn(p, ",");
		size_t b = 0, e = len;

		while (b < e && p[b] == ' ')
			b++;
		while (e > b && p[e - 1] == ' ')
			e--;
		if (e == b || e - b >= sizeof(name))
			return ims_err(chain->svc.log, -EINVAL, "chain: bad plugin list \"%s\"", list);
		memcpy(name, p + b, e - b);
		name[e - b] = '\0';
		ops = imastream_plugin_lookup(name);
		if (!ops)
			return ims_err(chain->svc.log, -ENOENT,
				       "chain: unknown plugin \"%s\" (not built in: no plugin is loaded at run time)",
				       name);
		err = imastream_chain_add(chain, ops);
		if (err)
			return err;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static bool has_plugin(const struct imastream_chain *chain, const char *name)
{
	for (unsigned int i = 0; i < chain->n; i++)
		if (strcmp(chain->slots[i].ops->name, name) == 0)
			return true;
	return false;
}

/*
 * A chain that cannot do what the configuration asks would install files without the
 * values asked for and exit 0: refuse it.  A hash-mode chain without ima stays valid
 * (policy plugins alone write no security.ima by design).
 */
static int check_can_do(const struct imastream_chain *chain)
{
	const struct imastream_config *cfg = chain->svc.cfg;

	if (cfg->mode == IMASTREAM_MODE_SIGN && !has_plugin(chain, "ima"))
		return ims_err(chain->svc.log, -EINVAL,
			       "chain: mode sign needs the ima plugin, and plugins is \"%s\"",
			       cfg->plugins ? cfg->plugins : "");
	if (cfg->evm && !has_plugin(chain, "evm"))
		return ims_err(chain->svc.log, -EINVAL,
			       "chain: evm portable needs the evm plugin, and plugins is \"%s\"",
			       cfg->plugins ? cfg->plugins : "");
	if (cfg->package_sigs == IMASTREAM_PKGSIG_VERIFY && !has_plugin(chain, "ima"))
		return ims_err(chain->svc.log, -EINVAL,
			       "chain: package_sigs verify needs the ima plugin, and plugins is \"%s\"",
			       cfg->plugins ? cfg->plugins : "");
	return 0;
}

int imastream_chain_init(struct imastream_chain *chain)
{
	unsigned int n_algos;
	int err = 0;

	if (!chain || chain->initialised)
		return -EINVAL;
	err = check_can_do(chain);
	if (err)
		return err;
	chain->initialised = true;
	for (unsigned int i = 0; i < chain->n; i++) {
		struct slot *s = &chain->slots[i];
		struct imastream_init_args args = {
			.chain = chain, .name = s->ops->name, .cfg = chain->svc.cfg, .log = chain->svc.log,
		};

		if (s->ops->init) {
			err = s->ops->init(&args, &s->state);
			if (err)
				goto out;
		}
		s->inited = true;
		chain->svc.hash_algos |= args.hash_algos;
	}
	n_algos = __builtin_popcount(chain->svc.hash_algos);
	if (n_algos > IMS_MAX_FILE_DIGESTS) {
		err = ims_err(chain->svc.log, -E2BIG, "chain: plugins want %u digests, at most %d",
			      n_algos, IMS_MAX_FILE_DIGESTS);
		goto out;
	}
	/* verity = on: the engine also builds the fs-verity tree, from the same bytes. */
	chain->svc.verity = IMS_CONFIG_VERITY(chain->svc.cfg) && chain->svc.cfg->mode == IMASTREAM_MODE_SIGN;
	if (n_algos || chain->svc.verity)
		err = ims_digest_engine_new(chain->svc.hash_algos, chain->svc.verity,
					    chain->svc.log, &chain->svc.engine);
	/* Here, outside rpm's chroot: whether this process is in a user namespace. */
	if (!err)
		err = ims_pending_init(&chain->svc);
	if (!err)
		ims_touch_init(&chain->svc);
out:
	return err;
}

void imastream_chain_free(struct imastream_chain *chain)
{
	if (!chain)
		return;
	for (unsigned int i = chain->n; i-- > 0;) {
		struct slot *s = &chain->slots[i];

		if (s->inited && s->ops->cleanup)
			s->ops->cleanup(s->state);
	}
	ims_digest_engine_free(chain->svc.engine);
	ims_pending_free(&chain->svc);
	ims_presign_free(chain->presign);
	ims_signer_set_take(chain->signer, NULL, NULL);
	ims_signer_free(chain->signer);
	for (unsigned int i = chain->n_resources; i-- > 0;)
		if (chain->resources[i].state)
			chain->resources[i].ops->free(chain->resources[i].state);
	imastream_trust_free(chain->svc.own_trust);
	ims_touch_free(&chain->svc);
	free(chain);
}

int imastream_chain_from_config(const struct imastream_config *cfg,
				const struct imastream_log *log, struct imastream_chain **ret)
{
	struct imastream_chain *chain = NULL;
	int err;

	if (!cfg || !ret)
		return -EINVAL;
	err = imastream_config_check(cfg, log);
	if (!err)
		err = imastream_chain_new(cfg, log, &chain);
	if (!err)
		err = imastream_chain_add_list(chain, cfg->plugins);
	if (!err)
		err = imastream_chain_init(chain);
	if (err) {
		imastream_chain_free(chain);
		return err;
	}
	*ret = chain;
	return 0;
}

void imastream_chain_keep_signatures(struct imastream_chain *chain,
				     const struct imastream_trust *trust)
{
	if (chain)
		chain->svc.keep_trust = trust;
}

int imastream_chain_signer(struct imastream_chain *chain, struct imastream_signer **ret)
{
	if (!chain || !ret)
		return -EINVAL;
	/* A failed load is not retried: its one line has been said. */
	if (!chain->signer && !chain->signer_err) {
		chain->signer_err = ims_signer_load(chain->svc.cfg, chain->svc.log, &chain->signer);
		/* Now, before rpm enters the root: what keeps signatures that verify. */
		if (!chain->signer_err)
			ims_file_services_own_trust(&chain->svc);
	}
	if (chain->signer_err)
		return chain->signer_err;
	*ret = chain->signer;
	return 0;
}

/* Enough nonces for a burst of small files; each is about 100 bytes. */
#define SIGN_AHEAD_DEPTH 64

int ims_chain_sign_ahead(struct imastream_chain *chain, bool on)
{
	int err;

	/* Only a signer the plugins already asked for: hash mode loads no key. */
	if (!chain || !chain->signer)
		return 0;
	if (!on) {
		ims_signer_ahead_stop(chain->signer);
		return 0;
	}
	err = ims_signer_ahead_start(chain->signer, SIGN_AHEAD_DEPTH);
	return err == -EOPNOTSUPP ? 0 : err;
}

int ims_chain_presign(struct imastream_chain *chain, bool on)
{
	const struct imastream_config *cfg = chain ? chain->svc.cfg : NULL;

	if (!on)
		return chain ? ims_presign_run(NULL, NULL, &chain->presign, false) : 0;
	/* Verity signs the fs-verity digest, which only the written file gives. */
	if (!chain->signer || cfg->mode != IMASTREAM_MODE_SIGN || cfg->verity)
		return -EOPNOTSUPP;
	return ims_presign_run(chain->signer, chain->svc.log, &chain->presign, true);
}

int ims_chain_presign_file(struct imastream_chain *chain, size_t index,
			   const struct ims_presign_file *pf)
{
	const struct imastream_config *cfg = chain->svc.cfg;
	struct ims_presign_file f = *pf;

	if (!chain->presign || pf->algo != cfg->hash_algo)
		return 0;
	/* user.ima is covered too when asked for: not predicted. */
	f.evm = pf->evm && cfg->evm && !cfg->user_xattrs;
	return ims_presign_add(chain->presign, index, &f);
}

void ims_chain_presign_current(struct imastream_chain *chain, long index)
{
	ims_presign_current(chain->presign, index);
}

void ims_chain_presign_reset(struct imastream_chain *chain)
{
	ims_presign_reset(chain->presign);
}

/* A worker on the only CPU would just queue behind the thread it should relieve. */
bool ims_more_than_one_cpu(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
}

int ims_chain_resource(struct imastream_chain *chain, const struct ims_chain_resource_ops *ops,
		       void **state_ret)
{
	struct resource *r = NULL;

	if (!chain || !ops || !state_ret)
		return -EINVAL;
	for (unsigned int i = 0; i < chain->n_resources && !r; i++)
		if (chain->resources[i].ops == ops)
			r = &chain->resources[i];
	if (!r) {
		if (chain->n_resources == IMS_CHAIN_MAX_RESOURCES)
			return ims_err(chain->svc.log, -ENOSPC,
				       "chain: no room for the %s resource (%d kinds at most)",
				       ops->name, IMS_CHAIN_MAX_RESOURCES);
		/* As the signer: loaded at the first request, a failure said once. */
		r = &chain->resources[chain->n_resources++];
		r->ops = ops;
		r->err = ops->load(chain->svc.cfg, chain->svc.log, &r->state);
		if (r->err)
			r->state = NULL;
	}
	if (r->err)
		return r->err;
	*state_ret = r->state;
	return 0;
}

uint32_t imastream_chain_hash_algos(const struct imastream_chain *chain)
{
	return chain ? chain->svc.hash_algos : 0;
}

/*
 * The pre/post pattern shared by every paired hook: run @pre in order until one fails,
 * remember how many plugins were reached (the failing one included, since its pre ran).
 */
#define RUN_PRE(chain, reached, hook, ...)                                   \
	({                                                                   \
		int _err = 0;                                                \
		unsigned int _i;                                             \
		for (_i = 0; _i < (chain)->n; _i++) {                        \
			struct slot *_s = &(chain)->slots[_i];               \
			if (_s->ops->hook) {                                 \
				_err = _s->ops->hook(_s->state, __VA_ARGS__); \
				if (_err) {                                  \
					_i++;                                \
					break;                               \
				}                                            \
			}                                                    \
		}                                                            \
		(reached) = _i;                                              \
		_err;                                                        \
	})

#define RUN_POST(chain, reached, hook, ...)                                  \
	do {                                                                 \
		for (unsigned int _i = (reached); _i-- > 0;) {               \
			struct slot *_s = &(chain)->slots[_i];               \
			if (_s->ops->hook)                                   \
				_s->ops->hook(_s->state, __VA_ARGS__);       \
		}                                                            \
	} while (0)

/* Logs which plugin failed a hook, so the one line says where. */
static int blame(struct imastream_chain *chain, unsigned int reached, const char *hook, int err)
{
	if (err && reached)
		ims_logf(chain->svc.log, IMASTREAM_LOG_DEBUG, "%s failed in plugin %s: %s", hook,
			 chain->slots[reached - 1].ops->name, strerror(-err));
	return err;
}

/*
 * The structs a driver fills (hooks.h, "Room to grow"): refused below their first
 * version, which ends with the member named here, before any plugin reads them.
 */
static int check_txn(const struct imastream_chain *chain, const struct imastream_txn *txn)
{
	return txn ? IMS_CHECK_SIZE(chain->svc.log, txn, imastream_txn, rpm_ts) : -EINVAL;
}

/* A package may be absent where hooks.h says so (a file of no package). */
static int check_pkg(const struct imastream_chain *chain, const struct imastream_pkg *pkg)
{
	return pkg ? IMS_CHECK_SIZE(chain->svc.log, pkg, imastream_pkg, rpm_header) : 0;
}

int imastream_chain_tsm_pre(struct imastream_chain *chain, const struct imastream_txn *txn)
{
	unsigned int reached;
	int err;

	if (!chain || !chain->initialised || chain->tsm_reached >= 0)
		return -EINVAL;
	err = check_txn(chain, txn);
	if (err)
		return err;
	ims_pending_txn_begin(&chain->svc, txn->root);
	err = RUN_PRE(chain, reached, tsm_pre, txn);
	chain->tsm_reached = reached;
	return blame(chain, reached, "tsm_pre", err);
}

void imastream_chain_tsm_post(struct imastream_chain *chain, const struct imastream_txn *txn,
			      int res)
{
	if (!chain || chain->tsm_reached < 0)
		return;
	RUN_POST(chain, (unsigned int)chain->tsm_reached, tsm_post, txn, res);
	chain->tsm_reached = -1;
	ims_pending_txn_end(&chain->svc);
}

int imastream_chain_psm_pre(struct imastream_chain *chain, const struct imastream_pkg *pkg)
{
	unsigned int reached;
	int err;

	if (!chain || !chain->initialised || chain->psm_reached >= 0 || !pkg)
		return -EINVAL;
	err = check_pkg(chain, pkg);
	if (err)
		return err;
	/* The resources first (one trust verdict per package), before any plugin reads them. */
	for (unsigned int i = 0; i < chain->n_resources; i++)
		if (chain->resources[i].state && chain->resources[i].ops->pkg_begin)
			chain->resources[i].ops->pkg_begin(chain->resources[i].state, pkg);
	err = RUN_PRE(chain, reached, psm_pre, pkg);
	chain->psm_reached = reached;
	return blame(chain, reached, "psm_pre", err);
}

void imastream_chain_psm_post(struct imastream_chain *chain, const struct imastream_pkg *pkg,
			      int res)
{
	if (!chain || chain->psm_reached < 0)
		return;
	RUN_POST(chain, (unsigned int)chain->psm_reached, psm_post, pkg, res);
	chain->psm_reached = -1;
	for (unsigned int i = 0; i < chain->n_resources; i++)
		if (chain->resources[i].state && chain->resources[i].ops->pkg_end)
			chain->resources[i].ops->pkg_end(chain->resources[i].state);
}

int imastream_chain_script_exec(struct imastream_chain *chain,
				const struct imastream_script *script)
{
	unsigned int reached;
	int err;

	if (!chain || !chain->initialised || !script)
		return -EINVAL;
	err = IMS_CHECK_SIZE(chain->svc.log, script, imastream_script, type);
	if (err)
		return err;
	err = RUN_PRE(chain, reached, script_exec, script);
	return blame(chain, reached, "script_exec", err);
}

int imastream_chain_verify(struct imastream_chain *chain, const struct imastream_verify *v)
{
	unsigned int reached;
	int err;

	if (!chain || !chain->initialised || !v)
		return -EINVAL;
	err = IMS_CHECK_SIZE(chain->svc.log, v, imastream_verify, result);
	if (err)
		return err;
	err = RUN_PRE(chain, reached, verify, v);
	return blame(chain, reached, "verify", err);
}

int imastream_chain_file_conflict(struct imastream_chain *chain,
				  const struct imastream_conflict *c)
{
	unsigned int reached;
	int err;

	if (!chain || !chain->initialised || !c)
		return -EINVAL;
	err = IMS_CHECK_SIZE(chain->svc.log, c, imastream_conflict, owner);
	if (!err)
		err = check_pkg(chain, c->pkg);
	if (err)
		return err;
	err = RUN_PRE(chain, reached, file_conflict, c);
	return blame(chain, reached, "file_conflict", err);
}

int imastream_chain_file_opened(struct imastream_chain *chain, struct imastream_file *f)
{
	struct ims_file_state *st;
	unsigned int reached;
	int err;

	if (!chain || !chain->initialised || !f || f->chain_state)
		return -EINVAL;
	err = IMS_CHECK_SIZE(chain->svc.log, f, imastream_file, chain_state);
	if (!err)
		err = check_pkg(chain, f->pkg);
	if (err)
		return err;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->chain = chain;
	st->svc = &chain->svc;
	f->chain_state = st;
	err = RUN_PRE(chain, reached, file_opened, f);
	st->reached = reached;
	return blame(chain, reached, "file_opened", err);
}

int imastream_chain_file_updated(struct imastream_chain *chain, struct imastream_file *f,
				 const void *buf, size_t len)
{
	struct ims_file_state *st;
	int err;

	if (!chain || !f || !(st = f->chain_state) || st->chain != chain)
		return -EINVAL;
	if (chain->svc.engine) {
		/* One engine per chain: files stream one at a time. */
		if (chain->svc.streaming && chain->svc.streaming != f)
			return ims_err(chain->svc.log, -EBUSY, "%s: another file is still streaming",
				       f->dest ? f->dest : f->path);
		if (!chain->svc.streaming) {
			/*
			 * A driver that set known_algo before file_opened gives that digest,
			 * verified, at file_closed: when it is every digest wanted, the stream
			 * is hashed for the fs-verity tree only (invariant 1: each digest once).
			 */
			uint32_t plain = chain->svc.hash_algos;

			if (f->known_algo > 0 && f->known_algo < 32)
				plain &= ~IMASTREAM_HASH_BIT(f->known_algo);
			err = ims_digest_stream_start(chain->svc.engine, plain != 0);
			if (err)
				return err;
			chain->svc.streaming = f;
			st->streamed = true;
			st->plain_skipped = !plain && chain->svc.verity;
		}
		err = ims_digest_stream_feed(chain->svc.engine, buf, len);
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < chain->n; i++) {
		struct slot *s = &chain->slots[i];

		if (s->ops->file_updated) {
			err = s->ops->file_updated(s->state, f, buf, len);
			if (err)
				return blame(chain, i + 1, "file_updated", err);
		}
	}
	return 0;
}

int imastream_chain_file_closed(struct imastream_chain *chain, struct imastream_file *f)
{
	struct ims_file_state *st;
	unsigned int n;
	int err;

	if (!chain || !f || !(st = f->chain_state) || st->chain != chain)
		return -EINVAL;
	if (chain->svc.streaming == f) {
		chain->svc.streaming = NULL;
		err = ims_digest_finish(chain->svc.engine, -1, true, st->digests,
					IMS_MAX_FILE_DIGESTS, &n, st->verity_digest);
		if (err)
			return err;
		st->have_digests = true;
		st->digest_source = "stream";
	}
	/* A file left in place keeps labels that verify: the kernel may refuse new ones. */
	ims_touch_check(&chain->svc, f, st);
	/* Sequential, not paired: a later plugin (evm) must not run when an earlier failed. */
	for (unsigned int i = 0; i < chain->n; i++) {
		struct slot *s = &chain->slots[i];

		if (s->ops->file_closed) {
			err = s->ops->file_closed(s->state, f);
			if (err)
				return blame(chain, i + 1, "file_closed", err);
		}
	}
	/* Every plugin's values are known: those a user namespace refused go to the root. */
	return ims_pending_file_closed(&chain->svc, f, st);
}

void imastream_chain_file_done(struct imastream_chain *chain, struct imastream_file *f, int res)
{
	struct ims_file_state *st;

	if (!chain || !f || !(st = f->chain_state) || st->chain != chain)
		return;
	if (chain->svc.streaming == f)
		chain->svc.streaming = NULL;
	RUN_POST(chain, st->reached, file_done, f, res);
	ims_file_state_free(st);
	f->chain_state = NULL;
}
