#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Image builders: "dnf --installroot" from a createrepo_c repository runs imastream.so
# through the librpm dnf uses, with the plugin's macros file appended to ~/.rpmmacros as
# plugin/README-rpm.md says, and every installed file gets its security.ima; the same
# command without that line writes none.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need dnf
need createrepo_c
need getfattr
setup_scratch

# A repository: the test package, and a stand-in for the base system that provides
# /bin/sh, which the package's %post needs (dnf resolves dependencies, rpm -i --nodeps
# would not).
cat >"$T/base.spec" <<'EOF'
Name:		imsbase
Version:	1
Release:	1
Summary:	stands for the base system of a scratch root
License:	LGPL-2.1-or-later
BuildArch:	noarch
Provides:	/bin/sh
%description
Provides /bin/sh, which busybox gives the scratch root.
%files
EOF
mkdir -p "$T/repo"
cp "$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)" "$(build_pkg "$T/base.spec" 1)" "$T/repo/" ||
	fail "cannot build the packages"
createrepo_c -q "$T/repo" || fail "createrepo_c failed"

# The plugin as a prefix install's macros file names it (make install writes one like
# it), appended to ~/.rpmmacros, which every librpm user reads, dnf included (a macros
# file cannot %{load:} another).  Debian's rpm keeps its
# database below $HOME by default: the image's goes to /var/lib/rpm.
cat >"$T/macros.transaction_imastream" <<EOF
%__plugindir $top_builddir/.libs
%__transaction_imastream $SO
EOF
mkdir -p "$T/home" "$T/plain"
printf '%%_dbpath /var/lib/rpm\n%%_imastream_config %%{nil}\n' | tee "$T/plain/.rpmmacros" >"$T/home/.rpmmacros"
cat "$T/macros.transaction_imastream" >>"$T/home/.rpmmacros"

# dnf_into ROOT HOME: installs imstest into ROOT as an image builder would.
dnf_into() {
	new_root "$1"
	HOME=$2 dnf -y -q --installroot="$1" --releasever=1 --setopt=reposdir=/dev/null \
		--setopt=cachedir="$T/cache" --repofrompath=local,"file://$T/repo" --repo=local \
		--nogpgcheck --setopt=install_weak_deps=False install imstest >"$T/dnf.log" 2>&1 ||
		{ cat "$T/dnf.log"; fail "dnf --installroot $1 install imstest failed"; }
}
ima_of() {
	getfattr --absolute-names -n security.ima -e hex "$1" 2>/dev/null | sed -n 's/^security.ima=0x//p'
}

root="$T/root"
dnf_into "$root" "$T/home"
checked=0
for f in opt/imstest/bin/tool opt/imstest/bin/run.sh etc/imstest.conf opt/imstest/empty; do
	want=0404$(sha256sum "$root/$f" | cut -d' ' -f1)
	[ "$(ima_of "$root/$f")" = "$want" ] || fail "$f: security.ima '$(ima_of "$root/$f")', want $want"
	checked=$((checked + 1))
done
[ -s "$root/opt/imstest/data/post.log" ] || fail "the package's %post did not run"
HOME=$T/home rpm --root "$root" -q imstest >/dev/null || fail "imstest is not in the image's rpm database"

# Without the macros file, the same dnf command writes no security.ima: the plugin did.
bare="$T/bare"
dnf_into "$bare" "$T/plain"
[ -f "$bare/opt/imstest/bin/tool" ] || fail "dnf did not install imstest without the plugin"
[ -z "$(ima_of "$bare/opt/imstest/bin/tool")" ] || fail "security.ima without the plugin: something else writes it"
echo "ok: dnf --installroot with imastream.so: $checked files with security.ima = sha256sum; none without the plugin"
