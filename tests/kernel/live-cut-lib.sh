#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The live test's judging of its power cuts (test_kernel_live.sh): one boot judges what
# the last cut left, every wrong file named, makes the system whole (cut-lib.sh's
# recovery), then starts the next cut (cut-lib.sh). Sourced after live-lib.sh by each
# cut boot's job.
. ./cut-lib.sh
# evmctl reads DER certificates: the one ima-rollout setup put where the kernel's come from.
for cert_der in /etc/keys/ima/*.der; do break; done

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
	# (cut_recover, cut-lib.sh)
	if cut_recover; then
		cat /run/recover.out
		report "power-cut:recover" PASS "exit $recover_rc: $(grep -c 'the kernel refuses' /run/recover.out) kept labelled by the kernel: $(tail -n 1 /run/recover.out)"
	else
		cat /run/recover.out
		report "power-cut:recover" FAIL "exit $recover_rc: $(tail -n 3 /run/recover.out)"
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
