#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A file over 4 GiB installed by stock rpm with imastream in hash mode: security.ima equals
# evmctl's and sha256sum's digest, from rpm's header digest and from the plugin's own
# re-read (--nofiledigest), so no size or offset is cut to 32 bits anywhere on the way.
# Slow (it writes 4 GiB twice, about a minute): runs only with IMASTREAM_BIG_TESTS=1.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
if [ "${IMASTREAM_BIG_TESTS:-0}" != 1 ]; then
	echo "SKIP: writes 4 GiB twice; set IMASTREAM_BIG_TESTS=1 to run it"
	exit 77
fi
need evmctl
need getfattr
setup_scratch
# The build root is sparse; the installed file is not (rpm writes every byte).
free_kb=$(df -Pk "$T" | awk 'NR == 2 { print $4 }')
[ "$free_kb" -gt $((10 * 1024 * 1024)) ] || { echo "SKIP: less than 10 GiB free in $T"; exit 77; }

start=$(date +%s)
pkg=$(build_pkg "$top_srcdir/tests/rpm/imsbig.rpmspec" 1.0 w1.zstdio)
rm -rf "$T/topdir/BUILDROOT" "$T/topdir/BUILD"
[ "$(rpm -qp --qf '%{LONGSIZE}' "$pkg")" = 4294971393 ] || fail "the package has the wrong size"
root="$T/root"
big=$root/opt/imsbig/big

xattr_of() {
	getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"
}

# check HOW: the file is whole, and security.ima is the digest of all of it.
check() {
	[ "$(stat -c %s "$big")" = 4294971393 ] || fail "$1: installed size $(stat -c %s "$big")"
	[ "$(dd if="$big" bs=1 skip=4294967296 count=15 status=none)" = "just past 4 GiB" ] ||
		fail "$1: the bytes past 4 GiB are not there"
	got=$(xattr_of "$big" security.ima)
	[ -n "$got" ] && [ "$got" = "$want" ] || fail "$1: security.ima $got, evmctl says $want"
	echo "ok: $1: security.ima = $got"
}

echo "== hash mode, digest from rpm's verified header"
new_root "$root"
irpm "$root" -vv -i "$pkg" >/dev/null || fail "rpm -i failed"
grep -q 'imastream: ima: /opt/imsbig/big: digest from header' "$T/rpm.stderr" ||
	fail "the header digest was not used"
want=$(evmctl ima_hash -n "$big" 2>/dev/null)
sum=$(sha256sum "$big" | cut -d' ' -f1)
[ "$want" = "0404$sum" ] || fail "evmctl ($want) and sha256sum ($sum) disagree"
check "header digest"

echo "== hash mode, --nofiledigest: the plugin reads the 4 GiB itself"
new_root "$root"
irpm "$root" -vv --nofiledigest -i "$pkg" >/dev/null || fail "rpm -i --nofiledigest failed"
grep -q 'imastream: ima: /opt/imsbig/big: digest from reread' "$T/rpm.stderr" ||
	fail "the file was not re-read"
check "re-read"
new_root "$root"
echo "ok: a 4 GiB + 4097 byte file, in $(($(date +%s) - start)) s"
