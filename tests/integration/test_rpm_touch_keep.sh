#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An upgrade under a kernel with EVM on (emulated: tests/integration/evm_immutable.c refuses, with EPERM, any change of a security xattr of a file under a portable signature) where rpm only touches a %config file whose labels another key signed: kept when they verify with the plugin's trusted keys (cert and trust), the package installed; refused in one line, the transaction failed, when they do not.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need getfattr
need cc
setup_scratch
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/new.pem" && cp "$KEYS/ec-p384.pem" "$T/old.pem" &&
	chmod 600 "$T/new.pem" "$T/old.pem" || fail "cannot copy the keys"
cc -shared -fPIC -O2 -o "$T/evm_immutable.so" "$top_srcdir/tests/integration/evm_immutable.c" -ldl ||
	{ echo "ERROR: cannot build the LD_PRELOAD library"; exit 99; }
# The trust store of a rotation: the old certificate and ours (which it must hold too).
cat "$KEYS/ec-p384.crt" "$KEYS/ec-p256.crt" >"$T/both.crt" || fail "cannot write the trust store"
spec="$top_srcdir/tests/rpm/imstest.rpmspec"
v1=$(build_pkg "$spec" 1.0)
v2=$(build_pkg "$spec" 2.0)
R=$T/root
conf=etc/imstest.conf

# signed_by KEY ARGS...: rpm with the plugin signing with KEY (old: P-384, new: P-256).
signed_by() {
	key=$1
	shift
	case $key in
	old) crt=ec-p384.crt ;;
	*) crt=ec-p256.crt ;;
	esac
	irpm "$R" --define "_imastream_mode sign" --define "_imastream_key $T/$key.pem" \
		--define "_imastream_cert $KEYS/$crt" --define "_imastream_evm portable" "$@"
}
# under_evm ARGS...: signed_by with the emulated kernel's refusals.
under_evm() {
	EVM_IMMUTABLE_LOG=$T/refused LD_PRELOAD=$T/evm_immutable.so signed_by "$@"
}
labels() { (cd "$R" && getfattr -h -d -m '^security\.' -e hex "$conf" 2>/dev/null); }
# fresh: version 1.0 signed with the old key, as another configuration left it.
fresh() {
	new_root "$R"
	signed_by old -i "$v1" || { cat "$T/rpm.stderr"; fail "rpm -i 1.0 failed"; }
	[ -n "$(getfattr -h -n security.evm "$R/$conf" 2>/dev/null)" ] ||
		fail "$conf has no security.evm after the install"
	labels >"$T/labels.before"
	ino_before=$(stat -c %i "$R/$conf")
	rm -f "$T/refused"
}

# --- the old key is trusted: the labels verify and are kept, the upgrade goes through ----
fresh
under_evm new --define "_imastream_trust $T/both.crt" -U "$v2" ||
	{ cat "$T/rpm.stderr" "$T/refused" 2>/dev/null; fail "the upgrade failed although $conf's labels verify"; }
[ "$(stat -c %i "$R/$conf")" = "$ino_before" ] ||
	{ echo "SKIP: this rpm rewrites $conf on an upgrade: nothing to keep"; exit 77; }
# (rpm's own attempt to clear the capabilities of each file it replaces is refused too,
# and ignored by rpm, as under the kernel: only the plugin's values count here.)
! grep -q ' security\.\(ima\|evm\|selinux\)$' "$T/refused" 2>/dev/null ||
	{ cat "$T/refused"; fail "the plugin tried a write the kernel refuses"; }
labels >"$T/labels.after"
diff "$T/labels.before" "$T/labels.after" || fail "$conf's labels changed"
rpm --root "$R" --dbpath /var/lib/rpm -q imstest | grep -q '^imstest-2.0-1' || fail "2.0 is not installed"
"$top_builddir/imastream" verify --evm require --trust "$T/both.crt" \
	"$R/$conf" "$R/opt/imstest/bin/tool" >"$T/v" 2>&1 || { cat "$T/v"; fail "the upgraded files do not verify"; }
echo "ok: $conf, left in place, keeps the labels the trusted old key signed; 2.0 installed"

# --- the old key is not trusted: the write is tried, refused, and the package fails --------
fresh
if under_evm new -U "$v2"; then
	fail "the upgrade succeeded over labels no trusted key verifies"
fi
grep -q " security\.evm$" "$T/refused" || { cat "$T/refused" 2>/dev/null; fail "no write of security.evm was refused"; }
# One line of ours: the file, the refused write, and why its labels were not kept.
lines=$(grep -c 'error: imastream: ' "$T/rpm.stderr")
[ "$lines" = 1 ] || { cat "$T/rpm.stderr"; fail "$lines imastream lines, not one"; }
grep -q "^error: imastream: /$conf: cannot set security.evm: Operation not permitted (.*security.evm: unknown key id)$" \
	"$T/rpm.stderr" || { cat "$T/rpm.stderr"; fail "the line does not name $conf, the refused write and why"; }
# (rpm 4.18 then removes the file it was touching, as it cleans up the failed package.)
rpm --root "$R" --dbpath /var/lib/rpm -q imstest | grep -q '^imstest-1.0-1' || fail "1.0 is not installed any more"
echo "ok: $(grep 'error: imastream: ' "$T/rpm.stderr")"
