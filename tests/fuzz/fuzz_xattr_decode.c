// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: the IMA/EVM xattr decoder on arbitrary bytes, checked against its contract. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imastream/xattr.h"
#include "xattr/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imastream_xattr_info info = { .size = sizeof(info) };
	uint8_t *copy;

	/* An exact-size heap copy, so ASan sees any read past the value. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (imastream_xattr_decode(copy, size, &info, NULL) == 0) {
		/* Whatever is accepted must point inside the value and be re-encodable. */
		if (info.data < copy || info.data + info.data_len > copy + size)
			abort();
		if (info.type >= 3 && info.type != 4) {
			uint8_t hdr[IMASTREAM_SIG_HDR_SIZE];

			if (info.data_len + IMASTREAM_SIG_HDR_SIZE != size)
				abort();
			if (imastream_sig_header_encode(info.type, info.algo, info.keyid,
							info.data_len, hdr, NULL) ||
			    memcmp(hdr, copy, sizeof(hdr)))
				abort();
		}
		if (info.type == 4 && imastream_xattr_digest_size(info.algo) != info.data_len)
			abort();
	}
	free(copy);
	return 0;
}
