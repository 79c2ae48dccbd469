/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 over N independent messages in the N lanes of a SIMD register: one template for AVX2 and AVX-512. */
/*
 * The including file defines LANES, the vector type VEC and the operations below, then
 * includes this file once; everything here is static, compiled with that file's -m flags.
 *
 *   V_ADD(a,b) V_XOR3(a,b,c) V_ROR(a,n) V_SHR(a,n) V_SET1(x)
 *   V_CH(e,f,g) V_MAJ(a,b,c)           the SHA-256 choice and majority functions
 *   load_words(VEC w[16], const uint8_t *const p[LANES])   word i of block p[l] in lane l,
 *                                                            big-endian converted
 *   V_LOAD(const uint32_t *) V_STORE(uint32_t *, VEC)       aligned, LANES words
 *
 * Lanes whose message has ended hash a block of zeros whose result is thrown away, so
 * the SIMD work never branches per lane; messages are fed in order to idle lanes.
 */
#include <string.h>

#include "common/private.h"
#include "hashers/private.h"

#define BLOCK 64

/*
 * Lanes fed by fewer messages than they hold compute zeros: a batch this small goes to the
 * next backend (SHA-NI where present), unless this one was forced.
 */
#define LANES_MIN_BATCH LANES

/* Transposed state: word j of lane l is st[j][l], so one aligned load gives word j of every lane. */
struct lanes_state {
	uint32_t st[8][LANES] __attribute__((aligned(64)));
};

#define BSIG0(x) V_XOR3(V_ROR(x, 2), V_ROR(x, 13), V_ROR(x, 22))
#define BSIG1(x) V_XOR3(V_ROR(x, 6), V_ROR(x, 11), V_ROR(x, 25))
#define SSIG0(x) V_XOR3(V_ROR(x, 7), V_ROR(x, 18), V_SHR(x, 3))
#define SSIG1(x) V_XOR3(V_ROR(x, 17), V_ROR(x, 19), V_SHR(x, 10))

/* @nblocks blocks of every lane; p[l] moves on by step[l] bytes per block (0 for an idle lane). */
static void compress_lanes(struct lanes_state *s, const uint8_t *p[LANES],
			   const size_t step[LANES], size_t nblocks)
{
	VEC v[8], w[16];

	for (int j = 0; j < 8; j++)
		v[j] = V_LOAD(s->st[j]);
	for (; nblocks; nblocks--) {
		VEC a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];

		load_words(w, p);
#pragma GCC unroll 64
		for (int t = 0; t < 64; t++) {
			VEC wt, t1, t2;

			if (t < 16) {
				wt = w[t];
			} else {
				wt = V_ADD(V_ADD(SSIG1(w[(t - 2) & 15]), w[(t - 7) & 15]),
					   V_ADD(SSIG0(w[(t - 15) & 15]), w[t & 15]));
				w[t & 15] = wt;
			}
			t1 = V_ADD(V_ADD(h, BSIG1(e)), V_ADD(V_CH(e, f, g), V_ADD(V_SET1(ims_sha256_k[t]), wt)));
			t2 = V_ADD(BSIG0(a), V_MAJ(a, b, c));
			h = g;
			g = f;
			f = e;
			e = V_ADD(d, t1);
			d = c;
			c = b;
			b = a;
			a = V_ADD(t1, t2);
		}
		v[0] = V_ADD(v[0], a);
		v[1] = V_ADD(v[1], b);
		v[2] = V_ADD(v[2], c);
		v[3] = V_ADD(v[3], d);
		v[4] = V_ADD(v[4], e);
		v[5] = V_ADD(v[5], f);
		v[6] = V_ADD(v[6], g);
		v[7] = V_ADD(v[7], h);
		for (int l = 0; l < LANES; l++)
			p[l] += step[l];
	}
	for (int j = 0; j < 8; j++)
		V_STORE(s->st[j], v[j]);
}

/* A message as two runs of whole blocks: its own bytes in place, then a padded copy of its tail. */
struct msg_lane {
	struct imastream_hash_msg *msg; /* NULL when idle */
	const uint8_t *run[2];
	size_t blocks[2];
	unsigned int cur;
	uint8_t tail[2 * BLOCK];
};

static void msg_lane_load(struct lanes_state *s, unsigned int l, struct msg_lane *ml,
			  struct imastream_hash_msg *m)
{
	ims_sha256_msg_runs(m->data, m->len, ml->tail, ml->run, ml->blocks, &ml->cur);
	ml->msg = m;
	for (int j = 0; j < 8; j++)
		s->st[j][l] = ims_sha256_iv[j];
}

static void msg_lane_advance(struct lanes_state *s, unsigned int l, struct msg_lane *ml, size_t n)
{
	ml->blocks[ml->cur] -= n;
	if (ml->blocks[ml->cur]) {
		ml->run[ml->cur] += n * BLOCK;
		return;
	}
	if (++ml->cur < 2)
		return;
	for (int j = 0; j < 8; j++)
		ims_put_be32(ml->msg->digest + 4 * j, s->st[j][l]);
	ml->msg = NULL;
}

/* Runs every lane for as many blocks as the shortest current run allows, refilling as lanes end. */
static int batch_lanes(struct imastream_hasher *h, struct ims_hash_lane *hl,
		       struct imastream_hash_msg *msgs, size_t n)
{
	static const uint8_t zero_block[BLOCK];
	struct lanes_state s;
	struct msg_lane ml[LANES];
	const uint8_t *p[LANES];
	size_t step[LANES], next = 0;

	(void)h;
	(void)hl;
	memset(&s, 0, sizeof(s));
	for (unsigned int l = 0; l < LANES; l++)
		ml[l].msg = NULL;
	for (;;) {
		size_t k = SIZE_MAX;

		for (unsigned int l = 0; l < LANES; l++) {
			if (!ml[l].msg && next < n)
				msg_lane_load(&s, l, &ml[l], &msgs[next++]);
			if (ml[l].msg && ml[l].blocks[ml[l].cur] < k)
				k = ml[l].blocks[ml[l].cur];
		}
		if (k == SIZE_MAX)
			return 0;
		for (unsigned int l = 0; l < LANES; l++) {
			p[l] = ml[l].msg ? ml[l].run[ml[l].cur] : zero_block;
			step[l] = ml[l].msg ? BLOCK : 0;
		}
		compress_lanes(&s, p, step, k);
		for (unsigned int l = 0; l < LANES; l++)
			if (ml[l].msg)
				msg_lane_advance(&s, l, &ml[l], k);
	}
}
