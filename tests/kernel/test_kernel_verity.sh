#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel proof of verity mode (issue 14): under the IMA policy rule
# "appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3", programs that
# `imastream install -o verity=on` and stock rpm with imastream.so and verity = on
# installed run, and the kernel refuses a tampered file, a file whose fs-verity is not
# enabled, a content (v2) signature and a foreign key's signature, each for the cause its
# audit record must give; then, with EVM on, an EVM portable signature over the sigv3.
#
# The host kernel has no CONFIG_FS_VERITY, so fs-verity is turned on in the VM: the guest
# runs this build's imastream, and the host's rpm with this build's imastream.so
# (vm-check.sh --guest-bin), to install a package in verity mode onto an ext4 disk made
# with -O verity, and the static /verityctl (verityctl.c, vm-check.sh --verity) enables
# fs-verity on the controls the host signed with `imastream sign --verity` and reads back
# the kernel's fs-verity digests.
#
# One boot per kernel with CONFIG_FS_VERITY (Debian 12's 6.1 and Debian 13's 6.12): the
# verity policy cannot share a boot with the other kernel tests, which load docs/ima-policy
# (appraise_tcb), and neither kernel lets a second policy be written
# (CONFIG_IMA_WRITE_POLICY is unset). See tests/kernel/README.md. Skips (77) where the VM
# cannot run or no kernel has fs-verity.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
kdir=$srcdir/tests/kernel
imastream=$builddir/imastream

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v openssl >/dev/null || skip "openssl not found"
command -v rpmbuild >/dev/null || skip "rpmbuild not found (package rpm)"
[ -x "$imastream" ] || error "$imastream not built"
"$imastream" install --help >/dev/null 2>&1 || skip "this build of imastream has no 'install' command"
# The program itself, not libtool's wrapper script, goes into the guest.
guest_bin=$builddir/.libs/imastream
[ -x "$guest_bin" ] || guest_bin=$imastream
# librpm cannot start in a sanitizer build, and the guest has no sanitizer runtime set up.
case "$(LD_LIBRARY_PATH=$builddir/.libs ldd "$guest_bin" 2>&1)" in
*libasan* | *libubsan*) skip "the guest cannot run a sanitizer build of imastream" ;;
esac
# librpm in the guest reads its configuration (rpmrc must exist) from /usr/lib/rpm.
[ -f /usr/lib/rpm/rpmrc ] || skip "no /usr/lib/rpm/rpmrc for librpm in the guest (package rpm)"
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || skip "no static busybox to package (package busybox-static)"

mapfile -t kernels < <(kernel_list CONFIG_FS_VERITY)
[ ${#kernels[@]} -gt 0 ] || skip "no kernel to boot with CONFIG_FS_VERITY"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_kernel_verity.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

make_key "$tmp" trusted && make_key "$tmp" foreign || exit 99

rpmbuild -bb --quiet --nodeps --define "_topdir $tmp/topdir" --define "busybox $busybox" \
	"$kdir/kbox.rpmspec" >"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; exit 99; }
pkg=$(find "$tmp/topdir/RPMS" -name 'imastream-kbox-*.rpm' | head -n 1)
[ -f "$pkg" ] || error "rpmbuild made no package"

# The disk: the package, both keys, librpm's configuration, and the host-made controls.
disk=$tmp/disk
mkdir -p "$disk/pkg" "$disk/keys" "$disk/rpm" &&
	cp "$pkg" "$disk/pkg/kbox.rpm" &&
	cp "$tmp/trusted.pem" "$tmp/trusted.der" "$tmp/foreign.pem" "$tmp/foreign.der" "$disk/keys/" &&
	cp /usr/lib/rpm/rpmrc "$disk/rpm/" || exit 99
[ ! -f /usr/lib/rpm/macros ] || cp /usr/lib/rpm/macros "$disk/rpm/" || exit 99
# Stock rpm in the guest too, with imastream.so, where this build has them.
rpm_bin=$(command -v rpm || true)
so=$builddir/.libs/imastream.so
guest_rpm=()
if [ -n "$rpm_bin" ] && [ -x "$so" ]; then
	cp -r /usr/lib/rpm/. "$disk/rpm/" || exit 99
	guest_rpm=(--guest-bin "$rpm_bin" --guest-bin "$so")
else
	echo "test_kernel_verity: no rpm or imastream.so here: the rpm checks are left out"
fi

# control NAME verity|v2|none: a root-owned busybox copy in host/NAME with a sigv3 over
# its fs-verity digest, a content signature (type 3, v2), or no security.ima.
control() {
	local f=$disk/host/$1/busybox opts=()
	mkdir -p "$(dirname "$f")" && install -m 0755 -o 0 -g 0 "$busybox" "$f" || exit 99
	case "$2" in
	none) return ;;
	verity) opts=(--verity) ;;
	esac
	"$imastream" sign --evm none -a sha256 --key "$tmp/trusted.pem" --cert "$tmp/trusted.der" \
		"${opts[@]}" "$f" >"$tmp/sign.log" 2>&1 ||
		{ cat "$tmp/sign.log"; error "imastream sign ${opts[*]} failed"; }
}
control signed verity      # fs-verity enabled in the guest: runs
control noverity verity    # never enabled: what rpm's window leaves, refused
control tampered verity    # one byte changed after signing, then enabled: refused
control sigv2 v2           # a content signature by the trusted key, enabled: refused
control unlabelled none    # enabled, no security.ima: refused
control noevm verity       # enabled, not run before EVM is on: then refused
f=$disk/host/tampered/busybox
off=$(($(stat -c %s "$f") / 2))
b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
# shellcheck disable=SC2059
printf "\\$(printf %03o $(((b + 1) % 256)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none ||
	error "cannot change a byte of $f"
cmp -s "$busybox" "$f" && error "the byte of $f did not change"
# Type and signature version: 0603 a sigv3, 0302 a content signature.
for c in signed:0603 noverity:0603 tampered:0603 sigv2:0302; do
	t=$(getfattr -h -e hex -n security.ima --absolute-names "$disk/host/${c%:*}/busybox" \
		2>/dev/null | sed -n 's/^security.ima=0x//p')
	[ "${t:0:4}" = "${c#*:}" ] || error "host/${c%:*}/busybox: security.ima starts 0x${t:0:4}, not ${c#*:}"
done

# The kernel must hold exactly the fs-verity digest imastream computes in user space.
want=$("$imastream" hash --verity "$busybox" | cut -d' ' -f1)
case "$want" in sha256:*) ;; *) error "imastream hash --verity printed '$want'" ;; esac

{
	grep '^dont_appraise' "$srcdir/docs/ima-policy" || exit 99
	echo "appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3"
} >"$tmp/ima-policy" || exit 99

cat >"$tmp/checks.sh" <<GUEST || exit 99
. /guest-lib.sh
mkdir -p /usr/lib/rpm && cp -r rpm/. /usr/lib/rpm/
want=$want
GUEST
cat >>"$tmp/checks.sh" <<'GUEST' || exit 99
inst="install --allow-unsigned --quiet --mode sign -o verity=on"
mkdir -p inst foreign rpmroot inst-evm

# Installed in verity mode in the guest, by this build's imastream.
expect_runs install:verity imastream $inst --root ./inst \
	--key keys/trusted.pem --cert keys/trusted.der pkg/kbox.rpm
got=$(/verityctl measure inst/usr/bin/busybox 2>&1)
if [ "$got" = "$want" ]; then
	report measure:verity/usr/bin/busybox PASS "the kernel's fs-verity digest is $got"
else
	report measure:verity/usr/bin/busybox FAIL "kernel: $got, imastream hash --verity: $want"
fi
expect_runs verify:verity/usr/bin/busybox imastream verify --evm none \
	--trust keys/trusted.der inst/usr/bin/busybox
expect_runs runs:verity/usr/bin/busybox ./inst/usr/bin/busybox true
expect_runs runs:verity/usr/libexec/kbox/hello.sh ./inst/usr/libexec/kbox/hello.sh
# fs-verity makes the file read-only: appending is refused (EPERM).
if out=$( (echo x >>inst/usr/bin/busybox) 2>&1); then
	report read-only:verity/usr/bin/busybox FAIL "appended to a verity file"
else
	case "$out" in
	*"Operation not permitted"*) report read-only:verity/usr/bin/busybox PASS "EPERM" ;;
	*) report read-only:verity/usr/bin/busybox FAIL "expected EPERM: $out" ;;
	esac
fi

# Stock rpm with imastream.so and verity = on: fs-verity enabled in fsm_file_post.
# (/usr/local/bin/rpm: busybox has an rpm applet of its own, earlier in PATH)
if [ -x /usr/local/bin/rpm ]; then
	expect_runs rpm:verity /usr/local/bin/rpm --root /mnt/rpmroot --dbpath /var/lib/rpm --nodeps \
		--define "__plugindir /usr/local/bin" --define "_imastream_config %{nil}" \
		--define "__transaction_imastream /usr/local/bin/imastream.so" \
		--define "_imastream_mode sign" --define "_imastream_verity on" \
		--define "_imastream_key /mnt/keys/trusted.pem" \
		--define "_imastream_cert /mnt/keys/trusted.der" -i pkg/kbox.rpm
	got=$(/verityctl measure rpmroot/usr/bin/busybox 2>&1)
	if [ "$got" = "$want" ]; then
		report measure:rpm/usr/bin/busybox PASS "the kernel's fs-verity digest is $got"
	else
		report measure:rpm/usr/bin/busybox FAIL "kernel: $got, imastream hash --verity: $want"
	fi
	expect_runs runs:rpm/usr/bin/busybox ./rpmroot/usr/bin/busybox true
	expect_runs runs:rpm/usr/libexec/kbox/hello.sh ./rpmroot/usr/libexec/kbox/hello.sh
fi

# The same package signed with a key the kernel does not hold.
expect_runs install:foreign imastream $inst --root ./foreign \
	--key keys/foreign.pem --cert keys/foreign.der pkg/kbox.rpm
expect_exec_denied denied:foreign/usr/bin/busybox --cause invalid-verity-signature \
	./foreign/usr/bin/busybox true

# The host's controls: fs-verity on for all but noverity.
expect_runs enable:host /verityctl enable host/signed/busybox host/tampered/busybox \
	host/sigv2/busybox host/unlabelled/busybox host/noevm/busybox
expect_runs runs:signed ./host/signed/busybox true
expect_exec_denied tampered --cause invalid-verity-signature ./host/tampered/busybox true
if out=$(/verityctl measure host/noverity/busybox 2>&1); then
	report noverity-is-off FAIL "fs-verity is on: $out"
else
	report noverity-is-off PASS "$out"
fi
expect_exec_denied noverity --cause no-verity-digest ./host/noverity/busybox true
expect_exec_denied sigv2 --cause verity-signature-required ./host/sigv2/busybox true
expect_exec_denied unlabelled --cause verity-signature-required ./host/unlabelled/busybox true

# Last, EVM on (X.509 keys only): its portable signature covers the sigv3, and binds the
# metadata; a verity file without security.evm, first run now, is refused.
expect_runs install:verity-evm imastream $inst --evm portable --root ./inst-evm \
	--key keys/trusted.pem --cert keys/trusted.der pkg/kbox.rpm
expect_evm_on evm-on
expect_runs runs:verity-evm/usr/bin/busybox ./inst-evm/usr/bin/busybox true
expect_runs runs:verity-evm/usr/libexec/kbox/hello.sh ./inst-evm/usr/libexec/kbox/hello.sh
expect_meta_denied chmod:verity-evm/usr/bin/busybox %a chmod 0700 ./inst-evm/usr/bin/busybox
expect_exec_denied noevm --cause missing-HMAC ./host/noevm/busybox true
GUEST

# boot_one KERNEL TAG: one boot with the checks; vm-check.sh's status.
boot_one() {
	local start=$SECONDS krc
	echo "test_kernel_verity: booting $1"
	# ldd finds the build tree's libimastream for --guest-bin through LD_LIBRARY_PATH.
	LD_LIBRARY_PATH=$builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		IMASTREAM_KERNEL=$1 "$kdir/vm-check.sh" --verity --root "$disk" --checks "$tmp/checks.sh" \
		--policy "$tmp/ima-policy" --ima-cert "$tmp/trusted.der" \
		--evm-cert "$tmp/trusted.der" --evm-late --guest-bin "$guest_bin" \
		"${guest_rpm[@]}" --name "test_kernel_verity-$2" | sed "s/^CHECK /CHECK $2:/"
	krc=${PIPESTATUS[0]}
	echo "test_kernel_verity: $2 done in $((SECONDS - start)) s (image, initramfs, boot, checks)"
	return "$krc"
}
boot_kernels boot_one "${kernels[@]}"
