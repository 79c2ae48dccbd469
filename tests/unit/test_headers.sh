#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every public header compiles alone, first in its translation unit, as C11 and as C++17;
# every struct callers allocate and fill starts with its size (room to grow).
set -euo pipefail
: "${top_srcdir:?}"
command -v gcc >/dev/null || { echo "SKIP: gcc is not installed"; exit 77; }
command -v g++ >/dev/null || { echo "SKIP: g++ is not installed (scripts/packages.txt lists it)"; exit 77; }
failures=0 checked=0
for h in "$top_srcdir"/include/imastream/*.h; do
	name=imastream/${h##*/}
	for compiler in "gcc -x c -std=c11" "g++ -x c++ -std=c++17"; do
		# shellcheck disable=SC2086
		if ! printf '#include <%s>\nint imastream_header_alone;\n' "$name" |
			$compiler -fsyntax-only -Wall -Wextra -Werror -I"$top_srcdir/include" - 2>err.$$; then
			echo "FAIL: $name does not compile alone with ${compiler%% *}:"
			cat err.$$
			failures=$((failures + 1))
		fi
		checked=$((checked + 1))
	done
done
# Room to grow: each struct a caller allocates, to fill or to be filled, starts with its
# size_t size (struct imastream_xattr_writer reserves room instead; struct imastream_log
# is frozen; arrays of struct imastream_hash_msg take their size as an argument: see
# their header comments).
sized="chain.h:imastream_config hooks.h:imastream_plugin_ops hooks.h:imastream_txn
hooks.h:imastream_pkg hooks.h:imastream_script hooks.h:imastream_verify
hooks.h:imastream_conflict hooks.h:imastream_file extract.h:imastream_entry_sink
chain_sink.h:imastream_chain_sink_opts relabel.h:imastream_relabel_opts
extract.h:imastream_extract_stats keys.h:imastream_key_opts
signpkg.h:imastream_signpkg_opts signpkg.h:imastream_signpkg_signer
signpkg.h:imastream_signpkg_result xattr.h:imastream_evm_input
root.h:imastream_recover_stats filesig.h:imastream_verify_report
xattr.h:imastream_xattr_info"
for hs in $sized; do
	h=${hs%%:*} s=${hs#*:}
	if ! printf '#include <stddef.h>\n#include <imastream/%s>\n_Static_assert(offsetof(struct %s, size) == 0 && _Generic(((struct %s *)0)->size, size_t: 1, default: 0), "struct %s must start with size_t size");\n' \
		"$h" "$s" "$s" "$s" | gcc -x c -std=c11 -fsyntax-only -Werror -I"$top_srcdir/include" - 2>err.$$; then
		echo "FAIL: struct $s has no leading size_t size (room to grow):"
		cat err.$$
		failures=$((failures + 1))
	fi
	checked=$((checked + 1))
done
rm -f err.$$
[ "$checked" -ge 20 ] || { echo "FAIL: only $checked header compilations (the headers moved?)"; exit 1; }
[ "$failures" = 0 ] || exit 1
echo "PASS: $checked header compilations"
