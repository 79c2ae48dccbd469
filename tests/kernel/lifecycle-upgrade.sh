#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes the repository of the upgrade that test_kernel_lifecycle.sh's guest runs with
# dnf: new releases of three packages of a lifecycle image (rpm-image.sh ... lifecycle),
# rebuilt from the image's own spec with one file of each changed.
#
# Usage: lifecycle-upgrade.sh IMAGE OUT
#   IMAGE  the image's folder (image.spec, root/ with its rpm database at var/lib/rpm)
#   OUT    a new folder: repo/ (the packages, createrepo_c's metadata) and DIGESTS,
#          "sha256:HEX PATH" of each changed file
# The packages: udev (udevadm, the running udevd's program), libblkid1 (libblkid.so.1.1.0,
# which udevd maps) and imastream (imastream.so, the rpm plugin doing the upgrade), each
# at release RELEASE.lc1 (newer to rpm), its file with a line appended past its end (the
# loader ignores it; the digest changes). Exits 0, or 1 with one line naming the step,
# OUT removed.
set -uo pipefail

[ $# = 2 ] || { echo "usage: lifecycle-upgrade.sh IMAGE OUT" >&2; exit 2; }
img=$1 out=$2
made=""
die() { echo "lifecycle-upgrade: $*" >&2; [ -z "$made" ] || rm -rf "$out"; exit 1; }
[ -f "$img/image.spec" ] && [ -d "$img/root/var/lib/rpm" ] || die "$img is not a lifecycle image (no image.spec or root/var/lib/rpm)"
mkdir "$out" || die "cannot create $out"
made=1
changed=(/usr/bin/udevadm /usr/lib/x86_64-linux-gnu/libblkid.so.1.1.0 /usr/lib/x86_64-linux-gnu/rpm-plugins/imastream.so)
pkgs=(udev libblkid1 imastream)

# The spec: the image spec's preamble, then each package's section with its release bumped.
awk -v want=" ${pkgs[*]} " '
	/^%package -n / { keep = index(want, " " $3 " ") > 0; head = 1 }
	!head || keep {
		if (keep && /^Release: /) $0 = $0 ".lc1"
		print
	}' "$img/image.spec" >"$out/upgrade.spec" || die "cannot write the spec"
[ "$(grep -c '^%package -n ' "$out/upgrade.spec")" = ${#pkgs[@]} ] || die "$img/image.spec lacks one of ${pkgs[*]}"

# The buildroot: those packages' paths copied from the image's root, the files changed.
mkdir -p "$out/buildroot" &&
	rpm --root "$(realpath "$img/root")" --dbpath /var/lib/rpm -ql "${pkgs[@]}" | grep '^/' | sed 's|^/||' >"$out/paths" &&
	tar -C "$img/root" --no-recursion -cf - -T "$out/paths" | tar -C "$out/buildroot" -xpf - ||
	die "cannot copy the packages' files from $img/root"
for f in "${changed[@]}"; do
	[ -f "$out/buildroot$f" ] || die "$f is not in the image's packages"
	printf '\nimastream lifecycle upgrade\n' >>"$out/buildroot$f" || die "cannot change $f"
	echo "sha256:$(sha256sum "$out/buildroot$f" | cut -d' ' -f1) $f" >>"$out/DIGESTS"
done
rpmbuild -bb --quiet --define "_topdir $out/rpmbuild" --buildroot "$out/buildroot" "$out/upgrade.spec" \
	>"$out/rpmbuild.log" 2>&1 || die "rpmbuild failed; see $out/rpmbuild.log"
mkdir -p "$out/repo" && find "$out/rpmbuild/RPMS" -name '*.rpm' -exec mv -t "$out/repo" {} + &&
	createrepo_c -q "$out/repo" || die "createrepo_c failed"
rm -rf "$out/buildroot" "$out/rpmbuild"
