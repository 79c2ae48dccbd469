// SPDX-License-Identifier: LGPL-2.1-or-later
/* SHA-256 batch backend: two independent messages interleaved through the SHA-NI instructions. */
/*
 * Why two lanes: one SHA-256 stream is a chain of 32 dependent sha256rnds2 per block, each
 * with ~4 cycles of latency but ~3 cycles of reciprocal throughput on this core, so a
 * second independent chain fills the gaps (perf-anchors.md §2.2: x1.25-1.3 measured).
 *
 * This file alone is compiled with -msse4.1 -msha (its own convenience library): nothing
 * in it may run before ims_cpu_features() has confirmed SHA, SSSE3 and SSE4.1.
 */
#include <string.h>

#include <immintrin.h>

#include "common/private.h"
#include "hashers/private.h"

#define BLOCK 64

#define always_inline inline __attribute__((always_inline))

/*
 * sha256rnds2 wants the eight working words as two registers {A,B,E,F} and {C,D,G,H};
 * our state is the plain a..h array.  Convert at the start and end of each run of blocks.
 */
static always_inline void state_to_ni(const uint32_t st[8], __m128i *abef, __m128i *cdgh)
{
	__m128i dcba = _mm_loadu_si128((const __m128i *)&st[0]);
	__m128i hgfe = _mm_loadu_si128((const __m128i *)&st[4]);
	__m128i cdab = _mm_shuffle_epi32(dcba, 0xb1);
	__m128i efgh = _mm_shuffle_epi32(hgfe, 0x1b);

	*abef = _mm_alignr_epi8(cdab, efgh, 8);
	*cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);
}

static always_inline void state_from_ni(uint32_t st[8], __m128i abef, __m128i cdgh)
{
	__m128i feba = _mm_shuffle_epi32(abef, 0x1b);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);

	_mm_storeu_si128((__m128i *)&st[0], _mm_blend_epi16(feba, dchg, 0xf0));
	_mm_storeu_si128((__m128i *)&st[4], _mm_alignr_epi8(dchg, feba, 8));
}

/* Four rounds: two sha256rnds2, each taking two of the four prepared W+K words. */
static always_inline void rounds4(__m128i *abef, __m128i *cdgh, __m128i wk)
{
	*cdgh = _mm_sha256rnds2_epu32(*cdgh, *abef, wk);
	*abef = _mm_sha256rnds2_epu32(*abef, *cdgh, _mm_shuffle_epi32(wk, 0x0e));
}

/* W[i..i+3] from the previous sixteen words held in w[0..3] (oldest first). */
static always_inline __m128i schedule4(__m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
	__m128i t = _mm_sha256msg1_epu32(w0, w1);

	t = _mm_add_epi32(t, _mm_alignr_epi8(w3, w2, 4));
	return _mm_sha256msg2_epu32(t, w3);
}

static always_inline __m128i load_be(const uint8_t *p)
{
	const __m128i bswap32 = _mm_set_epi64x(0x0c0d0e0f08090a0bull, 0x0405060700010203ull);

	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), bswap32);
}

static void compress_x1(uint32_t st[8], const uint8_t *p, size_t nblocks)
{
	__m128i abef, cdgh, w[4];

	state_to_ni(st, &abef, &cdgh);
	for (; nblocks; nblocks--, p += BLOCK) {
		__m128i abef0 = abef, cdgh0 = cdgh;

#pragma GCC unroll 16
		for (int i = 0; i < 16; i++) {
			if (i < 4)
				w[i] = load_be(p + 16 * i);
			else
				w[i & 3] = schedule4(w[i & 3], w[(i + 1) & 3], w[(i + 2) & 3],
						     w[(i + 3) & 3]);
			rounds4(&abef, &cdgh,
				_mm_add_epi32(w[i & 3], _mm_load_si128((const __m128i *)&ims_sha256_k[4 * i])));
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	state_from_ni(st, abef, cdgh);
}

/* The same rounds for two messages, statement by statement, so both chains are in flight. */
static void compress_x2(uint32_t sa[8], uint32_t sb[8], const uint8_t *pa, const uint8_t *pb,
			size_t nblocks)
{
	__m128i abef_a, cdgh_a, abef_b, cdgh_b, wa[4], wb[4];

	state_to_ni(sa, &abef_a, &cdgh_a);
	state_to_ni(sb, &abef_b, &cdgh_b);
	for (; nblocks; nblocks--, pa += BLOCK, pb += BLOCK) {
		__m128i abef_a0 = abef_a, cdgh_a0 = cdgh_a, abef_b0 = abef_b, cdgh_b0 = cdgh_b;

#pragma GCC unroll 16
		for (int i = 0; i < 16; i++) {
			__m128i k = _mm_load_si128((const __m128i *)&ims_sha256_k[4 * i]);

			if (i < 4) {
				wa[i] = load_be(pa + 16 * i);
				wb[i] = load_be(pb + 16 * i);
			} else {
				wa[i & 3] = schedule4(wa[i & 3], wa[(i + 1) & 3], wa[(i + 2) & 3],
						      wa[(i + 3) & 3]);
				wb[i & 3] = schedule4(wb[i & 3], wb[(i + 1) & 3], wb[(i + 2) & 3],
						      wb[(i + 3) & 3]);
			}
			rounds4(&abef_a, &cdgh_a, _mm_add_epi32(wa[i & 3], k));
			rounds4(&abef_b, &cdgh_b, _mm_add_epi32(wb[i & 3], k));
		}
		abef_a = _mm_add_epi32(abef_a, abef_a0);
		cdgh_a = _mm_add_epi32(cdgh_a, cdgh_a0);
		abef_b = _mm_add_epi32(abef_b, abef_b0);
		cdgh_b = _mm_add_epi32(cdgh_b, cdgh_b0);
	}
	state_from_ni(sa, abef_a, cdgh_a);
	state_from_ni(sb, abef_b, cdgh_b);
}

/*
 * One lane of the scheduler: a message seen as two runs of whole blocks, first its own
 * bytes in place, then a copy of its last partial block with the padding and bit length.
 */
struct lane {
	struct imastream_hash_msg *msg; /* NULL when the lane is idle */
	const uint8_t *run[2];
	size_t blocks[2];
	unsigned int cur;
	uint32_t state[8];
	uint8_t tail[2 * BLOCK];
};

static void lane_load(struct lane *l, struct imastream_hash_msg *m)
{
	ims_sha256_msg_runs(m->data, m->len, l->tail, l->run, l->blocks, &l->cur);
	l->msg = m;
	memcpy(l->state, ims_sha256_iv, sizeof(ims_sha256_iv));
}

/* Moves @l past @n blocks of its current run; writes the digest when the message ends. */
static void lane_advance(struct lane *l, size_t n)
{
	l->blocks[l->cur] -= n;
	if (l->blocks[l->cur]) {
		l->run[l->cur] += n * BLOCK;
		return;
	}
	if (++l->cur < 2)
		return;
	for (int i = 0; i < 8; i++)
		ims_put_be32(l->msg->digest + 4 * i, l->state[i]);
	l->msg = NULL;
}

/*
 * Two lanes pull messages in order; while both are busy they advance together, so
 * unequal lengths only cost single-lane time at the very end of the batch.
 */
static int batch_sha256_shani_x2(struct imastream_hasher *h, struct ims_hash_lane *hl,
				 struct imastream_hash_msg *msgs, size_t n)
{
	struct lane lanes[2] = { { .msg = NULL }, { .msg = NULL } };
	size_t next = 0;

	(void)h;
	(void)hl;
	for (;;) {
		struct lane *a = &lanes[0], *b = &lanes[1];

		if (!a->msg && next < n)
			lane_load(a, &msgs[next++]);
		if (!b->msg && next < n)
			lane_load(b, &msgs[next++]);
		if (a->msg && b->msg) {
			size_t k = a->blocks[a->cur] < b->blocks[b->cur] ? a->blocks[a->cur]
									 : b->blocks[b->cur];

			compress_x2(a->state, b->state, a->run[a->cur], b->run[b->cur], k);
			lane_advance(a, k);
			lane_advance(b, k);
		} else if (a->msg || b->msg) {
			struct lane *l = a->msg ? a : b;
			size_t k = l->blocks[l->cur];

			compress_x1(l->state, l->run[l->cur], k);
			lane_advance(l, k);
		} else {
			return 0;
		}
	}
}

const struct ims_batch_backend ims_batch_sha256_shani_x2 = {
	.name = "shani-2x",
	.env_name = "shani",
	.algo = IMASTREAM_HASH_SHA256,
	.cpu_needed = IMS_CPU_SHA | IMS_CPU_SSSE3 | IMS_CPU_SSE41,
	.hash = batch_sha256_shani_x2,
};
