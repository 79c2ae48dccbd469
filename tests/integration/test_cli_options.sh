#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shared option vocabulary: aliases and evmctl spellings, one-line usage errors, the -r summary and progress lines, and escaped names in every output.
set -uo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
keys="$top_srcdir/tests/keys"
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) is not installed"; exit 77; }
# Under the build tree (ext4 here): user.* xattrs work there, unlike on an older tmpfs.
work=$(mktemp -d "$top_builddir/cli-options.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }
(umask 077; cp "$keys/rsa2048.pem" key.pem; cp "$keys/rsa2048-enc.pem" enc.pem
	echo "test passphrase" >pass)
cert=$keys/rsa2048.crt
"$imastream" --version >/dev/null # libtool's wrapper does its first-run work here

# usage_error WANT ARGS...: exit 2, nothing on stdout, exactly the line WANT on stderr.
usage_error() {
	local want=$1 rc=0; shift
	"$imastream" "$@" </dev/null >out 2>err || rc=$?
	[ "$rc" = 2 ] || fail "$*: exit $rc, expected 2"
	[ ! -s out ] || fail "$*: printed on stdout: $(head -c 200 out)"
	[ "$(cat err)" = "$want" ] || fail "$*: stderr '$(cat err)', expected '$want'"
	ok
}

# Unknown, misspelled, abbreviated or incomplete options: one line, the option as
# typed, and where to look; never the whole usage.
usage_error "imastream sign: unknown option --foo (see imastream sign --help)" sign --foo x
usage_error "imastream hash: unknown option -Z (see imastream hash --help)" hash -Z x
usage_error "imastream verify: unknown option --foo (see imastream verify --help)" verify --foo=1 x
usage_error "imastream hash: unknown option --rec (see imastream hash --help)" hash --rec x
usage_error "imastream keys import: unknown option --key (see imastream keys import --help)" \
	keys import --key key.pem a.crt
usage_error "imastream sign: --key needs KEY (see imastream sign --help)" sign x --key
usage_error "imastream sign: -k needs KEY (see imastream sign --help)" sign x -k
usage_error "imastream hash: --dry-run takes no argument (see imastream hash --help)" hash --dry-run=1 x
usage_error "imastream hash: -j takes a number from 1 to 64, not '0' (see imastream hash --help)" hash -j 0 x
usage_error "imastream sign: --keyid takes 1 to 8 hex digits, not zero, not '0' (see imastream sign --help)" \
	sign --key key.pem --keyid 0 x
usage_error "imastream sign-package: unknown option --set (see imastream sign-package --help)" \
	sign-package --set a=b x.rpm
usage_error "imastream install: -o takes KEY=VALUE, not 'mode' (see imastream install --help)" \
	install --root . -o mode x.rpm
usage_error "imastream: unknown command frob (see imastream --help)" frob
usage_error "imastream: no command given (see imastream --help)"
# evmctl's --pass=SECRET: refused, the secret never used.
usage_error "imastream sign: --pass takes no passphrase on the command line, where other users can read it; use -p alone to be asked, --pass-file or --pass-env (see imastream sign --help)" \
	sign --key enc.pem --pass=secret x
usage_error "imastream keys id: -p takes no passphrase on the command line, where other users can read it; use -p alone to be asked, --pass-file or --pass-env (see imastream keys id --help)" \
	keys id --key enc.pem -psecret
usage_error "imastream sign: give one of -p, --pass-file and --pass-env (see imastream sign --help)" \
	sign --key enc.pem -p --pass-env X x

# A configuration that could only fail later is refused before anything is read: a key a
# config file sets twice to two values, package_sigs = verify with no certificate.
printf 'mode = sign\n# later\nmode = hash\n' >dup.conf
usage_error "imastream install: $work/dup.conf:3: mode is set again, to another value than on line 1: set it once" \
	install --root . --config "$work/dup.conf" x.rpm
usage_error "imastream install: package_sigs = verify needs trust, the certificates that check the packages' file signatures (or package_sigs = auto: verify when trust is set)" \
	install --root . -o package_sigs=verify x.rpm

# Options that contradict each other are refused, not one of them silently unheeded:
# --quiet with --progress, two sources of a policy, a key for a run that signs nothing.
usage_error "imastream hash: --progress and --quiet: give one of them (see imastream hash --help)" \
	hash --quiet --progress x
usage_error "imastream relabel: --progress and --quiet: give one of them (see imastream relabel --help)" \
	relabel --root . --progress --quiet
usage_error "imastream policy: --rpmdb and --record: give one source of reference digests (see imastream policy --help)" \
	policy keylime --root . --rpmdb --record
usage_error "imastream relabel: -k key.pem: mode hash and evm none sign nothing: add --mode sign or --evm portable, or leave the key out (see imastream relabel --help)" \
	relabel --root . --mode hash -k key.pem
usage_error "imastream install: --key key.pem: mode hash and evm none sign nothing: add --mode sign or --evm portable, or leave the key out (see imastream install --help)" \
	install --root . --key key.pem x.rpm

# install names the option a user types where the chain names an rpm macro, and an
# option's error names the spelling that was typed.
rc=0; "$imastream" install --root . --mode sign x.rpm >out 2>err || rc=$?
[ "$rc" = 2 ] && [ "$(cat err)" = "imastream install: mode sign needs a key (--key)" ] ||
	fail "install --mode sign without a key: $rc '$(cat err)'"
rc=0; "$imastream" install --root . --portable x.rpm >out 2>err || rc=$?
[ "$rc" = 2 ] && [ "$(cat err)" = "imastream install: evm portable needs a key (--key)" ] ||
	fail "install --portable without a key: $rc '$(cat err)'"
rc=0; "$imastream" install --root . --hashalgo sha3000 x.rpm >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -qx 'imastream install: --hashalgo: unknown hash algorithm "sha3000" (md5, sha1, sha256, sha384, sha512, sha224 or sm3)' err ||
	fail "install --hashalgo sha3000: $rc '$(cat err)'"
ok

# Aliases and evmctl spellings mean what their canonical spelling means.
mkdir tree
printf 'one\n' >tree/a
printf 'two\n' >tree/b
want=$("$imastream" hash -n --no-names -a sha512 tree/a)
[ "$("$imastream" hash -n --no-names --hashalgo sha512 tree/a)" = "$want" ] &&
	[ "$("$imastream" hash -n --no-names --hash-algo=sha512 tree/a)" = "$want" ] ||
	fail "--hashalgo and --hash-algo= are not -a"
ok
want=$("$imastream" sign -n --no-names --key key.pem --cert "$cert" tree/a)
for args in "-k key.pem -c $cert" "--key key.pem --keyid-from-cert $cert" \
	"--key key.pem --cert $cert --portable" "--key enc.pem --pass-file pass --cert $cert"; do
	# shellcheck disable=SC2086
	[ "$("$imastream" sign -n --no-names $args tree/a)" = "$want" ] || fail "sign $args"
	ok
done
[ "$(KEYPASS='test passphrase' "$imastream" sign -n --no-names --key enc.pem --pass-env KEYPASS tree/a)" = \
	"$(printf '%s\n' "$want")" ] || fail "sign --pass-env"
# verify: evmctl's --key CERT[,CERT] and -k are --trust.
"$imastream" sign --xattr-user --key key.pem tree/a tree/b >/dev/null || fail "sign tree/a tree/b"
for args in "--trust $cert" "-t $cert" "--key $cert" "-k $cert" "--key $keys/ec-p256.crt,$cert"; do
	# shellcheck disable=SC2086
	out=$("$imastream" verify --xattr-user $args tree/a 2>&1)
	[ "$out" = "tree/a: OK (ima: signature, evm: portable signature)" ] || fail "verify $args: $out"
	ok
done
# keys: -k is --key in id; import and list keep it for --keyring (checked in test_keys_cli
# and test_keys_keyring, which can reach a keyring).
[ "$("$imastream" keys id -k key.pem -c "$cert")" = "$("$imastream" keys id --cert "$cert")" ] ||
	fail "keys id -k -c"
ok

# hash, sign and verify print the name with each value, sha256sum's way.
[ "$("$imastream" hash -n tree/a)" = "0404$(sha256sum tree/a)" ] || fail "hash: not VALUE  NAME"
out=$("$imastream" sign -n --key key.pem tree/a)
[ "$(printf '%s\n' "$out" | sed -n '1s/^03[0-9a-f]*  //p;2s/^05[0-9a-f]*  //p')" = "$(printf 'tree/a\ntree/a')" ] ||
	fail "sign: not IMA-VALUE  NAME, EVM-VALUE  NAME: $out"
ok

# Names with a newline, a backslash and control bytes: one line each, escaped by one
# rule, on stdout (marked with a leading backslash) and in messages on stderr.
mkdir odd
nl=$'odd/new\nline'
printf 'x' >"$nl"
printf 'y' >'odd/back\slash'
printf 'z' >"odd/$(printf 'esc\033[31mred\ttab')"
mkfifo "odd/fifo$(printf '\r')cr"
rc=0; "$imastream" hash -r -v -n odd >out 2>err || rc=$?
[ "$rc" = 0 ] || fail "hash -r odd: exit $rc, expected 0 (the FIFO is skipped)"
[ "$(wc -l <out)" = 3 ] || fail "hash -r odd: $(wc -l <out) lines for 3 files"
grep -qxF '\0404'"$(sha256sum "$nl" | cut -c2-)" out || fail "hash: the newline name is not as sha256sum has it"
grep -qxF '\0404'"$(sha256sum 'odd/back\slash' | cut -c2-)" out ||
	fail "hash: the backslash name is not as sha256sum has it"
grep -qF '  odd/esc\x1b[31mred\ttab' out || fail "hash: ESC and tab not escaped: $(cat -A out)"
grep -qxF 'imastream hash: odd/fifo\rcr: skipped (FIFO)' err ||
	fail "hash: the FIFO's name is not escaped on stderr: $(cat -A err)"
! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' out err || fail "hash: a control byte got out"
ok
rm "odd/fifo$(printf '\r')cr"
"$imastream" sign -r --xattr-user --key key.pem odd >out 2>err || fail "sign -r odd: $(cat err)"
[ "$(wc -l <out)" = 6 ] || fail "sign -r odd: $(wc -l <out) lines for 3 files"
[ "$(grep -c '^\\0[35][0-9a-f]*  odd/new\\nline$' out)" = 2 ] ||
	fail "sign: the newline name is not escaped twice: $(cat -A out)"
ok
"$imastream" verify -r --xattr-user --trust "$cert" odd >out 2>err || fail "verify -r odd: $(cat err)"
grep -qxF '\odd/new\nline: OK (ima: signature, evm: portable signature)' out &&
	grep -qxF '\odd/back\\slash: OK (ima: signature, evm: portable signature)' out &&
	grep -qxF '\odd/esc\x1b[31mred\ttab: OK (ima: signature, evm: portable signature)' out || fail "verify: names not escaped: $(cat -A out)"
[ "$(wc -l <out)" = 3 ] || fail "verify -r odd: $(wc -l <out) lines"
ok
# A message of the library that names a file is escaped as well (the key loader's).
rc=0; "$imastream" sign --key "$nl" tree/a >out 2>err || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <err)" = 1 ] && grep -q '^imastream sign: odd/new\\nline: ' err ||
	fail "a key named with a newline: $rc $(cat -A err)"
printf 'x' >>"$nl"
rc=0; "$imastream" verify --xattr-user --trust "$cert" "$nl" >out 2>err || rc=$?
[ "$rc" = 1 ] && grep -qxF '\odd/new\nline: FAIL: user.ima: content changed' out ||
	fail "verify of a changed file with a newline: $(cat -A out)"
ok

# The summary after -r: stderr, one line, what was done and what failed.
summary='^imastream (hash|sign|verify): [0-9]+ files?, [0-9]+ bytes?, [0-9]+ failures?, [0-9]+\.[0-9]{2} s$'
"$imastream" hash -r --xattr-user tree >out 2>err || fail "hash -r tree"
grep -Eqx 'imastream hash: 2 files, 8 bytes, 0 failures, [0-9]+\.[0-9]{2} s' err ||
	fail "hash -r summary: $(cat err)"
"$imastream" sign -r --xattr-user --key key.pem tree >out 2>err || fail "sign -r tree"
grep -Eqx 'imastream sign: 2 files, 8 bytes, 0 failures, [0-9.]+ s' err || fail "sign -r summary: $(cat err)"
printf 'changed\n' >tree/b
rc=0; "$imastream" verify -r --xattr-user --trust "$cert" tree >out 2>err || rc=$?
[ "$rc" = 1 ] || fail "verify -r of a changed tree: exit $rc"
grep -Eqx 'imastream verify: 2 files, 12 bytes, 1 failure, [0-9.]+ s' err ||
	fail "verify -r summary: $(cat err)"
[ "$(wc -l <err)" = 1 ] || fail "verify -r: more than the summary on stderr: $(cat err)"
ok
for cmd in "hash -r" "sign -r --key key.pem" "verify -r --trust $cert"; do
	# shellcheck disable=SC2086
	"$imastream" $cmd --xattr-user tree >out 2>err
	grep -Eq "$summary" err || fail "$cmd: no summary"
	# Not a terminal: no progress line, no escape sequence, nothing but the summary.
	! grep -q $'\r\|\033' err || fail "$cmd: a progress line although stderr is a file"
	# shellcheck disable=SC2086
	"$imastream" $cmd --quiet --xattr-user tree >out 2>err
	[ ! -s err ] || fail "$cmd --quiet: stderr '$(cat err)'"
	# shellcheck disable=SC2086
	"$imastream" $cmd --progress --xattr-user tree >out 2>err
	grep -q $'^\r\033\\[Kimastream [a-z]*: 1 files, ' err || fail "$cmd --progress: no progress line: $(cat -A err)"
	ok
done
# Without -r: no summary.
"$imastream" hash --xattr-user tree/a >out 2>err
[ ! -s err ] || fail "hash without -r printed '$(cat err)'"
ok

# On a terminal (script(1) gives us one): the progress line by itself, and -p asks.
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "$imastream hash -r --xattr-user $work/tree >/dev/null" /dev/null >tty.out
	grep -q $'\r\033\\[Kimastream hash: 1 files, ' tty.out || fail "no progress line on a terminal: $(cat -A tty.out)"
	grep -q 'imastream hash: 2 files, 12 bytes' tty.out || fail "no summary on a terminal"
	printf 'test passphrase\n' | script -qec "$imastream keys id -p --key $work/enc.pem" /dev/null >tty.out
	# The key id follows the prompt on its line, or on the next when the typed line came
	# after the terminal's echo was off (the newline the prompt then ends with): a race
	# with the program's start.
	tr -d '\r\n' <tty.out | grep "Passphrase for $work/enc.pem: 890c1f83" >/dev/null || fail "-p: $(cat -A tty.out)"
	ok
else
	echo "note: script(1) cannot make a terminal here; the terminal cases are not run"
fi
# -p without a terminal: one line that says what to do instead.
rc=0; setsid "$imastream" keys id -p --key enc.pem </dev/null >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "^imastream keys id: -p asks for the passphrase on a terminal, and there is none; use --pass-file FILE or --pass-env VAR" err ||
	fail "-p without a terminal: $rc $(cat err)"
ok

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS: $checks checks"
