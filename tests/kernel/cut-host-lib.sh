# SPDX-License-Identifier: LGPL-2.1-or-later
# The host's half of a power cut, shared by test_kernel_live.sh and test_kernel_lifecycle.sh:
# qemu run with a third serial port the guest's cut_point.c speaks on, killed the moment
# a cut is asked for. Sourced by bash.
# shellcheck shell=bash

# qemu_cuttable DIR LOG QEMU-COMMAND...: runs QEMU-COMMAND (its output to LOG) with
# "-pidfile DIR/qemu.pid -serial pipe:DIR/cut" added, the guest's third serial port.
# When a line "CUT ..." comes on it, qemu is killed at once (SIGKILL: what the guest had
# not written to its disk is lost; with cache=writeback what it had written is kept, as a
# disk with a write cache that was flushed). Sets cut_line to the line's rest (empty: no
# cut) and qemu_rc to the command's exit status.
qemu_cuttable() {
	local dir=$1 log=$2 line cfd sub
	shift 2
	cut_line="" qemu_rc=""
	rm -f "$dir/cut.in" "$dir/cut.out" "$dir/qemu.pid" && mkfifo "$dir/cut.in" "$dir/cut.out" || return 1
	# Held open read-write, so that neither qemu nor this shell blocks in open.
	exec {cfd}<>"$dir/cut.out"
	(
		"$@" -pidfile "$dir/qemu.pid" -serial "pipe:$dir/cut" </dev/null >"$log" 2>&1
		echo "EXIT $?" >"$dir/cut.out"
	) 2>/dev/null & # (no "Killed" line from this shell: a cut is no error)
	sub=$!
	while read -r -u "$cfd" line; do
		line=${line%$'\r'}
		case $line in
		CUT\ *)
			[ -n "$cut_line" ] || { cut_line=${line#CUT }; kill -KILL "$(cat "$dir/qemu.pid")"; } ;;
		EXIT\ *) qemu_rc=${line#EXIT }; break ;;
		esac
	done
	exec {cfd}<&-
	wait "$sub"
	return 0
}
