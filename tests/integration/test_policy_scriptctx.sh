#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The scriptctx plugin under stock rpm: a %post that tries mount, module, ptrace and bpf
# calls gets EPERM for each under the plugin (with no_new_privs set) and the kernel's own
# answer without it; the scriptlet itself still runs; the deny list is configurable.
set -u
. "$top_srcdir/tests/integration/policy-lib.sh"
setup_scratch
need cc

# The probe runs inside the scratch root: a static binary needs nothing from it.
cc -static -O2 -o "$T/probe" "$top_srcdir/tests/integration/syscall_probe.c" 2>"$T/cc.log" ||
	{ echo "SKIP: cannot link a static probe: $(head -n 1 "$T/cc.log")"; exit 77; }
pkg=$(pol_build polscript --define \
	"ppost /bin/probe >/opt/poltest/polscript/probe.out 2>&1; echo benign >/opt/poltest/polscript/benign.out")

# run ROOT [rpm options]: installs the package into a fresh ROOT; prints the probe's answers.
run() {
	r=$1
	shift
	new_root "$r"
	cp "$T/probe" "$r/bin/probe"
	irpm "$r" "$@" -i "$pkg" || fail "rpm -i $* failed"
	[ "$(cat "$r/opt/poltest/polscript/benign.out")" = benign ] || fail "the scriptlet did not run"
	cat "$r/opt/poltest/polscript/probe.out"
}

without=$(run "$T/r0" --define "_imastream_plugins record" --define "_imastream_record_log $T/l")
with=$(run "$T/r1" --define "_imastream_plugins scriptctx")
echo "without: $(echo $without)"
echo "with:    $(echo $with)"
expect() { echo "$1" | grep -q -x "$2" || fail "expected \"$2\" in: $(echo $1)"; }
for call in mount umount2 finit_module delete_module ptrace bpf; do
	expect "$with" "$call EPERM"
	echo "$without" | grep -q -x "$call EPERM" && fail "$call gives EPERM without the filter"
done
expect "$with" "getppid ok"
expect "$with" "no_new_privs 1"
expect "$without" "no_new_privs 0"

# A configured list replaces the default one.
some=$(run "$T/r2" --define "_imastream_plugins scriptctx" --define "_imastream_seccomp_deny mount, bpf")
expect "$some" "mount EPERM"
expect "$some" "bpf EPERM"
expect "$some" "umount2 ENOENT"
none=$(run "$T/r3" --define "_imastream_plugins scriptctx" --define "_imastream_seccomp_deny none")
expect "$none" "mount ENOENT"
expect "$none" "no_new_privs 1"

new_root "$T/r4"
irpm "$T/r4" --define "_imastream_plugins scriptctx" --define "_imastream_seccomp_deny mount,nosuchcall" \
	-i "$pkg" && fail "an unknown system call was accepted"
grep -q 'seccomp_deny: "nosuchcall" is not a system call of this machine' "$T/rpm.stderr" ||
	fail "no message for an unknown system call"
echo "ok: scriptlets confined"
