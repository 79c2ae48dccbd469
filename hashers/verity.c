// SPDX-License-Identifier: LGPL-2.1-or-later
/* The fs-verity file digest, built bottom-up while the bytes stream by: data blocks in batches, tree blocks as they fill. */
/*
 * Facts from the kernel's Documentation/filesystems/fsverity.rst and fsverity-utils:
 * each 4 KiB data block (the last one zero-padded) is hashed; the hashes are packed 128
 * to a 4 KiB block (the last one zero-padded) and hashed again, level by level, until one
 * level holds a single hash: the root hash.  An empty file's root hash is all zeros, and
 * a one-block file's is the hash of that block.  The file digest is the SHA-256 of the
 * 256-byte descriptor holding the root hash.
 *
 * The number of levels is not known in advance (the stream's length is not), so the
 * tree is closed at final(): walking up from level 0, the first level that ever received
 * exactly one hash holds the root; every level below it has its partial block hashed
 * into the next.  A level is hashed into the next as soon as it holds 128 hashes, as
 * fsverity-utils does, so this gives the same tree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/private.h"
#include "hashers/backend.h"
#include "hashers/private.h"
#include "imastream/hash.h"
#include "imastream/verity.h"

#define BLOCK IMASTREAM_VERITY_BLOCK_SIZE
#define HASH_SIZE IMASTREAM_VERITY_DIGEST_SIZE
#define HASHES_PER_BLOCK (BLOCK / HASH_SIZE)
#define LOG2_BLOCK 12
/*
 * Data blocks hashed per batch: four rounds of the widest lanes (16), and 256 KiB, the
 * size of one read of imastream_verity_fd() so that reads are hashed in place.
 */
#define BATCH 64
/* 2^64 bytes are 2^52 blocks; 128 hashes per block: 8 levels reach one block. */
#define MAX_LEVELS 8
/* The descriptor: version, algorithm, log2 block size, salt size, 4 reserved, le64 data size, root hash[64], salt[32], 144 reserved. */
#define DESC_SIZE 256
#define DESC_DATA_SIZE 8
#define DESC_ROOT_HASH 16
/*
 * imastream_verity_batch(): files of at most one tree block's worth of data blocks (512
 * KiB), whose root is the hash of one block of level-0 hashes, are done GROUP at a time,
 * each stage across the group in one batch: a run of a tree walk is 16 files.
 */
#define GROUP 16
#define GROUP_MAX_BLOCKS HASHES_PER_BLOCK

enum verity_state { VERITY_OPEN, VERITY_FINAL, VERITY_FAILED };

struct verity_level {
	uint8_t *block;   /* hashes waiting to fill a block */
	size_t fill;      /* bytes of @block in use */
	uint64_t count;   /* hashes this level ever received, for finding the root */
};

struct imastream_verity {
	struct imastream_log log;
	struct imastream_hasher *hasher; /* SHA-256 only; its batch dispatch picks the lanes */
	enum verity_state state;
	uint64_t length;
	uint8_t *stage;   /* BATCH blocks: @staged whole ones, then one filling up */
	size_t staged;
	size_t fill;      /* bytes in stage block @staged */
	uint8_t *readbuf; /* imastream_verity_fd()'s, allocated on first use */
	uint8_t *trees;   /* imastream_verity_batch()'s: GROUP level-0 blocks, on first use */
	uint8_t desc[GROUP][DESC_SIZE];
	struct imastream_hash_msg msgs[BATCH];
	uint8_t hashes[BATCH][HASH_SIZE];
	struct verity_level level[MAX_LEVELS];
};

static void *alloc_blocks(size_t n)
{
	return aligned_alloc(64, n * BLOCK);
}

int imastream_verity_new(const struct imastream_log *log, struct imastream_verity **ret)
{
	struct imastream_verity *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return ims_err(log, -ENOMEM, "verity: no memory for a context");
	if (log)
		v->log = *log;
	err = imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), log, &v->hasher);
	if (err) {
		free(v);
		return err; /* the hasher said why */
	}
	v->stage = alloc_blocks(BATCH);
	for (int l = 0; l < MAX_LEVELS && v->stage; l++) {
		v->level[l].block = alloc_blocks(1);
		if (!v->level[l].block)
			break;
	}
	if (!v->stage || !v->level[MAX_LEVELS - 1].block) {
		imastream_verity_free(v);
		return ims_err(log, -ENOMEM, "verity: no memory for the tree blocks");
	}
	imastream_verity_reset(v);
	*ret = v;
	return 0;
}

void imastream_verity_free(struct imastream_verity *v)
{
	if (!v)
		return;
	imastream_hasher_free(v->hasher);
	for (int l = 0; l < MAX_LEVELS; l++)
		free(v->level[l].block);
	free(v->stage);
	free(v->readbuf);
	free(v->trees);
	free(v);
}

void imastream_verity_reset(struct imastream_verity *v)
{
	v->state = VERITY_OPEN;
	v->length = 0;
	v->staged = 0;
	v->fill = 0;
	for (int l = 0; l < MAX_LEVELS; l++) {
		v->level[l].fill = 0;
		v->level[l].count = 0;
	}
}

static int hash_one(struct imastream_verity *v, const void *data, size_t len, uint8_t *out)
{
	struct imastream_hash_msg msg = { data, len, out };

	return imastream_hash_batch(v->hasher, IMASTREAM_HASH_SHA256, &msg, 1, sizeof(msg));
}

/* Appends @hash to level @l; a block that fills is hashed into the level above. */
static int add_hash(struct imastream_verity *v, int l, const uint8_t *hash)
{
	uint8_t up[HASH_SIZE];
	int err;

	for (;; l++) {
		struct verity_level *lv = &v->level[l];

		/* Unreachable below 2^64 bytes; a guard, not a limit anyone meets. */
		if (l >= MAX_LEVELS)
			return ims_err(&v->log, -EFBIG, "verity: tree deeper than %d levels",
				       MAX_LEVELS);
		memcpy(lv->block + lv->fill, hash, HASH_SIZE);
		lv->fill += HASH_SIZE;
		lv->count++;
		if (lv->fill < BLOCK)
			return 0;
		err = hash_one(v, lv->block, BLOCK, up);
		if (err)
			return err;
		lv->fill = 0;
		hash = up;
	}
}

/* Hashes @n whole data blocks at @p in one batch and adds their hashes to level 0 in order. */
static int hash_data_blocks(struct imastream_verity *v, const uint8_t *p, size_t n)
{
	int err;

	for (size_t i = 0; i < n; i++)
		v->msgs[i] = (struct imastream_hash_msg){ p + i * BLOCK, BLOCK, v->hashes[i] };
	err = imastream_hash_batch(v->hasher, IMASTREAM_HASH_SHA256, v->msgs, n, sizeof(v->msgs[0]));
	for (size_t i = 0; i < n && !err; i++)
		err = add_hash(v, 0, v->hashes[i]);
	return err;
}

static int check_open(const struct imastream_verity *v, const char *what)
{
	if (v->state == VERITY_OPEN)
		return 0;
	return ims_err(&v->log, v->state == VERITY_FAILED ? -EIO : -EINVAL,
		       "verity: %s on a %s stream without reset", what,
		       v->state == VERITY_FAILED ? "failed" : "finished");
}

int imastream_verity_update(struct imastream_verity *v, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int err = check_open(v, "update");

	if (err)
		return err;
	if (!p && len)
		return ims_err(&v->log, -EINVAL, "verity: update with NULL data");
	v->length += len;
	while (len) {
		/* Whole batches straight from the caller's buffer when nothing is staged. */
		if (!v->staged && !v->fill && len >= BATCH * BLOCK) {
			err = hash_data_blocks(v, p, BATCH);
			p += BATCH * BLOCK;
			len -= BATCH * BLOCK;
		} else {
			size_t n = BLOCK - v->fill;

			if (n > len)
				n = len;
			memcpy(v->stage + v->staged * BLOCK + v->fill, p, n);
			p += n;
			len -= n;
			v->fill += n;
			if (v->fill == BLOCK) {
				v->fill = 0;
				if (++v->staged == BATCH) {
					v->staged = 0;
					err = hash_data_blocks(v, v->stage, BATCH);
				}
			}
		}
		if (err) {
			v->state = VERITY_FAILED;
			return err;
		}
	}
	return 0;
}

/* Hashes what is staged (the last block zero-padded), then closes the tree into @root. */
static int close_tree(struct imastream_verity *v, uint8_t *root)
{
	uint8_t up[HASH_SIZE];
	size_t n = v->staged;
	int err;

	if (v->fill) {
		memset(v->stage + n * BLOCK + v->fill, 0, BLOCK - v->fill);
		n++;
	}
	err = hash_data_blocks(v, v->stage, n);
	if (err)
		return err;
	if (v->length == 0)
		return 0; /* an empty file's root hash is all zeros */
	for (int l = 0; l < MAX_LEVELS; l++) {
		struct verity_level *lv = &v->level[l];

		if (lv->count == 1) {
			memcpy(root, lv->block, HASH_SIZE);
			return 0;
		}
		if (!lv->fill)
			continue;
		memset(lv->block + lv->fill, 0, BLOCK - lv->fill);
		err = hash_one(v, lv->block, BLOCK, up);
		lv->fill = 0;
		if (!err && l + 1 < MAX_LEVELS)
			err = add_hash(v, l + 1, up);
		if (err)
			return err;
	}
	return ims_err(&v->log, -EFBIG, "verity: tree deeper than %d levels", MAX_LEVELS);
}

/* The descriptor of @length bytes, its root hash left zero. */
static void desc_init(uint8_t desc[DESC_SIZE], uint64_t length)
{
	memset(desc, 0, DESC_SIZE);
	desc[0] = 1; /* version */
	desc[1] = IMASTREAM_VERITY_HASH_SHA256;
	desc[2] = LOG2_BLOCK;
	for (int i = 0; i < DESC_DATA_SIZE; i++)
		desc[DESC_DATA_SIZE + i] = (uint8_t)(length >> (8 * i)); /* little-endian */
}

int imastream_verity_final(struct imastream_verity *v, uint8_t digest[IMASTREAM_VERITY_DIGEST_SIZE])
{
	uint8_t desc[DESC_SIZE];
	int err = check_open(v, "final");

	if (err)
		return err;
	desc_init(desc, v->length);
	err = close_tree(v, desc + DESC_ROOT_HASH);
	if (!err)
		err = hash_one(v, desc, sizeof(desc), digest);
	v->state = err ? VERITY_FAILED : VERITY_FINAL;
	return err;
}

uint64_t imastream_verity_length(const struct imastream_verity *v)
{
	return v->length;
}

int imastream_verity_fd(struct imastream_verity *v, int fd,
			uint8_t digest[IMASTREAM_VERITY_DIGEST_SIZE])
{
	const size_t size = BATCH * BLOCK;
	bool eof = false;
	int err;

	if (!v->readbuf) {
		v->readbuf = alloc_blocks(BATCH);
		if (!v->readbuf)
			return ims_err(&v->log, -ENOMEM, "verity: no memory for the read buffer");
	}
	imastream_verity_reset(v);
	while (!eof) {
		size_t have = 0;

		/* A full buffer each time, so that every batch is hashed in place. */
		while (have < size) {
			ssize_t n = read(fd, v->readbuf + have, size - have);

			if (n == 0) {
				eof = true;
				break;
			}
			if (n < 0) {
				int e = errno;

				if (e == EINTR)
					continue;
				return ims_err(&v->log, -e, "verity: read of fd %d failed: %s", fd,
					       strerror(e));
			}
			have += (size_t)n;
		}
		err = imastream_verity_update(v, v->readbuf, have);
		if (err)
			return err;
	}
	return imastream_verity_final(v, digest);
}

/* Hashes the @n messages of v->msgs in one batch. */
static int flush_msgs(struct imastream_verity *v, size_t n)
{
	return n ? imastream_hash_batch(v->hasher, IMASTREAM_HASH_SHA256, v->msgs, n,
					sizeof(v->msgs[0])) : 0;
}

/*
 * The digests of @n (at most GROUP) files of at most GROUP_MAX_BLOCKS blocks, in three
 * batches across the files: every data block (the last one of each file zero-padded in
 * the stage), then the block of level-0 hashes of each file with more than one, then the
 * descriptors.  A one-block file's root is its block's hash, an empty file's is zeros.
 */
static int batch_group(struct imastream_verity *v, struct imastream_hash_msg *const *files,
		       size_t n)
{
	size_t queued = 0;
	int err = 0;

	memset(v->trees, 0, n * BLOCK);
	for (size_t f = 0; f < n; f++) {
		const uint8_t *data = files[f]->data;
		size_t len = files[f]->len;
		uint8_t *hashes = v->trees + f * BLOCK;

		for (size_t off = 0; off < len && !err; off += BLOCK, hashes += HASH_SIZE) {
			const uint8_t *block = data + off;

			if (len - off < BLOCK) {
				uint8_t *pad = v->stage + f * BLOCK;

				memcpy(pad, block, len - off);
				memset(pad + (len - off), 0, BLOCK - (len - off));
				block = pad;
			}
			v->msgs[queued++] = (struct imastream_hash_msg){ block, BLOCK, hashes };
			if (queued == BATCH) {
				err = flush_msgs(v, queued);
				queued = 0;
			}
		}
	}
	if (!err)
		err = flush_msgs(v, queued);
	queued = 0;
	for (size_t f = 0; f < n && !err; f++) {
		uint8_t *root = v->desc[f] + DESC_ROOT_HASH;

		desc_init(v->desc[f], files[f]->len);
		if (files[f]->len > BLOCK)
			v->msgs[queued++] = (struct imastream_hash_msg){ v->trees + f * BLOCK, BLOCK,
									 root };
		else if (files[f]->len)
			memcpy(root, v->trees + f * BLOCK, HASH_SIZE);
	}
	if (!err)
		err = flush_msgs(v, queued);
	for (size_t f = 0; f < n; f++)
		v->msgs[f] = (struct imastream_hash_msg){ v->desc[f], DESC_SIZE, files[f]->digest };
	return err ? err : flush_msgs(v, n);
}

int imastream_verity_batch(struct imastream_verity *v, struct imastream_hash_msg *msgs, size_t n,
			   size_t msg_size)
{
	/* A caller built with another header: its messages copied into ours, per group. */
	struct imastream_hash_msg *group[GROUP], own[GROUP];
	size_t g = 0;
	int err = ims_hash_msgs_check(&v->log, "verity", "fs-verity", msgs, n, msg_size);

	if (err)
		return err;
	if (!v->trees && n) {
		v->trees = alloc_blocks(GROUP);
		if (!v->trees)
			return ims_err(&v->log, -ENOMEM, "verity: no memory for the batch's tree blocks");
	}
	/* The stage serves as padding: whatever stream was open is gone. */
	imastream_verity_reset(v);
	for (size_t i = 0; i < n && !err; i++) {
		struct imastream_hash_msg *m = ims_hash_msg_at(msgs, msg_size, i);

		if (msg_size != sizeof(*m)) {
			ims_hash_msgs_copy(&own[g], msgs, msg_size, i, 1);
			m = &own[g];
		}
		if (m->len > (uint64_t)GROUP_MAX_BLOCKS * BLOCK) {
			/* A deeper tree: streamed alone, as imastream_verity_fd() does. */
			imastream_verity_reset(v);
			err = imastream_verity_update(v, m->data, m->len);
			if (!err)
				err = imastream_verity_final(v, m->digest);
			imastream_verity_reset(v);
			continue;
		}
		group[g++] = m;
		if (g == GROUP) {
			err = batch_group(v, group, g);
			g = 0;
		}
	}
	if (!err && g)
		err = batch_group(v, group, g);
	return err;
}

const char *imastream_verity_backend(const struct imastream_verity *v)
{
	return imastream_hash_batch_backend(v->hasher, IMASTREAM_HASH_SHA256);
}
