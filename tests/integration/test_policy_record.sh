#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The record plugin under stock rpm: one line per installed file, whose paths are what
# rpm -ql lists (ghosts aside), whose digests are the installed bytes' SHA-256, whose
# signer and domain are the verifying key's, and whose labels are what selinux set.
set -u
. "$top_srcdir/tests/integration/policy-lib.sh"
pol_setup
need perl
need sha256sum

vendor=$(pol_key vendor)
signed=$(pol_build polrec --define "phostile 1" --define "pextra /etc/polrec.conf")
pol_sign "$signed" vendor
unsigned=$(pol_build polplain)
tricky=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
printf '/opt/poltest(/.*)?\tsystem_u:object_r:usr_t:s0\n' >"$T/fc"

root="$T/root"
new_root "$root"
log="$T/record.log"
irpm "$root" -v --define "_imastream_plugins selinux,record" \
	--define "_imastream_file_contexts $T/fc" --define "_imastream_record_log $log" \
	--define "_imastream_record_syslog none" \
	--define "_imastream_trust_domains vendor=100:$T/vendor.asc" \
	-i "$signed" "$unsigned" "$tricky" >"$T/out" || fail "rpm -i with the record plugin failed"
# rpm prints INFO messages on stdout.
grep -q "record: transaction on $root/* done: .* files of 3 packages installed, 0 files of 0 packages erased, recorded in $log" \
	"$T/out" || fail "no transaction summary"

# Every line has six fields, no field is empty.
awk 'NF != 6 { print "bad line " NR ": " $0; bad = 1 } END { exit bad }' "$log" ||
	fail "malformed record lines"

decode() { perl -pe 's/%([0-9A-F]{2})/chr(hex($1))/ge'; }

# Paths: exactly the packages' files minus %ghost ones (never written).
rpm --root "$root" --dbpath /var/lib/rpm -q --qf '[%{FILEFLAGS:fflags}\t%{FILENAMES}\n]' \
	polrec polplain imstest 2>/dev/null | awk -F '\t' '$1 !~ /g/ { print $2 }' | sort >"$T/want"
cut -d' ' -f1 "$log" | decode | sort >"$T/got"
diff -u "$T/want" "$T/got" || fail "recorded paths differ from rpm -ql"
grep -q '^/opt/poltest/polrec/names/with%20space ' "$log" || fail "blank not escaped"
grep -q '^/opt/poltest/polrec/names/per%25cent=and,comma ' "$log" || fail "'%' not escaped"
grep -q '^/opt/poltest/polrec/names/caf%C3%A9 ' "$log" || fail "UTF-8 not escaped"

# Digests: each regular file's line carries sha256 of the installed bytes.
n=0
while read -r path nevra digest key domain labels; do
	file="$root$(printf '%s\n' "$path" | decode)"
	if [ -f "$file" ] && [ ! -L "$file" ]; then
		want="sha256:$(sha256sum "$file" | cut -d' ' -f1)"
		[ "$digest" = "$want" ] || fail "$path: recorded $digest, file has $want"
		n=$((n + 1))
	else
		[ "$digest" = - ] || fail "$path: a non-regular file with a digest"
	fi
	case $nevra in
	polrec-1-1.noarch)
		[ "$key" = "$vendor" ] && [ "$domain" = vendor ] ||
			fail "$path: signer \"$key\" domain \"$domain\", expected $vendor vendor" ;;
	*)
		[ "$key" = - ] && [ "$domain" = - ] || fail "$path: unsigned package with signer $key" ;;
	esac
	case $path in
	/opt/poltest/*)
		[ "$labels" = "selinux=system_u:object_r:usr_t:s0" ] ||
			fail "$path: labels \"$labels\"" ;;
	*)
		[ "$labels" = - ] || fail "$path: labels \"$labels\" outside the file_contexts" ;;
	esac
done <"$log"
[ "$n" -ge 8 ] || fail "only $n regular files checked"
grep -q ' imstest-1.0-1.noarch ' "$log" || fail "no NEVRA field"

# An upgrade that drops a file: the new package's files are recorded as installed, the
# dropped one as erased, with the old package and its signer (from the rpm database).
v2=$(pol_build polrec --define "pversion 2" --define "phostile 1")
pol_sign "$v2" vendor
start=$(($(wc -l <"$log") + 1))
irpm "$root" -v --define "_imastream_plugins record" --define "_imastream_record_log $log" \
	--define "_imastream_record_syslog none" \
	--define "_imastream_trust_domains vendor=100:$T/vendor.asc" -U "$v2" >"$T/out" ||
	fail "rpm -U with the record plugin failed"
tail -n "+$start" "$log" >"$T/new"
grep ' erased ' "$T/new" >"$T/erased" || true
[ "$(cat "$T/erased")" = "/etc/polrec.conf polrec-1-1.noarch erased $vendor vendor -" ] ||
	fail "upgrade: erased lines: $(cat "$T/erased")"
n2=$(rpm --root "$root" --dbpath /var/lib/rpm -q --qf '[%{FILENAMES}\n]' polrec | wc -l)
[ "$(grep -c " polrec-2-1.noarch sha256:\| polrec-2-1.noarch - $vendor vendor" "$T/new")" = "$n2" ] ||
	fail "upgrade: not every file of polrec-2 recorded: $(cat "$T/new")"
grep -q "done: $n2 files of 1 packages installed, 1 files of 1 packages erased, recorded in $log" \
	"$T/out" || fail "upgrade: no or wrong summary: $(cat "$T/out")"

# rpm -e: one "erased" line per file that is gone, none for a directory still holding an
# unpackaged file, none for a %ghost.
echo stray >"$root/opt/poltest/polrec/names/stray"
rpm --root "$root" --dbpath /var/lib/rpm -q --qf '[%{FILEFLAGS:fflags}\t%{FILENAMES}\n]' \
	polrec imstest 2>/dev/null | awk -F '\t' '$1 !~ /g/ { print $2 }' | sort -u >"$T/owned"
start=$(($(wc -l <"$log") + 1))
irpm "$root" -v --define "_imastream_plugins record" --define "_imastream_record_log $log" \
	--define "_imastream_record_syslog none" -e polrec imstest >"$T/out" ||
	fail "rpm -e with the record plugin failed"
tail -n "+$start" "$log" >"$T/new"
awk '$3 != "erased" || NF != 6 || $6 != "-" { print "bad erase line: " $0; bad = 1 } END { exit bad }' \
	"$T/new" || fail "malformed erase lines"
while read -r p; do [ -e "$root$p" ] || [ -L "$root$p" ] || echo "$p"; done <"$T/owned" | sort >"$T/want"
cut -d' ' -f1 "$T/new" | decode | sort >"$T/got"
diff -u "$T/want" "$T/got" || fail "erased paths differ from the owned files now gone"
grep -q -x '/opt/poltest/polrec/data polrec-2-1.noarch erased - - -' "$T/new" ||
	fail "no erase line for polrec's data"
grep -q -F ' imstest-1.0-1.noarch erased - - -' "$T/new" || fail "no erase line for imstest"
[ -d "$root/opt/poltest/polrec/names" ] && ! grep -q '^/opt/poltest/polrec/names ' "$T/new" ||
	fail "a directory still there was recorded as erased"
ne=$(wc -l <"$T/new")
grep -q "done: 0 files of 0 packages installed, $ne files of 2 packages erased, recorded in $log" \
	"$T/out" || fail "erase: no or wrong summary: $(cat "$T/out")"
echo "ok: upgrade and erase recorded ($ne erased files)"

# A failed transaction (the package is already installed) appends nothing.
before=$(wc -l <"$log")
irpm "$root" --define "_imastream_plugins record" --define "_imastream_record_log $log" \
	-i "$unsigned" && fail "a second install of the same package succeeded"
[ "$(wc -l <"$log")" = "$before" ] || fail "a refused transaction appended records"

# Bad settings fail at init, in one line.
irpm "$root" --define "_imastream_plugins record" --define "_imastream_record_syslog nosuch" \
	--define "_imastream_record_log $log" -i "$unsigned" && fail "bad facility accepted"
grep -q 'record_syslog "nosuch" is not a syslog facility' "$T/rpm.stderr" || fail "no message"
irpm "$root" --define "_imastream_plugins record" -i "$unsigned" && fail "no log accepted"
grep -q 'record: no record_log file configured' "$T/rpm.stderr" || fail "no message"
echo "ok: $(wc -l <"$log") records match rpm -ql and sha256sum ($n regular files)"
