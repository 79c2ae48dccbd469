#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel proof for attestation (issue 16): a kernel booted with ima_policy=tcb measures
# the files of an installed package, and imastream attest check passes every entry of
# the installed tree against the policy written at install time, except the one file
# changed after it, which it names.
#
# Two boots, one per IMA template (the template is a boot parameter):
#   ima-ng   the package installed by stock rpm -i; the policy from rpm's database
#   ima-sig  installed by imastream install in sign mode (tests/keys/rsa2048, no EVM);
#            the policy from its install record, with --trust of the certificate, so
#            the signed files pass by their signature
# Each template boots one kernel of kernels.sh's list, in turn (6.1 for ima-ng and 6.12
# for ima-sig when both are there), to keep to two boots.
# In the guest the disk is mounted at /mnt, so the policies are written with
# --path-prefix /mnt. After the policy, one installed file is changed on the host:
# etc/kbox.conf in the ima-ng tree (a data file, read), usr/libexec/kbox/hello.sh in the
# ima-sig tree (a signed script, executed; its security.ima stays).
# Both trees also hold data files whose names have a blank, UTF-8 and a backslash: the
# list must name them as the kernel records names (a blank as '_'), and they must pass.
# A third root, installed by rpm --noplugins and relabelled, gives a policy that must
# judge the ima-ng list exactly as the rpm root's does.
# All three roots are merged /usr (/bin, /sbin, /lib root's symlinks into usr/), with a
# second package that lists /bin/kbox-merged: the kernel measures it as
# /usr/bin/kbox-merged, and that is the path every policy gives it.
# No appraisal: no ima_appraise=enforce, no policy file loaded, no keys in the guest.
# Output: CHECK lines as the other kernel tests; exit 0, 1, 77 or 99.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
kdir=$srcdir/tests/kernel
imastream=$builddir/imastream
prefix=/mnt

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v rpm >/dev/null || skip "rpm not found"
command -v rpmbuild >/dev/null || skip "rpmbuild not found (package rpm)"
[ -x "$imastream" ] || error "$imastream not built"
"$imastream" policy keylime --help >/dev/null 2>&1 || skip "this build has no 'policy keylime'"
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || skip "no static busybox to package (package busybox-static)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel-attest.XXXXXX") || exit 99
# KEEP=1 keeps the trees, the policies and the lists for a look afterwards.
trap '[ -n "${KEEP:-}" ] && echo "test_kernel_attest: kept $tmp" || rm -rf "$tmp"' EXIT
cp "$srcdir/tests/keys/rsa2048.pem" "$tmp/key.pem" && chmod 600 "$tmp/key.pem" || exit 99
cert=$srcdir/tests/keys/rsa2048.crt

rpmbuild -bb --quiet --nodeps --define "_topdir $tmp/topdir" --define "busybox $busybox" \
	"$kdir/kbox.rpmspec" >"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; exit 99; }
pkg=$(find "$tmp/topdir/RPMS" -name 'imastream-kbox-*.rpm' | head -n 1)
[ -f "$pkg" ] || error "rpmbuild made no package"
# Data files whose names the kernel spells its own way: it logs a blank as '_' and
# keeps every other byte. Read in the guest; measured by tcb as any file root reads.
names=("usr/share/knames/a b.txt" "usr/share/knames/dir with space/f" "usr/share/knames/café"
	'usr/share/knames/back\slash')
cat >"$tmp/knames.spec" <<'SPEC'
Name: imastream-knames
Version: 1.0
Release: 1
Summary: imastream kernel test package: names with blanks, UTF-8, a backslash
License: LGPL-2.1-or-later
BuildArch: noarch
%description
Files whose names the kernel logs its own way.
%install
d=%{buildroot}/usr/share/knames
mkdir -p "$d/dir with space"
echo blank >"$d/a b.txt"
echo inner >"$d/dir with space/f"
echo utf8 >"$d/café"
echo backslash >"$d/back\\slash"
%files
/usr/share/knames
SPEC
rpmbuild -bb --quiet --define "_topdir $tmp/topdir" "$tmp/knames.spec" >"$tmp/rpmbuild.log" 2>&1 ||
	{ cat "$tmp/rpmbuild.log"; exit 99; }
npkg=$tmp/topdir/RPMS/noarch/imastream-knames-1.0-1.noarch.rpm
[ -f "$npkg" ] || error "rpmbuild made no names package"
cat >"$tmp/kmerged.spec" <<'SPEC'
Name: kmerged
Version: 1.0
Release: 1
Summary: a program in /bin, for merged-/usr roots
License: MIT
BuildArch: noarch
%description
A script listed as /bin/kbox-merged.
%install
mkdir -p %{buildroot}/bin
printf '#!/bin/sh\nexit 0\n' > %{buildroot}/bin/kbox-merged
%files
%attr(0755,root,root) /bin/kbox-merged
SPEC
rpmbuild -bb --quiet --nodeps --define "_topdir $tmp/topdir" "$tmp/kmerged.spec" >"$tmp/rpmbuild.log" 2>&1 ||
	{ cat "$tmp/rpmbuild.log"; exit 99; }
mpkg=$tmp/topdir/RPMS/noarch/kmerged-1.0-1.noarch.rpm
[ -f "$mpkg" ] || error "rpmbuild made no kmerged package"

fails=0
kt=""
report() {
	echo "CHECK $kt:$*"
	case "$2" in FAIL) fails=$((fails + 1)) ;; esac
}

# ---------- install, write the policy, then change one file ----------
# rpm and the policy both open the database at rpm's own %_dbpath below the root.
ng=$tmp/ng sig=$tmp/sig
mkdir -p "$ng" "$sig" || exit 99
for r in "$ng" "$sig"; do
	for d in bin sbin lib; do
		mkdir -p "$r/usr/$d" && ln -s "usr/$d" "$r/$d" || exit 99
	done
done
rpm --root "$ng" --nodeps -i "$pkg" "$npkg" "$mpkg" >"$tmp/rpm.log" 2>&1 || { cat "$tmp/rpm.log"; error "rpm -i failed"; }
"$imastream" policy keylime --root "$ng" --rpmdb --path-prefix "$prefix" \
	--output "$tmp/ng.json" 2>"$tmp/policy.log" || { cat "$tmp/policy.log"; error "policy keylime --rpmdb failed"; }
"$imastream" install --root "$sig" --allow-unsigned --quiet --mode sign --evm none \
	--key "$tmp/key.pem" --cert "$cert" "$pkg" "$npkg" "$mpkg" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; error "imastream install failed"; }
"$imastream" policy keylime --root "$sig" --record --trust "$cert" --path-prefix "$prefix" \
	--output "$tmp/sig.json" 2>"$tmp/policy.log" || { cat "$tmp/policy.log"; error "policy keylime --record failed"; }

# A third merged-/usr root: a plain install (no plugin), then relabelled. Its policy is
# judged against the list of the ima-ng boot, which measured the same packages' files.
rl=$tmp/relabelled
for d in bin sbin lib; do
	mkdir -p "$rl/usr/$d" && ln -s "usr/$d" "$rl/$d" || exit 99
done
rpm --root "$rl" --noplugins --nodeps -i "$pkg" "$npkg" "$mpkg" >"$tmp/rpm.log" 2>&1 ||
	{ cat "$tmp/rpm.log"; error "rpm --noplugins -i failed"; }
"$imastream" relabel --root "$rl" --quiet --mode hash >"$tmp/relabel.log" 2>&1 ||
	{ cat "$tmp/relabel.log"; error "relabel of a plain merged-/usr install failed"; }
getfattr -n security.ima "$rl/usr/bin/kbox-merged" >/dev/null 2>&1 ||
	error "relabel left /usr/bin/kbox-merged (listed as /bin/kbox-merged) unlabelled"
"$imastream" policy keylime --root "$rl" --rpmdb --path-prefix "$prefix" \
	--output "$tmp/rl.json" 2>"$tmp/policy.log" || { cat "$tmp/policy.log"; error "policy keylime of the relabelled root failed"; }

echo "# changed after the install" >>"$ng/etc/kbox.conf" || exit 99
echo "# changed after the install" >>"$sig/usr/libexec/kbox/hello.sh" || exit 99
getfattr -n security.ima "$sig/usr/libexec/kbox/hello.sh" >/dev/null 2>&1 ||
	error "appending to hello.sh lost its security.ima"

# ---------- in the guest: run the programs, read the files, send the list ----------
cat >"$tmp/checks.sh" <<'GUEST'
. /guest-lib.sh
expect_runs busybox-runs "$ROOT/usr/bin/busybox" true
expect_runs script-runs "$ROOT/usr/libexec/kbox/hello.sh"
expect_runs merged-runs "$ROOT/bin/kbox-merged"
expect_reads config-read "$ROOT/etc/kbox.conf"
GUEST
i=0
for rel in "${names[@]}"; do
	i=$((i + 1))
	printf 'expect_reads name-%d-read "$ROOT/%s"\n' $i "$rel" >>"$tmp/checks.sh"
done
echo 'send_file ima-log /sys/kernel/security/ima/ascii_runtime_measurements' >>"$tmp/checks.sh"

# hex_digest FILE: sha256 of FILE, as the measurement list prints it.
hex_digest() { sha256sum <"$1" | cut -d' ' -f1; }

# judge TEMPLATE ROOT POLICY CHANGED LOG: the host's checks of one boot's list. CHANGED
# is the changed file, relative to the root.
judge() {
	local t=$1 root=$2 policy=$3 changed=$4 log=$5 rel path want line rc out
	if [ ! -s "$log" ]; then
		report "$t:log" FAIL "no measurement list came out of the guest"
		return
	fi
	out=$(awk -v t="$t" '$3 != t { print NR": "$0; exit }' "$log")
	if [ -z "$out" ]; then
		report "$t:template" PASS "all $(wc -l <"$log") entries are $t"
	else
		report "$t:template" FAIL "entry not $t: $out"
	fi
	# The check cannot pass vacuously: each installed file is in the list, with the
	# digest of the bytes on the disk (for the changed file, the changed bytes).
	for rel in usr/bin/busybox usr/libexec/kbox/hello.sh etc/kbox.conf usr/bin/kbox-merged; do
		path=$prefix/$rel
		want=sha256:$(hex_digest "$root/$rel")
		line=$(awk -v p="$path" '$5 == p' "$log" | head -n 1)
		if [ -z "$line" ]; then
			report "$t:measured:$rel" FAIL "no entry for $path"
		elif [ "$(echo "$line" | cut -d' ' -f4)" != "$want" ]; then
			report "$t:measured:$rel" FAIL "logged $(echo "$line" | cut -d' ' -f4), file has $want"
		else
			report "$t:measured:$rel" PASS "$want"
		fi
	done
	if [ "$t" = ima-sig ]; then
		want=$(getfattr --absolute-names -n security.ima -e hex "$root/usr/bin/busybox" |
			sed -n 's/^security.ima=0x//p')
		line=$(awk -v p="$prefix/usr/bin/busybox" '$5 == p { print $6 }' "$log" | head -n 1)
		if [ -n "$want" ] && [ "$line" = "$want" ]; then
			report "$t:signature-logged" PASS "busybox's security.ima is in its entry"
		else
			report "$t:signature-logged" FAIL "entry has '${line:0:24}...', security.ima '${want:0:24}...'"
		fi
	fi
	# Entries outside the tree (the initramfs is tmpfs, which tcb does not measure, so
	# only boot_aggregate is expected) are judged by the same policy: nothing excluded.
	rc=0
	"$imastream" attest check -v --policy "$policy" --log "$log" >"$tmp/$t.out" 2>"$tmp/$t.err" || rc=$?
	sed "s/^/  $t: /" "$tmp/$t.out" "$tmp/$t.err"
	if [ $rc = 1 ] && [ "$(grep -c ': FAIL: ' "$tmp/$t.out")" = 1 ] &&
		grep -q "^$prefix/$changed: FAIL: " "$tmp/$t.out"; then
		report "$t:changed-named" PASS "$(grep ': FAIL: ' "$tmp/$t.out")"
	else
		report "$t:changed-named" FAIL "exit $rc; wanted exactly one failure, $prefix/$changed"
	fi
	for rel in usr/bin/busybox usr/libexec/kbox/hello.sh etc/kbox.conf usr/bin/kbox-merged; do
		[ "$rel" != "$changed" ] || continue
		want="OK"
		[ "$t" = ima-sig ] && [ "$rel" != etc/kbox.conf ] && want="OK (signed)"
		if grep -qx "$prefix/$rel: $want (sha256:[0-9a-f]*)" "$tmp/$t.out"; then
			report "$t:passes:$rel" PASS "$want"
		else
			report "$t:passes:$rel" FAIL "wanted '$want': $(grep "^$prefix/$rel:" "$tmp/$t.out")"
		fi
	done
	# The names as ima_write_template_field_data() records them: the list has that
	# name, and the policy lists it so (attest check prints a backslash doubled, and
	# then starts the line with one).
	for rel in "${names[@]}"; do
		logged=$(printf '%s' "$prefix/$rel" | tr ' ' _)
		want=sha256:$(hex_digest "$root/$rel")
		line=$(P=$logged awk '$5 == ENVIRON["P"] { print $4 }' "$log" | head -n 1)
		if [ "$line" = "$want" ]; then
			report "$t:name-logged:$rel" PASS "$logged"
		else
			report "$t:name-logged:$rel" FAIL "no entry for $logged with $want ('$line')"
		fi
		out=${logged//\\/\\\\}
		[ "$out" = "$logged" ] || out="\\$out"
		ok="OK"
		[ "$t" = ima-sig ] && ok="OK (signed)"
		if grep -qxF "$out: $ok ($want)" "$tmp/$t.out"; then
			report "$t:name-passes:$rel" PASS "$ok"
		else
			report "$t:name-passes:$rel" FAIL "wanted '$out: $ok ($want)'"
		fi
	done
	if [ "$t" = ima-sig ] && grep -q "^$prefix/$changed: FAIL: signature not verified" "$tmp/$t.out"; then
		report "$t:changed-signature" PASS "the kept signature does not cover the changed bytes"
	elif [ "$t" = ima-sig ]; then
		report "$t:changed-signature" FAIL "the changed signed file failed for another reason"
	fi
}

# ---------- boot once per template ----------
mapfile -t kernels < <(kernel_list)
[ ${#kernels[@]} -gt 0 ] || skip "no kernel to boot"
i=0 rc=0 booted=0
while read -r t root policy changed; do
	k=${kernels[i % ${#kernels[@]}]}
	kt=$(kernel_tag "$k")
	i=$((i + 1))
	mkdir -p "$tmp/out-$t" || exit 99
	echo "test_kernel_attest: booting $k with ima_policy=tcb ima_template=$t"
	start=$(date +%s)
	IMASTREAM_KERNEL=$k "$kdir/vm-check.sh" --root "$root" --checks "$tmp/checks.sh" \
		--policy none --kernel-args "ima_policy=tcb ima_template=$t ima_hash=sha256" \
		--fetch "$tmp/out-$t" --name "test_kernel_attest-$t-$kt" </dev/null | sed "s/^CHECK /CHECK $kt:$t:/"
	krc=${PIPESTATUS[0]}
	echo "test_kernel_attest: $kt $t boot took $(($(date +%s) - start)) s"
	case $krc in
	0 | 1) booted=$((booted + 1)) ;;
	77) continue ;;
	*) rc=99; continue ;;
	esac
	[ "$krc" = 0 ] || fails=$((fails + 1))
	judge "$t" "$root" "$policy" "$changed" "$tmp/out-$t/ima-log"
	# The relabelled root's policy passes and fails exactly what the rpm root's does
	# (the same packages; kbox.conf, changed on the booted disk, fails in both).
	if [ "$t" = ima-ng ]; then
		"$imastream" attest check -v --policy "$tmp/rl.json" --log "$tmp/out-$t/ima-log" \
			>"$tmp/rl.out" 2>"$tmp/rl.err"
		if [ -s "$tmp/rl.out" ] && diff "$tmp/$t.out" "$tmp/rl.out" >"$tmp/rl.diff"; then
			report "relabelled:same-verdicts" PASS "$(grep -c ': OK' "$tmp/rl.out") files OK, as for the rpm root"
		else
			report "relabelled:same-verdicts" FAIL "$(head -n 5 "$tmp/rl.diff")"
		fi
	fi
done <<BOOTS
ima-ng $ng $tmp/ng.json etc/kbox.conf
ima-sig $sig $tmp/sig.json usr/libexec/kbox/hello.sh
BOOTS
[ $rc = 0 ] || exit $rc
[ $booted -gt 0 ] || skip "no boot ran"
echo "test_kernel_attest: $booted boot(s), $fails failed check(s)"
[ $fails = 0 ]
