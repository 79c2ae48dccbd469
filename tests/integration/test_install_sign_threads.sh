#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `imastream install --sign-threads`: with the nonce worker (1, the default on two CPUs) and
# without it (0), evmctl verifies every signature and no two ECDSA signatures share a nonce
# (r); a failing worker fails the package in one line and leaves nothing; 2 is refused.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
for t in evmctl getfattr openssl xxd; do
	command -v $t >/dev/null || skip "$t not installed"
done

work=$(mktemp -d /tmp/imastream-install-sign-threads.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# Enough files that the worker is met at work: 200 small ones.
cat >"$work/many.spec" <<'SPEC'
Name: many
Version: 1
Release: 1
Summary: many small files
License: MIT
BuildArch: noarch
%description
many small files
%install
mkdir -p %{buildroot}/opt/many
i=0; while [ $i -lt 200 ]; do echo "file $i" > %{buildroot}/opt/many/f$i; i=$((i + 1)); done
%files
/opt/many
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
	"$work/many.spec" >"$work/rpmbuild.log" 2>&1 ||
	{ cat "$work/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
pkg=$work/top/RPMS/noarch/many-1-1.noarch.rpm

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ec.key" \
	-out "$work/ec.pem" -days 2 -subj "/CN=imastream install sign threads" \
	-addext subjectKeyIdentifier=hash >/dev/null 2>&1 || { echo "ERROR: openssl"; exit 99; }
openssl x509 -in "$work/ec.pem" -outform DER -out "$work/ec.der" || exit 99
chmod 600 "$work/ec.key"
root=$work/root

# install ARGS...: sign + EVM P-256 into a fresh root; stderr to $work/err.
install() {
	rm -rf "$root"
	mkdir -p "$root"
	"$IMASTREAM" install --root "$root" --allow-unsigned --mode sign --key "$work/ec.key" \
		--cert "$work/ec.pem" --evm portable --sync none "$@" "$pkg" 2>"$work/err"
}

: >"$work/r"
for threads in 1 0; do
	echo "== --sign-threads $threads"
	install -vv --sign-threads "$threads" || { cat "$work/err" >&2; fail "install failed ($threads)"; }
	# The worker is said to run only where it may (two CPUs); with 0, never.
	if [ "$threads" = 1 ] && [ "$(nproc)" -gt 1 ]; then
		grep -q 'signer: [0-9]* signatures from nonces prepared ahead' "$work/err" ||
			fail "the worker did not run"
	elif [ "$threads" = 0 ]; then
		! grep -q 'prepared ahead' "$work/err" || fail "the worker ran with --sign-threads 0"
	fi
	find "$root/opt/many" -type f >"$work/files"
	[ "$(wc -l <"$work/files")" = 200 ] || fail "expected 200 files ($threads)"
	while read -r f; do
		evmctl ima_verify --key "$work/ec.der" "$f" >"$work/ev.log" 2>&1 ||
			{ cat "$work/ev.log"; fail "$f: evmctl ima_verify ($threads)"; }
		evmctl verify --generation=0 --key "$work/ec.der" "$f" >"$work/ev.log" 2>&1 ||
			{ cat "$work/ev.log"; fail "$f: evmctl verify ($threads)"; }
		for x in security.ima security.evm; do
			getfattr --absolute-names -n $x -e hex "$f" | sed -n "s/^$x=0x//p" | cut -c19- |
				xxd -r -p | openssl asn1parse -inform DER |
				awk '/INTEGER/ { print $NF; exit }' >>"$work/r"
		done
	done <"$work/files"
	echo "ok: evmctl verifies all 200 files ($threads)"
done
[ "$(sort -u "$work/r" | wc -l)" = 800 ] || fail "800 signatures expected, $(sort -u "$work/r" | wc -l) distinct r"
echo "ok: 800 ECDSA signatures, no two with the same r"

if [ "$(nproc)" -gt 1 ]; then
	echo "== a failing worker fails the package"
	if IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER=5 install; then
		fail "install succeeded with a failing worker"
	fi
	grep -q 'signing with ECDSA-P256 failed (injected by IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER)' \
		"$work/err" || { cat "$work/err" >&2; fail "no line naming the failed signature"; }
	left=$(find "$root/opt" ! -type d 2>/dev/null || true)
	[ -z "$left" ] || fail "left behind: $left"
	echo "ok: nothing installed; $(grep -m1 'failed' "$work/err")"
fi

echo "== a value other than 0 or 1"
if install --sign-threads 2; then
	fail "--sign-threads 2 accepted"
fi
grep -qx "imastream install: --sign-threads takes 0 or 1, not '2' (see imastream install --help)" "$work/err" ||
	{ cat "$work/err" >&2; fail "no line naming the option"; }
[ ! -e "$root/opt" ] || fail "files were installed"
echo "ok: $(head -1 "$work/err")"
