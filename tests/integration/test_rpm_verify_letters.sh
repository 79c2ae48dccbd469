#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# verify --rpmdb's letters and markers held to stock rpm -V's on the same root, one kind of change per file; --noconfig as rpm's; an edited %config file reported as an edit (exit 4), not a failure.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

setup_scratch
IMS="$top_builddir/imastream"
PKG=$(build_pkg "$top_srcdir/tests/rpm/imsverify.rpmspec")
R=$T/root
new_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" ||
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
rm "$O/gone"                                    # missing
ln -sfn grown "$O/link"                         # L
chmod 0700 "$O/dir"                             # M of a directory
echo more >>"$O/notchecked"                     # %verify(not md5 size mtime): nothing
echo "setting = 2" >>"$R/etc/imsverify.conf"    # S 5 T, c
echo "read more" >>"$R/usr/share/doc/imsverify/README" # S 5 T, d
# An edit in the second of the install keeps rpm's whole-second mtime: a later one.
touch -d @1500000000 "$O/grown" "$R/etc/imsverify.conf" "$R/usr/share/doc/imsverify/README"

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
grep -qF "verify: $R: 1 %config files edited since install" "$T/err" || { cat "$T/err"; fail "no count of edited %config files"; }

# Nothing but the edit left: exit 4, the edit's own status; with --noconfig, 0.
R2=$T/root2
new_root "$R2"
rpm --root "$R2" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || fail "rpm -i failed"
"$IMS" relabel --root "$R2" >/dev/null 2>&1 || fail "relabel failed"
echo "setting = 3" >>"$R2/etc/imsverify.conf"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 4 ] || { cat "$T/out" "$T/err"; fail "an edited %config file alone exited $rc, not 4"; }
grep -qF "verify: $R2: " "$T/err" && grep -qF ", 0 failed" "$T/err" || { cat "$T/err"; fail "the edit counted as a failure"; }
"$IMS" verify --root "$R2" --rpmdb --noconfig >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "--noconfig still judged the %config file"; }
# A %config file whose mode changed is no edit: a failure.
chmod 0600 "$R2/etc/imsverify.conf"
"$IMS" verify --root "$R2" --rpmdb >"$T/out" 2>"$T/err"
[ $? = 1 ] || fail "a %config file with another mode was taken as an edit"
"$IMS" verify --noconfig -t "$top_srcdir/tests/keys/ec-p256.crt" "$R2/etc" >/dev/null 2>"$T/err"
[ $? = 2 ] || fail "--noconfig without --rpmdb was accepted"
grep -q "verify: --noconfig is for --rpmdb" "$T/err" || fail "--noconfig without --rpmdb: $(cat "$T/err")"
echo "ok: rpm -V's letters, --noconfig, the edit's own status"
