#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# config_evm: %config files get an EVM portable signature (portable, the default) or none, alike from the rpm plugin, imastream install and relabel; a bad value stops at init in one line.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need getfattr
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/key.pem"
chmod 600 "$T/key.pem"
SIGN="--mode sign --evm portable -k $T/key.pem -c $KEYS/ec-p256.crt"
PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
evm() { getfattr -h -e hex -n security.evm "$1" 2>/dev/null | sed -n 's/^security.evm=//p'; }
# expect ROOT WHAT CONFIG-EVM: the %config file has a security.evm or none; a program has one.
expect() {
	[ -n "$(evm "$1/opt/imstest/bin/tool")" ] || fail "$2: the program has no security.evm"
	case "$3" in
	portable) [ -n "$(evm "$1/etc/imstest.conf")" ] || fail "$2: the %config file has no security.evm" ;;
	none) [ -z "$(evm "$1/etc/imstest.conf")" ] || fail "$2: the %config file was signed by EVM" ;;
	esac
	echo "ok: $2"
}

for ce in portable none; do
	R=$T/relabel-$ce
	new_root "$R"
	rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
	"$IMS" relabel --root "$R" $SIGN -o config_evm=$ce >/dev/null 2>"$T/err" || { cat "$T/err"; fail "relabel failed"; }
	expect "$R" "relabel config_evm=$ce" $ce

	R=$T/rpm-$ce
	new_root "$R"
	irpm "$R" --define "_imastream_mode sign" --define "_imastream_key $T/key.pem" \
		--define "_imastream_cert $KEYS/ec-p256.crt" --define "_imastream_evm portable" \
		--define "_imastream_config_evm $ce" --noscripts -i "$PKG" ||
		{ cat "$T/rpm.stderr"; fail "rpm with the plugin failed"; }
	expect "$R" "rpm plugin %_imastream_config_evm $ce" $ce

	R=$T/install-$ce
	mkdir -p "$R"
	"$IMS" install --root "$R" --allow-unsigned $SIGN -o config_evm=$ce "$PKG" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "install failed"; }
	expect "$R" "install config_evm=$ce" $ce
done
# The default is today's: signed.
R=$T/default
new_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
"$IMS" relabel --root "$R" $SIGN >/dev/null 2>&1 || fail "relabel failed"
expect "$R" "relabel, the default" portable
# What none costs where EVM is required: the audit fails it as the kernel would (no
# security.evm under an X509-only EVM is "missing-HMAC").
"$IMS" verify --root "$T/relabel-none" --rpmdb --evm require -t "$KEYS/ec-p256.crt" >"$T/out" 2>&1 &&
	fail "verify --evm require passed a %config file without security.evm"
grep -q "^/etc/imstest.conf: FAIL: missing security.evm" "$T/out" || { cat "$T/out"; fail "no missing security.evm line"; }
# A bad value: one line, nothing written.
R=$T/bad
new_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
"$IMS" relabel --root "$R" $SIGN -o config_evm=sometimes >/dev/null 2>"$T/err" && fail "config_evm=sometimes accepted"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q 'config_evm "sometimes" is not none or portable' "$T/err" ||
	{ cat "$T/err"; fail "config_evm=sometimes: not one clear line"; }
[ -z "$(evm "$R/opt/imstest/bin/tool")" ] || fail "a bad config_evm still wrote"
echo "ok: config_evm"
