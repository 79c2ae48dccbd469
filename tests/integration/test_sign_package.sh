#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream sign-package against the real peers: rpmbuild, rpm -K, openssl, rpmsign, the stock ima plugin, evmctl.
set -eu

: "${top_builddir:?}"
IMASTREAM="$top_builddir/imastream"
PLUGIN=/usr/lib/x86_64-linux-gnu/rpm-plugins/ima.so

for tool in rpmbuild rpm rpmkeys rpm2cpio cpio rpmsign openssl evmctl getfattr gpg xxd sha256sum; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done

tmp=$(mktemp -d /tmp/test_sign_package.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0

ok() {
	checks=$((checks + 1))
}

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# One package per name: files of several sizes, an executable, a %config file, an empty
# file, a symlink and a directory.
build_pkg() {
	name=$1
	payload=${2:-w9.gzdio}
	digestalgo=${3:-8}
	mkdir -p "$tmp/top/SPECS"
	cat >"$tmp/top/SPECS/$name.spec" <<EOF
Name: $name
Version: 1.0
Release: 1
Summary: sign-package test
License: MIT
BuildArch: noarch
%description
sign-package test
%install
mkdir -p %{buildroot}/opt/$name/dir %{buildroot}/etc
echo hello > %{buildroot}/opt/$name/small
head -c 4097 /dev/urandom > %{buildroot}/opt/$name/page
head -c 1048576 /dev/urandom > %{buildroot}/opt/$name/big
: > %{buildroot}/opt/$name/empty
printf '#!/bin/sh\necho hi\n' > %{buildroot}/opt/$name/run.sh
chmod 755 %{buildroot}/opt/$name/run.sh
echo conf=1 > %{buildroot}/etc/$name.conf
ln -s small %{buildroot}/opt/$name/link
%files
/opt/$name
%config(noreplace) /etc/$name.conf
EOF
	rpmbuild -bb --quiet --define "_topdir $tmp/top" --define "_binary_payload $payload" \
		--define "_binary_filedigest_algorithm $digestalgo" "$tmp/top/SPECS/$name.spec" >"$tmp/rpmbuild.log" 2>&1 ||
		{ cat "$tmp/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed" >&2; exit 99; }
	echo "$tmp/top/RPMS/noarch/$name-1.0-1.noarch.rpm"
}

# A self-signed certificate with subjectKeyIdentifier=hash, its DER form and public key.
make_key() {
	kname=$1
	shift
	openssl req -x509 -newkey "$@" -nodes -keyout "$tmp/$kname.key" -out "$tmp/$kname.pem" \
		-subj "/CN=imastream $kname test" -days 2 -addext subjectKeyIdentifier=hash \
		>/dev/null 2>&1
	chmod 600 "$tmp/$kname.key"
	openssl x509 -in "$tmp/$kname.pem" -outform DER -out "$tmp/$kname.der"
	openssl x509 -in "$tmp/$kname.pem" -noout -pubkey >"$tmp/$kname.pub"
}

# Last four bytes of the certificate's subject key identifier, lowercase hex.
skid_keyid() {
	openssl x509 -in "$1" -noout -ext subjectKeyIdentifier | tail -n 1 | tr -d ' :\n' |
		tr 'A-F' 'a-f' | tail -c 8
}

# Every file signature of $1 is well formed, from key $2, and verifies over the file
# digest; prints the number of signatures.
check_sigs() {
	pkg=$1
	kname=$2
	keyid=$(skid_keyid "$tmp/$kname.pem")
	n=0
	rpm -qp --nosignature --qf '[%{FILENAMES} %{FILEDIGESTS} %{FILESIGNATURES}\n]' "$pkg" >"$tmp/sigs.txt"
	while read -r path digest sig; do
		if [ -z "$digest" ]; then
			# No digest (directory, symlink): the signature must be empty too.
			[ -z "$sig" ] || fail "$path: has no digest but a signature"
			continue
		fi
		hdr=$(printf '%s' "$sig" | cut -c1-18)
		len=$(( $(printf '%s' "$sig" | wc -c) / 2 - 9 ))
		want=$(printf '030204%s%04x' "$keyid" "$len")
		[ "$hdr" = "$want" ] || { fail "$path: header $hdr, expected $want"; continue; }
		printf '%s' "$sig" | cut -c19- | xxd -r -p >"$tmp/sig.raw"
		printf '%s' "$digest" | xxd -r -p >"$tmp/digest.bin"
		if openssl pkeyutl -verify -pubin -inkey "$tmp/$kname.pub" -in "$tmp/digest.bin" \
			-sigfile "$tmp/sig.raw" -pkeyopt digest:sha256 >/dev/null 2>&1; then
			n=$((n + 1))
		else
			fail "$path: openssl does not verify the signature"
		fi
	done <"$tmp/sigs.txt"
	echo "$n"
}

if ! "$IMASTREAM" sign-package --help | grep -q -- '--outdir DIR'; then
	fail "--help does not describe --outdir"
fi

make_key rsa rsa:2048
make_key ec ec -pkeyopt ec_paramgen_curve:P-256
pkg_a=$(build_pkg spa)
pkg_b=$(build_pkg spb)
sum_a=$(sha256sum <"$pkg_a")
mkdir "$tmp/out"

# --- RSA, two packages at once, into another folder; the inputs stay as they were.
"$IMASTREAM" sign-package --key "$tmp/rsa.key" --cert "$tmp/rsa.pem" -o "$tmp/out" \
	"$pkg_a" "$pkg_b" && ok || fail "sign-package (RSA) failed"
[ "$(sha256sum <"$pkg_a")" = "$sum_a" ] && ok || fail "the input package changed"
signed_a="$tmp/out/$(basename "$pkg_a")"
signed_b="$tmp/out/$(basename "$pkg_b")"
for p in "$signed_a" "$signed_b"; do
	if rpmkeys --checksig "$p" >"$tmp/k.txt" 2>&1 && grep -q 'digests OK' "$tmp/k.txt"; then
		ok
	else
		fail "rpm -K rejects $p: $(cat "$tmp/k.txt")"
	fi
	# small, page, big, empty, run.sh and the %config file: 6 regular files.
	n=$(check_sigs "$p" rsa)
	[ "$n" = 6 ] && ok || fail "$p: $n verified signatures, expected 6"
done
if [ "$(rpm2cpio "$pkg_a" | sha256sum)" = "$(rpm2cpio "$signed_a" | sha256sum)" ]; then
	ok
else
	fail "the payload changed"
fi
if [ "$(rpm -qp --nosignature --qf '%{FILESIGNATURELENGTH}' "$signed_a")" = 265 ]; then
	ok
else
	fail "FILESIGNATURELENGTH is not 265 for RSA-2048"
fi

# --- P-256 in place, over the RSA signatures.
cp "$signed_a" "$tmp/ec.rpm"
"$IMASTREAM" sign-package --key "$tmp/ec.key" --cert "$tmp/ec.pem" -a sha256 "$tmp/ec.rpm" &&
	ok || fail "sign-package (P-256) failed"
n=$(check_sigs "$tmp/ec.rpm" ec)
[ "$n" = 6 ] && ok || fail "P-256: $n verified signatures, expected 6"
rpmkeys --checksig "$tmp/ec.rpm" >/dev/null 2>&1 && ok || fail "rpm -K rejects the P-256 package"

# --- sha512, which the packages do not carry: contents re-hashed from the payload, for
# each payload compressor; checked over rpm2cpio's content with openssl.
check_rehashed() {
	pkg=$1
	algo=${2:-sha512}
	algo_hex=${3:-06}
	x="$tmp/x.$(basename "$pkg")"
	mkdir "$x"
	(cd "$x" && rpm2cpio "$pkg" | cpio -idm --quiet)
	keyid=$(skid_keyid "$tmp/ec.pem")
	n=0
	rpm -qp --nosignature --qf '[%{FILENAMES} %{FILESIGNATURES}\n]' "$pkg" >"$tmp/sigs.txt"
	while read -r path sig; do
		[ -n "$sig" ] || continue
		hdr=$(printf '%s' "$sig" | cut -c1-14)
		[ "$hdr" = "0302$algo_hex$keyid" ] || { fail "$path: $algo header $hdr"; continue; }
		printf '%s' "$sig" | cut -c19- | xxd -r -p >"$tmp/sig.raw"
		openssl dgst "-$algo" -binary "$x$path" >"$tmp/digest.bin"
		if openssl pkeyutl -verify -pubin -inkey "$tmp/ec.pub" -in "$tmp/digest.bin" \
			-sigfile "$tmp/sig.raw" -pkeyopt "digest:$algo" >/dev/null 2>&1; then
			n=$((n + 1))
		else
			fail "$path: the $algo signature does not verify over the content"
		fi
	done <"$tmp/sigs.txt"
	[ "$n" = 6 ] && ok || fail "$pkg: $n verified $algo signatures, expected 6"
	rpmkeys --checksig "$pkg" >/dev/null 2>&1 && ok || fail "rpm -K rejects $pkg"
}
cp "$signed_b" "$tmp/sha512.rpm"
"$IMASTREAM" sign-package --key "$tmp/ec.key" --cert "$tmp/ec.pem" -a sha512 "$tmp/sha512.rpm" &&
	ok || fail "sign-package -a sha512 failed"
check_rehashed "$tmp/sha512.rpm"
for payload in w6.xzdio w3.zstdio; do
	p=$(build_pkg "sp${payload%%dio}" "$payload")
	"$IMASTREAM" sign-package --key "$tmp/ec.key" --cert "$tmp/ec.pem" -a sha512 "$p" &&
		ok || fail "sign-package -a sha512 failed on a $payload payload"
	check_rehashed "$p"
done

# --- md5 file digests (rpm id 1): signed in sha256 by default, re-hashed from the payload,
# since the kernel and imastream's own plugin and installer expect sha256 (issue 12 item 12).
p=$(build_pkg spmd5 w9.gzdio 1)
"$IMASTREAM" sign-package --key "$tmp/ec.key" --cert "$tmp/ec.pem" "$p" &&
	ok || fail "sign-package failed on a package with md5 file digests"
check_rehashed "$p" sha256 04

# --- rpmsign --addsign afterwards, then sign-package again over the OpenPGP signature.
export GNUPGHOME="$tmp/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --passphrase '' --quick-gen-key 'imastream test <test@imastream.invalid>' rsa2048 sign never \
	>/dev/null 2>&1 || { echo "ERROR: gpg key generation failed" >&2; exit 99; }
gpg --batch --armor --export >"$tmp/gpg.asc"
rpmkeys --dbpath "$tmp/db" --initdb 2>/dev/null || true
rpmkeys --dbpath "$tmp/db" --import "$tmp/gpg.asc"
cp "$signed_a" "$tmp/gpg.rpm"
# Debian's rpm needs to be told where gpg is.
rpmsign --addsign --define "__gpg /usr/bin/gpg" --define "_gpg_name imastream test" \
	--define "_gpg_path $GNUPGHOME" "$tmp/gpg.rpm" >/dev/null 2>&1 && ok || fail "rpmsign --addsign failed"
if rpmkeys --dbpath "$tmp/db" -Kv "$tmp/gpg.rpm" >"$tmp/k.txt" 2>&1 &&
	grep -Eq 'Header (OpenPGP )?V4 RSA/SHA[0-9]* [Ss]ignature, key (ID|fingerprint):? [0-9a-f]*: OK' "$tmp/k.txt"; then
	ok
else
	fail "rpm -K does not report the OpenPGP signature: $(cat "$tmp/k.txt")"
fi
n=$(check_sigs "$tmp/gpg.rpm" rsa)
[ "$n" = 6 ] && ok || fail "rpmsign lost file signatures ($n left)"
"$IMASTREAM" sign-package -v --key "$tmp/ec.key" --cert "$tmp/ec.pem" "$tmp/gpg.rpm" 2>"$tmp/err.txt" &&
	ok || fail "sign-package over an OpenPGP signature failed"
grep -q 'OpenPGP signature kept' "$tmp/err.txt" && ok || fail "no note on the OpenPGP signature"
# One package signed: the summary line still ends the run.
grep -Eq '^imastream sign-package: 1 package, [0-9]+ files, [0-9]+ signatures, 0 failures, [0-9.]+ s$' "$tmp/err.txt" &&
	ok || fail "no summary for one package: $(cat "$tmp/err.txt")"
if rpmkeys --dbpath "$tmp/db" -Kv "$tmp/gpg.rpm" >"$tmp/k.txt" 2>&1 &&
	grep -Eq 'Header (OpenPGP )?V4 RSA/SHA[0-9]* [Ss]ignature, key (ID|fingerprint):? [0-9a-f]*: OK' "$tmp/k.txt"; then
	ok
else
	fail "the OpenPGP signature no longer verifies: $(cat "$tmp/k.txt")"
fi
n=$(check_sigs "$tmp/gpg.rpm" ec)
[ "$n" = 6 ] && ok || fail "re-signed package: $n verified P-256 signatures, expected 6"

# --- The stock ima plugin installs them; evmctl verifies what it wrote.
# install_check PKG CERT.der: every regular non-%config file gets the package's value.
install_check() {
	root="$tmp/root.$(basename "$1")"
	mkdir -p "$root"
	rpm -i --root "$root" --nodeps --nosignature --define "__plugindir $tmp/plugins" \
		"$1" >"$tmp/install.log" 2>&1 && ok || fail "rpm -i $1 failed: $(cat "$tmp/install.log")"
	rpm -qp --nosignature --qf '[%{FILENAMES} %{FILEFLAGS} %{FILESIGNATURES}\n]' "$1" >"$tmp/isigs.txt"
	while read -r path flags sig; do
		f="$root$path"
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		got=$(getfattr --absolute-names -n security.ima -e hex "$f" 2>/dev/null |
			sed -n 's/^security.ima=0x//p')
		# The stock plugin skips non-executable %config files (RPMFILE_CONFIG = 1).
		if [ $((flags & 1)) = 1 ]; then
			[ -z "$got" ] && ok || fail "$path: %config file got security.ima"
			continue
		fi
		[ "$got" = "$sig" ] && ok || fail "$path: security.ima '$got' is not the package's '$sig'"
		evmctl ima_verify --key "$2" "$f" >/dev/null 2>&1 && ok ||
			fail "$path: evmctl ima_verify rejects the installed signature"
	done <"$tmp/isigs.txt"
}
if [ -f "$PLUGIN" ]; then
	# Only the stock ima.so: the folder's other plugins (selinux, systemd_inhibit...)
	# have nothing to do with this test.
	mkdir -p "$tmp/plugins"
	ln -s "$PLUGIN" "$tmp/plugins/ima.so"
	install_check "$signed_a" "$tmp/rsa.der"
	install_check "$tmp/sha512.rpm" "$tmp/ec.der"
else
	echo "note: $PLUGIN not found, install check skipped"
fi

# --- Errors: one line, input untouched, no temp file left.
expect_error() {
	what=$1
	pattern=$2
	file=$3
	shift 3
	before=$(sha256sum <"$file")
	if "$IMASTREAM" sign-package "$@" 2>"$tmp/err.txt"; then
		fail "$what: succeeded"
		return
	fi
	[ "$(wc -l <"$tmp/err.txt")" = 1 ] || fail "$what: not one line: $(cat "$tmp/err.txt")"
	grep -q "$pattern" "$tmp/err.txt" || fail "$what: message '$(cat "$tmp/err.txt")' lacks '$pattern'"
	[ "$(sha256sum <"$file")" = "$before" ] || fail "$what: the package changed"
	leftovers=$(find "$(dirname "$file")" "$tmp/out" -name '.*.rpm.*' | wc -l)
	[ "$leftovers" = 0 ] || fail "$what: temp files left behind"
	ok
}
mkdir "$tmp/bad"
cp "$pkg_a" "$tmp/bad/trunc.rpm"
truncate -s -3000 "$tmp/bad/trunc.rpm"
expect_error truncated 'truncated' "$tmp/bad/trunc.rpm" --key "$tmp/rsa.key" "$tmp/bad/trunc.rpm"
cp "$pkg_a" "$tmp/bad/flip.rpm"
# Byte 5000 lies inside the main header (the signature header is about 4.4 KiB).
printf '\377' | dd of="$tmp/bad/flip.rpm" bs=1 seek=5000 conv=notrunc 2>/dev/null
expect_error "flipped header byte" 'corrupt package\|malformed' "$tmp/bad/flip.rpm" \
	--key "$tmp/rsa.key" "$tmp/bad/flip.rpm"
cp "$pkg_a" "$tmp/bad/ok.rpm"
expect_error "missing output folder" "outdir: directory $tmp/nonexistent does not exist" "$tmp/bad/ok.rpm" \
	--key "$tmp/rsa.key" -o "$tmp/nonexistent" "$tmp/bad/ok.rpm"
expect_error "read-only output folder" "outdir: cannot write in directory /proc/sys" "$tmp/bad/ok.rpm" \
	--key "$tmp/rsa.key" -o /proc/sys "$tmp/bad/ok.rpm"
expect_error "unknown algorithm" 'unknown hash algorithm' "$tmp/bad/ok.rpm" \
	--key "$tmp/rsa.key" -a sha3 "$tmp/bad/ok.rpm"
openssl pkey -in "$tmp/rsa.key" -aes256 -passout pass:right -out "$tmp/enc.key"
chmod 600 "$tmp/enc.key"
export SIGNPKG_PASS=wrong
expect_error "wrong passphrase" "enc.key" "$tmp/bad/ok.rpm" \
	--key "$tmp/enc.key" --pass-env SIGNPKG_PASS "$tmp/bad/ok.rpm"
export SIGNPKG_PASS=right
"$IMASTREAM" sign-package --key "$tmp/enc.key" --pass-env SIGNPKG_PASS -o "$tmp/out" "$tmp/bad/ok.rpm" &&
	ok || fail "the right passphrase did not work"

echo "$checks checks passed, $fails failed"
[ "$fails" = 0 ]
