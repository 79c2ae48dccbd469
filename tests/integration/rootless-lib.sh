# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the rootless-build tests: an unprivileged user in a user namespace
# (unshare -r, as rootless podman runs a build) installs with stock rpm + imastream.so or
# imastream install; root applies the pending labels.
# shellcheck shell=sh

: "${top_srcdir:?}" "${top_builddir:?}"
. "$top_srcdir/tests/integration/rpm-lib.sh"
IMS="$top_builddir/imastream"
BUILDER=nobody

# rootless_setup: scratch dir readable by the builder, its keys, and the preconditions.
rootless_setup() {
	setup_scratch
	need unshare
	need setpriv
	need getfattr
	need evmctl
	id "$BUILDER" >/dev/null 2>&1 || { echo "SKIP: no user $BUILDER to build as"; exit 77; }
	BUID=$(id -u "$BUILDER")
	BGID=$(id -g "$BUILDER")
	chmod 755 "$T"
	mkdir -p "$T/home" "$T/keys"
	cp "$top_srcdir/tests/keys/rsa2048.pem" "$top_srcdir/tests/keys/rsa2048.crt" "$T/keys/"
	chown -R "$BUID:$BGID" "$T/home" "$T/keys"
	chmod 600 "$T/keys/rsa2048.pem"
	openssl x509 -in "$T/keys/rsa2048.crt" -outform der -out "$T/keys/rsa2048.der" ||
		fail "cannot convert the test certificate for evmctl"
	# The builder runs copies: the build tree may be where it cannot read (a mode-700
	# scratch folder, as the mutation check's). The command once as root first: a
	# libtool wrapper may have to make its program.
	"$IMS" --help >/dev/null 2>&1
	mkdir -p "$T/lib" && cp "$SO" "$T/lib/" || fail "cannot copy $SO"
	if [ -x "$top_builddir/.libs/imastream" ]; then
		cp -P "$top_builddir/.libs/imastream" "$top_builddir"/.libs/libimastream.so* "$T/lib/"
	else
		cp "$IMS" "$T/lib/"
	fi || fail "cannot copy the imastream command"
	chmod -R a+rX "$T/lib"
	SO_B=$T/lib/imastream.so
	IMS_B="env LD_LIBRARY_PATH=$T/lib $T/lib/imastream"
	as_builder $IMS_B --help >/dev/null 2>&1 || fail "the copy of imastream does not run"
	as_builder true 2>"$T/unshare.err" ||
		{ echo "SKIP: an unprivileged user cannot unshare -r here: $(cat "$T/unshare.err")"; exit 77; }
}

# as_builder CMD...: CMD as the unprivileged builder, root of a new user namespace.
as_builder() {
	setpriv --reuid="$BUID" --regid="$BGID" --clear-groups env HOME="$T/home" \
		unshare -r "$@"
}

# builder_root DIR: an empty root the builder owns.
builder_root() {
	rm -rf "$1"
	mkdir -p "$1"
	chown "$BUID:$BGID" "$1"
}

# ns_rpm ROOT MODE ARGS...: stock rpm with imastream.so as the builder in a user
# namespace; MODE hash or sign, with EVM portable signatures either way.
ns_rpm() {
	r=$1 mode=$2
	shift 2
	as_builder rpm --root "$r" --dbpath /var/lib/rpm --nodeps --noscripts \
		--define "__plugindir $T/lib" \
		--define "_imastream_config %{nil}" \
		--define "__transaction_imastream $SO_B" \
		--define "_imastream_mode $mode" --define "_imastream_evm portable" \
		--define "_imastream_key $T/keys/rsa2048.pem" \
		--define "_imastream_cert $T/keys/rsa2048.crt" "$@" >"$T/rpm.out" 2>"$T/rpm.err"
	rc=$?
	grep -v -e 'should not be used directly' -e 'assuming you know what you are doing' \
		"$T/rpm.err" >"$T/rpm.stderr" || true
	return $rc
}

# ns_install ROOT MODE PKG...: imastream install, likewise.
ns_install() {
	r=$1 mode=$2
	shift 2
	as_builder $IMS_B install --root "$r" --allow-unsigned --mode "$mode" --evm portable \
		-k "$T/keys/rsa2048.pem" -c "$T/keys/rsa2048.crt" "$@" >"$T/install.out" \
		2>"$T/install.err"
}

# apply ROOT [ARGS...]: root writes the pending labels; stderr in $T/apply.err.
apply() {
	r=$1
	shift
	"$IMS" relabel --pending --root "$r" --dbpath /var/lib/rpm "$@" >"$T/apply.out" \
		2>"$T/apply.err"
}

# verify_rpmdb ROOT: the audit with EVM required, exit status returned.
# Known gap: relabel --pending gives regular files their header's owner, but the
# packages' directories and symlinks keep the build's (the audit, like rpm -V, names
# them .....UG..); until the apply covers them, they are given to root here first.
verify_rpmdb() {
	[ ! -d "$1/opt" ] || find "$1/opt" \( -type d -o -type l \) -exec chown -h 0:0 {} + ||
		fail "cannot give the packages' directories to root"
	"$IMS" verify --root "$1" --rpmdb --dbpath /var/lib/rpm -t "$T/keys/rsa2048.crt" \
		--evm require >"$T/verify.out" 2>"$T/verify.err"
}

# has_ima PATH: the file holds a security.ima.
has_ima() {
	getfattr --absolute-names -n security.ima "$1" >/dev/null 2>&1
}

# pending_count ROOT: entries still pending.
pending_count() {
	find "$1/var/lib/imastream/pending" -type f 2>/dev/null | wc -l
}

# fail MESSAGE: also what rpm and the apply said.
fail() {
	echo "FAIL: $*"
	for f in rpm.stderr install.err apply.err; do
		[ -s "$T/$f" ] && sed "s/^/  $f: /" "$T/$f"
	done
	exit 1
}
