#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real rootless podman build: a user with subordinate ids (made here if missing) imports an empty base with podman import, installs into the container's root with stock rpm + imastream.so inside podman unshare, and exports the container; root unpacks the export, writes the pending labels with imastream relabel --pending, and verify --rpmdb and evmctl accept the files.
set -u
. "$top_srcdir/tests/integration/rootless-lib.sh"
setup_scratch
need podman
need newuidmap
need evmctl
need getfattr
PUSER=imastream-build
chmod 755 "$T"

# A user with a home and subordinate ids, as rootless podman needs; kept for later runs.
if ! id "$PUSER" >/dev/null 2>&1; then
	useradd -m -s /bin/sh "$PUSER" >"$T/useradd.log" 2>&1 ||
		{ echo "SKIP: cannot create the user $PUSER: $(cat "$T/useradd.log")"; exit 77; }
fi
if ! grep -q "^$PUSER:" /etc/subuid || ! grep -q "^$PUSER:" /etc/subgid; then
	usermod --add-subuids 300000-365535 --add-subgids 300000-365535 "$PUSER" ||
		fail "cannot give $PUSER subordinate ids"
fi
PUID=$(id -u "$PUSER")
W=$T/podman
run=$W/xdg
mkdir -p "$run" && chown "$PUSER:" "$W" "$run" && chmod 700 "$run" || fail "cannot make $run"
# Its own storage, so that nothing outside this test is touched.
pm="podman --root $W/storage --runroot $W/run --storage-driver vfs"
as_puser() {
	setpriv --reuid="$PUID" --regid="$(id -g "$PUSER")" --init-groups \
		env HOME="$(getent passwd "$PUSER" | cut -d: -f6)" XDG_RUNTIME_DIR="$run" "$@"
}
# The end: podman's storage (owned by subordinate ids) and its pause process, which
# holds the user namespace for later podman calls of this XDG_RUNTIME_DIR only.
cleanup() {
	as_puser $pm unshare rm -rf "$W/storage" "$W/run" 2>/dev/null
	pause=$(cat "$run/libpod/tmp/pause.pid" 2>/dev/null)
	[ -z "$pause" ] || kill "$pause" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

tar -cf "$W/empty.tar" --files-from /dev/null && chown "$PUSER:" "$W/empty.tar" ||
	fail "cannot make the empty base"
as_puser $pm import "$W/empty.tar" localhost/imastream-base >"$T/podman.log" 2>&1 &&
	as_puser $pm create --name imastream-build localhost/imastream-base true >>"$T/podman.log" 2>&1 ||
	{ echo "SKIP: podman cannot run rootless here: $(tail -n 3 "$T/podman.log")"; exit 77; }

v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
extra=$(build_pkg "$top_srcdir/tests/rpm/imsextra.rpmspec" 1.0)
mkdir -p "$W/in"
# A copy of the plugin: the build tree may be where the user cannot read it.
cp "$v1" "$extra" "$SO" "$top_srcdir/tests/keys/rsa2048.pem" "$top_srcdir/tests/keys/rsa2048.crt" "$W/in/"
chown -R "$PUSER:" "$W/in" && chmod 600 "$W/in/rsa2048.pem"
cat >"$W/build.sh" <<BUILD
set -e
mnt=\$($pm mount imastream-build)
rpm --root "\$mnt" --dbpath /var/lib/rpm --nodeps --noscripts \\
	--define "__plugindir $W/in" --define "_imastream_config %{nil}" \\
	--define "__transaction_imastream $W/in/imastream.so" \\
	--define "_imastream_mode sign" --define "_imastream_evm portable" \\
	--define "_imastream_key $W/in/rsa2048.pem" --define "_imastream_cert $W/in/rsa2048.crt" \\
	-i $W/in/$(basename "$v1") $W/in/$(basename "$extra")
BUILD
as_puser $pm unshare sh "$W/build.sh" >"$T/build.out" 2>"$T/build.err" ||
	fail "the rootless podman build failed: $(cat "$T/build.err")"
[ "$(grep -c 'security xattrs pending' "$T/build.err")" = 1 ] ||
	fail "the build did not say its pending labels in one line: $(cat "$T/build.err")"
as_puser $pm export -o "$W/export.tar" imastream-build >>"$T/podman.log" 2>&1 ||
	fail "podman export failed: $(tail -n 3 "$T/podman.log")"
echo "ok: rootless podman: built with rpm + imastream.so, labels pending, exported"

F=$T/image
mkdir "$F"
tar --xattrs --xattrs-include='security.*' --same-owner -C "$F" -xpf "$W/export.tar" ||
	fail "cannot unpack the export"
[ "$(stat -c %u:%g "$F/opt/imsextra/bin/helper")" = 0:0 ] || fail "the export lost the image's owners"
"$top_builddir/imastream" verify --root "$F" --rpmdb --dbpath /var/lib/rpm \
	-t "$top_srcdir/tests/keys/rsa2048.crt" --evm require >"$T/verify.out" 2>&1
[ $? = 3 ] || fail "verify --rpmdb of the unpacked export did not say pending (3): $(cat "$T/verify.out")"
"$top_builddir/imastream" relabel --pending --root "$F" --dbpath /var/lib/rpm >"$T/apply.out" 2>"$T/apply.err" ||
	fail "relabel --pending failed"
grep -q '7 pending entries: 7 files labelled' "$T/apply.err" || fail "apply: $(cat "$T/apply.err")"
"$top_builddir/imastream" verify --root "$F" --rpmdb --dbpath /var/lib/rpm \
	-t "$top_srcdir/tests/keys/rsa2048.crt" --evm require >"$T/verify.out" 2>&1 ||
	fail "verify --rpmdb after apply: $(cat "$T/verify.out")"
openssl x509 -in "$top_srcdir/tests/keys/rsa2048.crt" -outform der -out "$T/ima.der"
for f in opt/imstest/bin/tool opt/imsextra/bin/helper; do
	evmctl ima_verify -k "$T/ima.der" "$F/$f" >"$T/evmctl.out" 2>&1 &&
		evmctl verify --portable -k "$T/ima.der" "$F/$f" >>"$T/evmctl.out" 2>&1 ||
		fail "evmctl refuses $f: $(cat "$T/evmctl.out")"
done
echo "ok: root unpacked the export and applied the labels; verify --rpmdb and evmctl accept them"
echo PASS
