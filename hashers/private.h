/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal layout of the multi-digest context, shared by the engine, batch and backend files. */
#ifndef IMASTREAM_HASHERS_PRIVATE_H
#define IMASTREAM_HASHERS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "hashers/algos.h"
#include "imastream/hash.h"

/* Kernel ids are below 32 (one mask bit each); the table has at most this many rows. */
#define IMS_HASH_MAX_ID 32
#define IMS_HASH_MAX_LANES 8

/* hash_fd() reads this much at a time: large enough to amortise read(2), small enough for L2. */
#define IMS_HASH_READ_CHUNK (256u * 1024)

/* CPU features the batch dispatcher cares about (hashers/cpu.c). */
enum ims_cpu_feature {
	IMS_CPU_SSSE3 = 1u << 0,
	IMS_CPU_SSE41 = 1u << 1,
	IMS_CPU_SHA = 1u << 2,  /* SHA-NI: sha1rnds4, sha256rnds2 */
	IMS_CPU_AVX2 = 1u << 3, /* with the OS saving YMM state */
	IMS_CPU_AVX512 = 1u << 4, /* AVX-512F and BW, with the OS saving opmask and ZMM state */
};

struct imastream_hasher;
struct ims_hash_lane;

/*
 * One way to digest a batch of independent messages with one algorithm.  @hash gets
 * messages already validated (non-NULL data when len > 0, non-NULL digest).
 */
struct ims_batch_backend {
	const char *name;
	const char *env_name;    /* what IMASTREAM_HASH_BACKEND calls it: "avx2" */
	int algo;                /* the algorithm it implements, or 0 for any */
	unsigned int cpu_needed; /* every one of these features must be present */
	size_t min_batch;        /* below this many messages the next backend is faster */
	int (*hash)(struct imastream_hasher *h, struct ims_hash_lane *lane,
		    struct imastream_hash_msg *msgs, size_t n);
};

/* Everything one algorithm needs, fetched and allocated once at imastream_hasher_new(). */
struct ims_hash_lane {
	const struct imastream_hash_info *info;
	EVP_MD *md;
	EVP_MD_CTX *ctx;       /* the stream */
	EVP_MD_CTX *batch_ctx; /* batch messages: a batch never disturbs the stream */
	const struct ims_batch_backend *batch;
	const struct ims_batch_backend *small; /* for batches under batch->min_batch, or NULL */
	const struct ims_batch_backend *last;  /* the one that hashed the last batch */
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
};

enum ims_hasher_state {
	IMS_HASHER_OPEN,   /* accepting update() */
	IMS_HASHER_FINAL,  /* digests ready; update()/final() refused until reset() */
	IMS_HASHER_FAILED, /* OpenSSL failed mid-stream; only reset() helps */
};

struct imastream_hasher {
	struct imastream_log log;
	uint32_t mask;
	enum ims_hasher_state state;
	uint64_t length;
	unsigned int cpu; /* enum ims_cpu_feature bits, read once at new() */
	unsigned int nlanes;
	int8_t lane_of[IMS_HASH_MAX_ID]; /* kernel id -> index in lanes[], -1 if absent */
	uint8_t *readbuf;                /* hash_fd()'s buffer, allocated on first use */
	struct ims_hash_lane lanes[IMS_HASH_MAX_LANES];
};

/* The lane of @algo, or NULL when it is not in the context's mask. */
static inline struct ims_hash_lane *ims_hasher_lane(const struct imastream_hasher *h, int algo)
{
	if (algo < 0 || algo >= IMS_HASH_MAX_ID || h->lane_of[algo] < 0)
		return NULL;
	return (struct ims_hash_lane *)&h->lanes[h->lane_of[algo]];
}

#ifdef HAVE_SHANI
/* sha256_shani.c, built with -msse4.1 -msha: two SHA-256 messages interleaved. */
extern const struct ims_batch_backend ims_batch_sha256_shani_x2;
#endif

#ifdef HAVE_AVX2
/* sha256_avx2.c, built with -mavx2: eight SHA-256 messages in the lanes of a YMM register. */
extern const struct ims_batch_backend ims_batch_sha256_avx2_x8;
#endif
#ifdef HAVE_AVX512
/* sha256_avx512.c, built with -mavx512f -mavx512bw: sixteen SHA-256 messages in a ZMM register. */
extern const struct ims_batch_backend ims_batch_sha256_avx512_x16;
#endif

/* batch.c: every backend built into this library, best first, the portable one last. */
extern const struct ims_batch_backend *const ims_batch_backends[];
extern const size_t ims_batch_nbackends;
/* Forces every lane whose algorithm the named backend does onto it (its env_name). */
#define IMS_HASH_BACKEND_ENV "IMASTREAM_HASH_BACKEND"

/*
 * Test hook: makes @algo's lane use the backend named @short_name (as the environment
 * variable would).  Return: 0, -ENOENT for a name not built in, -EOPNOTSUPP when this
 * CPU lacks the backend's features (h->cpu), -EINVAL when it does not do @algo.
 */
int ims_hasher_force_batch(struct imastream_hasher *h, int algo, const char *short_name);

/*
 * Batch messages come in the caller's stride, @msg_size, the sizeof the caller was built
 * with (room to grow: a message cannot carry its own size, the array's layout depends on
 * it).  Message @i of such an array:
 */
static inline struct imastream_hash_msg *ims_hash_msg_at(const void *msgs, size_t msg_size,
							 size_t i)
{
	return (struct imastream_hash_msg *)((const char *)msgs + i * msg_size);
}
/*
 * batch_msgs.c: 0 when @msg_size is a struct's size (from the first version on) and each
 * of the @n messages has its data (or len 0) and a digest, and sets nothing past ours;
 * else -EINVAL or -E2BIG, said in one line that starts "@who: @what batch".  Before any
 * digest is written.
 */
int ims_hash_msgs_check(const struct imastream_log *log, const char *who, const char *what,
			const void *msgs, size_t n, size_t msg_size);
/* batch_msgs.c: copies @n checked messages from @first on into ours, zeros past the caller's. */
void ims_hash_msgs_copy(struct imastream_hash_msg *dst, const void *msgs, size_t msg_size,
			size_t first, size_t n);

/* cpu.c: the features of this CPU that the OS has enabled. */
unsigned int ims_cpu_features(void);

/*
 * batch.c: picks every lane's batch backend for the features in @cpu, or the one that
 * IMASTREAM_HASH_BACKEND names.  Return: 0, or what ims_hasher_force_batch() returns
 * for the variable's value, with one line logged.
 */
int ims_hasher_pick_batch(struct imastream_hasher *h, unsigned int cpu);

/*
 * Test hook: re-runs the dispatch as if the CPU had only @cpu (0 = the portable
 * backend everywhere), so tests can compare every backend on one machine.
 */
void ims_hasher_set_cpu_features(struct imastream_hasher *h, unsigned int cpu);

/*
 * A batch backend's view of one SHA-256 message: @run[0] its @blocks[0] whole 64-byte
 * blocks where they lie, @run[1] = @tail its padded last one or two blocks; @cur the
 * first run with blocks (batch.c, shared by the SHA-NI and the lane backends).
 */
/* SHA-256's round constants and initial value, for the batch backends (batch.c). */
extern const uint32_t ims_sha256_k[64];
extern const uint32_t ims_sha256_iv[8];

void ims_sha256_msg_runs(const uint8_t *data, size_t len, uint8_t tail[128],
			 const uint8_t *run[2], size_t blocks[2], unsigned int *cur);

#endif /* IMASTREAM_HASHERS_PRIVATE_H */
