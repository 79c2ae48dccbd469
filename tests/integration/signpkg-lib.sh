# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the many-package sign-package tests: small packages built here, their signatures checked by evmctl.
# The caller sets $tmp and defines fail().

# spkg_build NAME FILES DIR: a noarch package NAME of FILES small files (plus a directory
# and a symlink, which get no signature) into DIR; prints its path.
spkg_build() {
	mkdir -p "$tmp/top/SPECS" "$3"
	cat >"$tmp/top/SPECS/$1.spec" <<SPEC
Name: $1
Version: 1.0
Release: 1
Summary: sign-package many-package test
License: MIT
BuildArch: noarch
%description
sign-package many-package test
%install
mkdir -p %{buildroot}/opt/$1/d
i=0; while [ \$i -lt $2 ]; do echo "$1 file \$i" > %{buildroot}/opt/$1/f\$i; i=\$((i + 1)); done
ln -s f0 %{buildroot}/opt/$1/link
%files
/opt/$1
SPEC
	rpmbuild -bb --quiet --define "_topdir $tmp/top" "$tmp/top/SPECS/$1.spec" >"$tmp/rpmbuild.log" 2>&1 ||
		{ cat "$tmp/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed" >&2; exit 99; }
	mv "$tmp/top/RPMS/noarch/$1-1.0-1.noarch.rpm" "$3/"
	echo "$3/$1-1.0-1.noarch.rpm"
}

# spkg_evmctl_verify PKG CERT.der: rpm -K is clean, and every regular file of PKG, unpacked
# with its signature as user.ima, verifies with evmctl against CERT.  Prints the count.
spkg_evmctl_verify() {
	local pkg=$1 cert=$2 dir n=0 path sig
	rpmkeys --checksig "$pkg" >"$tmp/k.txt" 2>&1 && grep -q 'digests OK' "$tmp/k.txt" ||
		fail "rpm -K rejects $pkg: $(cat "$tmp/k.txt")"
	dir=$(mktemp -d "$tmp/unpack.XXXXXX")
	(cd "$dir" && rpm2cpio "$pkg" | cpio -idm --quiet) || fail "cannot unpack $pkg"
	rpm -qp --nosignature --qf '[%{FILENAMES} %{FILESIGNATURES}\n]' "$pkg" >"$tmp/sigs.txt"
	while read -r path sig; do
		[ -f "$dir$path" ] && [ ! -L "$dir$path" ] || continue
		[ -n "$sig" ] || { fail "$pkg: $path has no signature"; continue; }
		setfattr -n user.ima -v "0x$sig" "$dir$path" || fail "cannot set user.ima on $dir$path"
		if evmctl ima_verify --xattr-user --key "$cert" "$dir$path" >/dev/null 2>&1; then
			n=$((n + 1))
		else
			fail "$pkg: evmctl rejects the signature of $path"
		fi
	done <"$tmp/sigs.txt"
	rm -rf "$dir"
	echo "$n"
}

# spkg_need_xattrs: user xattrs on $tmp, or skip.
spkg_need_xattrs() {
	: >"$tmp/xattr.probe"
	setfattr -n user.probe -v 1 "$tmp/xattr.probe" 2>/dev/null ||
		{ echo "SKIP: no user xattrs on $tmp"; exit 77; }
}
