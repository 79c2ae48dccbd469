/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals shared by the chain core, the per-file helpers and the digest glue. */
#ifndef IMASTREAM_PLUGIN_PRIVATE_H
#define IMASTREAM_PLUGIN_PRIVATE_H

#include "common/private.h"
#include "imastream/chain.h"

/* At most this many digests per file: the union of what the plugins asked for. */
#define IMS_MAX_FILE_DIGESTS 4

struct ims_digest_engine;

struct ims_file_digest {
	int algo;
	size_t len;
	uint8_t value[IMASTREAM_HASH_MAX_DIGEST];
};

/* The chain's private part of a struct imastream_file, from file_opened to file_done. */
struct ims_file_state {
	struct imastream_chain *chain;
	unsigned int reached;       /* plugins file_opened ran for */
	bool streamed;              /* file_updated fed the engine */
	bool have_digests;          /* digests[] hold every wanted algorithm */
	const char *digest_source;  /* "stream" or "reread" */
	struct ims_file_digest digests[IMS_MAX_FILE_DIGESTS];
	unsigned int n_xattrs;
	struct imastream_file_xattr xattrs[IMASTREAM_FILE_MAX_XATTRS];
};

/* Chain accessors for the per-file helpers (file.c). */
const struct imastream_config *ims_chain_config(const struct imastream_chain *chain);
const struct imastream_log *ims_chain_log(const struct imastream_chain *chain);
struct ims_digest_engine *ims_chain_engine(struct imastream_chain *chain);
/* Returns true the first time it is called for a chain: one "no xattr" notice only. */
bool ims_chain_first_no_xattr(struct imastream_chain *chain);
/* The file currently streaming through the chain's engine, or NULL. */
struct imastream_file **ims_chain_streaming(struct imastream_chain *chain);

/*
 * Digest glue (digest.c) between the chain and the hashers/ engine: one engine per chain
 * for the union of wanted algorithms, fed either by file_updated chunks or by one re-read.
 */
int ims_digest_engine_new(uint32_t algos, const struct imastream_log *log,
			  struct ims_digest_engine **ret);
void ims_digest_engine_free(struct ims_digest_engine *e);
int ims_digest_stream_start(struct ims_digest_engine *e);
int ims_digest_stream_feed(struct ims_digest_engine *e, const void *buf, size_t len);
/* Finishes the stream (or hashes @fd from its offset when fd >= 0) into @out. */
int ims_digest_finish(struct ims_digest_engine *e, int fd, struct ims_file_digest *out,
		      unsigned int max, unsigned int *n_ret);

/* The chain's key (signer.c): loaded from @cfg, checked against cfg->trust. */
struct imastream_signer;
int ims_signer_load(const struct imastream_config *cfg, const struct imastream_log *log,
		    struct imastream_signer **ret);
void ims_signer_free(struct imastream_signer *s);

/*
 * For the chain's drivers (rpm adapter, installer): 0 when @root can hold the IMA xattr
 * (or no_xattr_support = skip says to go on, with one notice), else -EOPNOTSUPP with one
 * line ending in @hint (how this driver says "skip"; may be NULL).
 */
int ims_probe_root_xattrs(const struct imastream_config *cfg, const char *root, const char *hint,
			  const struct imastream_log *log);

/* Frees the per-file state (xattr copies). */
void ims_file_state_free(struct ims_file_state *st);

#endif /* IMASTREAM_PLUGIN_PRIVATE_H */
