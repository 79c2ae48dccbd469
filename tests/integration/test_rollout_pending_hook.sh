#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The initramfs hook scripts/ima-rollout setup writes, run on a root a rootless build left with pending labels: it writes them (imastream relabel --pending in the root) and the root then passes verify --rpmdb; mount and chroot are stand-ins that log what the hook asks of them, the root holds no key and no policy, so the hook touches nothing of this machine's securityfs.
set -u
. "$top_srcdir/tests/integration/rootless-lib.sh"
rootless_setup

v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
chmod -R a+rX "$T/topdir"
R=$T/root
builder_root "$R"
ns_rpm "$R" sign -i "$v1" || fail "the rootless build failed"
[ "$(pending_count "$R")" -gt 0 ] || fail "the build left nothing pending"
[ ! -e "$R/etc/keys/ima" ] && [ ! -e "$R/etc/ima/ima-policy" ] ||
	fail "the root has keys or a policy: the hook would load them into this machine"

# The hook exactly as setup writes it (its heredoc, tabs stripped).
awk '/cat >"\$hook" <<-'"'"'EOF'"'"'/ { on = 1; next }
	on && /^\tEOF$/ { exit } on { sub(/^\t/, ""); print }' \
	"$top_srcdir/scripts/ima-rollout" >"$T/hook"
grep -q 'relabel --pending' "$T/hook" || fail "no hook found in scripts/ima-rollout"
# Stand-ins: mount logs; chroot ROOT imastream ARGS runs this build's imastream on ROOT.
mkdir "$T/bin"
cat >"$T/bin/mount" <<STUB
#!/bin/sh
echo "mount \$*" >>"$T/mount.log"
STUB
cat >"$T/bin/chroot" <<STUB
#!/bin/sh
r=\$1
shift
[ "\$1" = imastream ] || exit 127
shift
echo "chroot \$r imastream \$*" >>"$T/chroot.log"
# In the root, / is ROOT and rpm's database where the root's macros say (here /var/lib/rpm).
args=
for a in "\$@"; do [ "\$a" = / ] && a=\$r; args="\$args \$a"; done
exec $IMS \$args --dbpath /var/lib/rpm
STUB
chmod 755 "$T/bin/mount" "$T/bin/chroot"
rootmnt=$R PATH=$T/bin:$PATH sh "$T/hook" >"$T/hook.out" 2>"$T/hook.err" ||
	fail "the hook failed: $(cat "$T/hook.err")"
grep -qx "chroot $R imastream relabel --pending --root /" "$T/chroot.log" ||
	fail "the hook did not apply the pending labels: $(cat "$T/chroot.log" 2>/dev/null)"
! grep -q remount "$T/mount.log" 2>/dev/null || fail "a read-write root was remounted"
[ "$(pending_count "$R")" = 0 ] || fail "labels still pending after the hook"
verify_rpmdb "$R" || fail "after the hook: $(cat "$T/verify.out")"
echo "ok: the first-boot hook writes the pending labels; verify --rpmdb accepts the root"

# A root with nothing pending: the hook does not run relabel at all.
: >"$T/chroot.log"
rootmnt=$R PATH=$T/bin:$PATH sh "$T/hook" >"$T/hook.out" 2>"$T/hook.err" || fail "the hook failed"
! grep -q relabel "$T/chroot.log" || fail "the hook ran relabel with nothing pending"
echo "ok: with nothing pending the hook leaves the root alone"
echo PASS
