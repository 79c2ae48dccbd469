#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's main command, scripts/demo, runs against this build: it exits 0, and its
# table shows every regular file of the sample packages signed and accepted three times.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need evmctl
need getfattr
setup_scratch

IMASTREAM_BUILDDIR=$top_builddir TMPDIR=$T "$top_srcdir/scripts/demo" >"$T/demo.out" 2>&1 ||
	{ cat "$T/demo.out"; fail "scripts/demo failed"; }
# tool, run.sh, run-again.sh, empty (imstest); helper, share/a, b, c (imsextra).
n=$(grep -c ' sig v2, key .* ok  *ok  *OK$' "$T/demo.out")
[ "$n" = 8 ] || { cat "$T/demo.out"; fail "$n signed and verified files in the table, not 8"; }
# The %config files get a digest (config_files = hash), still covered by EVM.
n=$(grep -c '^/etc/ims[a-z]*\.conf .* digest, algo .* ok  *ok  *OK$' "$T/demo.out")
[ "$n" -ge 1 ] || { cat "$T/demo.out"; fail "no %config file with a verified digest in the table"; }
for p in /opt/imstest/tool-link /opt/imstest/data/post.log /opt/imsextra; do
	grep -q "^$p  *.* none: " "$T/demo.out" || { cat "$T/demo.out"; fail "$p is not listed as none"; }
done
echo "ok: scripts/demo: 8 files signed, $n %config file(s) hashed, all verified by evmctl and imastream, the rest explained"
