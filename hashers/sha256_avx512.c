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
 * Word i of sixteen blocks: two 64-bit-address gathers of eight, then one byte shuffle
 * (AVX-512BW) to big-endian.
 */
static inline __attribute__((always_inline)) void load_words(__m512i w[16],
							    const uint8_t *const p[LANES])
{
	const __m512i bswap32 = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
	__m512i lo = _mm512_loadu_si512((const void *)&p[0]);
	__m512i hi = _mm512_loadu_si512((const void *)&p[8]);

	for (int i = 0; i < 16; i++) {
		__m256i a = _mm512_i64gather_epi32(lo, (const void *)(uintptr_t)(4 * i), 1);
		__m256i b = _mm512_i64gather_epi32(hi, (const void *)(uintptr_t)(4 * i), 1);

		w[i] = _mm512_shuffle_epi8(_mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1),
					   bswap32);
	}
}

#include "hashers/sha256_lanes.h"

const struct ims_batch_backend ims_batch_sha256_avx512_x16 = {
	.name = "avx512-16x",
	.env_name = "avx512",
	.algo = IMASTREAM_HASH_SHA256,
	.cpu_needed = IMS_CPU_AVX512,
	.min_batch = LANES_MIN_BATCH,
	.hash = batch_lanes,
};
