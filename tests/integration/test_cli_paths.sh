#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# One convention for the paths of every command that works on a root (imastream(1), PATHS): a file is named as the root's own system names it (/etc/foo), and the root, absolute, is given once, in the summary line and the JSON summary's "root"; the root as typed (relative, roundabout) never shows.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need python3
need setfattr
setup_scratch
IMS="$top_builddir/imastream"
cd "$T" || exit 99
PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")

# A root stock rpm installed (no plugin): relabel, verify --rpmdb and recover --rpmdb read
# it.  One file changed, one labelled rpm temp file no package owns.
new_root "$T/rpm"
rpm --root "$T/rpm" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" ||
	fail "rpm -i: $(cat "$T/rpm.err")"
echo changed >>"$T/rpm/etc/imstest.conf"
cp -p "$T/rpm/opt/imstest/bin/tool" "$T/rpm/opt/imstest/bin/tool;0badf00d"
setfattr -h -n security.ima -v "0x0404$(sha256sum "$T/rpm/opt/imstest/bin/tool" | cut -c1-64)" \
	"$T/rpm/opt/imstest/bin/tool;0badf00d" || fail "setfattr"
# A root imastream install wrote, with its record: verify --root reads it.
new_root "$T/inst"

# run NAME ARGS...: imastream ARGS, text to NAME.out/.err, then --format json to NAME.json.
run() {
	n=$1
	shift
	"$IMS" "$@" >"$n.out" 2>"$n.err"
	"$IMS" "$@" --format json >"$n.json" 2>"$n.jerr"
}

# paths NAME ROOT PATH...: the text form names each PATH as the root's system does, never
# the root as typed nor where it lies on the host, but for the summary line, which
# gives the absolute ROOT once; the JSON's file records name PATH the same way, and its
# summary gives ROOT as "root".
paths() {
	n=$1 root=$2
	shift 2
	for p in "$@"; do
		# (T too when the edit fell in a later second than the install.)
		grep -q "^\(would label \|S\.\.\.\.\.\.[.T]\. c \)\?$p\([: ]\|$\)" "$n.out" ||
			fail "$n: $p is not named as the root's system names it: $(cat "$n.out")"
	done
	! grep -F -e "$T" -e "./" "$n.out" || fail "$n: a file named with the root on stdout"
	summary="imastream ${n%%-*}: $root: "
	[ "$(grep -cF "$root" "$n.err")" = 1 ] && grep -qF "$summary" "$n.err" ||
		fail "$n: the summary does not give the root $root once: $(cat "$n.err")"
	! grep -vF "$summary" "$n.err" | grep -F -e "$T" -e "./" ||
		fail "$n: a line other than the summary names the root"
	python3 - "$n.json" "$root" "$@" <<'EOF' || fail "$n --format json: $(cat "$n.json" "$n.jerr")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
root, want = sys.argv[2], sys.argv[3:]
files = [r["path"] for r in recs if r["record"] == "file"]
assert all(p.startswith("/") and not p.startswith(root) for p in files), files
assert all(p in files for p in want), (want, files)
assert recs[-1]["record"] == "summary" and recs[-1]["root"] == root, recs[-1]
EOF
	echo "ok: $n"
}

"$IMS" install --root ./inst/../inst --allow-unsigned --format json "$PKG" >install.json 2>install.err ||
	fail "install: $(cat install.err)"
python3 -c 'import json, sys; r = [json.loads(l) for l in open("install.json")][-1]; assert r["root"] == sys.argv[1], r' \
	"$T/inst" || fail "install --format json: the summary does not give the root: $(cat install.json)"
echo "ok: install"

run relabel relabel --root ./rpm/../rpm --dry-run
paths relabel "$T/rpm" /opt/imstest/bin/tool /etc/imstest.conf
run verify-rpmdb verify --root ./rpm/../rpm --rpmdb
paths verify-rpmdb "$T/rpm" /etc/imstest.conf "/opt/imstest/bin/tool;0badf00d"
run recover recover --root ./rpm/../rpm --rpmdb -n
paths recover "$T/rpm" "/opt/imstest/bin/tool;0badf00d"
# An orphan named with a newline is one escaped line, as every name is (imastream(1)).
odd="$T/rpm/opt/imstest/bin/$(printf 'odd\nname');0badf00d"
cp -p "$T/rpm/opt/imstest/bin/tool;0badf00d" "$odd"
setfattr -h -n security.ima -v "0x0404$(sha256sum <"$odd" | cut -c1-64)" "$odd" || fail "setfattr"
"$IMS" recover --root "$T/rpm" --rpmdb -n >recover-odd.out 2>/dev/null
grep -qxF '\/opt/imstest/bin/odd\nname;0badf00d: a file of rpm'"'"'s temp name beside no file of a package: would be unlabelled' recover-odd.out &&
	[ "$(wc -l <recover-odd.out)" = 2 ] || fail "recover: an orphan's name is not escaped: $(cat -A recover-odd.out)"
echo "ok: recover escapes names"
run verify-root verify --root ./inst/../inst
paths verify-root "$T/inst" /opt/imstest/bin/tool /etc/imstest.conf

# policy keylime writes a policy, not a report: its paths are the attested system's (the
# policy's own rule), and its summary line gives the root.
"$IMS" policy keylime --root ./rpm/../rpm --output policy.json 2>policy.err || fail "policy: $(cat policy.err)"
python3 -c 'import json; d = json.load(open("policy.json"))["digests"]; assert "/opt/imstest/bin/tool" in d and all(p.startswith("/opt/") or p.startswith("/etc/") for p in d), d' ||
	fail "policy keylime: paths not as the attested system names them"
[ "$(grep -cF "$T" policy.err)" = 1 ] && grep -qF "imastream policy: $T/rpm: 1 package, " policy.err ||
	fail "policy keylime: the summary does not give the root once: $(cat policy.err)"
echo "ok: policy keylime"
