#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest's half of a power cut, shared by test_kernel_live.sh (live-cut-lib.sh) and
# test_kernel_lifecycle.sh: a transaction started with cut_point.c preloaded, which
# stops it at the chosen point and tells the host (the third serial port) to kill qemu;
# after the reboot, the recovery docs/SETUP.md gives and the transaction again. Sourced
# after a helper that defines report (guest-lib.sh); the job's files are in /run/job.
#
# Transactions (KIND), on the package imastream-cut (rpm's database) or imastream-cutinst
# (imastream install's record), each to version VER:
#   rpm      rpm -U with the plugin
#   dnf      dnf upgrade from a createrepo_c repository, with the plugin
#   install  imastream install --root /
#   relabel  imastream relabel of imastream-cut, after rpm -U --noplugins
#   recover  imastream recover --root / --rpmdb of an rpm -U killed after one rename
#            (needs the live test's rpm_stop)
# POINT is cut_point.c's CLASS:N, or "after:1" (the transaction ended, nothing synced).

export CUT_PORT=/dev/ttyS2
stty -F "$CUT_PORT" raw -echo 2>/dev/null
cert=/etc/keys/imastream/ima.crt
sign="--mode sign --evm portable --key /etc/keys/imastream/ima.key --cert $cert"
# IMASTREAM_LIVE_SYNC=none (the host's ./sync): rpm's plugin and imastream install leave
# file data to the kernel, to show what the cuts then leave.
if [ "$(cat /run/job/sync 2>/dev/null)" = none ]; then
	echo '%_imastream_sync none' >/etc/rpm/macros.imastream-sync
	sign="$sign --sync none"
else
	rm -f /etc/rpm/macros.imastream-sync
fi

cut_pkg() { # KIND VER: the package file the transaction installs
	case $1 in
	install) echo "/run/job/imastream-cutinst-$2-1.noarch.rpm" ;;
	*) echo "/run/job/imastream-cut-$2-1.noarch.rpm" ;;
	esac
}

# --refresh: dnf keeps the repository's metadata on the disk across boots, and would
# not see the next version in the same repository (the long set's second dnf cut).
dnf_cut() {
	dnf -y -q --refresh --repofrompath=cut,/run/repo --repo=cut --setopt=cut.gpgcheck=0 "$@"
}

# cut_run KIND VER: the transaction itself (what the preload is put on).
# shellcheck disable=SC2086 # $sign is options
cut_run() {
	case $1 in
	rpm) rpm -U "$(cut_pkg rpm "$2")" ;;
	dnf) dnf_cut upgrade imastream-cut ;;
	install) imastream install --root / $sign --allow-unsigned --quiet "$(cut_pkg install "$2")" ;;
	relabel) imastream relabel --root / $sign --quiet imastream-cut ;;
	recover) imastream recover --root / --rpmdb ;;
	esac
}

# cut_prepare KIND VER: what must be there before the transaction.
cut_prepare() {
	case $1 in
	dnf) rm -rf /run/repo && mkdir -p /run/repo && cp "$(cut_pkg dnf "$2")" /run/repo/ &&
		createrepo_c -q /run/repo ;;
	relabel) rpm -U --noplugins "$(cut_pkg rpm "$2")" ;;
	recover)
		rpm_stop power-cut:prepare-stopped 1 "$(cut_pkg rpm "$2")"
		[ -n "$stopped_pid" ] || return 1
		kill -9 "$stopped_pid" && cat /run/stop.fifo >/dev/null && wait ;;
	esac
}

# recover_accepted: recover's output (stdin) says it failed only where the kernel keeps
# labels EVM protects, and what mends that (the transaction that left them, again).
recover_accepted() {
	local out
	out=$(cat)
	echo "$out" | grep -q 'cannot be unlabelled: the kernel refuses' &&
		! echo "$out" | grep ': cannot be ' | grep -vq 'the kernel refuses .*run the transaction that left it again'
}

# cut_start KIND VER POINT: runs the transaction until the point, where the host kills
# the machine; returns only when the point was never reached (a failed check).
cut_start() {
	kind=$1 ver=$2 point=$3
	if ! out=$(cut_prepare "$kind" "$ver" 2>&1); then
		report "power-cut:prepare" FAIL "$kind $ver: $out"
		return
	fi
	sync # what came before is on the disk; only the transaction is cut
	echo "CUTTING $kind $ver $point" >&3
	if [ "$point" = after:1 ]; then
		out=$(cut_run "$kind" "$ver" 2>&1)
		rc=$?
		# recover ends as the judging recover may: exit 1 when EVM keeps the labels of a
		# temp file of a path new in the killed version (see recover_accepted).
		if [ $rc != 0 ] && ! { [ "$kind" = recover ] && echo "$out" | recover_accepted; }; then
			report "power-cut:run" FAIL "$kind $ver: $out"
			return
		fi
		echo "CUT after:1 $kind ended" >"$CUT_PORT"
		mkfifo /run/never && read -r _ </run/never # the host kills the machine
	fi
	out=$(CUT_AT=$point CUT_COUNTS=1 LD_PRELOAD=/run/job/cut-point.so cut_run "$kind" "$ver" 2>&1)
	report "power-cut:point-reached" FAIL "$kind $ver: $point never came, exit $?: $out"
}

# cut_rerun KIND VER: the transaction again, to its end.
cut_rerun() {
	case $1 in
	rpm | recover) rpm -U --replacepkgs "$(cut_pkg rpm "$2")" ;;
	# The repository was on tmpfs: made again.
	dnf) cut_prepare dnf "$2" || return 1
		if rpm -q "imastream-cut-$2" >/dev/null; then dnf_cut reinstall imastream-cut; else dnf_cut upgrade imastream-cut; fi ;;
	*) cut_run "$1" "$2" ;;
	esac
}

# cut_recover: what docs/SETUP.md has done after a power cut, before the transaction
# again. --rpmdb: install's journal and temp files first, then rpm's leftovers; --trust:
# an rpm temp file of a path new in the cut version (beside no package's file) is rpm's
# only if its signature verifies, else it is kept (and EVM keeps its labels). Its output
# goes to /run/recover.out; returns 0 when it succeeded or failed only as
# recover_accepted allows.
cut_recover() {
	imastream recover --root / --rpmdb --trust /etc/keys/ima >/run/recover.out 2>&1
	recover_rc=$?
	[ $recover_rc = 0 ] || recover_accepted </run/recover.out
}
