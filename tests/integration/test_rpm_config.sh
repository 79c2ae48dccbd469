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
must_fail "unknown config key" "$T/bad.conf:3: unknown configuration key \"hash_algorithm\"" \
	--define "_imastream_config $T/bad.conf"
must_fail "bad plugin option" 'plugin option "verbose" is not key=value' \
	--define "__transaction_imastream $SO verbose"

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
