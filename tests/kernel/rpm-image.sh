#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes (or reuses) the cached disk image of a small bootable Debian 13 system whose
# every file comes from an rpm package, installed by dnf --installroot with this
# build's imastream.so signing (IMA signatures, EVM portable signatures).
#
# Usage: rpm-image.sh PLUGIN [rsa|p384] [lifecycle]
#   PLUGIN     this build's imastream.so (for the host's librpm, which the host's dnf uses)
#   rsa        the signing key is RSA-2048 (the default; Debian 12's 6.1 has no ECDSA)
#   p384       ECDSA P-384 (Debian 13's 6.12)
#   lifecycle  the variant of test_kernel_lifecycle.sh: rpm-image-lifecycle-packages.txt
#              too (dnf, for upgrades in the guest), %config files without EVM
#              signatures (config_evm none: editable, and an accepted edit can be
#              labelled again) and the image's own rpm labelling them as the build did
#              (etc/rpm/macros.imastream-config), cached apart as
#              CACHE/rpm-image-lifecycle-KEYTYPE-KEY
# Prints the image's folder, CACHE/rpm-image-KEYTYPE-KEY, and exits 0; or prints the reason and
# exits 77 (not root, a tool missing, archive unreachable and nothing cached) or 99 (a
# step failed; its log is named). The folder holds:
#   root.img      the ext4 disk; root/ the same tree (its rpm database at var/lib/rpm)
#   root-install/ the same packages installed by this build's imastream install (the
#                 program beside PLUGIN's folder, or IMASTREAM), not booted
#   keys/         ima.pem and ima.crt (PEM), the key that signed and its certificate
#   rpmmacros     the macros that read the image's rpm database from the host
#   repo/         the createrepo_c repository the image was installed from
#   FIGURES       what it cost: packages, files, sizes, seconds per step
# How: mmdebstrap --variant=minbase of trixie with rpm-image-packages.txt (systemd-sysv:
# systemd is PID 1); imastream built in scripts/matrix's trixie chroot and installed with
# make install; "ima-rollout setup" in the root (keys, policy docs/ima-policy-measured,
# the initramfs-tools hook), as docs/SETUP.md has users do; then repackage-deb.sh writes
# one spec with a subpackage per Debian package (dpkg's file lists, conffiles as
# %config), plus image-accounts (passwd, group, shadow: what base-passwd's and the
# other maintainer scripts wrote), imastream (make install's files), image-job (the
# test's boot job) and image-local (every other file no package lists: alternatives,
# systemd enablement links, caches, /etc files the scripts wrote). dpkg's database is
# not repackaged and not on the image. KEY hashes the package list, these scripts,
# the policy, imastream's sources and PLUGIN. Environment: IMASTREAM_CACHE.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${IMASTREAM_CACHE:-/var/cache/imastream}
skip() { echo "rpm-image: SKIP: $*"; exit 77; }
die() { echo "rpm-image: $*" >&2; exit 99; }

[ $# -ge 1 ] && [ $# -le 3 ] && [ -f "$1" ] || die "usage: rpm-image.sh PLUGIN [rsa|p384] [lifecycle]"
plugin=$(realpath "$1")
imastream=${IMASTREAM:-$(dirname "$(dirname "$plugin")")/imastream}
[ -x "$imastream" ] || die "no imastream program at $imastream (set IMASTREAM)"
keytype=${2:-rsa}
case $keytype in
rsa) keyopt=(-newkey rsa:2048) ;;
p384) keyopt=(-newkey ec -pkeyopt ec_paramgen_curve:P-384) ;;
*) die "rpm-image.sh: key type $keytype: unknown (rsa or p384)" ;;
esac
lists=("$here/rpm-image-packages.txt")
config_evm=portable
case ${3:-} in
'') prefix=rpm-image ;;
lifecycle) prefix=rpm-image-lifecycle lists+=("$here/rpm-image-lifecycle-packages.txt") config_evm=none ;;
*) die "rpm-image.sh: variant $3: unknown (lifecycle)" ;;
esac
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap, chroot, root-owned files)"
for t in mmdebstrap mke2fs rpmbuild createrepo_c dnf getcap dpkg-query; do
	command -v $t >/dev/null || skip "$t not found"
done

packages=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "${lists[@]}" | paste -sd, -)
srcfiles() {
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top" ls-files -z -co --exclude-standard
	else
		find . \( -path ./build -o -name autom4te.cache \) -prune -o -type f -print0
	fi | grep -zEv '^(\./)?(tests|bench|docs)/|\.md$'
}
srchash=$(cd "$top" && srcfiles | LC_ALL=C sort -z | xargs -0 sha256sum 2>/dev/null | sha256sum | cut -c1-16)
key=$(printf '%s\n%s\n%s\n%s\n' "$keytype" "$packages" "$srchash" \
	"$(cat "$0" "$here/repackage-deb.sh" "$here/rpm-image-job.sh" "$here/rpm-image-job.service" \
		"$top/docs/ima-policy-measured" "$top/scripts/ima-rollout" "$plugin" | sha256sum)" |
	sha256sum | cut -c1-12)
dir=$cache/$prefix-$keytype-$key

mkdir -p "$cache" || skip "cannot create $cache"
exec 9>"$cache/rpm-image.lock"
flock 9
[ -f "$dir/.complete" ] && { echo "$dir"; exit 0; }

# shellcheck source=scripts/debian-lib.sh
. "$top/scripts/debian-lib.sh"
mirror=$(debian_mirror)
[ -n "$mirror" ] || skip "the host's apt sources name no Debian archive"
debian_reachable "$mirror" trixie || skip "the Debian archive (trixie) cannot be reached and no image is cached"
chroot=""
for d in "$cache"/chroot-trixie-*/; do
	[ -f "$d.imastream-complete" ] && chroot=${d%/} && break
done
[ -n "$chroot" ] || skip "no trixie chroot in $cache (scripts/matrix --prepare trixie)"

new=$dir.new
rm -rf "$new" && mkdir -p "$new/lists" "$new/keys" || die "cannot create $new"
t0=$(date +%s)
step() { echo "$1 $(($(date +%s) - t0))" >>"$new/FIGURES"; t0=$(date +%s); }

# imastream for trixie's librpm, as live-image.sh builds it.
echo "rpm-image: building imastream against trixie's librpm" >&2
work=$new/work
mkdir -p "$work/src" || die "mkdir failed"
tar -C "$top" --exclude=./build --exclude=./.git --exclude=./autom4te.cache -cf - . |
	tar -C "$work/src" -xf - || die "cannot copy the source"
cat >"$work/build.sh" <<'BUILD'
set -eu
cd /work/src && autoreconf -fi >/work/build.log 2>&1
mkdir -p /work/build && cd /work/build
../src/configure --quiet --prefix=/usr --sysconfdir=/etc --localstatedir=/var >>/work/build.log 2>&1
make -j"$(nproc)" >>/work/build.log 2>&1
make install DESTDIR=/work/dest >>/work/build.log 2>&1
BUILD
# shellcheck source=scripts/chroot-lib.sh
. "$top/scripts/chroot-lib.sh"
chroot_run "$chroot" "$work" build.sh >"$new/build.out" 2>&1 || die "the build in $chroot failed; see $work/build.log"
step build-imastream-s

echo "rpm-image: mmdebstrap trixie minbase" >&2
deb=$new/deb
mmdebstrap --variant=minbase --components=main --include="$packages" \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--customize-hook='chroot "$1" apt-get clean' \
	trixie "$deb" "${mirror%/}" >"$new/mmdebstrap.log" 2>&1 || die "mmdebstrap failed; see $new/mmdebstrap.log"
step mmdebstrap-s

# imastream, as a user installs a checkout; its files become the package imastream.
(cd "$work/dest" && find . -mindepth 1 | sed 's|^\.||') >"$new/lists/imastream.list"
sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac" >"$new/lists/imastream.version"
[ -s "$new/lists/imastream.version" ] || echo 0 >"$new/lists/imastream.version"
tar -C "$work/dest" -cf - . | tar -C "$deb" -xf - --keep-directory-symlink || die "cannot install imastream into the root"
chroot "$deb" ldconfig || die "ldconfig in the root failed"
chroot "$deb" imastream --version >/dev/null 2>&1 || die "imastream does not run in the root"

# The key, and ima-rollout setup in the root: keys, macros, policy, initramfs hook.
(umask 077 && openssl req -x509 "${keyopt[@]}" -nodes -sha256 -days 3650 -subj "/CN=imastream rpm image $keytype" \
	-addext subjectKeyIdentifier=hash -keyout "$new/keys/ima.pem" -out "$new/keys/ima.crt" >"$new/openssl.log" 2>&1) ||
	die "cannot make the key: $(tail -n 1 "$new/openssl.log")"
mkdir -p "$deb/tmp/setup" && cp "$new/keys/ima.pem" "$new/keys/ima.crt" "$top/docs/ima-policy-measured" \
	"$top/scripts/ima-rollout" "$deb/tmp/setup/" || die "cannot stage the setup"
chroot "$deb" sh /tmp/setup/ima-rollout setup --key /tmp/setup/ima.pem --cert /tmp/setup/ima.crt \
	--policy /tmp/setup/ima-policy-measured >"$new/setup.log" 2>&1 || die "ima-rollout setup failed: $(tail -n 2 "$new/setup.log")"
# What a deployer adds: the disk, a name, rpm's database where the image's rpm and the
# host read it, and the test's boot job (its own package).
printf '/dev/vda / ext4 rw 0 1\n' >"$deb/etc/fstab"
echo rpm-image >"$deb/etc/hostname"
echo '%_dbpath /var/lib/rpm' >"$deb/etc/rpm/macros.dbpath"
# The lifecycle variant's rpm labels %config files as its build does (ima-rollout's
# macros leave config_files at hash: a kept %config file's signature then had to become a
# digest, which its EVM portable signature forbids).
[ "$config_evm" = portable ] ||
	printf '%%_imastream_config_files yes\n%%_imastream_config_evm %s\n' "$config_evm" >"$deb/etc/rpm/macros.imastream-config"
install -D -m 0755 "$here/rpm-image-job.sh" "$deb/usr/libexec/imastream-image/run-job" &&
	install -D -m 0644 "$here/rpm-image-job.service" "$deb/usr/lib/systemd/system/imastream-image-job.service" &&
	mkdir -p "$deb/etc/systemd/system/multi-user.target.wants" &&
	ln -sf /usr/lib/systemd/system/imastream-image-job.service \
		"$deb/etc/systemd/system/multi-user.target.wants/imastream-image-job.service" ||
	die "cannot install the boot job"
printf '%s\n' /usr/libexec/imastream-image /usr/libexec/imastream-image/run-job \
	/usr/lib/systemd/system/imastream-image-job.service \
	/etc/systemd/system/multi-user.target.wants/imastream-image-job.service >"$new/lists/image-job.list"
echo 1 >"$new/lists/image-job.version"

# dpkg's lists, versions and conffiles, then its database and apt's state go: neither
# is on the image. So do what mmdebstrap and the scripts leave that no system needs:
# backups of the account files, logs, the setup files, device nodes (devtmpfs).
for l in "$deb"/var/lib/dpkg/info/*.list; do
	n=$(basename "$l" .list)
	n=${n%%:*}
	cp "$l" "$new/lists/$n.list" || die "cannot copy $l"
	c=${l%.list}.conffiles
	[ ! -f "$c" ] || cp "$c" "$new/lists/$n.conffiles"
done
dpkg-query --admindir="$deb/var/lib/dpkg" -W -f '${Package}\t${Version}\n' |
	while IFS=$'\t' read -r n v; do echo "$v" >"$new/lists/$n.version"; done
npkgs=$(ls "$deb"/var/lib/dpkg/info/*.list | wc -l)
# shadow and gshadow (group shadow) go to image-local, installed once the groups are.
printf '%s\n' /etc/passwd /etc/group /etc/subuid /etc/subgid >"$new/lists/image-accounts.list"
echo 1 >"$new/lists/image-accounts.version"
rm -rf "$deb/var/lib/dpkg" "$deb/var/lib/apt" "$deb/var/cache/apt" "$deb/var/log/apt" "$deb/tmp/setup" \
	"$deb"/etc/*- "$deb"/var/log/*.log "$deb"/var/cache/debconf/*-old "${deb:?}"/dev/* "$deb"/run/* || die "cannot clean the root"
# Written at run time, so not installed (%ghost): the system makes its own.
printf '%s\n' /etc/.pwd.lock /var/cache/ldconfig/aux-cache >"$new/lists/image-local.ghost"
: >"$new/lists/image-local.list"
echo 1 >"$new/lists/image-local.version"
step prepare-s

echo "rpm-image: repackaging" >&2
"$here/repackage-deb.sh" "$deb" "$new/lists" "$new/image.spec" >"$new/repackage.log" 2>&1 ||
	die "repackage-deb.sh failed: $(tail -n 2 "$new/repackage.log")"
cp -al "$deb" "$new/buildroot" || die "cannot link the buildroot"
rpmbuild -bb --quiet --define "_topdir $new/rpmbuild" --buildroot "$new/buildroot" "$new/image.spec" \
	>"$new/rpmbuild.log" 2>&1 || die "rpmbuild failed; see $new/rpmbuild.log"
mkdir -p "$new/repo" && find "$new/rpmbuild/RPMS" -name '*.rpm' -exec mv -t "$new/repo" {} + &&
	createrepo_c -q "$new/repo" || die "createrepo_c failed"
step repackage-s

echo "rpm-image: dnf --installroot with imastream.so (sign, EVM portable)" >&2
mkdir -p "$new/home" && cat >"$new/home/.rpmmacros" <<EOF
%_dbpath /var/lib/rpm
%_imastream_config %{nil}
%__plugindir $(dirname "$plugin")
%__transaction_imastream $plugin
%_imastream_mode sign
%_imastream_hash_algo sha256
%_imastream_key $new/keys/ima.pem
%_imastream_cert $new/keys/ima.crt
%_imastream_evm portable
%_imastream_config_files yes
%_imastream_config_evm $config_evm
EOF
names=$(cd "$new/repo" && rpm -qp --qf '%{NAME}\n' ./*.rpm 2>/dev/null | sort -u)
HOME=$new/home dnf -y -q --installroot="$new/root" --releasever=13 --setopt=reposdir=/dev/null \
	--setopt=cachedir="$new/dnfcache" --repofrompath=image,"file://$new/repo" --repo=image \
	--nogpgcheck --setopt=install_weak_deps=False install $names >"$new/dnf.log" 2>&1 ||
	die "dnf --installroot failed; see $new/dnf.log"
# dnf's own bookkeeping (history, logs, configuration, its cache, which it keeps below
# the root too) is the builder's, not the system's; where dnf is one of the packages,
# its configuration is its package's.
rm -rf "$new/root/var/lib/dnf" "$new/root"/var/log/dnf* "$new/root"/var/log/hawkey.log \
	"$new/root/var/cache/dnf" "$new/dnfcache" "$new/root$cache"
rpm --root "$new/root" --dbpath /var/lib/rpm -qf /etc/dnf >/dev/null 2>&1 || rm -rf "$new/root/etc/dnf"
printf '%%_dbpath /var/lib/rpm\n%%_imastream_config %%{nil}\n' >"$new/rpmmacros"
step dnf-install-s

# The second root: the same packages by imastream install (its record, no rpm
# database), image-accounts first so that the owners of the others have names.
mkdir -p "$new/root-install" "$new/home-install" && echo "%_dbpath /var/lib/rpm" >"$new/home-install/.rpmmacros" &&
	HOME=$new/home-install "$imastream" install --root "$new/root-install" --mode sign --evm portable -k "$new/keys/ima.pem" \
	-c "$new/keys/ima.crt" -o config_files=yes -o config_evm=$config_evm --allow-unsigned "$new"/repo/image-accounts-[0-9]*.rpm >"$new/install.log" 2>&1 &&
	HOME=$new/home-install find "$new/repo" -name '*.rpm' ! -name 'image-accounts-[0-9]*' -exec "$imastream" install \
		--root "$new/root-install" --mode sign --evm portable -k "$new/keys/ima.pem" -c "$new/keys/ima.crt" \
		-o config_files=yes -o config_evm=$config_evm --allow-unsigned {} + >>"$new/install.log" 2>&1 || die "imastream install failed; see $new/install.log"
step imastream-install-s

kib=$(du -sk --apparent-size "$new/root" | cut -f1)
mke2fs -q -F -t ext4 -I 256 -L imastream-rpm -d "$new/root" "$new/root.img" \
	"$((kib + kib / 2 + 262144))k" >"$new/mke2fs.log" 2>&1 || die "mke2fs failed: $(tail -n 3 "$new/mke2fs.log")"
step mke2fs-s
{
	echo "debian-packages $npkgs"
	echo "rpms $(echo "$names" | wc -l)"
	echo "repo-mib $(du -sm "$new/repo" | cut -f1)"
	echo "root-mib $((kib / 1024))"
	echo "root-files $(find "$new/root" -xdev -type f | wc -l)"
} >>"$new/FIGURES"
rm -rf "$work" "$deb" "$new/buildroot" "$new/rpmbuild"
find "$cache" -mindepth 1 -maxdepth 1 -name "$prefix-$keytype-*" ! -name "$(basename "$new")" \
	-exec rm -rf {} + && mv "$new" "$dir" && touch "$dir/.complete" || die "cannot finish $dir"
echo "$dir"
