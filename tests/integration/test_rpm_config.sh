#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configuration through macros, plugin options and the config file; every bad setting
# fails rpm at init with one imastream line, before any file is touched.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch

pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
root="$T/root"
tr="$T/transcript"

# must_fail WHAT EXPECTED-TEXT RPM-ARGS...: rpm fails, says it in one imastream line,
# and the root holds no file of the package.
must_fail() {
	what=$1 expect=$2
	shift 2
	new_root "$root"
	if irpm "$root" "$@" -i "$pkg"; then
		fail "$what: rpm succeeded"
	fi
	# rpm adds its own "Plugin imastream: hook init failed": ours are "imastream: ...".
	n=$(grep -c '^error: imastream:' "$T/rpm.stderr")
	[ "$n" = 1 ] || fail "$what: $n imastream lines instead of one"
	grep -q "^error: imastream:.*$expect" "$T/rpm.stderr" ||
		fail "$what: no \"$expect\" in the message"
	[ ! -e "$root/opt" ] && [ ! -e "$root/etc" ] || fail "$what: files were installed"
	echo "ok: $what: $(grep '^error: imastream:' "$T/rpm.stderr")"
}

must_fail "unknown algorithm" 'unknown hash algorithm "nosuch"' \
	--define "_imastream_hash_algo nosuch"
must_fail "sign mode without a key" "needs a key" --define "_imastream_mode sign"
must_fail "bad mode" 'invalid value "sometimes" for mode' --define "_imastream_mode sometimes"
must_fail "unknown plugin" 'unknown plugin "nosuch"' --define "_imastream_plugins selinux,nosuch"
must_fail "missing file_contexts" "cannot load file contexts /nonexistent/fc" \
	--define "_imastream_plugins selinux" --define "_imastream_file_contexts /nonexistent/fc"
must_fail "missing config file" "cannot open config file $T/nope.conf" \
	--define "_imastream_config $T/nope.conf"
printf '# comment\nmode = hash\nhash_algorithm = sha256\n' >"$T/bad.conf"
# A misspelt macro stops rpm, as the same typo in the file does (issue 36 item 1): the
# system is not installed in the mode nobody asked for.
must_fail "misspelt mode macro" \
	'macro %_imastream_mdoe is not an imastream setting; the nearest is %_imastream_mode' \
	--define "_imastream_mdoe sign"
must_fail "misspelt algorithm macro" \
	'macro %_imastream_hash_algorithm is not an imastream setting; the nearest is %_imastream_hash_algo' \
	--define "_imastream_hash_algorithm sha512"
must_fail "unknown config key" "$T/bad.conf:3: unknown configuration key \"hash_algorithm\".*the nearest is hash_algo" \
	--define "_imastream_config $T/bad.conf"
must_fail "bad plugin option" 'plugin option "verbose" is not key=value' \
	--define "__transaction_imastream $SO verbose"
# A chain that cannot do what mode asks (issue 12 item 7): no file without security.ima.
must_fail "sign mode without ima" 'mode sign needs the ima plugin, and plugins is "evm"' \
	--define "_imastream_mode sign" --define "_imastream_key $T/k.pem" \
	--define "_imastream_plugins evm"
must_fail "sign mode with labels only" 'mode sign needs the ima plugin' \
	--define "_imastream_mode sign" --define "_imastream_key $T/k.pem" \
	--define "_imastream_plugins selinux"
must_fail "evm without the evm plugin" 'evm portable needs the evm plugin' \
	--define "_imastream_evm portable" --define "_imastream_key $T/k.pem" \
	--define "_imastream_plugins selinux,ima"
# An empty macro is not "the default" (item 8): refused where the key has fixed values.
must_fail "empty mode macro" 'macro %_imastream_mode: empty value for mode' \
	--define "_imastream_mode %{nil}"
# md5 only with an explicit opt-in (item 9), as imastream sign refuses it.
must_fail "md5 without opt-in" 'hash_algo md5 is a weak digest: use sha256, or set weak_algos = allow' \
	--define "_imastream_hash_algo md5"
must_fail "md5 package signatures without opt-in" 'package_sig_algos lists md5, a weak digest' \
	--define "_imastream_package_sig_algos sha256,md5"

# A config file alone configures the chain; a macro overrides one of its keys.
printf 'plugins = trace\ntrace = %s\nhash_algo = sha512\n' "$tr" >"$T/good.conf"
new_root "$root"
irpm "$root" --define "_imastream_config $T/good.conf" --define "_imastream_hash_algo sha384" \
	-i "$pkg" || fail "install with a config file failed"
grep -q '^trace: init mode=1 algo=5 ' "$tr" || fail "macro did not override the config file"
grep -q '^trace: file_closed path=/opt/imstest/bin/tool;TMP' "$tr" || fail "no trace of tool"

# Options after the path in %__transaction_imastream win over everything.
rm -f "$tr"
new_root "$root"
irpm "$root" --define "_imastream_config $T/good.conf" \
	--define "__transaction_imastream $SO hash_algo=sha224" -i "$pkg" ||
	fail "install with plugin options failed"
grep -q '^trace: init mode=1 algo=7 ' "$tr" || fail "plugin options were not applied"
echo "ok: config file, macros and plugin options combine in that order"

# An empty path macro unsets what the file set: here the file's trace file.
rm -f "$tr"
printf 'plugins = selinux,ima\ntrace = %s\n' "$tr" >"$T/trace.conf"
new_root "$root"
irpm "$root" --define "_imastream_config $T/trace.conf" --define "_imastream_trace %{nil}" \
	--define "_imastream_plugins selinux,ima,trace" -i "$pkg" 2>/dev/null &&
	fail "trace with its file unset by an empty macro was accepted"
grep -q 'trace' "$T/rpm.stderr" || fail "no trace error: $(cat "$T/rpm.stderr")"
[ ! -e "$tr" ] || fail "the empty macro did not unset the file's trace"
echo "ok: an empty path macro unsets the config file's value"

# md5 with the opt-in works.
rm -f "$tr"
new_root "$root"
irpm "$root" --define "_imastream_plugins trace" --define "_imastream_trace $tr" \
	--define "_imastream_hash_algo md5" --define "_imastream_weak_algos allow" \
	-i "$pkg" || fail "md5 with weak_algos allow failed"
grep -q '^trace: init mode=1 algo=1 ' "$tr" || fail "md5 was not used with the opt-in"
echo "ok: md5 with weak_algos = allow"

# Without %_imastream_config, the installed configuration file is read when it exists
# (item 6).  A private mount namespace lays a scratch file over the build's sysconfdir,
# so neither the host nor a concurrent test sees it.
sysconfdir=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
	-C "$top_builddir" -f Makefile -f - imastream-print-sysconfdir <<'MK' | tail -n 1
imastream-print-sysconfdir:
	@echo $(sysconfdir)
MK
)
if ! command -v unshare >/dev/null 2>&1 || [ ! -d "$sysconfdir" ]; then
	echo "SKIP: no unshare, or no $sysconfdir to lay a default config over"
	exit 77
fi
# A chroot whose / is no mount point (the rpm matrix's) cannot make its mounts private.
if ! unshare -m --propagation private true 2>"$T/unshare.err"; then
	echo "SKIP: no private mount namespace here ($(cat "$T/unshare.err")): the default config file case needs one"
	exit 77
fi
mkdir -p "$T/upper" "$T/work"
printf 'plugins = trace\ntrace = %s\nhash_algo = sha384\n' "$tr" >"$T/upper/imastream.conf"
rm -f "$tr"
new_root "$root"
# rpm directly: irpm defines %_imastream_config empty, which turns the default off.
unshare -m --propagation private sh -c '
	mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$1" || exit 77
	rpm --root "$4" --dbpath /var/lib/rpm --nodeps --define "__plugindir $5" \
		--define "__transaction_imastream $6" -i "$7"' sh \
	"$sysconfdir" "$T/upper" "$T/work" "$root" "$top_builddir/.libs" "$SO" "$pkg" \
	2>"$T/rpm.err"
rc=$?
[ $rc = 77 ] && { echo "SKIP: cannot mount an overlay over $sysconfdir"; exit 77; }
[ $rc = 0 ] || fail "install with the default config file failed: $(cat "$T/rpm.err")"
grep -q '^trace: init mode=1 algo=5 ' "$tr" || fail "$sysconfdir/imastream.conf was not read"
if [ -e "$sysconfdir/imastream.conf" ] && cmp -s "$sysconfdir/imastream.conf" "$T/upper/imastream.conf"; then
	fail "the scratch config leaked out of the mount namespace"
fi
echo "ok: $sysconfdir/imastream.conf is read without %_imastream_config"
