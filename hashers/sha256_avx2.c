// SPDX-License-Identifier: LGPL-2.1-or-later
/* SHA-256 batch backend: eight independent messages in the eight 32-bit lanes of AVX2 registers. */
/*
 * This file alone is compiled with -mavx2 (its own convenience library): nothing in it
 * may run before ims_cpu_features() has confirmed AVX2 and the OS's YMM state.
 */
#include <immintrin.h>

#define LANES 8
#define VEC __m256i
#define V_ADD(a, b) _mm256_add_epi32(a, b)
#define V_XOR(a, b) _mm256_xor_si256(a, b)
#define V_XOR3(a, b, c) V_XOR(V_XOR(a, b), c)
#define V_SHR(a, n) _mm256_srli_epi32(a, n)
#define V_ROR(a, n) _mm256_or_si256(_mm256_srli_epi32(a, n), _mm256_slli_epi32(a, 32 - (n)))
#define V_SET1(x) _mm256_set1_epi32((int)(x))
/* ch = g ^ (e & (f ^ g)); maj = b ^ ((a ^ b) & (b ^ c)): one op fewer than the textbook forms. */
#define V_CH(e, f, g) V_XOR(g, _mm256_and_si256(e, V_XOR(f, g)))
#define V_MAJ(a, b, c) V_XOR(b, _mm256_and_si256(V_XOR(a, b), V_XOR(b, c)))
#define V_LOAD(p) _mm256_load_si256((const __m256i *)(p))
#define V_STORE(p, v) _mm256_store_si256((__m256i *)(p), v)

#include <stdint.h>

/* Eight words from each of eight lanes, transposed so that out[i] holds word i of every lane. */
static inline __attribute__((always_inline)) void transpose8(__m256i out[8], const __m256i r[8])
{
	__m256i t[8], u[8];

	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	for (int i = 0; i < 2; i++) {
		u[4 * i + 0] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	for (int i = 0; i < 4; i++) {
		out[i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x20);
		out[4 + i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x31);
	}
}

static inline __attribute__((always_inline)) void load_words(__m256i w[16],
							    const uint8_t *const p[LANES])
{
	const __m256i bswap32 = _mm256_set_epi64x(0x0c0d0e0f08090a0bull, 0x0405060700010203ull,
						  0x0c0d0e0f08090a0bull, 0x0405060700010203ull);

	for (int half = 0; half < 2; half++) {
		__m256i r[8];

		for (int l = 0; l < LANES; l++)
			r[l] = _mm256_shuffle_epi8(
				_mm256_loadu_si256((const __m256i *)(p[l] + 32 * half)), bswap32);
		transpose8(&w[8 * half], r);
	}
}

#include "hashers/sha256_lanes.h"

/*
 * Spelled out, as in sha256_avx512.c: each file's entry points at the batch_lanes its own -m
 * flags built, and a macro making both would hide where each symbol is defined.
 */
const struct ims_batch_backend ims_batch_sha256_avx2_x8 = {
	.name = "avx2-8x",
	.env_name = "avx2",
	.algo = IMASTREAM_HASH_SHA256,
	.cpu_needed = IMS_CPU_AVX2,
	.min_batch = LANES_MIN_BATCH,
	.hash = batch_lanes,
};
