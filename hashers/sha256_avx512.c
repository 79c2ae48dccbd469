// SPDX-License-Identifier: LGPL-2.1-or-later
/* SHA-256 batch backend: sixteen independent messages in the sixteen 32-bit lanes of AVX-512 registers. */
/*
 * This file alone is compiled with -mavx512f -mavx512bw (its own convenience library): nothing in it
 * may run before ims_cpu_features() has confirmed AVX-512F, AVX-512BW and the OS's ZMM state.
 * AVX-512F brings what AVX2 lacks for SHA-256: a rotate and a three-input logic op.
 */
#include <stdint.h>

#include <immintrin.h>

#define LANES 16
#define VEC __m512i
#define V_ADD(a, b) _mm512_add_epi32(a, b)
#define V_XOR(a, b) _mm512_xor_si512(a, b)
/* vpternlogd truth tables: 0x96 = a ^ b ^ c, 0xca = a ? b : c (choice), 0xe8 = majority. */
#define V_XOR3(a, b, c) _mm512_ternarylogic_epi32(a, b, c, 0x96)
#define V_SHR(a, n) _mm512_srli_epi32(a, n)
#define V_ROR(a, n) _mm512_ror_epi32(a, n)
#define V_SET1(x) _mm512_set1_epi32((int)(x))
#define V_CH(e, f, g) _mm512_ternarylogic_epi32(e, f, g, 0xca)
#define V_MAJ(a, b, c) _mm512_ternarylogic_epi32(a, b, c, 0xe8)
#define V_LOAD(p) _mm512_load_si512((const void *)(p))
#define V_STORE(p, v) _mm512_store_si512((void *)(p), v)

/*
 * Sixteen blocks, one per lane, loaded whole and transposed so that w[i] holds word i of
 * every lane: 64 shuffles per sixteen blocks, cheaper than 32 gathers of eight words.
 */
static inline __attribute__((always_inline)) void load_words(__m512i w[16],
							    const uint8_t *const p[LANES])
{
	const __m512i bswap32 = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
	__m512i r[16], t[16], u[4][4];

	for (int l = 0; l < LANES; l++)
		r[l] = _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)p[l]), bswap32);
	/* Within each 128-bit chunk c: t[2k] = words 4c,4c+1 and t[2k+1] = 4c+2,4c+3 of lanes 2k, 2k+1. */
	for (int k = 0; k < 8; k++) {
		t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
		t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
	}
	/* u[m][j]: chunk c holds word 4c+j of lanes 4m..4m+3. */
	for (int m = 0; m < 4; m++) {
		u[m][0] = _mm512_unpacklo_epi64(t[4 * m], t[4 * m + 2]);
		u[m][1] = _mm512_unpackhi_epi64(t[4 * m], t[4 * m + 2]);
		u[m][2] = _mm512_unpacklo_epi64(t[4 * m + 1], t[4 * m + 3]);
		u[m][3] = _mm512_unpackhi_epi64(t[4 * m + 1], t[4 * m + 3]);
	}
	/* A 4x4 transpose of 128-bit chunks for each j: chunk m of w[4c+j] from chunk c of u[m][j]. */
	for (int j = 0; j < 4; j++) {
		__m512i v0 = _mm512_shuffle_i32x4(u[0][j], u[1][j], 0x44);
		__m512i v1 = _mm512_shuffle_i32x4(u[0][j], u[1][j], 0xee);
		__m512i v2 = _mm512_shuffle_i32x4(u[2][j], u[3][j], 0x44);
		__m512i v3 = _mm512_shuffle_i32x4(u[2][j], u[3][j], 0xee);

		w[0 + j] = _mm512_shuffle_i32x4(v0, v2, 0x88);
		w[4 + j] = _mm512_shuffle_i32x4(v0, v2, 0xdd);
		w[8 + j] = _mm512_shuffle_i32x4(v1, v3, 0x88);
		w[12 + j] = _mm512_shuffle_i32x4(v1, v3, 0xdd);
	}
}

#include "hashers/sha256_lanes.h"

/*
 * Spelled out, as in sha256_avx2.c: each file's entry points at the batch_lanes its own -m
 * flags built, and a macro making both would hide where each symbol is defined.
 */
const struct ims_batch_backend ims_batch_sha256_avx512_x16 = {
	.name = "avx512-16x",
	.env_name = "avx512",
	.algo = IMASTREAM_HASH_SHA256,
	.cpu_needed = IMS_CPU_AVX512,
	.min_batch = LANES_MIN_BATCH,
	.hash = batch_lanes,
};
