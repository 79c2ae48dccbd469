# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the rpm integration tests: build the test packages, make scratch roots,
# run stock rpm with imastream.so from the build tree.
# shellcheck shell=sh

: "${top_srcdir:?}" "${top_builddir:?}"
SO="$top_builddir/.libs/imastream.so"

need() {
	command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 is not installed"; exit 77; }
}

setup_scratch() {
	need rpm
	need rpmbuild
	[ -f "$SO" ] || { echo "missing $SO"; exit 99; }
	# A sanitizer build's plugin needs the ASan runtime preloaded into rpm, and Debian's
	# rpm 4.18 deadlocks at start-up with it (textdomain, _nl_state_lock): the default
	# build runs these tests.
	if ldd "$SO" 2>/dev/null | grep libasan >/dev/null; then
		echo "SKIP: rpm cannot load a sanitizer build of imastream.so"
		exit 77
	fi
	[ "$(id -u)" = 0 ] || { echo "SKIP: rpm --root installs need root"; exit 77; }
	T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-rpm.XXXXXX")
	trap 'rm -rf "$T"' EXIT
	# Canonical, as the commands name a root in their summaries (imastream(1), PATHS).
	T=$(cd "$T" && pwd -P)
}

# build_pkg SPEC [VERSION [PAYLOAD]]: builds into $T/topdir and prints the rpm's path.
# With a PAYLOAD, the brp scripts are skipped too (they would read every byte again).
build_pkg() {
	ver=${2:-1.0}
	nopost=
	[ -z "${3:-}" ] || nopost='__os_install_post %{nil}'
	rpmbuild -bb --quiet --nodeps --define "_topdir $T/topdir" \
		--define "_build_id_links none" --define "pkgversion $ver" \
		${nopost:+--define "$nopost"} \
		--define "_binary_payload ${3:-w9.gzdio}" "$1" >"$T/rpmbuild.log" 2>&1 ||
		{ cat "$T/rpmbuild.log"; exit 99; }
	name=$(sed -n 's/^Name:[[:space:]]*//p' "$1")
	echo "$T/topdir/RPMS/noarch/$name-$ver-1.noarch.rpm"
}

# p256_signing_key: the test P-256 key as $T/key.pem (private to its owner, as the
# signer wants it) and its certificate in DER as $T/cert.der.
p256_signing_key() {
	cp "$top_srcdir/tests/keys/ec-p256.pem" "$T/key.pem" && chmod 600 "$T/key.pem" &&
		openssl x509 -in "$top_srcdir/tests/keys/ec-p256.crt" -outform der -out "$T/cert.der" 2>/dev/null ||
		fail "cannot make the test signing key"
}

# new_root DIR: a scratch root whose scriptlets can run (busybox as /bin/sh).
new_root() {
	# Emptied rather than removed: it may be a mount point.
	mkdir -p "$1"
	find "$1" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	mkdir -p "$1/bin"
	if [ -x /bin/busybox ]; then
		cp /bin/busybox "$1/bin/busybox"
		ln -s busybox "$1/bin/sh"
	fi
}

# irpm ROOT ARGS...: stock rpm on ROOT with our plugin from the build tree.  Debian's
# %__plugindir does not exist, so discovery is pointed at the build tree.  No
# configuration file unless the test names one: the host's /etc/imastream.conf, which
# the plugin reads by default, must not change what a test sees.
irpm() {
	r=$1
	shift
	rpm --root "$r" --dbpath /var/lib/rpm --nodeps \
		--define "__plugindir $top_builddir/.libs" \
		--define "_imastream_config %{nil}" \
		--define "__transaction_imastream $SO" "$@" 2>"$T/rpm.err"
	rc=$?
	# Debian's rpm warns about itself on every call.
	grep -v -e 'should not be used directly' -e 'assuming you know what you are doing' \
		"$T/rpm.err" >"$T/rpm.stderr" || true
	return $rc
}

# compare_golden NAME FILE: FILE must equal tests/golden/NAME (IMASTREAM_UPDATE_GOLDEN=1 rewrites).
compare_golden() {
	g="$top_srcdir/tests/golden/$1"
	if [ -n "${IMASTREAM_UPDATE_GOLDEN:-}" ]; then
		cp "$2" "$g"
		return 0
	fi
	diff -u "$g" "$2" || { echo "FAIL: transcript differs from $g"; exit 1; }
}

fail() {
	echo "FAIL: $*"
	[ -s "$T/rpm.stderr" ] && sed 's/^/  rpm: /' "$T/rpm.stderr"
	exit 1
}
