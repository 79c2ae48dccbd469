#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `imastream install` builds the tree `rpm -i --noscripts` builds, and evmctl accepts every attribute it wrote.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
for t in evmctl getfattr openssl; do
	command -v $t >/dev/null || skip "$t not installed"
done

work=$(mktemp -d /tmp/imastream-install-cli.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# The installer's test packages (every entry kind, three compressors) and imstest.rpmspec
# (a scriptlet, capabilities, a hard link, %config).
pkgs=()
for c in gz:w9.gzdio xz:w6.xzdio zstd:w19.zstdio; do
	pkgs+=("$(build_pkg "$work" "imstest-${c%%:*}" "${c#*:}")")
done
rpmbuild -bb --quiet --define "_topdir $work/top2" --define '_build_id_links none' \
	--define '_binary_payload w19.zstdio' "$top_srcdir/tests/rpm/imstest.rpmspec" >"$work/rpmbuild.log" 2>&1 ||
	{ cat "$work/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
pkgs+=("$work/top2/RPMS/noarch/imstest-1.0-1.noarch.rpm")

# Keys as operators make them, with DER copies for evmctl.
mkkey() {
	local name=$1; shift
	openssl req -x509 "$@" -nodes -keyout "$work/$name.key" -out "$work/$name.pem" -days 2 \
		-subj "/CN=imastream install test $name" -addext subjectKeyIdentifier=hash >/dev/null 2>&1 ||
		{ echo "ERROR: openssl cannot make the $name key"; exit 99; }
	openssl x509 -in "$work/$name.pem" -outform DER -out "$work/$name.der" || exit 99
	chmod 600 "$work/$name.key"
}
mkkey rsa -newkey rsa:2048
mkkey ec -newkey ec -pkeyopt ec_paramgen_curve:P-256

echo "== the tree equals rpm -i --noscripts --nodeps"
ours=$work/ours theirs=$work/theirs
make_root "$ours"
make_root "$theirs"
"$IMASTREAM" install --root "$ours" --allow-unsigned "${pkgs[@]}" >"$work/out" 2>"$work/err" ||
	{ cat "$work/err" >&2; fail "imastream install failed"; }
# Scriptlets are not run, and that is said once, for the package that has them.
[ "$(cat "$work/err")" = "imastream install: $work/top2/RPMS/noarch/imstest-1.0-1.noarch.rpm: scriptlets are not run (%post)" ] ||
	{ cat "$work/err" >&2; fail "expected exactly the scriptlet warning on stderr"; }
[ ! -s "$work/out" ] || fail "imastream install wrote to stdout"
rpm -i --root "$theirs" --nodeps --noscripts --notriggers --define '_dbpath /rpmdb' \
	--define '_pkgverify_level digest' "${pkgs[@]}" 2>"$work/rpm-stderr" ||
	{ cat "$work/rpm-stderr" >&2; echo "ERROR: rpm -i failed"; exit 99; }
list_tree "$ours" >"$work/ours.list"
list_tree "$theirs" >"$work/theirs.list"
diff -u "$work/theirs.list" "$work/ours.list" || fail "the trees differ (- rpm -i, + ours)"
link_groups "$ours" >"$work/ours.links"
link_groups "$theirs" >"$work/theirs.links"
diff -u "$work/theirs.links" "$work/ours.links" || fail "hard-link sets differ"
[ "$(wc -l <"$work/ours.links")" -eq 4 ] || fail "expected 4 hard-link sets: $(cat "$work/ours.links")"
for want in 'caps=0x' '|4755|' '|1234|2345|' '->sub/size-100' '->bin/tool' 'size=0 ' 'links=3'; do
	grep -qF -- "$want" "$work/ours.list" || fail "tree listing lacks '$want'"
done
no_leftovers "$ours"
[ ! -e "$ours/opt/imstest/data/post.log" ] || fail "a scriptlet ran"
echo "ok: $(wc -l <"$work/ours.list") objects identical to rpm -i"

# Directory mtimes as rpm leaves them: the header's (2001, build_pkg clamps it) for a
# package directory that gets nothing new, the install time for one that gets files.
dir_mtimes() {
	(cd "$1" && find ./opt ./etc -type d | sort | while IFS= read -r d; do
		[ "$(stat -c %Y "$d")" = 1000000000 ] && echo "$d header" || echo "$d install"
	done)
}
dir_mtimes "$ours" >"$work/ours.dirs"
dir_mtimes "$theirs" >"$work/theirs.dirs"
diff -u "$work/theirs.dirs" "$work/ours.dirs" || fail "directory mtimes differ from rpm's (- rpm -i, + ours)"
grep -qx './opt/imstest-gz/emptydir header' "$work/ours.dirs" &&
	grep -qx './opt/imstest-gz/sub install' "$work/ours.dirs" ||
	{ cat "$work/ours.dirs"; fail "the directory mtimes do not show both cases"; }
echo "ok: directory mtimes as rpm's"

# The regular files the chain covers (%config is not, by default): every link of a set.
regular_files() {
	(cd "$1" && find opt -type f | sort)
}
xattr_of() {
	getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"
}

echo "== hash mode: security.ima is evmctl's ima_hash of every file"
n=0
for f in $(regular_files "$ours"); do
	want=$(evmctl ima_hash -n "$ours/$f" 2>/dev/null)
	got=$(xattr_of "$ours/$f" security.ima)
	[ -n "$got" ] && [ "$got" = "$want" ] || fail "$f: security.ima $got, evmctl says $want"
	n=$((n + 1))
done
[ "$(xattr_of "$ours/etc/imstest.conf" security.ima)" = "$(evmctl ima_hash -n "$ours/etc/imstest.conf" 2>/dev/null)" ] ||
	fail "the %config file has no digest (config_files = hash)"
"$IMASTREAM" verify --root "$ours" >"$work/verify" || { cat "$work/verify"; fail "verify --root failed after a hash install"; }
echo "ok: $n files, hash mode"

# One pass: the header digest the extractor verified is the chain's; nothing is re-read.
make_root "$work/onepass"
"$IMASTREAM" install --root "$work/onepass" --allow-unsigned --quiet -vv "${pkgs[3]}" 2>"$work/err" ||
	fail "install -vv failed"
grep -q 'ima: /opt/imstest/bin/tool: digest from header' "$work/err" || fail "the header digest was not used"
grep -q 'digest from reread' "$work/err" && fail "a file was read again"

echo "== hash mode, sha512 (the chain hashes the stream: the header's digests are sha256)"
make_root "$work/sha512"
"$IMASTREAM" install --root "$work/sha512" --allow-unsigned --quiet -vv -a sha512 "${pkgs[@]}" 2>"$work/err" ||
	fail "install -a sha512 failed"
grep -q 'ima: /opt/imstest/bin/tool: digest from stream' "$work/err" || fail "sha512 did not come from the stream"
grep -q 'digest from reread' "$work/err" && fail "a file was read again"
for f in $(regular_files "$work/sha512"); do
	want=$(evmctl ima_hash -a sha512 -n "$work/sha512/$f" 2>/dev/null)
	[ "$(xattr_of "$work/sha512/$f" security.ima)" = "$want" ] || fail "$f: sha512 security.ima differs from evmctl's"
done
echo "ok: sha512"

for k in rsa ec; do
	for evm in none portable; do
		echo "== sign mode ($k), EVM $evm"
		root=$work/sign-$k-$evm
		make_root "$root"
		"$IMASTREAM" install --root "$root" --allow-unsigned --quiet --mode sign \
			--key "$work/$k.key" --cert "$work/$k.pem" --evm "$evm" "${pkgs[@]}" 2>"$work/err" ||
			{ cat "$work/err" >&2; fail "install --mode sign ($k, evm $evm) failed"; }
		n=0
		for f in $(regular_files "$root"); do
			[ "$(xattr_of "$root/$f" security.ima | cut -c1-4)" = 0302 ] ||
				fail "$f: security.ima is not a v2 signature"
			evmctl ima_verify --key "$work/$k.der" "$root/$f" >"$work/ev.log" 2>&1 ||
				{ cat "$work/ev.log"; fail "$f: evmctl ima_verify ($k)"; }
			if [ $evm = portable ]; then
				[ "$(xattr_of "$root/$f" security.evm | cut -c1-2)" = 05 ] ||
					fail "$f: security.evm is not a portable signature"
				evmctl verify --generation=0 --key "$work/$k.der" "$root/$f" >"$work/ev.log" 2>&1 ||
					{ cat "$work/ev.log"; fail "$f: evmctl verify ($k)"; }
			else
				[ -z "$(xattr_of "$root/$f" security.evm)" ] || fail "$f: security.evm with --evm none"
			fi
			n=$((n + 1))
		done
		# EVM covers the capabilities the extractor set before the chain ran.
		[ -n "$(xattr_of "$root/opt/imstest/bin/tool" security.capability)" ] || fail "tool lost its capabilities"
		"$IMASTREAM" verify --root "$root" --trust "$work/$k.pem" >"$work/verify" ||
			{ cat "$work/verify"; fail "verify --root failed ($k, evm $evm)"; }
		echo "ok: $n files, evmctl accepts every signature ($k, EVM $evm)"
	done
done

echo "== --no-chown: EVM and the record cover the owner the files really have"
root=$work/nochown
make_root "$root"
"$IMASTREAM" install --root "$root" --allow-unsigned --quiet --no-chown --mode sign \
	--key "$work/ec.key" --cert "$work/ec.pem" --evm portable "${pkgs[0]}" 2>/dev/null || fail "install --no-chown failed"
[ "$(stat -c %u:%g "$root/opt/imstest-gz/owned")" = 0:0 ] || fail "--no-chown still changed the owner"
for f in $(regular_files "$root"); do
	evmctl verify --generation=0 --key "$work/ec.der" "$root/$f" >"$work/ev.log" 2>&1 ||
		{ cat "$work/ev.log"; fail "$f: evmctl verify after --no-chown"; }
done
"$IMASTREAM" verify --root "$root" --trust "$work/ec.pem" >"$work/verify" ||
	{ cat "$work/verify"; fail "verify --root after --no-chown"; }
echo "ok: --no-chown"

echo "== the package's own IMA signatures (sign-package) reach the chain, decoded"
mkdir -p "$work/signed"
"$IMASTREAM" sign-package --key "$work/ec.key" --cert "$work/ec.pem" --outdir "$work/signed" "${pkgs[2]}" ||
	fail "sign-package failed"
spkg=$work/signed/$(basename "${pkgs[2]}")
make_root "$work/pkgsig"
"$IMASTREAM" install --root "$work/pkgsig" --allow-unsigned --quiet -vv "$spkg" 2>"$work/err" || fail "installing a package with file signatures failed"
nsig=0
while read -r path sig; do
	[ -n "$sig" ] || continue
	# (a further hard link's inode went through the chain with its first link)
	[ "$(stat -c %h "$work/pkgsig$path")" = 1 ] || continue
	grep -qF ": $path: the package carries a $(( ${#sig} / 2 ))-byte IMA signature" "$work/err" ||
		fail "$path: its ${#sig}-hex-digit signature did not reach the chain"
	nsig=$((nsig + 1))
done < <(rpm -qp --qf '[%{FILENAMES} %{FILESIGNATURES}\n]' "$spkg")
[ $nsig -ge 15 ] || fail "only $nsig signed files seen"
echo "ok: $nsig file signatures handed to the chain"

echo "== progress: one updating line with --progress, nothing with --quiet"
make_root "$work/progress"
"$IMASTREAM" install --root "$work/progress" --allow-unsigned --progress "${pkgs[0]}" 2>"$work/err" ||
	fail "install --progress failed"
grep -q 'imastream install: \[1/1\] done: [0-9.]* MiB, [0-9]* files, [0-9.]* MiB/s, [0-9.]* s$' "$work/err" ||
	{ cat -A "$work/err" >&2; fail "no final progress line"; }
# How far, as the share of the package files read so far.
tr '\r' '\n' <"$work/err" | grep -E '^(.\[K)?imastream install: \[1/1\] .*, [0-9]+%' >/dev/null ||
	{ cat -A "$work/err" >&2; fail "no percentage in the progress line"; }
echo "PASS: tree identical to rpm -i; hash, sha512 and sign ($n files) verified by evmctl in 6 modes"
