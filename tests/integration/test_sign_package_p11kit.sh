#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package -j 3 and sign-digests -j 2 with a remote key: p11-kit server exports a SoftHSM2 token on a unix socket, p11-kit-client.so signs; a killed server fails only the unfinished packages.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
IMASTREAM="$top_builddir/imastream"
softhsm=/usr/lib/softhsm/libsofthsm2.so
for tool in softhsm2-util p11-kit setsid rpmbuild rpm rpmkeys rpm2cpio cpio openssl evmctl setfattr; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
[ -f "$softhsm" ] || { echo "SKIP: $softhsm is missing (softhsm2)"; exit 77; }
enginedir=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')
[ -f "$enginedir/pkcs11.so" ] || { echo "SKIP: no OpenSSL pkcs11 engine (libengine-pkcs11-openssl)"; exit 77; }
client=
for c in /usr/lib/*/pkcs11/p11-kit-client.so /usr/lib*/pkcs11/p11-kit-client.so; do
	[ -f "$c" ] && { client=$c; break; }
done
[ -n "$client" ] || { echo "SKIP: p11-kit-client.so is missing (p11-kit-modules)"; exit 77; }
p11-kit server --help >/dev/null 2>&1 || { echo "SKIP: this p11-kit has no server command (p11-kit)"; exit 77; }

tmp=$(mktemp -d /tmp/test_sign_package_p11kit.XXXXXX)
server_pgid=
stop_server() {
	# The server was started in a session of its own: its group is it and its per-connection child.
	[ -z "$server_pgid" ] || kill -- "-$server_pgid" 2>/dev/null || true
	server_pgid=
}
trap 'stop_server; rm -rf "$tmp"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# shellcheck source=tests/integration/signpkg-lib.sh
. "$top_srcdir/tests/integration/signpkg-lib.sh"
spkg_need_xattrs

# The token, private to this test, with an RSA key (deterministic signatures: the
# packages signed through the server can be compared with those signed by the key file).
export SOFTHSM2_CONF="$tmp/softhsm2.conf"
mkdir "$tmp/tokens"
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp" >"$SOFTHSM2_CONF"
softhsm2-util --init-token --free --label release --pin 1234 --so-pin 5678 >/dev/null
(umask 077
 openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/rsa.key" 2>/dev/null
 echo 1234 >"$tmp/pin")
softhsm2-util --import "$tmp/rsa.key" --token release --label ima --id 01 --pin 1234 >/dev/null
openssl req -x509 -new -key "$tmp/rsa.key" -out "$tmp/rsa.pem" -days 2 -subj /CN=release \
	-addext subjectKeyIdentifier=hash
openssl x509 -in "$tmp/rsa.pem" -outform DER -out "$tmp/rsa.der"

# start_server: p11-kit server in the foreground of a session of its own, on a socket here.
start_server() {
	rm -f "$tmp/p11.sock"
	setsid p11-kit server -f --provider "$softhsm" -n "$tmp/p11.sock" "pkcs11:token=release" \
		>"$tmp/server.out" 2>&1 &
	server_pgid=$!
	# Bounded only by the server's life (and a generous cap): a busy machine starts it late.
	for _ in $(seq 6000); do
		[ -S "$tmp/p11.sock" ] && return 0
		kill -0 "$server_pgid" 2>/dev/null || break
		sleep 0.1
	done
	echo "SKIP: p11-kit server did not start: $(cat "$tmp/server.out")"
	exit 77
}
start_server
export P11_KIT_SERVER_ADDRESS="unix:path=$tmp/p11.sock"
uri="pkcs11:token=release;object=ima;type=private?module-path=$client"

# --- Six packages, three workers, every signature made on the far side of the socket.
for n in 1 2 3 4 5 6; do spkg_build "remote$n" $((n + 1)) "$tmp/src" >/dev/null; done
cp -a "$tmp/src" "$tmp/remote"
cp -a "$tmp/src" "$tmp/local"
"$IMASTREAM" sign-package -j 3 --quiet --pass-file "$tmp/pin" --cert "$tmp/rsa.pem" --key "$uri" \
	"$tmp/remote" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok ||
	fail "signing through p11-kit server: $(cat "$tmp/err")"
"$IMASTREAM" sign-package -j 1 --quiet --cert "$tmp/rsa.pem" --key "$tmp/rsa.key" "$tmp/local"
for n in 1 2 3 4 5 6; do
	p=remote$n-1.0-1.noarch.rpm
	cmp -s "$tmp/remote/$p" "$tmp/local/$p" && ok || fail "$p: not the bytes the key file signs"
	got=$(spkg_evmctl_verify "$tmp/remote/$p" "$tmp/rsa.der")
	[ "$got" = $((n + 1)) ] && ok || fail "$p: $got signatures verified by evmctl, expected $((n + 1))"
done

# --- sign-digests through the same socket, two threads: the manifest path gives the same bytes.
"$IMASTREAM" sign-package --export-digests "$tmp/manifest" "$tmp/src"
"$IMASTREAM" sign-digests -j 2 --quiet --pass-file "$tmp/pin" --cert "$tmp/rsa.pem" --key "$uri" \
	"$tmp/manifest" -o "$tmp/sigs" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok ||
	fail "sign-digests through p11-kit server: $(cat "$tmp/err")"
cp -a "$tmp/src" "$tmp/imported"
"$IMASTREAM" sign-package --quiet --import-signatures "$tmp/sigs" --cert "$tmp/rsa.pem" "$tmp/imported" ||
	fail "importing the signatures made through p11-kit server"
for n in 1 2 3 4 5 6; do
	p=remote$n-1.0-1.noarch.rpm
	cmp -s "$tmp/imported/$p" "$tmp/local/$p" && ok || fail "$p: imported, not the bytes the key file signs"
done

# --- The server killed in the middle of a run: the packages it did not finish stay as
# they were, one line each; the finished ones are whole and valid.  A preload holds the
# run at its first package's rename (and every other worker at its own) while the server
# goes away, so at least one package is finished and most are not, however busy the
# machine is.
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc) to build the LD_PRELOAD library"; exit 77; }
"$cc" -shared -fPIC -O2 -o "$tmp/gate.so" "$top_srcdir/tests/integration/rename_gate.c" -ldl -lpthread ||
	{ echo "FAIL: cannot build the LD_PRELOAD library"; exit 1; }
mkfifo "$tmp/gate" "$tmp/go"
big=$(spkg_build remotebig 60 "$tmp/bigsrc")
mkdir "$tmp/orig"
for i in $(seq -w 1 24); do cp "$big" "$tmp/orig/big$i-1.0-1.noarch.rpm"; done
rm "$big"
cp -a "$tmp/orig" "$tmp/run"
rc_file=$tmp/rc
# A sanitizer build wants its runtime first among the preloads; this one needs no checking.
(status=0
 LD_PRELOAD="$tmp/gate.so" RENAME_GATE_FIFO="$tmp/gate" RENAME_GATE_GO="$tmp/go" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$IMASTREAM" sign-package -j 3 --quiet --pass-file "$tmp/pin" --cert "$tmp/rsa.pem" --key "$uri" \
	"$tmp/run" 2>"$tmp/err" || status=$?
 echo "$status" >"$rc_file"
 # A run that renamed nothing ends the wait below (read-write: this never blocks).
 exec 4<>"$tmp/gate" && echo ended >&4) &
signer=$!
# The first package is in place: the server goes away, then the run goes on without it.
read -r renamed _ <"$tmp/gate" || renamed=
if [ "$renamed" = renamed ]; then
	stop_server
	echo go >"$tmp/go"
else
	fail "sign-package ended before any package was renamed: $(head -n 3 "$tmp/err")"
fi
wait "$signer" || true
rc=$(cat "$rc_file")
[ "$rc" = 1 ] && ok || fail "after the server was killed: exit status $rc, expected 1 ($(head -n 3 "$tmp/err"))"
finished=0 unfinished=0
for i in $(seq -w 1 24); do
	p=big$i-1.0-1.noarch.rpm
	if cmp -s "$tmp/orig/$p" "$tmp/run/$p"; then
		unfinished=$((unfinished + 1))
		[ "$(grep -c "/run/$p: " "$tmp/err")" = 1 ] && ok ||
			fail "$p: unchanged but not one line: $(grep "$p" "$tmp/err" || echo none)"
	else
		finished=$((finished + 1))
		grep -q "/run/$p: " "$tmp/err" && fail "$p: signed, yet a failure was said"
		got=$(spkg_evmctl_verify "$tmp/run/$p" "$tmp/rsa.der")
		[ "$got" = 60 ] && ok || fail "$p: finished, but $got of 60 signatures verified by evmctl"
	fi
done
[ "$finished" -ge 1 ] && [ "$unfinished" -ge 1 ] && ok ||
	fail "the kill did not land mid-run: $finished finished, $unfinished unfinished"
[ "$(wc -l <"$tmp/err")" = "$unfinished" ] && ok ||
	fail "$unfinished unfinished packages but $(wc -l <"$tmp/err") lines: $(head -n 3 "$tmp/err")"
[ -z "$(find "$tmp/run" -name '.*')" ] && ok || fail "temporary files left: $(find "$tmp/run" -name '.*')"

echo "$checks passed, $fails failed ($finished packages finished before the server was killed)"
[ "$fails" = 0 ]
