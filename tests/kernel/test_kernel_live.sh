#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A live Debian 13 system rolls IMA and EVM out with scripts/ima-rollout and lives under
# enforcement: booted by each kernel of kernels.sh (6.1 with RSA keys, 6.12 with ECDSA
# P-384) from the cached disk image of live-image.sh, with busybox's init.
#
# Boots per kernel, each on the same disk (a copy of the cached image), each running one
# job (a tar archive on the second disk, unpacked by the system's rc script):
#   setup    no IMA: rpm -i --noplugins of imastream-live 1 (software that was there
#            before), then "ima-rollout setup" (keys, macros, policy, initramfs hook)
#   label    ima_appraise=fix evm=fix: "ima-rollout label" (the system labels itself)
#   live     ima_appraise=enforce: "ima-rollout check", programs run; rpm -U to 2 with
#            the plugin while version 1 runs, after the package carrying imastream.so
#            upgraded itself (the new plugin labels that rpm -U); dnf upgrade to 3 from a createrepo_c
#            repository; the guest's measurement list judged by attest check against
#            policy keylime from its rpm database; figures: rpm -U and dnf reinstall
#            with and without the plugin; rpm -U to 4 stopped after two of its three
#            renames (one file still under its temp name) and killed (kill -9)
#   killed   ima_appraise=enforce: the new program runs with the old library, verify
#            --rpmdb names the temp file and the two half-installed files, imastream
#            recover --rpmdb removes the temp file, rpm -U to 4 again, then to 5; the
#            power-cut packages' version 0 (rpm, imastream install)
#   cutN     ima_appraise=enforce: power cuts (live-cuts.sh, live-cut-lib.sh): each boot
#            judges what the last cut left (every wrong file named by verify), mends it
#            (recover, the transaction again), then starts the next transaction, which
#            cut_point.c stops at its point while the host kills qemu (SIGKILL: the
#            guest's page cache is lost); IMASTREAM_LIVE_CUTS=long for every point
#   rotate   ima_appraise=fix evm=fix: a second key enrolled beside the first
#            (ima-rollout setup), "ima-rollout label --trust NEW" signs again what the
#            new certificate does not verify, the old certificate is retired
#   rotated  ima_appraise=enforce: only the new key is loaded, everything verifies, runs
#   tamper   the program changed on the disk image while the VM is off; enforce: refused
#   measure  ima_appraise=log (the same policy measures, appraisal refuses nothing): the
#            changed program runs, and attest check fails for exactly that file
# IMASTREAM_LIVE_LISTS=DIR keeps, per kernel, what bench/bench_policy_peer.sh compares:
# the root as the label boot left it (DIR/TAG-installed, the installed system a user
# makes keylime's --rootfs policy from), and from the live, rotated and measure boots
# the measurement list and policy keylime --rpmdb --trust of that moment
# (DIR/TAG-BOOT.list, DIR/TAG-BOOT.policy.json).
# The initramfs (live-init.sh) does what Debian's initramfs-tools does: modules, mount
# the root, run its local-bottom scripts (ima-rollout's hook loads the keys, switches EVM
# on, loads /etc/ima/ima-policy), switch_root to /sbin/init.
# Output: "STAGE NAME (kernel VERSION): ok" per stage, or the stage, the kernel and the
# failed check with the kernel's refusal; CHECK lines above them. Exit 0, 1, 77, 99.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
kdir=$srcdir/tests/kernel

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v rpmbuild >/dev/null || skip "rpmbuild not found (package rpm)"
command -v gcc >/dev/null || skip "gcc not found"
command -v debugfs >/dev/null || skip "debugfs not found (package e2fsprogs)"
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || skip "no static busybox (package busybox-static)"

t0=$(date +%s)
img=$("$kdir/live-image.sh")
case $? in
0) ;;
77) skip "no live system image: $img" ;;
*) error "live-image.sh failed: $img" ;;
esac
echo "test_kernel_live: image $img ready after $(($(date +%s) - t0)) s"

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/kernel-live.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

for v in 1 2 3 4 5; do
	rpmbuild -bb --quiet --define "_topdir $tmp/rpmbuild" --define "ver $v" \
		"$kdir/live.rpmspec" >"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; error "rpmbuild failed"; }
done
# The package carrying imastream.so, the plugin the image's make install built.
plugin_path=$(cat "$(dirname "$img")/plugin-path") || error "no plugin-path beside $img"
for v in 1 2; do
	rpmbuild -bb --quiet --define "_topdir $tmp/rpmbuild" --define "ver $v" \
		--define "plugin $(dirname "$img")/imastream.so" --define "plugin_path $plugin_path" \
		"$kdir/live-plugin.rpmspec" >"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; error "rpmbuild failed"; }
done
mkdir -p "$tmp/pkgs" && cp "$tmp"/rpmbuild/RPMS/*/*.rpm "$tmp/pkgs/" || error "no packages built"
# rpm stopped between writing its temp files and renaming them (kill-reboot-recover).
gcc -shared -fPIC -O2 -o "$tmp/rpm-stop.so" "$srcdir/tests/integration/rpm_stop_at_commit.c" -ldl ||
	error "cannot build the rpm stop preload"
# Power cuts (power-cut): the points (live-cuts.sh), the preload that stops a
# transaction at one and tells the host, and the packages, version 0 installed first,
# then one version per cut.
# shellcheck source=tests/kernel/live-cuts.sh
. "$kdir/live-cuts.sh"
# shellcheck source=tests/kernel/cut-host-lib.sh
. "$kdir/cut-host-lib.sh"
case ${IMASTREAM_LIVE_CUTS:-short} in
short | long) cuts=${IMASTREAM_LIVE_CUTS:-short} ;;
*) error "IMASTREAM_LIVE_CUTS=$IMASTREAM_LIVE_CUTS: unknown (short or long)" ;;
esac
# IMASTREAM_LIVE_SYNC=none: the cuts run with %_imastream_sync none and install --sync
# none, to count the labelled files a cut leaves short without them.
case ${IMASTREAM_LIVE_SYNC:-} in
'' | none) ;;
*) error "IMASTREAM_LIVE_SYNC=$IMASTREAM_LIVE_SYNC: unknown (none)" ;;
esac
gcc -shared -fPIC -O2 -o "$tmp/cut-point.so" "$kdir/cut_point.c" -ldl || error "cannot build cut_point.c"
ncuts=$(for k in 0 1; do cut_points "$cuts" $k; done | awk 'END { print NR }')
mkdir -p "$tmp/cutpkgs" || exit 99
for v in $(seq 0 "$ncuts"); do
	for p in imastream-cut imastream-cutinst; do
		rpmbuild -bb --quiet --define "_topdir $tmp/rpmbuild-cut" --define "ver $v" --define "pkg $p" \
			"$kdir/cut.rpmspec" >"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; error "rpmbuild of cut.rpmspec failed"; }
	done
done
cp "$tmp"/rpmbuild-cut/RPMS/noarch/*.rpm "$tmp/cutpkgs/" || error "no cut packages built"
# IMASTREAM_LIVE_BREAK=plugin-off: the first rpm -U runs with --noplugins, so that the
# test fails and says which file the kernel refused.
case ${IMASTREAM_LIVE_BREAK:-} in
'' | plugin-off) ;;
*) error "IMASTREAM_LIVE_BREAK=$IMASTREAM_LIVE_BREAK: unknown (plugin-off)" ;;
esac
echo "$plugin_path" >"$tmp/pkgs/plugin-path" || exit 99
lists=${IMASTREAM_LIVE_LISTS:-}
if [ -n "$lists" ]; then
	mkdir -p "$lists" && lists=$(cd "$lists" && pwd) || error "IMASTREAM_LIVE_LISTS=$lists: cannot create it"
fi

# ---------- per kernel: its initramfs ----------
# make_initramfs KERNEL OUT: busybox, live-init.sh as /init, the modules of the disk.
make_initramfs() {
	local kernel=$1 out=$2 kver modbase ird=$tmp/initramfs verb path base o
	kver=${kernel##*/vmlinuz-}
	modbase=$(cd "$(dirname "$kernel")/.." && pwd)
	[ -d "$modbase/lib/modules/$kver" ] || modbase=/
	rm -rf "$ird" && mkdir -p "$ird/bin" "$ird/lib/modules" || return 1
	cp "$busybox" "$ird/bin/busybox" && install -m 0755 "$kdir/live-init.sh" "$ird/init" || return 1
	{
		modprobe -d "$modbase" -S "$kver" --show-depends -a virtio_pci virtio_blk ext4 || return 1
		for m in sha512_generic ecdsa_generic; do
			modprobe -d "$modbase" -S "$kver" --show-depends "$m" 2>/dev/null
		done
	} >"$tmp/deps"
	: >"$ird/modules.order"
	while read -r verb path _; do
		[ "$verb" = insmod ] || continue
		base=$(basename "$path")
		case "$base" in
		*.ko.xz) o=${base%.xz}; xz -dc "$path" >"$ird/lib/modules/$o" ;;
		*.ko.zst) o=${base%.zst}; zstd -qdc "$path" >"$ird/lib/modules/$o" ;;
		*) o=$base; cp "$path" "$ird/lib/modules/$o" ;;
		esac || return 1
		grep -qx "$o" "$ird/modules.order" || echo "$o" >>"$ird/modules.order"
	done <"$tmp/deps"
	(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$out"
}

# boot NAME ARGS: boots $kernel on $disk with the job $tmp/job-NAME/job.sh (plus the
# guest helpers), kernel command line IMA arguments ARGS; the results port goes to
# $tmp/NAME.results, the console to $tmp/NAME.console. The third serial port is the
# power-cut port (qemu_cuttable, cut-host-lib.sh): cut_line holds the cut asked for.
# Returns 0 when the job ran to its end (DONE) or was cut, 1 otherwise. Prints the
# boot's time and the system's boot time.
boot() {
	local name=$1 args=$2 job=$tmp/job-${boot_job:-$1} start rc=""
	cp "$kdir/guest-lib.sh" "$srcdir/scripts/ima-rollout" "$job/" || return 1
	tar -C "$job" -cf "$tmp/job.tar" . || return 1
	start=$(date +%s)
	# cryptomgr.notests: see vm-check.sh (a starved emulator times out the self-tests).
	selftests_off=cryptomgr.notests=1
	qemu_cuttable "$tmp" "$tmp/$name.qemu" \
		timeout --kill-after=10 1200 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 \
		-nographic -nodefaults -no-reboot -monitor none \
		-serial "file:$tmp/$name.console" -serial "file:$tmp/$name.raw" \
		-kernel "$kernel" -initrd "$tmp/initramfs-$tag" \
		-append "console=ttyS0 panic=-1 loglevel=4 $selftests_off $args" \
		-drive "file=$disk,format=raw,if=virtio,cache=writeback" \
		-drive "file=$tmp/job.tar,format=raw,if=virtio,readonly=on" || return 1
	rc=$qemu_rc
	tr -d '\r' <"$tmp/$name.raw" >"$tmp/$name.results"
	grep '^CHECK ' "$tmp/$name.results" | sed "s/^CHECK /CHECK $tag:/"
	echo "test_kernel_live: $tag $name boot ($args): $(($(date +%s) - start)) s," \
		"system up at $(sed -n 's/^BOOTED //p' "$tmp/$name.results") s${cut_line:+, cut at $cut_line}"
	grep -h '^FIGURE ' "$tmp/$name.results" | sed "s/^FIGURE /test_kernel_live: $tag figure: /"
	cat "$tmp/$name.results" >>"$tmp/results-$tag"
	keep_lists "$name"
	[ -z "$cut_line" ] || return 0
	if [ "$rc" != 0 ] || ! grep -q '^DONE' "$tmp/$name.results"; then
		echo "test_kernel_live: $tag $name: the job did not finish (qemu exit $rc); console tail:"
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$tmp/$name.console" | tail -n 25
		cp "$tmp/$name.console" "./test_kernel_live-$tag-$name.console.log" 2>/dev/null
		return 1
	fi
}

# keep_lists NAME: with IMASTREAM_LIVE_LISTS, the list and policy boot NAME sent.
keep_lists() {
	local f
	[ -n "$lists" ] || return 0
	for f in list policy.json; do
		grep -q "^FILE keep-$f " "$tmp/$1.results" || continue
		sed -n "s/^FILE keep-$f //p" "$tmp/$1.results" >"$lists/$tag-$1.$f"
	done
}
# keep_tree: with IMASTREAM_LIVE_LISTS, the stopped disk's root copied out.
keep_tree() {
	[ -n "$lists" ] || return 0
	rm -rf "$lists/$tag-installed" && mkdir -p "$lists/$tag-installed" &&
		debugfs -R "rdump / $lists/$tag-installed" "$disk" >/dev/null 2>&1
}

# job NAME: a job folder with job.sh from standard input.
job() {
	mkdir -p "$tmp/job-$1" && cat >"$tmp/job-$1/job.sh"
}

# stage NAME: the stage's line from the checks named NAME:... of this kernel's boots.
stage() {
	local f
	f=$(grep "^CHECK $1:[^ ]* FAIL" "$tmp/results-$tag" | head -n 1)
	if ! grep -q "^CHECK $1:" "$tmp/results-$tag"; then
		echo "STAGE $1 (kernel $kver): FAIL: no check ran (a boot before it failed)"
		fails=$((fails + 1))
	elif [ -n "$f" ]; then
		echo "STAGE $1 (kernel $kver): FAIL: ${f#CHECK }"
		fails=$((fails + 1))
	else
		echo "STAGE $1 (kernel $kver): ok"
	fi
}

# tamper_disk PATH: changes one byte of PATH's first block on the (stopped) disk image,
# the way an attacker with the disk would: content only, labels and inode untouched.
tamper_disk() {
	local blk bs
	bs=$(dumpe2fs -h "$disk" 2>/dev/null | sed -n 's/^Block size: *//p')
	blk=$(debugfs -R "blocks $1" "$disk" 2>/dev/null | awk '{ print $1 }')
	[ -n "$bs" ] && [ -n "$blk" ] || return 1
	# Byte 10 of an ELF file is padding of e_ident: the program still runs.
	printf '\x5a' | dd of="$disk" bs=1 seek=$((blk * bs + 10)) conv=notrunc status=none
}

# ---------- the jobs (the same for every kernel) ----------
# The guest's helpers: report (guest-lib.sh) and these.
cat >"$tmp/live-lib.sh" <<'LIB'
. ./guest-lib.sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# keep_send: with IMASTREAM_LIVE_LISTS (./keep-lists), sends the measurement list and
# the policy of this moment, made as docs/SETUP.md says (--rpmdb --trust), to the host.
keep_send() {
	[ -e ./keep-lists ] || return 0
	imastream policy keylime --root / --rpmdb --trust /etc/keys/imastream/ima.crt --output /run/keep.json
	send_file keep-list /sys/kernel/security/ima/ascii_runtime_measurements
	send_file keep-policy.json /run/keep.json
}
# refusals_since MARK: the kernel's integrity refusals logged after dmesg line MARK.
refusals_since() {
	dmesg | tail -n +"$(($1 + 1))" | grep -o 'op=appraise_data cause=[^ ]* comm="[^"]*" name="[^"]*"' |
		sed 's/op=appraise_data //' | sort -u | tr '\n' ' '
}
# check NAME WANT CMD...: CMD exits 0 and its output contains WANT (empty: anything);
# on failure the detail names what the kernel refused meanwhile. Sets took to its wall
# time in seconds.
check() {
	name=$1 want=$2
	shift 2
	mark=$(dmesg | wc -l)
	start=$(cut -d' ' -f1 /proc/uptime)
	out=$("$@" 2>&1)
	rc=$?
	took=$(echo "$start $(cut -d' ' -f1 /proc/uptime)" | awk '{ printf "%.2f", $2 - $1 }')
	echo "--- $name: $*"
	echo "$out" | tail -n 20
	if [ $rc = 0 ] && case "$out" in *"$want"*) true ;; *) false ;; esac; then
		report "$name" PASS "$(echo "$out" | tail -n 1)"
	else
		report "$name" FAIL "exit $rc: $(echo "$out" | tail -n 2) refused: $(refusals_since "$mark")"
	fi
}
# rpm_stop NAME N RPM: rpm -U RPM in the background with rpm_stop_at_commit.c preloaded:
# rpm writes and labels every file of the package under its temp name NAME;XXXXXXXX,
# renames N of them into place, then stops before the next rename and says so on the
# FIFO. Sets stopped_pid (empty when rpm did not stop).
rpm_stop() {
	rm -f /run/stop.fifo && mkfifo /run/stop.fifo
	(
		LD_PRELOAD=/run/job/rpm-stop.so RPM_STOP_FIFO=/run/stop.fifo RPM_STOP_AFTER=$2 \
			rpm -U "$3" >/run/stop.out 2>&1
		echo "exited $?" >/run/stop.fifo
	) &
	read -r what stopped_pid stopped_at </run/stop.fifo
	if [ "$what" = stopped ]; then
		report "$1" PASS "rpm $stopped_pid stopped before renaming $stopped_at into place"
	else
		report "$1" FAIL "rpm did not stop: $what $stopped_pid $(tail -n 2 /run/stop.out)"
		stopped_pid=""
	fi
}
# temps_named NAME MIN [PATH...]: the labelled rpm temp files on the disk (at least MIN)
# are exactly what verify --rpmdb names as left by a transaction that did not end, and
# the other files it fails are exactly the PATHs (installed from the interrupted
# transaction while the database names the old version); verify passes when there is
# nothing of either.
temps_named() {
	name=$1 min=$2
	shift 2
	printf '%s\n' "$@" | sed '/^$/d' | sort >/run/half.want
	find /usr /etc -xdev -type f -name '*;*' | sort >/run/temps
	: >/run/temps.labelled
	while read -r f; do
		if getfattr -n security.ima "$f" >/dev/null 2>&1 || getfattr -n security.evm "$f" >/dev/null 2>&1; then
			echo "$f" >>/run/temps.labelled
		fi
	done </run/temps
	imastream verify --root / --rpmdb --evm require --trust /etc/keys/ima >/run/verify.out 2>&1
	rc=$?
	echo "--- $name: imastream verify --root / --rpmdb"
	tail -n 20 /run/verify.out
	grep ': FAIL: an rpm temp file' /run/verify.out | sed 's/: FAIL: .*//' | sort >/run/temps.named
	grep ': FAIL: ' /run/verify.out | grep -v ': FAIL: an rpm temp file' | sed 's/: FAIL: .*//' | sort -u >/run/half.named
	n=$(wc -l </run/temps.labelled)
	if [ "$n" -lt "$min" ] || ! cmp -s /run/temps.labelled /run/temps.named || ! cmp -s /run/half.want /run/half.named; then
		report "$name" FAIL "exit $rc, labelled temp files: $(tr '\n' ' ' </run/temps.labelled) named: $(tr '\n' ' ' </run/temps.named) other failures: $(tr '\n' ' ' </run/half.named) (wanted: $*)"
	elif { [ "$n" = 0 ] && [ $# = 0 ] && [ $rc != 0 ]; } || { [ "$n$#" != 00 ] && [ $rc = 0 ]; }; then
		report "$name" FAIL "exit $rc with $n labelled temp files and $# other failures: $(tail -n 1 /run/verify.out)"
	else
		report "$name" PASS "$n labelled of $(wc -l </run/temps) temp files named: $(tr '\n' ' ' </run/temps.named) half-installed: $(tr '\n' ' ' </run/half.named)"
	fi
}
LIB

job setup <<'JOB'
. ./live-lib.sh
check rollout:rpm-install-before "" rpm -i --noplugins ./imastream-live-1-1.x86_64.rpm
check rollout:runs-before "live 1" live-hello
check rollout:setup "ima_appraise=fix" sh ./ima-rollout setup --key ./ima.key --cert ./ima.crt --policy ./ima-policy
JOB
job label <<'JOB'
. ./live-lib.sh
check rollout:evm-on-fix 2 cat /sys/kernel/security/evm
s=$(cut -d' ' -f1 /proc/uptime)
check rollout:label "ima_appraise=enforce" sh ./ima-rollout label
echo "FIGURE label $(echo "$s $(cut -d' ' -f1 /proc/uptime)" | awk '{ printf "%.0f", $2 - $1 }') s" >&3
JOB
job live <<'JOB'
. ./live-lib.sh
check rollout:evm-on 2 cat /sys/kernel/security/evm
check rollout:check "every file" sh ./ima-rollout check
check rollout:runs-program "live 1" live-hello
check rollout:runs-rpm "imastream-live-1" rpm -q imastream-live
check rollout:runs-imastream "imastream" imastream --version
check rollout:runs-dnf "" dnf --version
# The package carrying imastream.so upgrades it while rpm has it loaded; the next
# transaction (rpm -U below) maps the new one, which the kernel measures.
plugin=$(cat ./plugin-path)
check plugin-upgraded:install-1 "" rpm -i ./imastream-plugin-live-1-1.x86_64.rpm
# An executable %config file runs under the exec policy (appraise_type=imasig) with a
# digest: the kernel takes a digest under a verified EVM portable signature.
check plugin-upgraded:config-program-digest "ima: digest, evm: portable signature" imastream verify --evm require --trust /etc/keys/ima /etc/imastream-live-hook
check plugin-upgraded:config-program-runs "hook 1" /etc/imastream-live-hook
check plugin-upgraded:upgrade-itself "" rpm -U ./imastream-plugin-live-2-1.x86_64.rpm
check plugin-upgraded:new-labelled "$plugin: OK" imastream verify --evm require --trust /etc/keys/ima "$plugin"
check plugin-upgraded:new-is-2 "imastream-plugin-live 2" tail -c 40 "$plugin"
check plugin-upgraded:config-program-upgraded "hook 2" /etc/imastream-live-hook
# Version 1 keeps running through its upgrade: it prints once /run/go exists, from the
# library it mapped before.
live-hello wait /run/go >/run/old.out 2>&1 &
old=$!
until grep -q liblive /proc/$old/maps 2>/dev/null || ! kill -0 $old 2>/dev/null; do sleep 0.1; done
noplugins=""
[ "$(cat ./break)" != plugin-off ] || noplugins=--noplugins
check rpm-upgrade:rpm-U "" rpm -U $noplugins ./imastream-live-2-1.x86_64.rpm
check rpm-upgrade:program-and-library "live 2" live-hello
check plugin-upgraded:new-loaded-next "$plugin" sh -c "grep -m1 \" sha256:\$(sha256sum <$plugin | cut -d' ' -f1) $plugin \" /sys/kernel/security/ima/ascii_runtime_measurements"
check plugin-upgraded:next-labelled "type 3" sh -c 'imastream verify --evm require --trust /etc/keys/ima /usr/bin/live-hello && getfattr -e hex -n security.ima /usr/bin/live-hello | grep "=0x03" >/dev/null && echo "type 3"'
check running-program-replaced:replaced-while-mapped "" grep -m1 'liblive.so.1 (deleted)' /proc/$old/maps
touch /run/go
wait $old
echo "exit $?" >>/run/old.out
check running-program-replaced:old-kept-running "live 1" cat /run/old.out
check running-program-replaced:old-exit "exit 0" cat /run/old.out
check running-program-replaced:new-runs "live 2" live-hello
check rpm-upgrade:config "version = 2" cat /etc/live.conf
check rpm-upgrade:verify-rpmdb "" imastream verify --root / --rpmdb --evm require --trust /etc/keys/ima
check rpm-upgrade:labels "type 3" sh -c 'imastream verify --evm require --trust /etc/keys/ima /usr/bin/live-hello /usr/lib/liblive.so.1 && getfattr -e hex -n security.ima /usr/bin/live-hello | grep "=0x03" >/dev/null && echo "type 3"'
# dnf from a local repository made by createrepo_c, with the plugin.
mkdir -p /run/repo && cp ./imastream-live-3-1.x86_64.rpm /run/repo/
check dnf-upgrade:createrepo "" createrepo_c -q /run/repo
dnf_live() { dnf -y -q --repofrompath=live,/run/repo --repo=live --setopt=live.gpgcheck=0 "$@"; }
check dnf-upgrade:dnf-upgrade "" dnf_live upgrade imastream-live
check dnf-upgrade:program-and-library "live 3" live-hello
check dnf-upgrade:config "version = 3" cat /etc/live.conf
check dnf-upgrade:verify-rpmdb "" imastream verify --root / --rpmdb --evm require --trust /etc/keys/ima
# Figures: the same reinstall without and with the plugin (the last one restores labels).
export HOME=/root
check rpm-upgrade:reinstall-noplugins "" rpm -U --replacepkgs --noplugins ./imastream-live-3-1.x86_64.rpm
rpm_n=$took
check rpm-upgrade:reinstall-plugin "" rpm -U --replacepkgs ./imastream-live-3-1.x86_64.rpm
rpm_p=$took
echo '%__transaction_imastream %{nil}' >/root/.rpmmacros
check dnf-upgrade:reinstall-noplugin "" dnf_live reinstall imastream-live
dnf_n=$took
rm -f /root/.rpmmacros
check dnf-upgrade:reinstall-noplugin-unlabelled "No such attribute" sh -c '! getfattr -n security.ima /usr/bin/live-hello 2>&1'
check dnf-upgrade:reinstall-plugin "" dnf_live reinstall imastream-live
dnf_p=$took
echo "FIGURE rpm -U: ${rpm_p} s with the plugin, ${rpm_n} s with --noplugins" >&3
echo "FIGURE dnf reinstall: ${dnf_p} s with the plugin, ${dnf_n} s without" >&3
check dnf-upgrade:reinstalled-labelled "OK" imastream verify --evm require --trust /etc/keys/ima /usr/bin/live-hello /usr/lib/liblive.so.1
check dnf-upgrade:after-reinstalls "live 3" live-hello
check attest:policy "" imastream policy keylime --root / --rpmdb --trust /etc/keys/imastream/ima.crt --output /run/policy.json
check attest:program-measured "/usr/bin/live-hello" sh -c 'grep -m1 " sha256:$(sha256sum </usr/bin/live-hello | cut -d" " -f1) /usr/bin/live-hello " /sys/kernel/security/ima/ascii_runtime_measurements'
check attest:check "" imastream attest check --policy /run/policy.json --log /sys/kernel/security/ima/ascii_runtime_measurements
# Without keys, packaged files are judged by digest alone: versions 1 and 2 of the
# program, which this boot ran before their upgrades, pass by this boot's record.
check attest:upgrade-spanning "replaced this boot" sh -c '
	log=/sys/kernel/security/ima/ascii_runtime_measurements
	[ "$(grep " /usr/bin/live-hello" $log | cut -d" " -f4 | sort -u | wc -l)" -ge 3 ] ||
		{ echo "the list holds fewer than three versions of live-hello"; exit 1; }
	imastream policy keylime --root / --rpmdb --output /run/digests.json || exit 1
	imastream attest check --policy /run/digests.json --log $log >/run/digests.out 2>&1
	! grep -E "^/usr/(bin/live-hello|lib/liblive[.]so[.]1): FAIL" /run/digests.out'
keep_send
# kill -9 of rpm in the middle of its renames: every file of version 4 was written,
# labelled and signed under its temp name; the %config file and the program are at
# their final names, the library still beside its own; the database says version 3.
rpm_stop kill-reboot-recover:kill-stopped 2 ./imastream-live-4-1.x86_64.rpm
if [ -n "$stopped_pid" ]; then
	check kill-reboot-recover:kill-temp-file "liblive.so.1;" sh -c 'ls -d /usr/lib/liblive.so.1\;*'
	kill -9 "$stopped_pid"
	check kill-reboot-recover:kill-9 "exited 137" cat /run/stop.fifo
	wait
fi
# The new program with the old library: accepted by the kernel.
check kill-reboot-recover:kill-half-runs "live 3 (program 4)" live-hello
JOB
# The reboot after the kill (enforce): what the kill left is named, recovered, the
# transaction run again; then a power cut in the middle of the next upgrade.
job killed <<'JOB'
. ./live-lib.sh
check kill-reboot-recover:killed-runs "live 3 (program 4)" live-hello
check kill-reboot-recover:killed-db "imastream-live-3" rpm -q imastream-live
temps_named kill-reboot-recover:killed-verify-names 1 /etc/live.conf /usr/bin/live-hello
check kill-reboot-recover:killed-recover "rpm temp file" imastream recover --root / --rpmdb
temps_named kill-reboot-recover:killed-recovered 0 /etc/live.conf /usr/bin/live-hello
check kill-reboot-recover:killed-rerun "" rpm -U ./imastream-live-4-1.x86_64.rpm
check kill-reboot-recover:killed-rerun-runs "live 4" live-hello
check kill-reboot-recover:killed-rerun-verify "" imastream verify --root / --rpmdb --evm require --trust /etc/keys/ima
check kill-reboot-recover:upgrade-5 "live 5" sh -c 'rpm -U ./imastream-live-5-1.x86_64.rpm && live-hello'
# What the power cuts start from: the cut packages' version 0, by rpm and by install.
check power-cut:install-0-rpm "imastream-cut 0" sh -c 'rpm -U ./imastream-cut-0-1.noarch.rpm && imastream-cut'
check power-cut:install-0-install "imastream-cutinst 0" sh -c 'imastream install --root / --mode sign --evm portable --key /etc/keys/imastream/ima.key --cert /etc/keys/imastream/ima.crt --allow-unsigned --quiet ./imastream-cutinst-0-1.noarch.rpm && imastream-cutinst'
JOB
# A power-cut boot: after the last cut, what is wrong is named, then made whole; then
# the next transaction, stopped at its point while the host kills qemu (live-cut-lib.sh).
job powercut <<'JOB'
. ./live-lib.sh
. ./live-cut-lib.sh
read -r pk pv pp nk nv np <./cut.plan
[ "$pk" = - ] || cut_after "$pk" "$pv" "$pp"
[ "$nk" = - ] || cut_start "$nk" "$nv" "$np"
JOB
# Key rotation: a new key is enrolled beside the old one, the system signed again in
# place in a fix boot (only what the new certificate does not verify), the old
# certificate retired from the next boot's keyrings.
job rotate <<'JOB'
. ./live-lib.sh
check key-rotation:enrol "ima_appraise=fix" sh ./ima-rollout setup --key ./new.key --cert ./new.crt --policy ./ima-policy
check key-rotation:both-enrolled "2 certificates" sh -c 'echo "$(ls /etc/keys/ima/*.der | wc -l) certificates"'
check key-rotation:label "ima_appraise=enforce" sh ./ima-rollout label --trust ./new.crt
check key-rotation:retire "" sh ./ima-rollout setup --key ./new.key --cert ./new.crt --policy ./ima-policy --retire ./ima.crt
check key-rotation:old-retired "only $(imastream keys id --cert ./new.crt).der" sh -c 'echo only $(ls /etc/keys/ima)'
JOB
job rotated <<'JOB'
. ./live-lib.sh
new=$(imastream keys id --cert ./new.crt)
old=$(imastream keys id --cert ./ima.crt)
check key-rotation:only-new-loaded "$new" sh -c "imastream keys list _ima; ! imastream keys list _ima | grep $old >/dev/null"
check key-rotation:check "every file" sh ./ima-rollout check
check key-rotation:runs-program "live 5" live-hello
check key-rotation:runs-rpm "imastream-live-5" rpm -q imastream-live
check key-rotation:runs-dnf "" dnf --version
check key-rotation:signed-by-new "$new" sh -c 'getfattr -e hex -n security.ima /usr/bin/live-hello /usr/bin/rpm 2>/dev/null | grep -c "=0x030204$0" | grep -x 2 >/dev/null && echo "$0"' "$new"
keep_send
JOB
job tamper <<'JOB'
. ./live-lib.sh
check tamper-refused:others-run "imastream-live-5" rpm -q imastream-live
live-hello >/dev/null 2>&1
rc=$?
cause=$(audit_cause /usr/bin/live-hello)
if [ $rc = 126 ] && [ "$cause" = invalid-signature ]; then
	report tamper-refused:refused PASS "exit 126, cause=$cause"
else
	report tamper-refused:refused FAIL "live-hello: exit $rc, cause=${cause:-none} (wanted 126, invalid-signature)"
fi
JOB
job measure <<'JOB'
. ./live-lib.sh
check tamper-refused:log-runs "live 5" live-hello
imastream policy keylime --root / --rpmdb --trust /etc/keys/imastream/ima.crt --output /run/policy.json
imastream attest check --policy /run/policy.json --log /sys/kernel/security/ima/ascii_runtime_measurements >/run/attest.out 2>&1
rc=$?
cat /run/attest.out
fails=$(grep -c ': FAIL: ' /run/attest.out)
if [ $rc = 1 ] && [ "$fails" = 1 ] && grep -q '^/usr/bin/live-hello: FAIL: ' /run/attest.out; then
	report tamper-refused:attest-fails PASS "$(grep ': FAIL: ' /run/attest.out)"
else
	report tamper-refused:attest-fails FAIL "exit $rc, $fails failures: $(grep ': FAIL: ' /run/attest.out | head -n 2)"
fi
keep_send
JOB

# ---------- per kernel ----------
mapfile -t kernels < <(kernel_list)
[ ${#kernels[@]} -gt 0 ] || skip "no kernel to boot"
fails=0 booted=0 kernel_index=0
for kernel in "${kernels[@]}"; do
	tag=$(kernel_tag "$kernel")
	kver=${kernel##*/vmlinuz-}
	: >"$tmp/results-$tag"
	make_initramfs "$kernel" "$tmp/initramfs-$tag" || error "cannot make the initramfs for $kernel"
	# Keys: RSA where the kernel has no ECDSA (Debian's 6.1), else ECDSA P-384.
	keyopt=(-newkey rsa:2048)
	kernel_has "$kernel" CONFIG_CRYPTO_ECDSA && keyopt=(-newkey ec -pkeyopt ec_paramgen_curve:P-384)
	(umask 077; openssl req -x509 "${keyopt[@]}" -nodes -sha256 -days 3650 \
		-subj "/CN=live $tag" -addext subjectKeyIdentifier=hash \
		-keyout "$tmp/ima.key" -out "$tmp/ima.crt" >/dev/null 2>&1) || error "openssl req failed"
	for j in setup live killed; do cp "$tmp"/pkgs/* "$tmp/job-$j/"; done
	cp "$tmp"/cutpkgs/*-0-1.noarch.rpm "$tmp/job-killed/" &&
		cp "$tmp"/cutpkgs/*.rpm "$tmp/rpm-stop.so" "$tmp/cut-point.so" "$kdir/cut-lib.sh" "$kdir/live-cut-lib.sh" "$tmp/job-powercut/" &&
		echo "${IMASTREAM_LIVE_SYNC:-}" >"$tmp/job-powercut/sync" || exit 99
	cp "$tmp/rpm-stop.so" "$tmp/job-live/" && cp "$tmp/rpm-stop.so" "$tmp/job-killed/" &&
		echo "${IMASTREAM_LIVE_BREAK:-}" >"$tmp/job-live/break" || exit 99
	cp "$tmp/ima.key" "$tmp/ima.crt" "$tmp/job-setup/" &&
		cp "$srcdir/docs/ima-policy-exec" "$tmp/job-setup/ima-policy" || exit 99
	for j in setup label live killed powercut rotate rotated tamper measure; do cp "$tmp/live-lib.sh" "$tmp/job-$j/"; done
	for j in live rotated measure; do
		if [ -n "$lists" ]; then touch "$tmp/job-$j/keep-lists"; else rm -f "$tmp/job-$j/keep-lists"; fi
	done
	(umask 077; openssl req -x509 "${keyopt[@]}" -nodes -sha256 -days 3650 \
		-subj "/CN=live $tag rotated" -addext subjectKeyIdentifier=hash \
		-keyout "$tmp/job-rotate/new.key" -out "$tmp/job-rotate/new.crt" >/dev/null 2>&1) ||
		error "openssl req failed"
	cp "$tmp/ima.crt" "$tmp/job-rotate/" && cp "$tmp/job-setup/ima-policy" "$tmp/job-rotate/" &&
		cp "$tmp/ima.crt" "$tmp/job-rotate/new.crt" "$tmp/job-rotated/" || exit 99
	disk=$tmp/disk-$tag.img
	cp --sparse=always "$img" "$disk" || error "cannot copy $img"
	echo "test_kernel_live: booting $kernel (${keyopt[*]})"
	booted=$((booted + 1))
	boot setup "" &&
		boot label "ima_appraise=fix evm=fix ima_template=ima-sig" &&
		keep_tree &&
		boot live "ima_appraise=enforce ima_template=ima-sig" &&
		boot killed "ima_appraise=enforce ima_template=ima-sig" &&
		power_cuts "ima_appraise=enforce ima_template=ima-sig" &&
		boot rotate "ima_appraise=fix evm=fix ima_template=ima-sig" &&
		boot rotated "ima_appraise=enforce ima_template=ima-sig" &&
		tamper_disk /usr/bin/live-hello &&
		boot tamper "ima_appraise=enforce ima_template=ima-sig" &&
		boot measure "ima_appraise=log ima_template=ima-sig"
	for s in rollout rpm-upgrade running-program-replaced plugin-upgraded dnf-upgrade kill-reboot-recover power-cut key-rotation attest tamper-refused; do
		stage "$s"
	done
	rm -f "$disk"
	kernel_index=$((kernel_index + 1))
done
echo "test_kernel_live: $booted kernel(s), $fails failed stage(s), $(($(date +%s) - t0)) s"
[ $fails = 0 ]
