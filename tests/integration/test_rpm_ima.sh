#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Real packages installed by stock rpm with imastream in hash, sign (RSA, P-256) and
# sign+EVM modes; every regular file is checked by evmctl 1.4: the hash equals
# "evmctl ima_hash -n", signatures pass "evmctl ima_verify" and "evmctl verify".  A root
# without xattr support: test_rpm_noxattr.sh.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need evmctl
need getfattr
need openssl
setup_scratch

spec="$top_srcdir/tests/rpm/imstest.rpmspec"
v1=$(build_pkg "$spec" 1.0)
v2=$(build_pkg "$spec" 2.0)
root="$T/root"
# The regular files of imstest; run-again.sh is a hard link of run.sh.
files="opt/imstest/bin/tool opt/imstest/bin/run.sh opt/imstest/bin/run-again.sh opt/imstest/empty"
conf=etc/imstest.conf

# Keys as operators make them: certificates with subjectKeyIdentifier=hash (evmctl 1.4
# computes key ids that way), DER copies for evmctl --key.
mkkey() {
	name=$1
	shift
	openssl req -x509 "$@" -nodes -keyout "$T/$name.key" -out "$T/$name.pem" -days 2 \
		-subj "/CN=imastream test $name" -addext subjectKeyIdentifier=hash >/dev/null 2>&1 ||
		{ echo "openssl cannot make the $name key"; exit 99; }
	openssl x509 -in "$T/$name.pem" -outform DER -out "$T/$name.der" || exit 99
	chmod 600 "$T/$name.key"
}
mkkey rsa -newkey rsa:2048
mkkey ec -newkey ec -pkeyopt ec_paramgen_curve:P-256

# A file_contexts for the selinux plugin, so that EVM covers a real label.
printf '/opt/imstest(/.*)?\tsystem_u:object_r:usr_t:s0\n/opt/imstest/bin(/.*)?\t--\tsystem_u:object_r:bin_t:s0\n' >"$T/fc"

# The value of one xattr in hex, empty when absent.
xattr_of() {
	getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"
}

install_with() {
	new_root "$root"
	irpm "$root" --define "_imastream_file_contexts $T/fc" "$@" -i "$v1" ||
		fail "rpm -i $* failed"
}

echo "== hash mode (sha256: rpm's verified header digest, no re-read)"
install_with -vv
grep -q 'imastream: ima: /opt/imstest/bin/tool: digest from header' "$T/rpm.stderr" ||
	fail "the header digest was not used"
! grep -q 'digest from reread' "$T/rpm.stderr" || fail "a file was read again"
for f in $files; do
	want=$(evmctl ima_hash -n "$root/$f" 2>/dev/null)
	got=$(xattr_of "$root/$f" security.ima)
	[ -n "$got" ] && [ "$got" = "$want" ] || fail "$f: security.ima $got, evmctl says $want"
done
# %config files get a digest by default (config_files = hash): the kernel keeps it current.
[ "$(xattr_of "$root/$conf" security.ima)" = "$(evmctl ima_hash -n "$root/$conf" 2>/dev/null)" ] ||
	fail "%config file has no digest"
[ "$(xattr_of "$root/opt/imstest/bin/tool" security.selinux)" = \
	"$(printf 'system_u:object_r:bin_t:s0' | xxd -p)00" ] || fail "tool has the wrong label"
[ -z "$(xattr_of "$root/opt/imstest/bin/tool" security.evm)" ] || fail "evm written with evm none"
# rpm sets capabilities before our hook: EVM below must cover them.
[ -n "$(xattr_of "$root/opt/imstest/bin/tool" security.capability)" ] || fail "tool lost its caps"
echo "ok: hash mode matches evmctl ima_hash on $(echo $files | wc -w) files"

echo "== hash mode, sha512 and --nofiledigest (the plugin hashes the files itself)"
for extra in "--define=_imastream_hash_algo sha512" "--nofiledigest"; do
	install_with -vv "$extra" --define "_imastream_config_files yes"
	algo=sha256
	[ "$extra" = "--nofiledigest" ] || algo=sha512
	for f in $files $conf; do
		want=$(evmctl ima_hash -a $algo -n "$root/$f" 2>/dev/null)
		got=$(xattr_of "$root/$f" security.ima)
		[ "$got" = "$want" ] || fail "$f ($extra): security.ima $got, evmctl says $want"
	done
	grep -q 'imastream: ima: /opt/imstest/bin/tool: digest from reread' "$T/rpm.stderr" ||
		fail "tool was not re-read with $extra"
done
echo "ok: re-read digests match evmctl, %config covered with config_files yes"

verify_all() {
	for f in $files; do
		evmctl ima_verify --key "$T/$1.der" "$root/$f" >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$f: evmctl ima_verify ($1)"; }
		if [ "${2:-}" = evm ]; then
			evmctl verify --generation=0 --key "$T/$1.der" "$root/$f" >"$T/ev.log" 2>&1 ||
				{ cat "$T/ev.log"; fail "$f: evmctl verify ($1)"; }
			[ "$(xattr_of "$root/$f" security.evm | cut -c1-2)" = 05 ] ||
				fail "$f: security.evm is not a portable signature"
		fi
	done
}

for k in rsa ec; do
	echo "== sign mode, $k"
	install_with --define "_imastream_mode sign" --define "_imastream_key $T/$k.key" \
		--define "_imastream_cert $T/$k.pem"
	verify_all $k
	[ "$(xattr_of "$root/opt/imstest/bin/tool" security.ima | cut -c1-4)" = 0302 ] ||
		fail "security.ima is not a v2 signature"
	echo "ok: evmctl ima_verify accepts every $k signature"

	echo "== sign mode + EVM portable, $k, then an upgrade"
	sign="--define=_imastream_mode sign"
	install_with "$sign" --define "_imastream_key $T/$k.key" --define "_imastream_cert $T/$k.pem" \
		--define "_imastream_evm portable" --define "_imastream_trust $T/$k.pem"
	verify_all $k evm
	# Complete, in order, while the file still has its temporary name (trace runs last).
	install_with "$sign" --define "_imastream_key $T/$k.key" --define "_imastream_cert $T/$k.pem" \
		--define "_imastream_evm portable" --define "_imastream_plugins selinux,ima,evm,trace" \
		--define "_imastream_trace $T/tr.$k"
	grep -q '^trace: file_closed path=/opt/imstest/bin/tool;TMP .* has=selinux has=ima has=evm$' \
		"$T/tr.$k" || fail "attributes were not complete before the rename"
	verify_all $k evm
	irpm "$root" "$sign" --define "_imastream_key $T/$k.key" --define "_imastream_cert $T/$k.pem" \
		--define "_imastream_evm portable" --define "_imastream_file_contexts $T/fc" \
		-U "$v2" || fail "rpm -U failed"
	grep -q 2.0 "$root/opt/imstest/bin/tool" || fail "upgrade did not replace tool"
	verify_all $k evm
	echo "ok: evmctl verify accepts every EVM portable signature ($k), after -U too"
done

echo "== unusable keys fail at init, in one line, with nothing installed"
must_fail_init() {
	what=$1 expect=$2
	shift 2
	new_root "$root"
	if irpm "$root" --define "_imastream_mode sign" "$@" -i "$v1"; then
		fail "$what: rpm succeeded"
	fi
	[ "$(grep -c '^error: imastream:' "$T/rpm.stderr")" = 1 ] ||
		fail "$what: not exactly one imastream line"
	grep -q "^error: imastream:.*$expect" "$T/rpm.stderr" || fail "$what: no \"$expect\""
	[ ! -e "$root/opt" ] || fail "$what: files were installed"
	echo "ok: $what: $(grep '^error: imastream:' "$T/rpm.stderr")"
}
must_fail_init "missing key" "$T/nokey.pem" --define "_imastream_key $T/nokey.pem"
openssl pkey -in "$T/rsa.key" -aes256 -passout pass:right -out "$T/enc.key" || exit 99
chmod 600 "$T/enc.key"
echo wrong >"$T/pass"
chmod 600 "$T/pass"
must_fail_init "bad passphrase" "enc.key" --define "_imastream_key $T/enc.key" \
	--define "_imastream_key_pass_file $T/pass"
must_fail_init "untrusted key" "does not verify" --define "_imastream_key $T/rsa.key" \
	--define "_imastream_trust $T/ec.pem"
must_fail_init "evm before ima" "must come before" --define "_imastream_key $T/rsa.key" \
	--define "_imastream_plugins evm,ima"

echo "== a write failing in the middle of a package: rpm rolls back, nothing is left"
# user.* xattrs are not allowed on symlinks: labelling tool-link fails after other files of
# the package were written and given their attributes under temporary names.
printf '/opt/imstest/tool-link\t-l\tsystem_u:object_r:link_t:s0\n' >"$T/fc.link"
new_root "$root"
if irpm "$root" --define "_imastream_xattr_namespace user" --define "_imastream_plugins selinux,ima" \
	--define "_imastream_file_contexts $T/fc.link" -i "$v1"; then
	fail "rpm succeeded although a label could not be set"
fi
grep -q '^error: imastream: /opt/imstest/tool-link: cannot set user.selinux' "$T/rpm.stderr" ||
	fail "no line naming the file and the attribute"
left=$(find "$root/opt" "$root/etc" ! -type d 2>/dev/null)
[ -z "$left" ] || fail "left behind: $left"
echo "ok: failed install left no file at a final path and no temporary file"
