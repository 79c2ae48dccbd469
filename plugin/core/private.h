/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals shared by the chain core, the per-file helpers and the digest glue. */
#ifndef IMASTREAM_PLUGIN_CORE_PRIVATE_H
#define IMASTREAM_PLUGIN_CORE_PRIVATE_H

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/verity.h"
#include "plugin/core/driver.h"

/* At most this many digests per file: the union of what the plugins asked for. */
#define IMS_MAX_FILE_DIGESTS 4

struct ims_digest_engine;

struct ims_file_digest {
	int algo;
	size_t len;
	uint8_t value[IMASTREAM_HASH_MAX_DIGEST];
};

/*
 * What the per-file helpers (file.c) get from their chain: the chain fills it at init
 * and owns it; file.c reads it and updates only @no_xattr_told.  The chain itself stays
 * opaque to file.c, so neither file includes the other's internals.
 */
struct ims_file_services {
	const struct imastream_config *cfg;
	const struct imastream_log *log;
	uint32_t hash_algos;              /* the digests the plugins asked for at init */
	struct ims_digest_engine *engine; /* one per chain; NULL when nobody wants a digest */
	bool verity;                      /* the engine also computes fs-verity digests */
	struct imastream_file *streaming; /* the file the engine is being fed, or NULL */
	bool no_xattr_told;               /* the "no xattr support" notice is said once */
	const struct imastream_trust *keep_trust; /* imastream_chain_keep_signatures() */
	struct imastream_trust *own_trust;	  /* cfg->cert, loaded with the signer */
	struct ims_pending *pending;		  /* pending labels (pending.c) */
	/* cert and trust, for the labels of files left in place (touch.c) */
	struct imastream_trust *touch_trust;
	struct imastream_verifier *touch_verifier;
};

/* Loads cfg->cert as @svc->own_trust (left NULL when it cannot be read). */
void ims_file_services_own_trust(struct ims_file_services *svc);

/* The chain's private part of a struct imastream_file, from file_opened to file_done. */
struct ims_file_state {
	const struct imastream_chain *chain; /* identity only: the hooks check it */
	struct ims_file_services *svc;
	unsigned int reached;       /* plugins file_opened ran for */
	bool streamed;              /* file_updated fed the engine */
	bool have_digests;          /* digests[] hold every wanted algorithm (and verity_digest) */
	bool plain_skipped;         /* streamed for the fs-verity digest only: digests[] are empty,
				     * the driver promised the plain one as known_digest */
	const char *digest_source;  /* "stream" or "reread" */
	struct ims_file_digest digests[IMS_MAX_FILE_DIGESTS];
	uint8_t verity_digest[IMASTREAM_VERITY_DIGEST_SIZE]; /* verity = on */
	unsigned int n_xattrs;
	struct imastream_file_xattr xattrs[IMASTREAM_FILE_MAX_XATTRS];
	uint32_t pending_mask; /* xattrs[] bits kept as pending labels (pending.c) */
	bool kept;	       /* left in place, labels that verify: none written (touch.c) */
	char frozen_why[160];  /* left in place under an EVM portable signature that does
				* not verify: why, for the line if the kernel refuses a write */
};

/*
 * Files left in place (touch.c): before the plugins' file_closed, a regular file the
 * driver did not create and that holds an EVM portable signature is verified with cert
 * and trust; when security.ima and security.evm both verify, st->kept is set and no
 * security xattr of it is written (imastream_file_set_xattr() and
 * imastream_file_keep_signature() record what it holds instead).
 */
void ims_touch_check(struct ims_file_services *svc, struct imastream_file *f,
		     struct ims_file_state *st);
/* At init, outside rpm's chroot: cert and trust loaded (if they cannot be, none is kept). */
void ims_touch_init(struct ims_file_services *svc);
void ims_touch_free(struct ims_file_services *svc);

/*
 * Pending labels (pending.c): what a user namespace cannot write, kept inside the root.
 * init reads the process's uid_map (a non-initial namespace, or none); the transaction
 * hooks open and close the root; ims_pending_refused() turns the first EPERM/EACCES of a
 * security xattr into the transaction's decision (0: go on without writing, else the
 * error); ims_pending_file_closed() writes the entry of a file with pending values.
 */
struct ims_pending;
int ims_pending_init(struct ims_file_services *svc);
void ims_pending_free(struct ims_file_services *svc);
void ims_pending_txn_begin(struct ims_file_services *svc, const char *root);
void ims_pending_txn_end(struct ims_file_services *svc);
bool ims_pending_active(const struct ims_file_services *svc);
bool ims_pending_keeps(const struct ims_file_services *svc);
int ims_pending_refused(struct ims_file_services *svc, const char *what, const char *name, int err);
int ims_pending_file_closed(struct ims_file_services *svc, struct imastream_file *f,
			    const struct ims_file_state *st);

/*
 * Digest glue (digest.c) between the chain and the hashers/ engine: one engine per chain
 * for the union of wanted algorithms, fed either by file_updated chunks or by one re-read.
 */
int ims_digest_engine_new(uint32_t algos, bool verity, const struct imastream_log *log,
			  struct ims_digest_engine **ret);
void ims_digest_engine_free(struct ims_digest_engine *e);
/*
 * Starts a stream; @plain false: the hasher is left out of it and only the fs-verity
 * tree is built (when there is one), ims_digest_finish() then gives no digest.
 */
int ims_digest_stream_start(struct ims_digest_engine *e, bool plain);
int ims_digest_stream_feed(struct ims_digest_engine *e, const void *buf, size_t len);
/* Finishes the stream (or hashes @fd from its offset when fd >= 0) into @out, and the
 * fs-verity digest into @verity_out when the engine makes one.  @plain (fd >= 0 with a
 * verity tree only): false reads @fd for the tree alone and gives no digest. */
int ims_digest_finish(struct ims_digest_engine *e, int fd, bool plain,
		      struct ims_file_digest *out, unsigned int max, unsigned int *n_ret,
		      uint8_t verity_out[IMASTREAM_VERITY_DIGEST_SIZE]);

/*
 * The configuration (config.c) and the keys the built-in plugins declare (plugin_keys.c):
 * core_keys.c lists the core's keys, below both; config.c sets them and hands every other
 * key to ims_config_values_set(), which returns -ENOENT for a key no plugin declares.
 */
const char *const *ims_config_core_keys(void);
/* The values core key @key takes, NULL-terminated, its index what it sets; NULL for a
 * key whose values are no fixed set. */
const char *const *ims_config_core_values(const char *key);
int ims_config_values_new(struct imastream_config_values **ret);
void ims_config_values_free(struct imastream_config_values *t);
/* Whether some built-in plugin declares @key. */
bool ims_config_values_has(const struct imastream_config_values *t, const char *key);
int ims_config_values_set(struct imastream_config_values *t, const char *key, const char *value,
			  const char *where, const struct imastream_log *log);


/* The size of the first struct imastream_config and imastream_plugin_ops with a size. */
#define IMS_CONFIG_SIZE_1 (offsetof(struct imastream_config, allow_weak_algos) + sizeof(bool))
/* Members added after these: read and set only when IMS_HAS_MEMBER() says so
 * (IMS_CONFIG_VERITY() in driver.h). */
#define IMS_PLUGIN_OPS_SIZE_1                                                       \
	(offsetof(struct imastream_plugin_ops, file_conflict) +                     \
	 sizeof(((struct imastream_plugin_ops *)0)->file_conflict))

/* The chain's key (signer.c): loaded from @cfg, checked against cfg->trust. */
struct imastream_signer;
int ims_signer_load(const struct imastream_config *cfg, const struct imastream_log *log,
		    struct imastream_signer **ret);
void ims_signer_free(struct imastream_signer *s);

/*
 * presign.c, behind the chain's ims_chain_presign*() (driver.h): @on starts the worker
 * of *@ps, made on first use with its own handle on @signer, whose signatures it then
 * hands @signer through its hook; !@on stops it.  The rest take a NULL @ps as "none".
 */
struct ims_presign;
int ims_presign_run(struct imastream_signer *signer, const struct imastream_log *log,
		    struct ims_presign **ps, bool on);
int ims_presign_add(struct ims_presign *ps, size_t index, const struct ims_presign_file *pf);
void ims_presign_current(struct ims_presign *ps, long index);
void ims_presign_reset(struct ims_presign *ps);
void ims_presign_free(struct ims_presign *ps);

/* Frees the per-file state (xattr copies). */
void ims_file_state_free(struct ims_file_state *st);

#endif /* IMASTREAM_PLUGIN_CORE_PRIVATE_H */
