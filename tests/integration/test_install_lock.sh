#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One transaction per root: imastream install holds rpm's own lock, so rpm and a second install wait or fail, and the reverse.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
HOLD=$top_builddir/tests/integration/rpm_lock_hold
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
[ -x "$HOLD" ] || { echo "ERROR: $HOLD not built"; exit 99; }
# librpm deadlocks at start-up in a sanitizer build's process (as the rpm tests say): the
# default build runs this test.
case "$(ldd "$HOLD" 2>/dev/null)" in
*libasan*) echo "SKIP: rpm_lock_hold is a sanitizer build, in which librpm cannot start"; exit 77 ;;
esac

work=$(mktemp -d /tmp/imastream-install-lock.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	exec 7>&- 8>&- 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

pkg_a=$(build_pkg "$work" imslock-a w2.xzdio)
pkg_b=$(build_pkg "$work" imslock-b w2.xzdio)
root=$work/root
make_root "$root"
lock=$root$(rpm --eval '%{_rpmlock_path}')

# wait_for FILE TEXT: until FILE holds TEXT (the other side is slow to start, not timed).
wait_for() {
	local i
	for i in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "never saw '$2' in $1: $(cat "$1")"
}

echo "== imastream install holds the lock: a second install and rpm are kept out"
# The first install blocks in open() of its package, a FIFO, with the lock taken.
mkfifo "$work/pkg-fifo"
timeout 300 "$IMASTREAM" install --root "$root" --allow-unsigned --quiet -v "$work/pkg-fifo" \
	>"$work/a.out" 2>"$work/a.err" &
pid_a=$!
pids+=("$pid_a")
for i in $(seq 600); do
	[ -f "$root/var/lib/imastream/running" ] && break
	sleep 0.1
done
marked=$(sed -n 's/^pid //p' "$root/var/lib/imastream/running")
[ -n "$marked" ] && [ "$(cat "/proc/$marked/comm")" = imastream ] ||
	fail "the first install did not mark its transaction: $(cat "$work/a.err")"
[ -f "$lock" ] || fail "rpm's lock file $lock was not created"

rc=0
"$IMASTREAM" install --root "$root" --allow-unsigned --quiet --no-wait "$pkg_b" 2>"$work/b.err" || rc=$?
[ $rc = 1 ] || fail "--no-wait with the lock held: exit $rc, not 1"
[ "$(wc -l <"$work/b.err")" = 1 ] || fail "--no-wait: not one line: $(cat "$work/b.err")"
grep -q "holds the lock $lock; not waiting" "$work/b.err" ||
	fail "--no-wait: the line does not name the lock: $(cat "$work/b.err")"
[ ! -e "$root/var/lib/imastream/packages/imslock-b.record" ] || fail "--no-wait installed anyway"

rc=0
"$IMASTREAM" recover --root "$root" --no-wait 2>"$work/r.err" || rc=$?
[ $rc = 1 ] && grep -q "not waiting" "$work/r.err" ||
	fail "recover --no-wait with the lock held: exit $rc: $(cat "$work/r.err")"

out=$("$HOLD" "$root" </dev/null 2>/dev/null || true)
[ "$out" = busy ] || fail "librpm's transaction lock was free while imastream held it ($out)"
rc=0
rpm -i --root "$root" --nodeps --noscripts --notriggers "$pkg_b" </dev/null >"$work/rpm.err" 2>&1 || rc=$?
[ $rc != 0 ] && grep -q "transaction lock" "$work/rpm.err" ||
	fail "rpm -i ran while imastream held the lock: exit $rc: $(cat "$work/rpm.err")"

# A second install without --no-wait waits, says so, and goes on once the first is done.
timeout 300 "$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$pkg_b" 2>"$work/c.err" &
pid_c=$!
pids+=("$pid_c")
wait_for "$work/c.err" "waiting for the lock $lock"
[ ! -e "$root/var/lib/imastream/packages/imslock-b.record" ] || fail "the waiting install did not wait"
cat "$pkg_a" >"$work/pkg-fifo"
wait "$pid_a" || fail "the first install failed: $(cat "$work/a.err")"
wait "$pid_c" || fail "the waiting install failed: $(cat "$work/c.err")"
[ "$(wc -l <"$work/c.err")" = 1 ] || fail "the waiting install said more than one line: $(cat "$work/c.err")"
"$IMASTREAM" verify --root "$root" >"$work/v.out" 2>&1 || fail "verify --root: $(tail -3 "$work/v.out")"
grep -q "/opt/imslock-a/" "$work/v.out" && grep -q "/opt/imslock-b/" "$work/v.out" ||
	fail "verify --root does not list both packages"
[ ! -e "$root/var/lib/imastream/running" ] || fail "the transaction marker stayed"

echo "== rpm holds the lock: imastream install waits for it, or fails with --no-wait"
mkfifo "$work/hold-fifo"
timeout 300 "$HOLD" "$root" <"$work/hold-fifo" >"$work/hold.out" 2>&1 &
pid_h=$!
pids+=("$pid_h")
exec 7>"$work/hold-fifo"
wait_for "$work/hold.out" locked
holder=$(sed -n 's/^locked //p' "$work/hold.out")
rc=0
# (Every process started while the holder's FIFO is open gets 7>&-: a writer left open
# would keep it from ever seeing the end of its input.)
"$IMASTREAM" install --root "$root" --allow-unsigned --quiet --no-wait --replace-files "$pkg_a" \
	2>"$work/d.err" 7>&- || rc=$?
[ $rc = 1 ] && grep -q "process $holder) holds the lock $lock; not waiting" "$work/d.err" ||
	fail "--no-wait under rpm's lock: exit $rc: $(cat "$work/d.err")"
timeout 300 "$IMASTREAM" install --root "$root" --allow-unsigned --quiet --replace-files "$pkg_a" \
	2>"$work/e.err" 7>&- &
pid_e=$!
pids+=("$pid_e")
wait_for "$work/e.err" "waiting for the lock $lock.*process $holder"
exec 7>&-
wait "$pid_h" || fail "the lock holder failed: $(cat "$work/hold.out")"
wait "$pid_e" || fail "the install waiting for rpm failed: $(cat "$work/e.err")"
"$IMASTREAM" verify --root "$root" >"$work/v.out" 2>&1 || fail "verify --root after the wait"
no_leftovers "$root"

echo "== rpm holds the lock: relabel, which writes, waits for it or fails with --no-wait"
# hold_lock ROOT [DBPATH]: rpm's transaction lock held (by librpm) until release_lock.
hold_lock() {
	rm -f "$work/hold-fifo" "$work/hold.out"
	mkfifo "$work/hold-fifo"
	timeout 300 "$HOLD" "$@" <"$work/hold-fifo" >"$work/hold.out" 2>&1 &
	pid_h=$!
	pids+=("$pid_h")
	exec 7>"$work/hold-fifo"
	wait_for "$work/hold.out" locked
	holder=$(sed -n 's/^locked //p' "$work/hold.out")
}
release_lock() {
	exec 7>&-
	wait "$pid_h" || fail "the lock holder failed: $(cat "$work/hold.out")"
}
rroot=$work/rroot
make_root "$rroot"
rpm -i --root "$rroot" --nodeps --noscripts --notriggers "$pkg_a" </dev/null >/dev/null 2>&1 ||
	fail "rpm -i into $rroot failed"
rlock=$rroot$(rpm --eval '%{_rpmlock_path}')
hold_lock "$rroot"
rc=0
"$IMASTREAM" relabel --root "$rroot" --quiet --no-wait 2>"$work/rl.err" 7>&- || rc=$?
[ $rc = 1 ] && grep -q "process $holder) holds the lock $rlock; not waiting" "$work/rl.err" ||
	fail "relabel --no-wait under rpm's lock: exit $rc: $(cat "$work/rl.err")"
getfattr -n security.ima "$rroot/opt/imslock-a/owned" >/dev/null 2>&1 &&
	fail "relabel wrote under rpm's lock"
timeout 300 "$IMASTREAM" relabel --root "$rroot" --quiet 2>"$work/rw.err" 7>&- &
pid_r=$!
pids+=("$pid_r")
wait_for "$work/rw.err" "waiting for the lock $rlock.*process $holder"
getfattr -n security.ima "$rroot/opt/imslock-a/owned" >/dev/null 2>&1 &&
	fail "the waiting relabel wrote under rpm's lock"
release_lock
# (Exit 1: rpm itself leaves the package's hard links with one mode, which relabel reports.)
rc=0
wait "$pid_r" || rc=$?
[ $rc -le 1 ] && [ "$(grep -vc "waiting for the lock" "$work/rw.err")" = 0 ] ||
	fail "the relabel waiting for rpm failed: exit $rc: $(cat "$work/rw.err")"
getfattr -n security.ima "$rroot/opt/imslock-a/owned" >/dev/null 2>&1 ||
	fail "relabel did not label once the lock was free"

echo "== rpm --dbpath: the lock is DBPATH/.rpm.lock below the root, for rpm and for us"
droot=$work/droot
make_root "$droot"
rpm -i --root "$droot" --dbpath /var/lib/rpm --nodeps --noscripts --notriggers "$pkg_a" \
	</dev/null >/dev/null 2>&1 || fail "rpm --dbpath -i into $droot failed"
dlock=$droot/var/lib/rpm/.rpm.lock
hold_lock "$droot" /var/lib/rpm
[ -f "$dlock" ] || fail "rpm --dbpath did not lock $dlock"
for cmd in "install --allow-unsigned --replace-files $pkg_b" relabel recover; do
	rc=0
	# shellcheck disable=SC2086 # the command's words
	"$IMASTREAM" $cmd --root "$droot" --dbpath /var/lib/rpm --quiet --no-wait \
		2>"$work/dp.err" 7>&- || rc=$?
	[ $rc = 1 ] && grep -q "process $holder) holds the lock $dlock; not waiting" "$work/dp.err" ||
		fail "${cmd%% *} --dbpath under rpm --dbpath's lock: exit $rc: $(cat "$work/dp.err")"
done
[ ! -e "$droot/var/lib/imastream/packages/imslock-b.record" ] || fail "install --dbpath ran under rpm's lock"
rc=0
"$IMASTREAM" install --root "$droot" --dbpath var/lib/rpm --allow-unsigned "$pkg_b" 2>"$work/dp.err" 7>&- || rc=$?
[ $rc = 2 ] || [ $rc = 1 ] && grep -q "must begin with '/'" "$work/dp.err" ||
	fail "a relative --dbpath: exit $rc: $(cat "$work/dp.err")"
release_lock
"$IMASTREAM" install --root "$droot" --dbpath /var/lib/rpm --allow-unsigned --quiet "$pkg_b" 2>"$work/dp.err" ||
	fail "install --dbpath once rpm is done: $(cat "$work/dp.err")"
echo "PASS"
