# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the package-signature tests: keys, a package built, file-signed with
# imastream sign-package and OpenPGP-signed with rpmsign, and checks of installed values.
# shellcheck shell=sh

. "$top_srcdir/tests/integration/rpm-lib.sh"
IMASTREAM="$top_builddir/imastream"

# pkgsig_setup [noplugin]: skips (77) without the peers, then makes the scratch folder $T.
# noplugin: the test drives imastream install, not rpm, so a sanitizer build runs it too.
pkgsig_setup() {
	for tool in rpm rpmbuild rpmsign rpmkeys gpg openssl evmctl getfattr xxd; do
		need "$tool"
	done
	[ -x "$IMASTREAM" ] || { echo "missing $IMASTREAM"; exit 99; }
	if [ "${1:-}" != noplugin ]; then
		setup_scratch
		return
	fi
	[ "$(id -u)" = 0 ] || { echo "SKIP: security.* xattrs need root"; exit 77; }
	T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-pkgsig.XXXXXX")
	trap 'rm -rf "$T"' EXIT
}

# mkkey NAME: an RSA-2048 key with a certificate whose subjectKeyIdentifier gives the
# kernel's key id (the kernel's 6.1 has no ECDSA); NAME.key, NAME.pem, NAME.der.
mkkey() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/$1.key" -out "$T/$1.pem" -days 2 \
		-subj "/CN=imastream pkgsig $1" -addext subjectKeyIdentifier=hash >/dev/null 2>&1 ||
		{ echo "openssl cannot make the $1 key"; exit 99; }
	openssl x509 -in "$T/$1.pem" -outform DER -out "$T/$1.der" || exit 99
	chmod 600 "$T/$1.key"
}

# keyid_of NAME: the kernel's key id of NAME.pem (last four SKID bytes), lowercase hex.
keyid_of() {
	openssl x509 -in "$T/$1.pem" -noout -ext subjectKeyIdentifier | tail -n 1 |
		tr -d ' :\n' | tr 'A-F' 'a-f' | tail -c 8
}

# pkgsig_build NAME: a package with a program named busybox (the static busybox when there
# is one, so that a kernel can run it), a data file, an empty file, a %config file, a
# symlink and a folder; prints its path.  Call it as p=$(pkgsig_build NAME) || exit 99.
pkgsig_build() {
	name=$1
	prog=/bin/busybox
	ldd "$prog" >/dev/null 2>&1 && prog=""
	[ -x "$prog" ] || prog=""
	mkdir -p "$T/top/SPECS" "$T/src"
	if [ -n "$prog" ]; then
		cp "$prog" "$T/src/busybox"
	else
		printf '#!/bin/sh\nexit 0\n' >"$T/src/busybox"
	fi
	cat >"$T/top/SPECS/$name.spec" <<EOF
Name: $name
Version: 1.0
Release: 1
Summary: package signature test
License: MIT
BuildArch: noarch
%global __os_install_post %{nil}
%description
package signature test
%install
mkdir -p %{buildroot}/opt/$name/sub %{buildroot}/etc
install -m 755 $T/src/busybox %{buildroot}/opt/$name/busybox
echo hello > %{buildroot}/opt/$name/small
head -c 70000 /dev/urandom > %{buildroot}/opt/$name/sub/data
: > %{buildroot}/opt/$name/empty
echo conf=1 > %{buildroot}/etc/$name.conf
ln -s small %{buildroot}/opt/$name/link
%files
/opt/$name
%config(noreplace) /etc/$name.conf
EOF
	# A static program in a noarch package: what the test needs, not a packaging error.
	rpmbuild -bb --quiet --nodeps --define "_topdir $T/top" --define "_build_id_links none" \
		--define "_binaries_in_noarch_packages_terminate_build 0" \
		--define "_binary_payload w1.gzdio" "$T/top/SPECS/$name.spec" >"$T/rpmbuild.log" 2>&1 ||
		{ cat "$T/rpmbuild.log" >&2; echo "rpmbuild failed" >&2; exit 99; }
	echo "$T/top/RPMS/noarch/$name-1.0-1.noarch.rpm"
}

# pkgsig_sign PKG KEY: file signatures by KEY.key into PKG, in place.
pkgsig_sign() {
	"$IMASTREAM" sign-package --key "$T/$2.key" --cert "$T/$2.pem" "$1" >"$T/sign.log" 2>&1 ||
		{ cat "$T/sign.log"; echo "sign-package failed"; exit 99; }
}

# pkgsig_gpg_setup: an OpenPGP key (no passphrase) in $T/gnupg, exported to $T/gpg.asc.
pkgsig_gpg_setup() {
	GNUPGHOME="$T/gnupg"
	export GNUPGHOME
	mkdir -m 700 "$GNUPGHOME"
	gpg --batch --passphrase '' --quick-gen-key 'imastream pkgsig <pkgsig@imastream.invalid>' \
		rsa2048 sign never >/dev/null 2>&1 || { echo "gpg key generation failed"; exit 99; }
	gpg --batch --armor --export >"$T/gpg.asc" || exit 99
}

# pkgsig_addsign PKG: rpmsign --addsign with that key (Debian's rpm must be told where gpg is).
pkgsig_addsign() {
	rpmsign --addsign --define "__gpg /usr/bin/gpg" --define "_gpg_name imastream pkgsig" \
		--define "_gpg_path $GNUPGHOME" "$1" >"$T/rpmsign.log" 2>&1 ||
		{ cat "$T/rpmsign.log"; echo "rpmsign --addsign failed"; exit 99; }
}

# xattr_of FILE NAME: the value in hex, empty when absent.
xattr_of() {
	getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"
}

# pkg_sigs PKG: "path flags signature" lines, for regular files with a signature.
pkg_sigs() {
	rpm -qp --nosignature --qf '[%{FILENAMES} %{FILEFLAGS} %{FILEMODES:octal} %{FILESIGNATURES}\n]' "$1" |
		awk '$3 ~ /^100/ && $4 != ""'
}

# alter_sig PKG SIGS PATH OUT: OUT is PKG with one hex digit of PATH's file signature
# changed (SIGS is pkg_sigs' listing of PKG); the signature must still decode.
alter_sig() {
	local sig off pos c new=0
	cp "$1" "$4" || exit 99
	sig=$(awk -v p="$3" '$1 == p { print $4 }' "$2")
	off=$(grep -abo "$(printf '%s' "$sig" | cut -c1-40)" "$4" | head -n 1 | cut -d: -f1)
	[ -n "$off" ] || fail "$3's signature not found in the package bytes"
	pos=$((off + 100))
	c=$(dd if="$4" bs=1 skip=$pos count=1 2>/dev/null)
	[ "$c" = 0 ] && new=1
	printf '%s' "$new" | dd of="$4" bs=1 seek=$pos conv=notrunc 2>/dev/null
}
