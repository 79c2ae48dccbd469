#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# %_imastream_sign_threads: with the signing worker (1, the default) and without it (0),
# stock rpm installs and upgrades packages (with scriptlets, which stop the worker
# before rpm forks) whose every signature evmctl 1.4 verifies, and no two ECDSA
# signatures share a nonce (r); the worker made the signatures rpm's thread wrote; a
# failing worker fails the package, in a line naming the worker and one naming the file,
# leaving nothing installed; a value other than 0 or 1 is refused.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need evmctl
need getfattr
need openssl
setup_scratch

spec="$top_srcdir/tests/rpm/imstest.rpmspec"
v1=$(build_pkg "$spec" 1.0)
v2=$(build_pkg "$spec" 2.0)
# Enough files that the worker is met at work: 200 small ones.
cat >"$T/many.spec" <<'SPEC'
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
many=$(build_pkg "$T/many.spec" 1)
root="$T/root"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ec.key" \
	-out "$T/ec.pem" -days 2 -subj "/CN=imastream test sign threads" \
	-addext subjectKeyIdentifier=hash >/dev/null 2>&1 || { echo "openssl cannot make a key"; exit 99; }
openssl x509 -in "$T/ec.pem" -outform DER -out "$T/ec.der" || exit 99
chmod 600 "$T/ec.key"

sign() {
	irpm "$root" --define "_imastream_mode sign" --define "_imastream_key $T/ec.key" \
		--define "_imastream_cert $T/ec.pem" --define "_imastream_evm portable" \
		--define "_imastream_sync none" "$@"
}

# verify_all: every regular file the packages installed passes evmctl.
verify_all() {
	# post.log is the scriptlet's; /etc holds a %config file, which gets a digest.
	find "$root/opt" -type f ! -name post.log >"$T/files"
	[ -s "$T/files" ] || fail "no file installed"
	while read -r f; do
		evmctl ima_verify --key "$T/ec.der" "$f" >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$f: evmctl ima_verify ($1)"; }
		evmctl verify --generation=0 --key "$T/ec.der" "$f" >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$f: evmctl verify ($1)"; }
	done <"$T/files"
}

# "R SIGNATURE" of every signature (after the 9 bytes of the kernel's v2 header),
# to $T/r: a hard link, or a file the upgrade left, shows the same signature again.
collect_r() {
	while read -r f; do
		for x in security.ima security.evm; do
			v=$(getfattr --absolute-names -n $x -e hex "$f" 2>/dev/null | sed -n "s/^$x=0x//p")
			r=$(echo "$v" | cut -c19- | xxd -r -p |
				openssl asn1parse -inform DER 2>/dev/null | awk '/INTEGER/ { print $NF; exit }')
			[ -n "$r" ] || fail "$f: $x holds no ECDSA signature"
			echo "$r $v" >>"$T/r"
		done
	done <"$T/files"
}

: >"$T/r"
for threads in 1 0; do
	echo "== %_imastream_sign_threads $threads: install, upgrade with scriptlets, a package of 200 files"
	new_root "$root"
	sign -vv --define "_imastream_sign_threads $threads" -i "$v1" "$many" ||
		fail "rpm -i failed ($threads)"
	if [ $threads = 1 ]; then
		# The package of 200: each file's signatures came from the worker or, where rpm
		# overtook it, from rpm's thread; every IMA one the worker made came with its EVM one.
		line=$(grep '^D: imastream: signing worker: .* 200 used\|^D: imastream: signing worker: [0-9]* file(s) signed ahead, [0-9]* used ([0-9]* with their EVM signature), [0-9]* signed' \
			"$T/rpm.stderr" | sed -n 's/.*ahead, \([0-9]*\) used (\([0-9]*\) with .*, \([0-9]*\) signed on.*/\1 \2 \3/p' |
			awk '$1 + $3 == 200')
		[ -n "$line" ] || { grep 'signing worker' "$T/rpm.stderr"; fail "the worker did not account for the 200 files"; }
		set -- $line
		[ "$1" = "$2" ] || fail "$1 files took the worker's IMA signature, only $2 its EVM one"
		echo "ok: of the 200 files, $1 took the worker's signatures, $3 were signed on rpm's thread"
	else
		! grep -q 'signing worker' "$T/rpm.stderr" || fail "the worker ran with 0"
	fi
	[ -f "$root/opt/imstest/data/post.log" ] || fail "%post did not run ($threads)"
	verify_all "$threads"
	collect_r
	sign --define "_imastream_sign_threads $threads" -U "$v2" || fail "rpm -U failed ($threads)"
	grep -q 2.0 "$root/opt/imstest/bin/tool" || fail "the upgrade did not replace tool"
	verify_all "$threads, upgrade"
	collect_r
	echo "ok: evmctl verifies every signature ($threads), after -U too"
done
n=$(sort -u "$T/r" | wc -l)
[ "$n" -gt 800 ] || fail "only $n signatures read"
[ "$(sort -u "$T/r" | cut -d' ' -f1 | uniq -d | wc -l)" = 0 ] || fail "two signatures share a nonce"
echo "ok: $n ECDSA signatures, no two with the same r"

echo "== rpm waits for signatures the worker is still making"
new_root "$root"
IMASTREAM_TEST_PRESIGN_DELAY_US=2000 sign -vv -i "$many" || fail "rpm -i failed with a slow worker"
grep -q '^D: imastream: signing worker: [0-9]* file(s) signed ahead, [1-9][0-9]* used' "$T/rpm.stderr" ||
	fail "no signature of the slow worker was used"
find "$root/opt" -type f >"$T/files"
verify_all "slow worker"
echo "ok: $(sed -n 's/^D: imastream: signing worker: //p' "$T/rpm.stderr")"

echo "== a failing worker fails the package"
new_root "$root"
# Slowed, so that rpm waits for the worker rather than signing past it.
if IMASTREAM_TEST_PRESIGN_DELAY_US=1000 IMASTREAM_TEST_PRESIGN_FAIL_AT=5 sign -i "$many"; then
	fail "rpm succeeded with a failing worker"
fi
grep -q '^error: imastream: signing worker: injected by IMASTREAM_TEST_PRESIGN_FAIL_AT$' \
	"$T/rpm.stderr" || fail "no line naming the failed signature"
grep -Eq '^error: imastream: (ima|evm): cannot sign /opt/many/' "$T/rpm.stderr" ||
	fail "no line naming the file"
left=$(find "$root/opt" ! -type d 2>/dev/null)
[ -z "$left" ] || fail "left behind: $left"
echo "ok: $(grep -c '^error: imastream:' "$T/rpm.stderr") lines, nothing installed"

echo "== a value other than 0 or 1"
new_root "$root"
if sign --define "_imastream_sign_threads 2" -i "$v1"; then
	fail "rpm accepted %_imastream_sign_threads 2"
fi
grep -q "^error: imastream: macro %_imastream_sign_threads: '2' is not 0 or 1$" "$T/rpm.stderr" ||
	fail "no line naming the macro"
[ ! -e "$root/opt" ] || fail "files were installed"
echo "ok: $(grep '^error: imastream:' "$T/rpm.stderr")"
