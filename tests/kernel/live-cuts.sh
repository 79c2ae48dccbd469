# SPDX-License-Identifier: LGPL-2.1-or-later
# The points where test_kernel_live.sh cuts the power, for each kernel: "KIND CLASS:N"
# per line (live-cut-lib.sh's transactions, cut_point.c's classes), in the order the
# cuts are made. Counts are those of the test packages (cut.rpmspec): rpm -U writes its
# temp files in about 118 writes, labels them in about 30 security.* writes, renames 15
# objects and commits in about 128 database writes; imastream install writes 20 times,
# renames 18 objects (the record's included) and writes its state 5 times. A point
# that never comes fails the test, so these stay true.
# shellcheck shell=bash
# shellcheck disable=SC2154 # tmp, tag, cuts, kernel_index, cut_line: test_kernel_live.sh's

# cut_points short|long KERNEL_INDEX: the short set (make check: three per kernel, the
# two kernels covering every transaction between them, streaming, renames, the commit
# and right after) or the long one (every point, on every kernel).
cut_points() {
	# IMASTREAM_LIVE_CUT_POINTS="KIND CLASS:N,...": these points instead, on every kernel
	# (to run one point again, or to look at one case).
	if [ -n "${IMASTREAM_LIVE_CUT_POINTS:-}" ]; then
		echo "$IMASTREAM_LIVE_CUT_POINTS" | tr ',' '\n'
		return
	fi
	if [ "$1" = short ]; then
		if [ "$2" = 0 ]; then
			printf '%s\n' "rpm write:30" "install rename:3" "recover unlink:6"
		else
			printf '%s\n' "dnf db:10" "rpm after:1" "relabel xattr:12"
		fi
		return
	fi
	local p
	# rpm -U: streaming, labelling, renaming, removing, committing (about 110 database
	# writes in an upgrade of the cut package: 90 is late in the commit), done.
	for p in write:1 write:30 write:90 write:118 xattr:1 xattr:14 xattr:25 rename:1 \
		rename:7 rename:15 unlink:1 db:1 db:20 db:64 db:90 after:1; do
		echo "rpm $p"
	done
	for p in write:60 xattr:15 rename:8 unlink:1 db:10 db:100 after:1; do
		echo "dnf $p"
	done
	for p in write:1 write:10 write:20 xattr:1 xattr:20 rename:1 rename:9 rename:18 \
		unlink:1 db:1 db:5 after:1; do
		echo "install $p"
	done
	for p in xattr:1 xattr:12 xattr:25 after:1; do
		echo "relabel $p"
	done
	for p in unlink:1 unlink:6 unlink:12 after:1; do
		echo "recover $p"
	done
}

# power_cuts ARGS: the cut boots of one kernel (test_kernel_live.sh's $tag, $kernel_index,
# $cuts, boot), each booted with the kernel arguments ARGS: boot i judges what cut i-1
# left and makes it whole, then cuts transaction i (to version i of its package); a last
# boot judges the last cut. Prints "cuts N, boots failed N, wrong files not named N"
# and adds a power-cut:tally check. Returns 1 when a boot neither ended nor was cut.
power_cuts() {
	local args=$1 i prev="- - -" next kind point pts=() made=0 failed=0 unnamed=0 n rc=0
	mapfile -t pts < <(cut_points "$cuts" "$kernel_index")
	for ((i = 0; i <= ${#pts[@]}; i++)); do
		next="- - -"
		if [ "$i" -lt ${#pts[@]} ]; then
			read -r kind point <<<"${pts[$i]}"
			next="$kind $((i + 1)) $point"
		fi
		echo "$prev $next" >"$tmp/job-powercut/cut.plan" || return 1
		boot_job=powercut boot "cut$i" "$args"
		rc=$?
		# A boot after a cut that never reached the system's rc script: boot failed.
		if [ "$prev" != "- - -" ] && ! grep -q '^BOOTED' "$tmp/cut$i.results"; then
			failed=$((failed + 1))
		fi
		n=$(sed -n 's/^CUTSTAT .* unnamed \([0-9]*\):.*/\1/p' "$tmp/cut$i.results")
		unnamed=$((unnamed + ${n:-0}))
		grep '^CUTSTAT ' "$tmp/cut$i.results" | sed "s/^CUTSTAT /test_kernel_live: $tag cut: /"
		[ $rc = 0 ] || break
		if [ -n "$cut_line" ]; then
			made=$((made + 1))
			prev="$kind $((i + 1)) $point"
		else
			prev="- - -"
		fi
	done
	echo "test_kernel_live: $tag power cuts ($cuts set): cuts $made, boots failed $failed, wrong files not named $unnamed"
	if [ $failed = 0 ] && [ $unnamed = 0 ] && [ $made = ${#pts[@]} ]; then
		echo "CHECK power-cut:tally PASS cuts $made" >>"$tmp/results-$tag"
	else
		echo "CHECK power-cut:tally FAIL cuts $made of ${#pts[@]}, boots failed $failed, wrong files not named $unnamed" >>"$tmp/results-$tag"
	fi
	return $rc
}
