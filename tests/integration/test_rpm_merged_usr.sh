#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Merged-/usr roots (/bin, /sbin, /lib as symlinks into usr/): installed by rpm with the plugin, relabelled after a plain rpm -i, installed by imastream install; the audit passes and the policy names /usr paths; directory symlinks rpm refuses stay refused.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need getfattr
need jq
setup_scratch
IMS="$top_builddir/imastream"
PKG=$(build_pkg "$top_srcdir/tests/rpm/imsusr.rpmspec")
# Below the root: the files as the package lists them, and where they really are.
LISTED="bin/imsusr sbin/imsusr-admin lib/imsusr/data usr/bin/imsusr-real"
REAL="usr/bin/imsusr usr/sbin/imsusr-admin usr/lib/imsusr/data usr/bin/imsusr-real"

# merged_root DIR: /bin, /sbin, /lib and /lib64 as root-owned relative symlinks into usr/.
merged_root() {
	mkdir -p "$1"
	find "$1" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	mkdir -p "$1/usr/bin" "$1/usr/sbin" "$1/usr/lib" "$1/usr/lib64"
	for d in bin sbin lib lib64; do
		ln -s "usr/$d" "$1/$d"
	done
}

# prpm ROOT ARGS...: stock rpm with the plugin, at rpm's own %_dbpath (as verify --rpmdb reads it).
prpm() {
	r=$1
	shift
	rpm --root "$r" --nodeps --noscripts --define "__plugindir $top_builddir/.libs" \
		--define "_imastream_config %{nil}" --define "__transaction_imastream $SO" "$@" \
		2>"$T/rpm.err" || { cat "$T/rpm.err"; return 1; }
}

ima() { getfattr -h -e hex -n security.ima "$1" 2>/dev/null | sed -n 's/^security.ima=//p'; }

# check_root DIR HOW: every file under usr/ with its digest, the links kept, the audit and
# the policy right.
check_root() {
	for d in bin sbin lib lib64; do
		[ -L "$1/$d" ] || fail "$2: /$d is no longer a symlink"
	done
	for f in $REAL; do
		[ -f "$1/$f" ] || fail "$2: $f is missing"
		[ "$(ima "$1/$f")" = "0x0404$(sha256sum "$1/$f" | cut -c1-64)" ] ||
			fail "$2: $f: security.ima is not its sha256"
	done
	"$IMS" verify --root "$1" --rpmdb >"$T/out" 2>"$T/err" ||
		{ cat "$T/out" "$T/err"; fail "$2: verify --rpmdb fails on a merged-/usr root"; }
	# 4 files and the 2 directories the package lists (/lib followed as rpm does).
	grep -qF "verify: $1: 6 files, 0 failed" "$T/err" || { cat "$T/err"; fail "$2: verify --rpmdb total"; }
	"$IMS" policy keylime --root "$1" --rpmdb --output "$T/policy.json" 2>"$T/err" ||
		{ cat "$T/err"; fail "$2: policy keylime failed"; }
	# The kernel logs the path it resolved: the /usr one, and only that one.
	[ "$(jq -r '.digests | keys | .[]' "$T/policy.json" | sort | tr '\n' ' ')" = \
		"/usr/bin/imsusr /usr/bin/imsusr-real /usr/lib/imsusr/data /usr/sbin/imsusr-admin " ] ||
		{ jq .digests "$T/policy.json"; fail "$2: the policy does not name the /usr paths"; }
	[ "$(jq -r '.digests["/usr/bin/imsusr"][0]' "$T/policy.json")" = \
		"$(sha256sum "$1/usr/bin/imsusr" | cut -c1-64)" ] || fail "$2: /usr/bin/imsusr's digest"
}

echo "== stock rpm with the plugin"
R=$T/plugin
merged_root "$R"
prpm "$R" -i "$PKG" || fail "rpm -i with the plugin failed on a merged-/usr root"
check_root "$R" "rpm + plugin"

echo "== rpm --noplugins, then imastream relabel"
R=$T/relabel
merged_root "$R"
prpm "$R" --noplugins -i "$PKG" || fail "rpm -i --noplugins failed"
"$IMS" relabel --root "$R" >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "relabel failed on a merged-/usr root"; }
grep -q "1 package, 4 files labelled, .* 0 modified, 0 missing, 0 failed" "$T/err" ||
	{ cat "$T/err"; fail "relabel summary"; }
check_root "$R" "relabel"

echo "== imastream install"
R=$T/install
merged_root "$R"
"$IMS" install --root "$R" --allow-unsigned --quiet "$PKG" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err"; fail "imastream install refused a merged-/usr root"; }
"$IMS" verify --root "$R" >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "verify --root (record)"; }
for f in $REAL; do
	[ "$(ima "$R/$f")" = "0x0404$(sha256sum "$R/$f" | cut -c1-64)" ] || fail "install: $f: security.ima"
done
for d in bin sbin lib; do
	[ -L "$R/$d" ] || fail "install: /$d is no longer a symlink"
done
"$IMS" policy keylime --root "$R" --record --output "$T/policy.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "policy keylime --record failed"; }
[ "$(jq -r '.digests | keys | .[]' "$T/policy.json" | sort | tr '\n' ' ')" = \
	"/usr/bin/imsusr /usr/bin/imsusr-real /usr/lib/imsusr/data /usr/sbin/imsusr-admin " ] ||
	{ jq .digests "$T/policy.json"; fail "install: the record's policy does not name the /usr paths"; }

# --- symlinks rpm refuses ------------------------------------------------------------------
# A user-owned /bin into root's usr/bin (CVE-2021-35939): rpm refuses it, and so do we.
hostile_user_link() {
	merged_root "$1"
	chown -h 1000:1000 "$1/bin"
}
R=$T/userlink
hostile_user_link "$R"
prpm "$R" --noplugins -i "$PKG" && fail "rpm followed a user-owned /bin (the rule this test follows changed?)"
hostile_user_link "$R"
"$IMS" install --root "$R" --allow-unsigned --quiet "$PKG" >"$T/out" 2>"$T/err" &&
	fail "imastream install followed a user-owned /bin"
grep -q "'bin' is a symlink owned by neither root nor its target's owner; refusing to follow it" "$T/err" ||
	{ cat "$T/err"; fail "install: no clear line for the user-owned /bin"; }
[ -z "$(find "$R/usr" -type f)" ] || fail "install: a refused package left files"
# Installed while the link was root's, then handed to a user: relabel and the audit do not
# go through it.
R=$T/userlink2
merged_root "$R"
prpm "$R" --noplugins -i "$PKG" || fail "rpm -i --noplugins failed"
chown -h 1000:1000 "$R/bin"
"$IMS" relabel --root "$R" >"$T/out" 2>"$T/err" && fail "relabel went through a user-owned /bin"
grep -qF "bin/imsusr" "$T/out" || { cat "$T/out" "$T/err"; fail "relabel does not name the file behind the user-owned /bin"; }
[ -z "$(ima "$R/usr/bin/imsusr")" ] || fail "relabel labelled a file behind a user-owned /bin"
[ -n "$(ima "$R/usr/sbin/imsusr-admin")" ] || fail "relabel left /sbin's file unlabelled"
"$IMS" verify --root "$R" --rpmdb >"$T/out" 2>"$T/err" && fail "verify --rpmdb went through a user-owned /bin"
grep -q "bin/imsusr: FAIL: .*a symlink rpm would not follow" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb: no line for the user-owned /bin"; }
# A link owned by the owner of its target is followed, by rpm and by us.
R=$T/samelink
merged_root "$R"
chown -h 1000:1000 "$R/bin"
chown 1000:1000 "$R/usr/bin"
"$IMS" install --root "$R" --allow-unsigned --quiet "$PKG" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err"; fail "install refused a link owned by its target's owner (rpm follows it)"; }
[ -f "$R/usr/bin/imsusr" ] || fail "install: /bin/imsusr not in usr/bin"

# Links that lead out of the root on the host lead nowhere below it: rpm chroots, we
# resolve in the root; the host's directory is never written.
mkdir -p "$T/outside"
for target in "$T/outside" "../../../../../../../../$T/outside"; do
	R=$T/outlink
	merged_root "$R"
	rm "$R/bin"
	ln -s "$target" "$R/bin"
	"$IMS" install --root "$R" --allow-unsigned --quiet "$PKG" >"$T/out" 2>"$T/err" &&
		fail "install went through /bin -> $target"
	grep -q "'bin' is a symlink to no directory below the root; refusing to follow it" "$T/err" ||
		{ cat "$T/err"; fail "install: no clear line for /bin -> $target"; }
	[ -z "$(ls -A "$T/outside")" ] || fail "install wrote outside the root through /bin -> $target"
	# The same target made below the root is where the files go, as under rpm's chroot.
	mkdir -p "$R/$T/outside"
	"$IMS" install --root "$R" --allow-unsigned --quiet "$PKG" >"$T/out" 2>"$T/err" ||
		{ cat "$T/err"; fail "install: /bin -> $target inside the root"; }
	[ -f "$R/$T/outside/imsusr" ] && [ -z "$(ls -A "$T/outside")" ] ||
		fail "/bin -> $target was not resolved inside the root"
done
echo "PASS"
