#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# verity = on under stock rpm + imastream.so and under imastream install: refused in one line with nothing installed where the root has no fs-verity; where it has, every signed file gets fs-verity and a sigv3 that verifies.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch
imastream="$top_builddir/imastream"
command -v mount >/dev/null 2>&1 || { echo "SKIP: no mount command here (a minimal chroot)"; exit 77; }
command -v mkfs.ext4 >/dev/null 2>&1 || { echo "SKIP: mkfs.ext4 (e2fsprogs) not installed"; exit 77; }

# An ext4 with the verity feature: the kernel decides whether it can enable it.
mnt="$T/mnt"
mkdir -p "$mnt"
truncate -s 96M "$T/ext4.img"
mkfs.ext4 -q -O verity "$T/ext4.img" || fail "mkfs.ext4 -O verity"
mount -o loop "$T/ext4.img" "$mnt" 2>"$T/mount.err" ||
	fail "cannot loop-mount an ext4 image: $(cat "$T/mount.err")"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$T"' EXIT
cp "$top_srcdir/tests/keys/rsa2048.pem" "$T/key.pem"
chmod 600 "$T/key.pem"
cert="$top_srcdir/tests/keys/rsa2048.crt"
v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)

# Under rpm.
r="$mnt/rpmroot"
new_root "$r"
if irpm "$r" --define "_imastream_mode sign" --define "_imastream_key $T/key.pem" \
	--define "_imastream_verity on" -i "$v1"; then
	rpm_ok=1
else
	rpm_ok=0
fi
# Under imastream install.
ir="$mnt/installroot"
mkdir -p "$ir"
if "$imastream" install --root "$ir" --allow-unsigned --mode sign --key "$T/key.pem" -o verity=on "$v1" \
	>"$T/install.out" 2>"$T/install.err"; then
	install_ok=1
else
	install_ok=0
fi

if [ $rpm_ok = 0 ] && grep -q "has no fs-verity support" "$T/rpm.stderr"; then
	# This kernel (or filesystem) has no fs-verity: both refuse before any file.
	[ "$(grep -c '^error: imastream:' "$T/rpm.stderr")" = 1 ] ||
		fail "rpm: not one line: $(cat "$T/rpm.stderr")"
	[ ! -e "$r/opt" ] || fail "rpm: files were installed before the refusal"
	[ $install_ok = 0 ] || fail "imastream install installed without fs-verity"
	[ "$(wc -l <"$T/install.err")" = 1 ] && grep -q "has no fs-verity support" "$T/install.err" ||
		fail "install: not one line about fs-verity: $(cat "$T/install.err")"
	[ ! -e "$ir/opt" ] || fail "install: files were installed before the refusal"
	# A tmpfs says so differently (no verity ioctls at all): refused all the same.
	mkdir -p "$T/tmpfs"
	mount -t tmpfs imastream-test "$T/tmpfs" || fail "cannot mount a tmpfs"
	"$imastream" install --root "$T/tmpfs" --allow-unsigned --mode sign --key "$T/key.pem" -o verity=on "$v1" \
		>/dev/null 2>"$T/install.err" && { umount "$T/tmpfs"; fail "installed onto tmpfs"; }
	umount "$T/tmpfs"
	grep -q "has no fs-verity support (the filesystem has no verity ioctls)" "$T/install.err" ||
		fail "tmpfs: $(cat "$T/install.err")"
	echo "ok: no fs-verity on this kernel: rpm and imastream install refuse in one line, nothing installed"
else
	# fs-verity works here: every regular file but the %config one has it and a sigv3.
	[ $rpm_ok = 1 ] || fail "rpm with verity = on: $(cat "$T/rpm.stderr")"
	[ $install_ok = 1 ] || fail "imastream install with verity = on: $(cat "$T/install.err")"
	command -v fsverity >/dev/null 2>&1 || { echo "SKIP: fsverity (fsverity-utils) not installed to check"; exit 77; }
	for root in "$r" "$ir"; do
		n=0
		for f in $(find "$root/opt" -type f); do
			case $(getfattr --absolute-names -n security.ima -e hex "$f" 2>/dev/null |
			       sed -n 's/^security.ima=0x//p') in
			0603*)
				fsverity measure "$f" >/dev/null 2>&1 || fail "$f: sigv3 but no fs-verity"
				"$imastream" verify --evm none --trust "$cert" "$f" >/dev/null ||
					fail "$f: its sigv3 does not verify"
				n=$((n + 1)) ;;
			0404*)
				fsverity measure "$f" >/dev/null 2>&1 && fail "$f: a digest, yet fs-verity" ;;
			*) fail "$f: neither a sigv3 nor a %config digest" ;;
			esac
		done
		[ $n -gt 0 ] || fail "$root: no file got a sigv3"
	done
	echo "ok: fs-verity and a verifying sigv3 on every signed file, under rpm and imastream install"
fi
echo "PASS"
