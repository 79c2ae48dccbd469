#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kill -9 at random points of installs and upgrades: a rerun or imastream recover leaves no temp file, and the tree verifies.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
kills=${IMASTREAM_CRASH_KILLS:-8}

work=$(mktemp -d /tmp/imastream-install-crash.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# many_files VERSION: 1000 small files in 10 directories and two of 1 MiB, so that a kill
# lands in extraction, signing or the renames.
many_files() {
	local v=$1 spec=$work/imscrash-$1.spec
	cat >"$spec" <<SPEC
Name: imscrash
Version: $v
Release: 1
Summary: imastream crash test package
License: MIT
BuildArch: noarch
%description
Many small files.
%install
for d in \$(seq 10); do
	mkdir -p %{buildroot}/opt/crash/d\$d
	for f in \$(seq 100); do echo "$v \$d \$f" > %{buildroot}/opt/crash/d\$d/f\$f; done
done
head -c 1048576 /dev/urandom > %{buildroot}/opt/crash/big1
head -c 1048576 /dev/urandom > %{buildroot}/opt/crash/big2
%files
/opt/crash
SPEC
	rpmbuild -bb --quiet --define "_topdir $work/top" --define '_binary_payload w1.gzdio' \
		--define '_build_id_links none' "$spec" >"$work/rpmbuild.log" 2>&1 ||
		{ cat "$work/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
	echo "$work/top/RPMS/noarch/imscrash-$v-1.noarch.rpm"
}
v1=$(many_files 1.0)
v2=$(many_files 2.0)
root=$work/root
make_root "$root"
inst() {
	"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$@"
}
temps() {
	find "$root" -name '.imastream-tmp-*' | wc -l
}
verified() {
	"$IMASTREAM" verify --root "$root" >"$work/verify.out" 2>&1 ||
		fail "$1: verify --root: $(grep -Ev ': OK( \(|$)' "$work/verify.out" | head -3)"
}

echo "== recover removes only the temp files of dead writers"
mkdir -p "$root/opt/crash"
true &
dead=$(printf %x $!)
wait
live=$(printf %x $$)
: >"$root/opt/crash/.imastream-tmp-$dead-1"
ln -s nowhere "$root/opt/crash/.imastream-tmp-$dead-2"
mkdir -p "$root/var/lib/imastream/packages"
: >"$root/var/lib/imastream/packages/.imastream-tmp-$dead-record-0"
: >"$root/opt/crash/.imastream-tmp-$live-3"
: >"$root/opt/crash/.imastream-tmp-notapid"
: >"$root/opt/crash/x.imastream-tmp-$dead-4"
mkdir "$root/opt/crash/.imastream-tmp-$dead-5"
# Those it keeps leave the root not whole: each named, and recover fails.
"$IMASTREAM" recover --root "$root" 2>"$work/recover.err" && fail "recover exited 0 with temp files kept"
grep -Eq "removed 3 temp files \([0-9.]+ (bytes?|KiB|MiB)\); the others, named above, are kept, [0-9.]+ s" "$work/recover.err" &&
	grep -q "/opt/crash/.imastream-tmp-$live-3: kept: its writer, pid $$, is running" "$work/recover.err" &&
	grep -q "/opt/crash/.imastream-tmp-notapid: kept: not a temp name imastream writes" "$work/recover.err" ||
	fail "recover's summary: $(cat "$work/recover.err")"
for n in .imastream-tmp-$dead-1 .imastream-tmp-$dead-2 ../../var/lib/imastream/packages/.imastream-tmp-$dead-record-0; do
	[ ! -e "$root/opt/crash/$n" ] && [ ! -L "$root/opt/crash/$n" ] || fail "recover left $n"
done
for n in .imastream-tmp-$live-3 .imastream-tmp-notapid x.imastream-tmp-$dead-4 .imastream-tmp-$dead-5; do
	[ -e "$root/opt/crash/$n" ] || fail "recover removed $n, which no dead imastream left"
done
rm -rf "$root/opt/crash"

echo "== a full install, timed to choose the kill points"
t0=$(date +%s%N)
inst "$v1" || fail "the first install failed"
t1=$(date +%s%N)
span=$(( (t1 - t0) / 1000000 + 50 ))  # milliseconds; the kills fall in [0, span)
verified "first install"
rm -rf "$root/opt/crash" "$root/var/lib/imastream/packages"

echo "== $kills kills (random points in ${span} ms), then a rerun or imastream recover"
interrupted=0
for i in $(seq "$kills"); do
	# Odd rounds install 1.0 (fresh the first time), even ones upgrade to 2.0.
	pkg=$v1
	[ $((i % 2)) = 0 ] && pkg=$v2
	# (Not through inst: $! must be imastream itself, not a subshell.)
	"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$pkg" 2>"$work/killed.err" &
	pid=$!
	ms=$((RANDOM % span))
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	left=$(temps)
	[ "$left" = 0 ] || interrupted=$((interrupted + 1))
	echo "kill $i after ${ms} ms: $left temp files left"
	if [ $((i % 3)) = 0 ]; then
		# The next run of imastream install finds the marker and cleans up first.
		inst "$pkg" 2>"$work/rerun.err" || fail "kill $i: the rerun failed: $(cat "$work/rerun.err")"
		[ "$left" = 0 ] || grep -qE "temp files an interrupted install left|completed the interrupted transaction" "$work/rerun.err" ||
			fail "kill $i: the rerun did not say it cleaned up: $(cat "$work/rerun.err")"
	else
		"$IMASTREAM" recover --root "$root" 2>"$work/recover.err" ||
			fail "kill $i: recover failed: $(cat "$work/recover.err")"
		# A kill in the renames: the journal's temp files are renamed, not removed.
		completed=$(sed -n 's/.*completed the interrupted transaction of .* (\([0-9]*\) of its.*/\1/p' "$work/recover.err")
		grep -q "removed $((left - ${completed:-0})) temp files" "$work/recover.err" ||
			fail "kill $i: recover removed not the $left left (${completed:-0} renamed): $(cat "$work/recover.err")"
		[ ! -e "$root/var/lib/imastream/running" ] || fail "kill $i: recover left the marker"
		[ "$(temps)" = 0 ] || fail "kill $i: recover left temp files: $(find "$root" -name '.imastream-tmp-*' | head -3)"
		inst "$pkg" 2>"$work/rerun.err" || fail "kill $i: the install after recover failed: $(cat "$work/rerun.err")"
	fi
	no_leftovers "$root"
	verified "kill $i"
	[ ! -e "$root/var/lib/imastream/running" ] || fail "kill $i: the marker stayed after a full run"
done
echo "== a corrupt intent journal is refused in one line, and nothing is touched"
journal=$root/var/lib/imastream/journal
record=$root/var/lib/imastream/packages/imscrash.record
: >"$root/opt/crash/.imastream-tmp-$dead-1"
# Its writer is dead ($dead, in hex in temp names): else verify would take it for an install under way.
printf 'imastream-journal 1\npackage imscrash\npid %d\nrename /opt/crash .imastream-tmp-%s-0 big1\n' $((16#$dead)) "$dead" >"$journal"
printf 'imastream-running 1\npid 1\n' >"$root/var/lib/imastream/running" # as a killed run leaves it
for cmd in recover install; do
	if [ $cmd = recover ]; then
		"$IMASTREAM" recover --root "$root" 2>"$work/corrupt.err" && fail "recover took a corrupt journal"
	else
		inst "$v1" 2>"$work/corrupt.err" && fail "install took a corrupt journal"
	fi
	[ "$(wc -l <"$work/corrupt.err")" = 1 ] && grep -q "$root/var/lib/imastream/journal: corrupt intent journal (line 4: cut short.*nothing was changed" "$work/corrupt.err" ||
		fail "$cmd on a corrupt journal said: $(cat "$work/corrupt.err")"
	[ -e "$root/opt/crash/.imastream-tmp-$dead-1" ] && [ -e "$journal" ] && [ -e "$root/var/lib/imastream/running" ] ||
		fail "$cmd touched the root"
done
"$IMASTREAM" verify --root "$root" >"$work/verify.out" 2>&1 && fail "verify passed with a journal"
grep -q "interrupted transaction: run imastream recover" "$work/verify.out" || fail "verify said: $(cat "$work/verify.out")"
# A journal whose checksum is right but whose step leads out of the root through a symlink.
mkdir -p "$work/outside"
echo outside >"$work/outside/passwd"
: >"$work/outside/.imastream-tmp-$dead-0"
ln -s "$work/outside" "$root/escape"
body=$(printf 'imastream-journal 1\npackage evil\npid %d\nrename /escape .imastream-tmp-%s-0 passwd\n' $((16#$dead)) "$dead")
printf '%s\nsha256 %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$journal"
"$IMASTREAM" recover --root "$root" 2>"$work/corrupt.err" && fail "recover followed a symlink out of the root"
grep -q "escape: a step of the intent journal .* a symlink is never followed" "$work/corrupt.err" ||
	fail "recover on a hostile journal said: $(cat "$work/corrupt.err")"
[ "$(cat "$work/outside/passwd")" = outside ] && [ -e "$work/outside/.imastream-tmp-$dead-0" ] ||
	fail "a hostile journal changed a file outside the root"
rm -f "$journal" "$root/escape"
"$IMASTREAM" recover --root "$root" 2>"$work/recover.err" || fail "recover without the journal: $(cat "$work/recover.err")"
verified "after the corrupt journals"

# In the rename phase: IMASTREAM_TEST_RENAME_STOP_AT (a test-only hook of the library) stops
# the install before a random one of its renames, where it is killed.
echo "== kills during the renames of fresh installs and upgrades: verify blames nobody, recovery completes the package"
landed=0
for i in 1 2 3 4; do
	pkg=$v1 ver=1.0 how="a fresh install"
	[ $((i % 2)) = 0 ] && pkg=$v2 ver=2.0 how="an upgrade from 1.0"
	[ $((i % 2)) = 1 ] && rm -rf "$root/opt/crash" "$root/var/lib/imastream/packages"
	[ $((i % 2)) = 0 ] && { inst "$v1" || fail "rename kill $i: installing 1.0 failed"; }
	kill_in_renames "$root" "$work/killed.err" "$pkg" ||
		fail "rename kill $i ($how): no journal after the stop before rename $killed_at: $(cat "$work/killed.err")"
	landed=$((landed + 1))
	# grep finds no file when the stop came before the first small file's rename (exit 1).
	new=$({ grep -rlx --exclude=".imastream-tmp-*" "$ver [0-9]* [0-9]*" "$root/opt/crash" 2>/dev/null || true; } | wc -l)
	echo "rename kill $i ($how) before rename $killed_at: $new of 1000 small files renamed"
	"$IMASTREAM" verify --root "$root" >"$work/verify.out" 2>&1 && fail "rename kill $i: verify passed with a journal"
	[ "$(wc -l <"$work/verify.out")" = 1 ] && grep -q "interrupted transaction: run imastream recover" "$work/verify.out" ||
		fail "rename kill $i: verify said: $(head -3 "$work/verify.out")"
	if [ $((i % 3)) = 0 ]; then
		# The next install finds the journal under the lock and completes the package first.
		inst "$pkg" 2>"$work/rerun.err" || fail "rename kill $i: the next install failed: $(cat "$work/rerun.err")"
		grep -q "completed the interrupted transaction of imscrash-$ver-1.noarch from $pkg (" "$work/rerun.err" ||
			fail "rename kill $i: the next install did not complete it: $(cat "$work/rerun.err")"
	else
		recover_completes "$root" "imscrash-$ver-1.noarch" "$pkg" "$work/recover.err" "rename kill $i"
	fi
	[ ! -e "$journal" ] || fail "rename kill $i: the journal stayed"
	no_leftovers "$root" "rename kill $i"
	grep -qx "nevra imscrash-$ver-1.noarch" "$record" || fail "rename kill $i: the record says $(grep nevra "$record")"
	stale=$(grep -rLx "$ver [0-9]* [0-9]*" "$root"/opt/crash/d* | head -3)
	[ -z "$stale" ] || fail "rename kill $i: files of the other version: $stale"
	verified "rename kill $i"
done
echo "PASS: $kills kills, $interrupted of them left temp files, all cleaned up; $landed kills in the renames completed"
