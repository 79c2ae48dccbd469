#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system calls imastream.so makes per file.  Under root rpm it takes a file's owner,
# group, mode and size from rpm's header (rpm has just set them from it) instead of a stat
# per file: the EVM signatures still cover what is on disk (evmctl verify, non-root
# owners, set-id bits, an unknown user that rpm maps to root), and the install makes no
# more stat calls than rpm's own.  On a file rpm has just created it reads no signature
# to keep (there is none).
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need evmctl
need strace
need openssl
[ "$(id -u)" = 0 ] || { echo "SKIP: rpm sets owners only as root"; exit 77; }
setup_scratch

pkg=$(build_pkg "$top_srcdir/tests/rpm/imsowners.rpmspec" 1.0)
root="$T/root"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/k.key" \
	-out "$T/k.pem" -days 2 -subj "/CN=imastream no-stat test" \
	-addext subjectKeyIdentifier=hash >/dev/null 2>&1 || exit 99
openssl x509 -in "$T/k.pem" -outform DER -out "$T/k.der" || exit 99
chmod 600 "$T/k.key"

# rpm resolves owners in the root's own passwd and group files.
fresh_root() {
	new_root "$root"
	mkdir -p "$root/etc"
	printf 'root:x:0:0::/root:/bin/sh\nbin:x:2:2::/:/bin/false\ndaemon:x:1:1::/:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\nbin:x:2:\ndaemon:x:1:\n' >"$root/etc/group"
}

echo "== sign + EVM: the signatures cover the owners rpm set"
fresh_root
irpm "$root" --define '_imastream_mode sign' --define "_imastream_key $T/k.key" \
	--define "_imastream_cert $T/k.pem" --define '_imastream_evm portable' -i "$pkg" ||
	{ cat "$T/rpm.stderr"; fail "rpm -i failed"; }
[ "$(stat -c '%u:%g:%a' "$root/opt/imsowners/setuid")" = 2:1:4750 ] ||
	fail "setuid: rpm left $(stat -c '%u:%g:%a' "$root/opt/imsowners/setuid"), not 2:1:4750"
[ "$(stat -c '%u:%g:%a' "$root/opt/imsowners/nosuchuser")" = 0:0:755 ] ||
	fail "nosuchuser: rpm left $(stat -c '%u:%g:%a' "$root/opt/imsowners/nosuchuser"), not 0:0:755"
for f in setuid daemon nosuchuser many/f0 many/f199; do
	evmctl verify --generation=0 --key "$T/k.der" "$root/opt/imsowners/$f" >/dev/null 2>&1 ||
		fail "$f: evmctl verify rejects its EVM signature (owner $(stat -c '%u:%g:%a' "$root/opt/imsowners/$f"))"
	evmctl ima_verify --key "$T/k.der" "$root/opt/imsowners/$f" >/dev/null 2>&1 ||
		fail "$f: evmctl ima_verify rejects its IMA signature"
done
echo "ok: evmctl verifies the IMA and EVM signatures of non-root, set-id and unmapped owners"

echo "== what the chain's plugins are told: the owner, mode and size on disk"
fresh_root
irpm "$root" --define '_imastream_plugins trace' --define "_imastream_trace $T/trace" -i "$pkg" ||
	{ cat "$T/rpm.stderr"; fail "rpm -i with the trace plugin failed"; }
for f in setuid daemon nosuchuser many/f7; do
	p=$root/opt/imsowners/$f
	mode=$(printf 'mode=%06o' "0x$(stat -c %f "$p")")
	owner="owner=$(stat -c %u:%g "$p") size=$(stat -c %s "$p")"
	# The line of the hook that hands over rpm's fd (the one that says owner=).
	line=$(grep -F "/opt/imsowners/$f" "$T/trace" | grep -F ' owner=')
	[ -n "$line" ] || { cat "$T/trace"; fail "$f: no trace line with its owner"; }
	case $line in *" $mode "*" $owner "*) ;; *) fail "$f: the trace says \"$line\", stat(1) $mode $owner" ;; esac
done
echo "ok: the trace gives each file's owner, mode and size as stat(1) does"

# stats NAME RPM_ARGS...: the newfstatat, fstat, lstat, stat and statx calls of one install (every
# thread) into $T/NAME.stats; irpm's rpm, under strace.
stats() {
	name=$1
	shift
	fresh_root
	strace -f -c -o "$T/strace.$name" -e trace=newfstatat,fstat,lstat,stat,statx rpm --root "$root" --dbpath /var/lib/rpm \
		--nodeps --define "__plugindir $top_builddir/.libs" --define "_imastream_config %{nil}" \
		--define "__transaction_imastream $SO" "$@" -i "$pkg" >/dev/null 2>"$T/rpm.err" ||
		{ cat "$T/rpm.err"; fail "rpm $* under strace failed"; }
	awk '$NF == "total" { print $4 }' "$T/strace.$name" >"$T/$name.stats"
	[ -s "$T/$name.stats" ] || { cat "$T/strace.$name"; fail "strace counted no stat call of rpm $*"; }
}
echo "== hash mode: no stat of its own per file"
stats plain --noplugins
stats ours --define '_imastream_mode hash'
plain=$(cat "$T/plain.stats") ours=$(cat "$T/ours.stats")
echo "stat calls: rpm --noplugins $plain, with imastream.so $ours (204 files)"
# The plugin's start (its configuration, the root's probe) may stat a few paths; a stat
# per file would add 204.
[ $((ours - plain)) -lt 50 ] || fail "imastream.so made $((ours - plain)) more stat calls than rpm for 204 files"
echo "ok: $((ours - plain)) more stat calls than rpm --noplugins for 204 files"

echo "== sign + EVM: no read of a signature to keep on a file rpm has just created"
fresh_root
strace -f -o "$T/xattrs" -e trace=fgetxattr,lgetxattr,getxattr rpm --root "$root" \
	--dbpath /var/lib/rpm --nodeps --define "__plugindir $top_builddir/.libs" \
	--define "_imastream_config %{nil}" --define "__transaction_imastream $SO" \
	--define '_imastream_mode sign' --define "_imastream_key $T/k.key" \
	--define "_imastream_cert $T/k.pem" --define '_imastream_evm portable' \
	-i "$pkg" >/dev/null 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i under strace failed"; }
evm_reads=$(grep -c '"security.evm"' "$T/xattrs" || true)
ima_reads=$(grep -c '"security.ima"' "$T/xattrs" || true)
echo "reads: security.evm $evm_reads, security.ima $ima_reads (203 regular files)"
[ "$evm_reads" = 0 ] || fail "imastream.so read security.evm $evm_reads times on files rpm created"
# EVM reads each file's new security.ima to sign it: once per regular file, and the
# probe of the root's xattr support once; a read to keep a signature would double it.
[ "$ima_reads" -le 204 ] || fail "imastream.so read security.ima $ima_reads times for 203 regular files"
echo "ok: no security.evm read, one security.ima read per regular file (EVM's)"
