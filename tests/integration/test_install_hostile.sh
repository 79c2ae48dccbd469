#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile packages: one clear line on stderr, nothing written, no temp files, nothing outside.
# With IMASTREAM_INSTALL_CLI=1, the same packages go through `imastream install` and its chain.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream

# run_installer ROOT PKG...: the example program, or the command with its hook chain.
run_installer() {
	local root=$1; shift
	if [ -n "${IMASTREAM_INSTALL_CLI:-}" ]; then
		"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$@"
	else
		"$INSTALL_RPM" ${ONE_THREAD:+--one-thread} "$root" "$@"
	fi
}
HOSTILE=$top_builddir/tests/rpm-hostile/rpm-hostile
[ -x "$HOSTILE" ] || { echo "ERROR: $HOSTILE not built"; exit 99; }

work=$(mktemp -d /tmp/imastream-install-hostile.XXXXXX)
mnt=""
cleanup() {
	[ -z "$mnt" ] || umount "$mnt" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# The base package: content files, a directory, a symlink and a 2 MiB random file.
spec=$work/imshostile.spec
cat >"$spec" <<'SPEC'
Name: imshostile
Version: 1.0
Release: 1
Summary: base of the hostile packages
License: MIT
BuildArch: noarch
%description
Rewritten by rpm-hostile.
%install
mkdir -p %{buildroot}/opt/h/dir
head -c 10000 /dev/urandom > %{buildroot}/opt/h/a
echo small > %{buildroot}/opt/h/b
echo inner > %{buildroot}/opt/h/dir/f
head -c 2097152 /dev/urandom > %{buildroot}/opt/h/big
ln -s a %{buildroot}/opt/h/link
%files
/opt/h
SPEC
for c in zstd:w19.zstdio gzip:w9.gzdio; do
	rpmbuild -bb --quiet --define "_topdir $work/top-${c%%:*}" --define "_binary_payload ${c#*:}" \
		--define '_build_id_links none' "$spec" >"$work/rpmbuild.log" 2>&1 ||
		{ cat "$work/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
done
zst=$work/top-zstd/RPMS/noarch/imshostile-1.0-1.noarch.rpm
gz=$work/top-gzip/RPMS/noarch/imshostile-1.0-1.noarch.rpm
outside=$work/outside
mkdir -p "$outside"

passed=0
# expect_refused NAME PKG REGEX [ROOT]: the install fails with one line naming PKG and
# matching REGEX, and leaves no temp file, ROOT exactly as it was and $outside empty.
expect_refused() {
	local name=$1 pkg=$2 regex=$3 root=${4:-$work/root-$1} before after
	[ -d "$root" ] || make_root "$root"
	before=$(root_listing "$root")
	if run_installer "$root" "$pkg" >"$work/out" 2>"$work/err"; then
		fail "$name: the install succeeded"
	fi
	# First what was left, so that a failed clean-up is named as such (it also adds a
	# warning line, which the check below would report less clearly).
	no_leftovers "$root" "$name"
	[ "$(wc -l <"$work/err")" -eq 1 ] || { cat "$work/err" >&2; fail "$name: expected one line on stderr"; }
	grep -qF "$pkg" "$work/err" || fail "$name: the message does not name the package: $(cat "$work/err")"
	grep -qE "$regex" "$work/err" || fail "$name: '$(cat "$work/err")' does not match /$regex/"
	after=$(root_listing "$root")
	[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2 || true; fail "$name: the root changed"; }
	[ -z "$(ls -A "$outside")" ] || fail "$name: something was written outside the root: $(ls -A "$outside")"
	echo "ok $name: $(sed 's/^install-rpm: //; s/^imastream install: //' "$work/err")"
	passed=$((passed + 1))
}

# hostile NAME OPS...: a rewritten zstd package.
hostile() {
	local name=$1; shift
	# (a one-shot generator that leaves its memory to exit: no leak report for it)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$HOSTILE" "$zst" "$work/$name.rpm" "$@" ||
		{ echo "ERROR: rpm-hostile failed for $name"; exit 99; }
	echo "$work/$name.rpm"
}

# The base packages install cleanly, and so does a benign rewrite, or the refusals below
# prove nothing.
make_root "$work/root-ok"
run_installer "$work/root-ok" "$zst" "$gz" || fail "the base packages do not install"
[ "$(cat "$work/root-ok/opt/h/b")" = small ] || fail "the base package installed wrong content"
make_root "$work/root-ok2"
run_installer "$work/root-ok2" "$(hostile same rename /opt/h/b /opt/h/b2)" ||
	fail "a rewritten but benign package does not install"
[ -f "$work/root-ok2/opt/h/b2" ] || fail "the rewritten package lacks its renamed file"
# Every digest and size of a rewritten package is true again (rpm -K checks them all,
# v6's SHA3-256 and SHA-512 ones included), so what is refused below is refused for its
# hostile part, not at the package check.
for p in same.rpm "$(basename "$(hostile content flip-content /opt/h/b)")"; do
	rpmkeys --checksig "$work/$p" >"$work/checksig" 2>&1 ||
		{ cat "$work/checksig" >&2; echo "ERROR: rpm -K refuses the rewritten $p"; exit 99; }
done

# Damaged packages: cut short, and one byte flipped in the compressed payload.
for c in zstd gzip; do
	p=$work/top-$c/RPMS/noarch/imshostile-1.0-1.noarch.rpm
	size=$(stat -c %s "$p")
	head -c $((size * 2 / 3)) "$p" >"$work/trunc-$c.rpm"
	cp "$p" "$work/flip-$c.rpm"
	off=$((size - 300000))
	byte=$(od -An -tu1 -j "$off" -N1 "$p" | tr -d ' ')
	printf "$(printf '\\%03o' $(( byte ^ 0x55 )))" |
		dd of="$work/flip-$c.rpm" bs=1 seek="$off" conv=notrunc status=none
	cmp -s "$p" "$work/flip-$c.rpm" && { echo "ERROR: the byte flip did not happen"; exit 99; }
	expect_refused "truncated-$c" "$work/trunc-$c.rpm" 'corrupted or truncated payload'
	expect_refused "flipped-$c" "$work/flip-$c.rpm" 'corrupted or truncated payload|digest mismatch'
	# The same on one thread: the pipeline must not change what is refused, or how.
	ONE_THREAD=1 expect_refused "truncated-$c-1t" "$work/trunc-$c.rpm" 'corrupted or truncated payload'
	ONE_THREAD=1 expect_refused "flipped-$c-1t" "$work/flip-$c.rpm" 'corrupted or truncated payload|digest mismatch'
done
expect_refused digest-mismatch "$(hostile digest flip-content /opt/h/b)" '/opt/h/b: sha256 digest mismatch'
head -c 2000 "$zst" >"$work/header-only.rpm"
expect_refused truncated-header "$work/header-only.rpm" 'imshostile|header|not an rpm'
echo "not an rpm" >"$work/garbage.rpm"
expect_refused garbage "$work/garbage.rpm" 'not an rpm package'

# Path tricks.
expect_refused traversal "$(hostile traversal rename /opt/h/b "/opt/h/../../../..$outside/evil")" "refused: '\.' or '\.\.' path component"
expect_refused cpio-absolute "$(hostile cpio-absolute cpio-rename /opt/h/b "$outside/evil")" 'Archive file not in header'
expect_refused cpio-dotdot "$(hostile cpio-dotdot cpio-rename /opt/h/b "../../..$outside/evil")" 'Archive file not in header'
expect_refused symlink-then-file \
	"$(hostile symlink-file make-symlink /opt/h/dir "$outside" rename /opt/h/dir/f /opt/h/dir/evil)" \
	'parent /opt/h/dir is a symlink in the package'
mkdir -p "$work/root-preexisting/opt"
make_root "$work/root-preexisting"
ln -s "$outside" "$work/root-preexisting/opt/h"
expect_refused root-symlink "$zst" "'opt/h' is a symlink to no directory below the root; refusing to follow it" "$work/root-preexisting"

# Entries that lie.
expect_refused dup-header "$(hostile dup-header rename /opt/h/b /opt/h/a)" 'duplicate entry in the header'
expect_refused dup-payload "$(hostile dup-payload dup-payload /opt/h/b)" '/opt/h/b: duplicate entry in the payload'
ONE_THREAD=1 expect_refused dup-payload-1t "$work/dup-payload.rpm" '/opt/h/b: duplicate entry in the payload'
expect_refused missing "$(hostile missing drop-payload /opt/h/b)" 'Missing file|missing from the payload'
expect_refused huge-size "$(hostile huge set-size /opt/h/a 4000000000)" 'declares [0-9]+ bytes of files in a payload of [0-9]+ bytes'
expect_refused huge-symlink "$(hostile huge-link set-size /opt/h/link 4000000000)" '/opt/h/link: symlink size 4000000000 does not match its target'
expect_refused short-size "$(hostile short set-size /opt/h/a 5000)" 'corrupted or truncated payload|digest mismatch'

# A full filesystem: declared sizes that cannot fit, then a write that fails midway.
# Without a mount command at all (the rpm matrix's minimal chroots) these two cases cannot
# run: the test then ends as a SKIP that says so, never as a PASS.
full_fs=yes
command -v mount >/dev/null 2>&1 || full_fs=""
if [ -n "$full_fs" ]; then
	mnt=$work/small
	mkdir -p "$mnt"
	# install_preconditions made sure of root: one that cannot mount (a locked-down container)
	# is not the environment this suite runs in, and the rollback below is the point.
	mount -t tmpfs -o size=1m,nr_inodes=64 imastream-test "$mnt" 2>"$work/mount.err" ||
		fail "cannot mount a tmpfs as root, so the full-filesystem cases cannot run: $(cat "$work/mount.err")"
	make_root "$mnt"
	expect_refused enospc-size "$zst" 'needs [0-9]+ bytes, the root.s filesystem has [0-9]+ free' "$mnt"
	umount "$mnt"
	# Inodes run out after some files were created: the rollback is real.
	mount -t tmpfs -o size=8m,nr_inodes=12 imastream-test "$mnt"
	make_root "$mnt"
	tree_pkg=$(build_pkg "$work" imsfull w9.gzdio)
	expect_refused enospc-inodes "$tree_pkg" 'No space left on device' "$mnt"
	umount "$mnt"
fi
mnt=""
if [ -z "$full_fs" ]; then
	echo "SKIP: $passed hostile packages refused cleanly, but no mount command here for the two full-filesystem cases"
	exit 77
fi
echo "PASS: $passed hostile packages refused cleanly"
