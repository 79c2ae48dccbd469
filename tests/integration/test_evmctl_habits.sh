#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Under evmctl's command names imastream keeps evmctl's habits, compared with the evmctl
# on this machine: ima_hash's streams byte for byte (a tree with a FIFO, a socket and a
# device included, which -r skips as evmctl does), ima_verify's line for a good file and
# its refusal of a digest; evmctl's options imastream does not take get a hint.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
command -v evmctl >/dev/null || { echo "SKIP: evmctl is not installed"; exit 77; }
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) is not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: security.ima and mknod need root"; exit 77; }
work=$(mktemp -d /tmp/test_evmctl_habits.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
echo probe >probe
setfattr -n security.ima -v 0x01 probe 2>/dev/null || { echo "SKIP: security.ima not writable here"; exit 77; }

# A tree: files, and a FIFO, a socket and a character device that evmctl -r skips.
mkdir -p tree/sub
echo one >tree/a
echo two >tree/sub/b
mkfifo tree/sub/fifo
mknod tree/null c 1 3
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' tree/sock 2>/dev/null ||
	echo "note: no socket in the tree (no python3)"

# ima_hash: stdout and stderr as evmctl's, one file and the tree (-r, -a sha1).
for args in "tree/a" "-r tree" "-a sha1 -r tree"; do
	# shellcheck disable=SC2086
	evmctl ima_hash $args >evm.out 2>evm.err || fail "evmctl ima_hash $args failed"
	# shellcheck disable=SC2086
	"$imastream" ima_hash $args >ims.out 2>ims.err || fail "imastream ima_hash $args: exit $?: $(cat ims.err)"
	cmp -s evm.out ims.out || fail "ima_hash $args: stdout differs: $(diff evm.out ims.out | head -4)"
	cmp -s evm.err ims.err || fail "ima_hash $args: stderr differs: '$(cat -A evm.err)' '$(cat -A ims.err)'"
done
echo "ok: imastream ima_hash prints what evmctl ima_hash prints, on both streams: $(head -c 30 ims.err)"

# hash -r: the specials are skipped, exit 0; -v names each, the regular files are done.
"$imastream" hash -r tree >out 2>err || fail "hash -r of a tree with specials: exit $?: $(cat err)"
[ "$(wc -l <out)" = 2 ] || fail "hash -r: $(wc -l <out) lines for 2 files"
! grep -q 'skipped' err || fail "hash -r without -v named a skipped file: $(cat err)"
"$imastream" hash -r -v tree >out 2>err || fail "hash -r -v: exit $?"
grep -q 'tree/sub/fifo: skipped (FIFO)$' err || fail "-v does not name the FIFO: $(cat err)"
grep -q 'tree/null: skipped (character device)$' err || fail "-v does not name the device: $(cat err)"
[ ! -S tree/sock ] || grep -q 'tree/sock: skipped (socket)$' err || fail "-v does not name the socket"
# Named on the command line, a FIFO is still an error, as evmctl says of it.
"$imastream" hash tree/sub/fifo >out 2>err && fail "hash of a FIFO named on the command line: exit 0"
grep -q 'tree/sub/fifo: not a regular file (FIFO)' err || fail "the named FIFO: $(cat err)"
echo "ok: hash -r skips the FIFO, socket and device of a tree (named with -v), as evmctl -r does"

# ima_verify: evmctl's line for a good signature; a digest is refused, as evmctl refuses it.
(umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out key.pem 2>/dev/null)
openssl req -x509 -new -key key.pem -out cert.pem -days 2 -subj /CN=habits \
	-addext subjectKeyIdentifier=hash
openssl x509 -in cert.pem -outform DER -out cert.der
echo signed >s
echo hashed >h
"$imastream" ima_sign --key key.pem s >/dev/null || fail "ima_sign"
"$imastream" hash h >/dev/null || fail "hash"
evmctl ima_verify --key cert.der s >evm.out 2>evm.err || fail "evmctl ima_verify s failed"
"$imastream" ima_verify --trust cert.der s >ims.out 2>ims.err || fail "imastream ima_verify s: $(cat ims.out ims.err)"
[ "$(grep 'verification is OK' evm.err)" = "s: verification is OK" ] || fail "evmctl said: $(cat evm.err)"
[ "$(cat ims.err)" = "s: verification is OK" ] && [ ! -s ims.out ] ||
	fail "imastream ima_verify said '$(cat ims.out ims.err)', evmctl 's: verification is OK' on stderr"
evmctl ima_verify --key cert.der h >/dev/null 2>&1 && fail "evmctl ima_verify took a digest"
"$imastream" ima_verify --trust cert.der h >ims.out 2>&1 && fail "imastream ima_verify took a digest"
grep -q '^h: FAIL: security.ima: a digest, and appraise_type=imasig needs a signature' ims.out ||
	fail "ima_verify of a digest: $(cat ims.out)"
echo "ok: ima_verify says 's: verification is OK' as evmctl does, and refuses a digest as it does"

# evmctl's options we do not take: one usage line with what to use instead, exit 2.
refused() {
	local want=$1
	shift
	set +e
	"$imastream" "$@" >out 2>err
	rc=$?
	set -e
	[ $rc = 2 ] || fail "$*: exit $rc, expected 2"
	[ "$(wc -l <err)" = 1 ] || fail "$*: $(wc -l <err) lines: $(cat err)"
	grep -qF -- "$want" err || fail "$*: no '$want' in: $(cat err)"
}
refused "--imasig is evmctl's option, not taken here: imastream sign always writes an IMA signature" \
	sign --imasig --key key.pem s
refused "--sigfile is evmctl's option, not taken here: no .sig file is written" \
	ima_sign --sigfile --key key.pem s
refused "-s is evmctl's option, not taken here" sign -s --key key.pem s
refused "--uuid is evmctl's option" sign --uuid=x --key key.pem s
refused "--imahash is evmctl's option, not taken here: imastream hash writes the digest" \
	ima_hash --imahash s
refused "--hwtpm is evmctl's option, not taken here: measurement lists are judged by imastream attest check" \
	verify --hwtpm --trust cert.der s
refused "unknown option --nosuch" sign --nosuch s
echo "ok: evmctl's options are refused with what to use instead: $(cat err)"
