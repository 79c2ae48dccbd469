#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The scriptctx plugin under stock rpm: a %post that tries mount, module, ptrace and bpf
# calls gets EPERM for each under the plugin (with no_new_privs set) and the kernel's own
# answer without it; the scriptlet itself still runs; the deny list is configurable.
# SELinux exec contexts: this kernel has none, so only the "SELinux disabled" decision and
# the checks of script_exec_context run here (the rest: tests/unit/test_policy_execcon).
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

# SELinux exec context.  This kernel runs no SELinux: the decision is "none", said once at
# init and per scriptlet at debug level, and a configured context is checked for form only.
# The enforcing path (setexeccon of a policy transition or rpm_script_t) is covered by
# tests/unit/test_policy_execcon with a stand-in SELinux, not here.
if [ -e /sys/fs/selinux/enforce ]; then
	echo "note: SELinux is enabled here: the disabled-SELinux checks do not apply"
else
	new_root "$T/r5"
	cp "$T/probe" "$T/r5/bin/probe"
	irpm "$T/r5" -vv --define "_imastream_plugins scriptctx" -i "$pkg" >"$T/out" 2>&1 ||
		fail "rpm -i with scriptctx failed"
	cat "$T/rpm.stderr" >>"$T/out"
	grep -q "scriptctx: SELinux is disabled: scriptlets get no exec context" "$T/out" ||
		fail "no init line for disabled SELinux"
	grep -q "scriptctx: /bin/sh: exec context none (SELinux disabled)" "$T/out" ||
		fail "no per-scriptlet decision"
	[ "$(cat "$T/r5/opt/poltest/polscript/benign.out")" = benign ] || fail "the scriptlet did not run"
	new_root "$T/r6"
	cp "$T/probe" "$T/r6/bin/probe"
	irpm "$T/r6" -v --define "_imastream_plugins scriptctx" \
		--define "_imastream_script_exec_context system_u:system_r:rpm_script_t:s0" \
		-i "$pkg" >"$T/out" || fail "a well-formed context was refused with SELinux disabled"
	grep -q "script_exec_context system_u:system_r:rpm_script_t:s0 is not applied" "$T/out" ||
		fail "no note that the configured context is not applied"
	echo "ok: SELinux disabled: scriptlets get no exec context"
fi
new_root "$T/r7"
irpm "$T/r7" --define "_imastream_plugins scriptctx" --define "_imastream_script_exec_context rpm_script_t" \
	-i "$pkg" && fail "a malformed exec context was accepted"
grep -q 'script_exec_context "rpm_script_t" is not auto, none or USER:ROLE:TYPE\[:RANGE\]' "$T/rpm.stderr" ||
	fail "no message for a malformed context"
[ ! -e "$T/r7/opt/poltest" ] || fail "files installed despite a bad setting"

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
