#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest's half of test_kernel_live.sh's power cuts: one boot judges what the last
# cut left and makes the system whole, then starts the next transaction with
# cut_point.c preloaded, which stops it at the chosen point and tells the host (the
# third serial port) to kill qemu. Sourced after live-lib.sh by each cut boot's job.
#
# Transactions (KIND), on the package imastream-cut (rpm's database) or imastream-cutinst
# (imastream install's record), each to version VER:
#   rpm      rpm -U with the plugin
#   dnf      dnf upgrade from a createrepo_c repository, with the plugin
#   install  imastream install --root /
#   relabel  imastream relabel of imastream-cut, after rpm -U --noplugins
#   recover  imastream recover --root / --rpmdb of an rpm -U killed after one rename
# POINT is cut_point.c's CLASS:N, or "after:1" (the transaction ended, nothing synced).

export CUT_PORT=/dev/ttyS2
stty -F "$CUT_PORT" raw -echo 2>/dev/null
cert=/etc/keys/imastream/ima.crt
# evmctl reads DER certificates: the one ima-rollout setup put where the kernel's come from.
for cert_der in /etc/keys/ima/*.der; do break; done
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

# dump_wrong: reads rpm --dump lines (PATH SIZE MTIME DIGEST MODE ...) and prints each
# regular file whose content is not the digest's (sha256sum), whose security.ima does not
# describe that content (a signature evmctl does not verify with the certificate, a
# sha256 digest that is not the content's, none) or that has no security.evm: checked
# without imastream.
dump_wrong() {
	awk '$5 ~ /^0100/ { print $1, $4, $2 }' | sort >/run/dump.want
	cut -d' ' -f1 /run/dump.want >/run/dump.paths
	# Labelled files at their final names shorter than their package says: content that
	# never reached the disk, under a label that describes it (counted apart: /run/short).
	xargs -r stat -c '%n %s' </run/dump.paths 2>/dev/null |
		awk 'NR == FNR { size[$1] = $3; next } $2 < size[$1] { print $1 }' /run/dump.want - |
		xargs -r getfattr --absolute-names -n security.ima 2>/dev/null | sed -n 's/^# file: //p' >>/run/short
	xargs -r sha256sum </run/dump.paths 2>/dev/null | awk '{ print $2, $1 }' | sort >/run/dump.have
	xargs -r getfattr --absolute-names -e hex -d -m '^security\.(ima|evm)$' </run/dump.paths 2>/dev/null |
		awk '/^# file: / { f = substr($0, 9) } /^security\./ { split($0, kv, "="); print f, kv[1], substr(kv[2], 3) }' |
		sort >/run/dump.labels
	awk '$2 == "security.ima" && $3 ~ /^03/ { print $1 }' /run/dump.labels | xargs -r evmctl ima_verify --key "$cert_der" 2>&1 |
		sed -n 's/: verification is OK$//p' | sort >/run/dump.sigok
	awk -v have=/run/dump.have -v labels=/run/dump.labels -v sigok=/run/dump.sigok '
		BEGIN {
			while ((getline l < have) > 0) { split(l, a, " "); dig[a[1]] = a[2] }
			while ((getline l < labels) > 0) { split(l, a, " "); x[a[1], a[2]] = a[3] }
			while ((getline l < sigok) > 0) ok[l] = 1
		}
		{
			p = $1; ima = x[p, "security.ima"]
			if (dig[p] != $2) print p
			else if (x[p, "security.evm"] == "") print p
			else if (ima ~ /^03/ && !(p in ok)) print p
			else if (ima !~ /^03/ && ima != "0404" dig[p]) print p
		}' /run/dump.want
}

# cut_wrong: every file that is not what its owner says, found without imastream: rpm's
# database (digests of every package's files), imastream install's record (its nevra,
# then that package's digests), signed files below the test packages' folders that
# neither owns, labelled temp files.
cut_wrong() {
	: >/run/short
	{
		rpm -qa --dump | dump_wrong
		nevra=$(sed -n 's/^nevra //p' /var/lib/imastream/packages/imastream-cutinst.record 2>/dev/null)
		ver=$(echo "$nevra" | sed -n 's/^imastream-cutinst-\([0-9]*\)-.*/\1/p')
		[ -z "$ver" ] || rpm -qp --dump "$(cut_pkg install "$ver")" 2>/dev/null | dump_wrong
		{
			rpm -qa --dump | cut -d' ' -f1
			[ -z "$ver" ] || rpm -qp --dump "$(cut_pkg install "$ver")" 2>/dev/null | cut -d' ' -f1
		} | sort -u >/run/owned
		{
			find /usr/lib/imastream-cut /usr/lib/imastream-cutinst -xdev -type f 2>/dev/null | sort |
				comm -23 - /run/owned
			find /usr /etc -xdev -type f \( -name '*;*' -o -name '.imastream-tmp-*' \)
		} | xargs -r getfattr --absolute-names -n security.ima 2>/dev/null | sed -n 's/^# file: //p'
	} | sort -u
}

# cut_named: the files imastream verify names, against rpm's database and against the
# install record.
cut_named() {
	{
		imastream verify --root / --rpmdb --evm require --trust /etc/keys/ima
		imastream verify --root / --evm require --trust /etc/keys/ima
	} 2>&1 | tee /run/verify.out | grep ': FAIL: ' | sed 's/: FAIL: .*//' | sort -u
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

# cut_after KIND VER POINT: the system booted after the cut; what is wrong is named,
# recover and the transaction again make it whole.
cut_after() {
	kind=$1 ver=$2 point=$3
	report "power-cut:booted" PASS "after $kind $ver $point"
	cut_wrong >/run/wrong
	cut_named >/run/named
	comm -23 /run/wrong /run/named >/run/unnamed
	echo "CUTSTAT $kind $ver $point wrong $(wc -l </run/wrong) short $(sort -u /run/short | wc -l) unnamed $(wc -l </run/unnamed):" \
		"$(tr '\n' ' ' </run/unnamed) wrong: $(tr '\n' ' ' </run/wrong | cut -c1-300)" >&3
	if [ -s /run/unnamed ]; then
		report "power-cut:wrong-named" FAIL "$kind $point: not named: $(tr '\n' ' ' </run/unnamed)"
	else
		report "power-cut:wrong-named" PASS "$kind $point: $(wc -l </run/wrong) wrong, all named"
	fi
	# A cut between the renames and the database commit leaves the new version's signed
	# files unowned, and EVM keeps their portable signatures: recover says so and exits 1
	# (the transaction again owns them); any other failure fails the check.
	# --rpmdb: install's journal and temp files first, then rpm's leftovers; --trust: an
	# rpm temp file of a path new in the cut version (beside no package's file) is rpm's
	# only if its signature verifies, else it is kept (and EVM keeps its labels).
	imastream recover --root / --rpmdb --trust /etc/keys/ima >/run/recover.out 2>&1
	rc=$?
	cat /run/recover.out
	if [ $rc = 0 ] || recover_accepted </run/recover.out; then
		report "power-cut:recover" PASS "exit $rc: $(grep -c 'the kernel refuses' /run/recover.out) kept labelled by the kernel: $(tail -n 1 /run/recover.out)"
	else
		report "power-cut:recover" FAIL "exit $rc: $(tail -n 3 /run/recover.out)"
	fi
	check "power-cut:rerun" "" cut_rerun "$kind" "$ver"
	check "power-cut:verify" "" sh -c 'imastream verify --root / --rpmdb --evm require --trust /etc/keys/ima >/dev/null && imastream verify --root / --evm require --trust /etc/keys/ima'
	if cut_wrong >/run/wrong.after && [ ! -s /run/wrong.after ]; then
		report "power-cut:nothing-wrong" PASS "$kind $point"
	else
		report "power-cut:nothing-wrong" FAIL "$kind $point: still wrong: $(tr '\n' ' ' </run/wrong.after)"
	fi
	check "power-cut:no-temp-files" "" sh -c '! find /usr /etc -xdev -type f \( -name "*;*" -o -name ".imastream-tmp-*" \) | grep .'
	case $kind in
	install) check "power-cut:runs" "imastream-cutinst $ver" imastream-cutinst ;;
	*) check "power-cut:runs" "imastream-cut $ver" imastream-cut ;;
	esac
}
