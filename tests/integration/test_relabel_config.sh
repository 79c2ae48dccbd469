#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream relabel reads the rpm plugin's configuration file: it signs without an option where the file says sign, options override the file, --config '' reads none, a file that does not parse is one line and nothing relabelled; --sign-threads 0|1, a failing nonce worker.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need evmctl
need getfattr
need unshare
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
p256_signing_key
PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
FILES="opt/imstest/bin/tool opt/imstest/bin/run.sh opt/imstest/bin/run-again.sh
etc/imstest.conf opt/imstest/empty"
R=$T/root

# The file relabel reads by default, as its --help names it (the build's sysconfdir).
default_conf=$("$IMS" relabel --help | sed -n 's|^ *\(/.*/imastream\.conf\)$|\1|p')
case "$default_conf" in
*/imastream.conf) ;;
*) fail "relabel --help names no default configuration file" ;;
esac
sysconfdir=${default_conf%/imastream.conf}
[ -d "$sysconfdir" ] || { echo "SKIP: no $sysconfdir to lay a configuration file over"; exit 77; }
# A chroot whose / is no mount point (the rpm matrix's) cannot make its mounts private.
if ! unshare -m --propagation private true 2>"$T/unshare.err"; then
	echo "SKIP: no private mount namespace here ($(cat "$T/unshare.err"))"
	exit 77
fi

stock_root() {
	new_root "$R"
	rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" ||
		{ cat "$T/rpm.err"; fail "rpm -i failed"; }
}

# with_conf FILE ARGS...: imastream relabel --root $R ARGS... with FILE laid over the
# default configuration file in a private mount namespace (neither the host nor a
# concurrent test sees it); its stdout in $T/out, stderr in $T/err, its status returned.
with_conf() {
	conf=$1
	shift
	rm -rf "$T/upper" "$T/work"
	mkdir -p "$T/upper" "$T/work"
	cp "$conf" "$T/upper/imastream.conf"
	unshare -m --propagation private sh -c '
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$1" || exit 77
		shift 3
		exec "$@"' sh "$sysconfdir" "$T/upper" "$T/work" \
		"$IMS" relabel --root "$R" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc != 77 ] || { echo "SKIP: cannot mount an overlay over $sysconfdir"; exit 77; }
	return $rc
}

xattr() { getfattr -h -e hex -n "$2" "$1" 2>/dev/null | sed -n "s/^$2=//p"; }

# signed: every file has an IMA signature (the %config file its digest, config_files =
# hash) and an EVM portable signature, and evmctl verifies them.
signed() {
	for f in $FILES; do
		case "$f:$(xattr "$R/$f" security.ima)" in
		etc/imstest.conf:0x0404*) ;;
		etc/imstest.conf:*) fail "$f: security.ima is not a digest ($1)" ;;
		*:0x03*)
			(cd "$R" && evmctl ima_verify --key "$T/cert.der" "$f") >"$T/ev.log" 2>&1 ||
				{ cat "$T/ev.log"; fail "$f: evmctl ima_verify ($1)"; } ;;
		*) fail "$f: security.ima is no signature ($1)" ;;
		esac
		(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$f: evmctl verify ($1)"; }
	done
}

# hashed: every file has its sha256 digest and no security.evm.
hashed() {
	for f in $FILES; do
		want="0x0404$(sha256sum "$R/$f" | cut -c1-64)"
		[ "$(xattr "$R/$f" security.ima)" = "$want" ] ||
			fail "$f: security.ima is not its sha256 ($1)"
		[ -z "$(xattr "$R/$f" security.evm)" ] || fail "$f: security.evm ($1)"
	done
}

# unlabelled: no file got a security.ima or a security.evm.
unlabelled() {
	for f in $FILES; do
		[ -z "$(xattr "$R/$f" security.ima)$(xattr "$R/$f" security.evm)" ] ||
			fail "$f: labelled ($1)"
	done
}

printf 'mode = sign\nevm = portable\nkey = %s\ncert = %s\n' "$T/key.pem" "$KEYS/ec-p256.crt" \
	>"$T/sign.conf"

# --- the default file signs: no option needed -------------------------------------------
stock_root
with_conf "$T/sign.conf" || { cat "$T/out" "$T/err"; fail "relabel with the default file failed"; }
signed "mode sign from $default_conf"
echo "ok: $default_conf with mode = sign: relabel without options signs"

# --- options override the file; --config '' reads none; --config FILE instead of it ------
stock_root
with_conf "$T/sign.conf" --mode hash --evm none ||
	{ cat "$T/out" "$T/err"; fail "relabel --mode hash --evm none failed"; }
hashed "--mode hash --evm none over a file that signs"
echo "ok: --mode hash --evm none override the file's mode and evm"
stock_root
with_conf "$T/sign.conf" --config '' || { cat "$T/out" "$T/err"; fail "relabel --config '' failed"; }
hashed "--config ''"
echo "ok: --config '' reads no file"
printf 'mode = hash\n' >"$T/hash.conf"
stock_root
with_conf "$T/hash.conf" --config "$T/sign.conf" ||
	{ cat "$T/out" "$T/err"; fail "relabel --config FILE failed"; }
signed "--config FILE instead of the default file"
echo "ok: --config FILE is read instead of the default file"

# --- a file that does not parse: one line naming it, nothing relabelled ----------------------
printf 'mode = sign\nno_such_key = 1\n' >"$T/bad.conf"
stock_root
with_conf "$T/bad.conf"
rc=$?
[ $rc = 2 ] || { cat "$T/out" "$T/err"; fail "a bad default file: exit status $rc, not 2"; }
[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "a bad default file: not one line"; }
grep -q "^imastream relabel: $default_conf:2: " "$T/err" ||
	{ cat "$T/err"; fail "the line does not name $default_conf:2"; }
[ ! -s "$T/out" ] || { cat "$T/out"; fail "a bad default file printed file lines"; }
unlabelled "a bad default file"
echo "ok: $(cat "$T/err")"
with_conf "$T/sign.conf" --config "$T/nonexistent.conf"
rc=$?
[ $rc = 2 ] || { cat "$T/err"; fail "a missing --config FILE: exit status $rc, not 2"; }
grep -q "cannot open config file $T/nonexistent.conf" "$T/err" ||
	{ cat "$T/err"; fail "a missing --config FILE is not named"; }
unlabelled "a missing --config FILE"
echo "ok: a missing --config FILE is refused, nothing relabelled"

# --- --sign-threads: the nonce worker on two CPUs with 1 (the default), never with 0 ----------
for threads in 1 0; do
	stock_root
	with_conf "$T/sign.conf" -vv --sign-threads $threads ||
		{ cat "$T/err"; fail "relabel --sign-threads $threads failed"; }
	signed "--sign-threads $threads"
	if [ $threads = 1 ] && [ "$(nproc)" -gt 1 ]; then
		grep -q 'signer: [0-9]* signatures from nonces prepared ahead' "$T/err" ||
			{ cat "$T/err"; fail "the nonce worker did not run"; }
	elif [ $threads = 0 ]; then
		! grep -q 'prepared ahead' "$T/err" || fail "the nonce worker ran with --sign-threads 0"
	fi
	echo "ok: --sign-threads $threads signs, evmctl verifies"
done
if [ "$(nproc)" -gt 1 ]; then
	# A failing worker: each signature from then on fails, and so does its file (named);
	# a rerun without the worker completes the root.
	stock_root
	if IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER=2 with_conf "$T/sign.conf"; then
		fail "relabel succeeded with a failing nonce worker"
	fi
	grep -q '^failed .*/opt/imstest/bin/tool (Input/output error)$' "$T/out" ||
		{ cat "$T/out" "$T/err"; fail "a file whose signature failed is not named"; }
	grep -q 'signing with ECDSA-P256 failed (injected by IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER)' \
		"$T/err" || { cat "$T/err"; fail "no line naming the failed signature"; }
	with_conf "$T/sign.conf" --sign-threads 0 || { cat "$T/err"; fail "the rerun failed"; }
	signed "the rerun after a failing worker"
	echo "ok: a failing worker fails the files it could not sign; a rerun completes them"
fi
stock_root
if with_conf "$T/sign.conf" --sign-threads 2; then
	fail "--sign-threads 2 accepted"
fi
grep -qx "imastream relabel: --sign-threads takes 0 or 1, not '2' (see imastream relabel --help)" \
	"$T/err" || { cat "$T/err"; fail "--sign-threads 2: no line naming the option"; }
unlabelled "--sign-threads 2"
echo "ok: $(cat "$T/err")"
