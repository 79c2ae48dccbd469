// SPDX-License-Identifier: LGPL-2.1-or-later
/* Detects the CPU features the batch backends need, trusting a feature only if the OS enabled its state. */
#include "hashers/private.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0: which register files the OS saves on context switch (needs OSXSAVE). */
static uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

unsigned int ims_cpu_features(void)
{
	unsigned int eax, ebx, ecx, edx, max_leaf, features = 0;
	uint64_t xcr0 = 0;

	if (!__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx) || max_leaf < 1)
		return 0;
	__cpuid(1, eax, ebx, ecx, edx);
	/* Without OSXSAVE we cannot ask the OS; a CPUID bit alone proves nothing. */
	if (!(ecx & bit_OSXSAVE))
		return 0;
	xcr0 = read_xcr0();
	if ((xcr0 & 0x2) != 0x2) /* XMM state */
		return 0;
	if (ecx & bit_SSSE3)
		features |= IMS_CPU_SSSE3;
	if (ecx & bit_SSE4_1)
		features |= IMS_CPU_SSE41;
	if (max_leaf >= 7) {
		__cpuid_count(7, 0, eax, ebx, ecx, edx);
		if (ebx & bit_SHA)
			features |= IMS_CPU_SHA;
		if ((ebx & bit_AVX2) && (xcr0 & 0x6) == 0x6) /* XMM and YMM state */
			features |= IMS_CPU_AVX2;
		/* Opmask, upper ZMM0-15 and ZMM16-31 state as well. */
		if ((ebx & bit_AVX512F) && (ebx & bit_AVX512BW) && (xcr0 & 0xe6) == 0xe6)
			features |= IMS_CPU_AVX512;
	}
	return features;
}

#else

unsigned int ims_cpu_features(void)
{
	return 0;
}

#endif
