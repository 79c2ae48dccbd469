#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# verify --rpmdb's letters and markers held to stock rpm -V's on the same root, one kind of change per file; --noconfig as rpm's; an edited %config file reported as an edit (exit 4) when its digest follows the edit, as an appraising kernel keeps it, and as a failure when its labels are stale or signed, accepted by relabel --accept-config for the audit and the policy; bad records and paths refused.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

setup_scratch
IMS="$top_builddir/imastream"
PKG=$(build_pkg "$top_srcdir/tests/rpm/imsverify.rpmspec")
SHARED=$(build_pkg "$top_srcdir/tests/rpm/imsshared.rpmspec")
R=$T/root
new_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" "$SHARED" 2>"$T/rpm.err" ||
	{ cat "$T/rpm.err"; fail "rpm -i failed"; }
# Hash-mode labels, so that only the changes below fail.
"$IMS" relabel --root "$R" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "relabel failed"; }
"$IMS" verify --root "$R" --rpmdb >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb failed an intact root"; }

# One kind of change per file (rpm -V's column in the comment).
O=$R/opt/imsverify
echo more >>"$O/grown"                          # S 5 T
chmod 0600 "$O/mode"                            # M
chown 1:1 "$O/owner"                            # U G
touch -d @1000000000 "$O/touched"               # T alone
touch -d @1000000000 "$O/shared"                # T of a file two packages list: none
rm "$O/gone"                                    # missing
ln -sfn grown "$O/link"                         # L
chmod 0700 "$O/dir"                             # M of a directory
echo more >>"$O/notchecked"                     # %verify(not md5 size mtime): nothing
echo "setting = 2" >>"$R/etc/imsverify.conf"    # S 5 T, c
echo "read more" >>"$R/usr/share/doc/imsverify/README" # S 5 T, d
# An edit in the second of the install keeps rpm's whole-second mtime: a later one.
touch -d @1500000000 "$O/grown" "$R/etc/imsverify.conf" "$R/usr/share/doc/imsverify/README"
# kernel_digest FILE: the digest an appraising kernel writes when root closes an edited
# file whose security.ima is a digest (no IMA here to do it).
kernel_digest() {
	setfattr -n security.ima -v "0x0404$(sha256sum "$1" | cut -c1-64)" "$1" || fail "setfattr $1"
}
kernel_digest "$R/etc/imsverify.conf"

# rpm -V's lines against ours: "LETTERS  M PATH", "missing   M PATH".
# ours FILE: the lines of a --format json audit where rpm -V would print one.
ours() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") != "file" or r.get("package") is None:
        continue
    if r["rpm"] == "missing":
        print("missing   %s %s" % (r["marker"], r["path"]))
    elif r["rpm"] != ".........":
        print("%s  %s %s" % (r["rpm"], r["marker"], r["path"]))
PY
}
# compare WHAT OPTION...: rpm -V OPTION and verify --rpmdb OPTION print the same lines.
compare() {
	what=$1
	shift
	rpm --root "$R" -V "$@" imsverify 2>"$T/rpmv.err" | sort >"$T/rpmv"
	[ -s "$T/rpmv" ] || { cat "$T/rpmv.err"; fail "$what: rpm -V printed nothing"; }
	"$IMS" verify --root "$R" --rpmdb --format json "$@" imsverify >"$T/json" 2>"$T/err"
	ours "$T/json" | sort >"$T/ours"
	diff -u "$T/rpmv" "$T/ours" || { cat "$T/json" "$T/err"; fail "$what: verify --rpmdb's letters are not rpm -V's"; }
	echo "ok: $what: $(wc -l <"$T/rpmv") lines as rpm -V's"
}
compare "every change"
grep -qxF "S.5....T.  c /etc/imsverify.conf" "$T/rpmv" || fail "rpm -V did not see the edited %config file"
grep -qF "/opt/imsverify/notchecked" "$T/ours" && fail "%verify(not ...) columns were reported"
grep -qF "/opt/imsverify/shared" "$T/ours" && fail "the mtime of a shared file was reported"
compare "--noconfig" --noconfig
grep -qF "/etc/imsverify" "$T/ours" && fail "--noconfig reported a %config file"

# The text lines: rpm's letters and marker, the edit apart from the failures.
"$IMS" verify --root "$R" --rpmdb imsverify >"$T/out" 2>"$T/err"
[ $? = 1 ] || fail "a modified root did not exit 1"
for l in "/etc/imsverify.conf: CONFIG: edited (S.5....T. c) (package imsverify-1.0-1.noarch)" \
	"/opt/imsverify/touched: FAIL: differs from its header (.......T.) (package imsverify-1.0-1.noarch)" \
	"/opt/imsverify/link: FAIL: differs from its header (....L....) (package imsverify-1.0-1.noarch)" \
	"/opt/imsverify/gone: FAIL: missing (package imsverify-1.0-1.noarch)"; do
	grep -qxF -- "$l" "$T/out" || { cat "$T/out"; fail "no line '$l'"; }
done
grep -qF "verify: 1 %config files edited since install (imastream relabel --accept-config PATH accepts an edit)" "$T/err" || { cat "$T/err"; fail "no count of edited %config files"; }

# Nothing but the edit left: exit 4, the edit's own status; with --noconfig, 0.
R2=$T/root2
new_root "$R2"
rpm --root "$R2" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
"$IMS" relabel --root "$R2" >/dev/null 2>&1 || fail "relabel failed"
echo "setting = 3" >>"$R2/etc/imsverify.conf"
# Edited where nothing kept its digest: the kernel would refuse to read it, a failure.
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] || { cat "$T/out" "$T/err"; fail "an edit under a stale security.ima exited $rc, not 1"; }
grep -qE "^/etc/imsverify.conf: FAIL: edited \(S\.5\.\.\.\.[.T]\. c\); security.ima: " "$T/out" ||
	{ cat "$T/out"; fail "an edit under a stale security.ima: no FAIL line"; }
kernel_digest "$R2/etc/imsverify.conf"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 4 ] || { cat "$T/out" "$T/err"; fail "an edited %config file alone exited $rc, not 4"; }
grep -qF "verify: $R2: " "$T/err" && grep -qF ", 0 failed" "$T/err" || { cat "$T/err"; fail "the edit counted as a failure"; }
"$IMS" verify --root "$R2" --rpmdb --noconfig >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "--noconfig still judged the %config file"; }

# --- accepting the edit: one command records it for the audit and the policy, labels it --
digest=$(sha256sum "$R2/etc/imsverify.conf" | cut -c1-64)
"$IMS" policy keylime --root "$R2" --rpmdb --output "$T/before.json" 2>"$T/err" || { cat "$T/err"; fail "policy keylime"; }
grep -q "$digest" "$T/before.json" && fail "the policy lists the edit before it was accepted"
# Refused, nothing written: a path no package marks %config, one no package lists.
for bad in /opt/imsverify/kept /etc/nosuch.conf; do
	"$IMS" relabel --root "$R2" --accept-config /etc/imsverify.conf --accept-config "$bad" >/dev/null 2>"$T/err" &&
		fail "--accept-config $bad was accepted"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "--accept-config $bad: not one line"; }
	[ ! -e "$R2/var/lib/imastream/accepted-config" ] || fail "--accept-config $bad wrote a record"
done
grep -qF "relabel: /etc/nosuch.conf: no installed package lists it: nothing accepted" "$T/err" || fail "nosuch: $(cat "$T/err")"
"$IMS" relabel --root "$R2" --accept-config /opt/imsverify/kept >/dev/null 2>"$T/err"
grep -qxF "imastream relabel: /opt/imsverify/kept: no installed package marks it %config: nothing accepted" "$T/err" ||
	{ cat "$T/err"; fail "a file no package marks %config: no such line"; }
"$IMS" relabel --root "$R2" --accept-config /etc/imsverify.conf >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "--accept-config failed"; }
[ "$(getfattr -e hex -n security.ima "$R2/etc/imsverify.conf" 2>/dev/null | sed -n 's/^security.ima=//p')" = "0x0404$digest" ] ||
	fail "the accepted file was not labelled with its digest"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb fails an accepted edit"; }
"$IMS" verify --root "$R2" --rpmdb --format json imsverify >"$T/json" 2>/dev/null || fail "verify --format json"
# (T when the edit fell in a later second than the install.)
grep -qE '"path":"/etc/imsverify.conf","config":true,"result":"ok","content":"accepted edit \(S\.5\.\.\.\.[.T]\. c\)"' "$T/json" ||
	{ cat "$T/json"; fail "no accepted-edit record"; }
"$IMS" policy keylime --root "$R2" --rpmdb --output "$T/after.json" 2>"$T/err" || { cat "$T/err"; fail "policy keylime"; }
grep -q "$digest" "$T/after.json" || fail "policy keylime --rpmdb lacks the accepted digest"
# Edited again after the acceptance: an edit again, not the accepted one.
echo "setting = 4" >>"$R2/etc/imsverify.conf"
kernel_digest "$R2/etc/imsverify.conf"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err"
[ $? = 4 ] || { cat "$T/out" "$T/err"; fail "an edit after the acceptance passed"; }
"$IMS" policy keylime --root "$R2" --rpmdb --output "$T/again.json" 2>"$T/err" || { cat "$T/err"; fail "policy keylime"; }
grep -q "$digest" "$T/again.json" && ! grep -q "$(sha256sum "$R2/etc/imsverify.conf" | cut -c1-64)" "$T/again.json" ||
	fail "policy keylime --rpmdb took the edit made after the acceptance, not the accepted one"
"$IMS" relabel --root "$R2" >"$T/out" 2>&1 && fail "relabel labelled an edit nobody accepted"
# A record from another root, or cut short: one line, not used; verify and policy refuse.
R3=$T/root3
new_root "$R3"
rpm --root "$R3" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
mkdir -p "$R3/var/lib/imastream"
cp "$R2/var/lib/imastream/accepted-config" "$R3/var/lib/imastream/"
"$IMS" verify --root "$R3" --rpmdb >"$T/out" 2>"$T/err" && fail "verify took another root's record"
grep -q "verify: $R3/var/lib/imastream/accepted-config: written for another root" "$T/err" ||
	{ cat "$T/err"; fail "another root's record: no line"; }
"$IMS" policy keylime --root "$R3" --rpmdb --output "$T/p3.json" 2>"$T/err" && fail "policy took another root's record"
[ ! -e "$T/p3.json" ] || fail "policy written from another root's record"
# Cut after its last file, before its end line: every line it has is well formed.
sed '$d' "$R2/var/lib/imastream/accepted-config" >"$T/cut"
cp "$T/cut" "$R2/var/lib/imastream/accepted-config"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err" && fail "verify took a cut record"
grep -q "verify: $R2/var/lib/imastream/accepted-config: cut short (no end line): not used" "$T/err" ||
	{ cat "$T/err"; fail "a cut record: no line"; }
[ "$(grep -c accepted-config "$T/err")" = 1 ] || { cat "$T/err"; fail "a cut record: not one line"; }

# Where the configuration signs %config files (config_files = yes), the accepted file is
# signed: the audit verifies it.
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/key.pem" && chmod 600 "$T/key.pem"
SIGN="--mode sign --evm portable -k $T/key.pem -c $KEYS/ec-p256.crt -o config_files=yes"
R4=$T/root4
new_root "$R4"
rpm --root "$R4" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
"$IMS" relabel --root "$R4" $SIGN >/dev/null 2>&1 || fail "relabel in sign mode failed"
echo "signed = edit" >>"$R4/etc/imsverify.conf"
"$IMS" relabel --root "$R4" $SIGN --accept-config /etc/imsverify.conf >/dev/null 2>"$T/err" ||
	{ cat "$T/err"; fail "--accept-config in sign mode failed"; }
"$IMS" verify --root "$R4" --rpmdb --evm require -t "$KEYS/ec-p256.crt" --format json imsverify >"$T/json" 2>"$T/err" ||
	{ cat "$T/json" "$T/err"; fail "verify --rpmdb fails a signed accepted edit"; }
grep '"path":"/etc/imsverify.conf"' "$T/json" | grep -qF '"result":"ok","content":"accepted edit' ||
	{ cat "$T/json"; fail "the signed accepted edit is no accepted edit"; }
grep '"path":"/etc/imsverify.conf"' "$T/json" | grep -qF '"ima_type":"signature","evm":"ok"' ||
	{ cat "$T/json"; fail "the accepted edit was not signed"; }

# Content the database does not name under signatures that verify is no edit (no editor
# signs): a package version whose transaction did not end, a failure.
echo "from = another version" >>"$R4/etc/imsverify.conf"
"$IMS" sign --key "$T/key.pem" --cert "$KEYS/ec-p256.crt" --evm portable "$R4/etc/imsverify.conf" >/dev/null 2>"$T/err" ||
	{ cat "$T/err"; fail "sign failed"; }
"$IMS" verify --root "$R4" --rpmdb --evm require -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err"
[ $? = 1 ] || { cat "$T/out" "$T/err"; fail "a signed %config file unlike its header passed as an edit"; }
grep -qF "/etc/imsverify.conf: FAIL: edited (" "$T/out" && grep -qF "; signed, as no edit is: a package's content the database does not name" "$T/out" ||
	{ cat "$T/out"; fail "a signed %config file unlike its header: no FAIL line"; }

# A %config file whose mode changed is no edit: a failure.
rm "$R2/var/lib/imastream/accepted-config"
chmod 0600 "$R2/etc/imsverify.conf"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err"
[ $? = 1 ] || fail "a %config file with another mode was taken as an edit"
"$IMS" verify --noconfig -t "$top_srcdir/tests/keys/ec-p256.crt" "$R2/etc" >/dev/null 2>"$T/err"
[ $? = 2 ] || fail "--noconfig without --rpmdb was accepted"
grep -q "verify: --noconfig is for --rpmdb" "$T/err" || fail "--noconfig without --rpmdb: $(cat "$T/err")"
echo "ok: rpm -V's letters, --noconfig, the edit's own status"
