#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Upgrades remove what the old version had and the new one lacks, as rpm -U: shared files stay, modified %config becomes .rpmsave, symlinks are never followed, a kill is recovered to the same end.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }

work=$(mktemp -d /tmp/imastream-install-upgrade.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# drop_pkg VERSION: 1.0 has everything; 2.0 drops a file, a directory with a file in it,
# a symlink, a file shared with imsdrop-other, two %config files and a directory (esc).
# Both have 300 files in /opt/drop/many, so that the renames of an upgrade take time.
drop_pkg() {
	local v=$1 spec=$work/imsdrop-$1.spec
	cat >"$spec" <<SPEC
Name: imsdrop
Version: $v
Release: 1
Summary: imastream upgrade test package
License: MIT
BuildArch: noarch
%description
Files that version 2.0 drops.
%install
mkdir -p %{buildroot}/opt/drop/many %{buildroot}/etc/imsdrop
for f in \$(seq 300); do echo "$v \$f" > %{buildroot}/opt/drop/many/f\$f; done
echo "keep $v" > %{buildroot}/opt/drop/keep
%if "$v" == "1.0"
mkdir -p %{buildroot}/opt/drop/dropdir/sub %{buildroot}/opt/drop/esc
echo dropped > %{buildroot}/opt/drop/dropped
printf '#!/bin/sh\necho old signed tool\n' > %{buildroot}/opt/drop/dropdir/sub/tool
ln -s keep %{buildroot}/opt/drop/droplink
echo shared > %{buildroot}/opt/drop/shared
echo esc > %{buildroot}/opt/drop/esc/f
echo conf=1 > %{buildroot}/etc/imsdrop/changed.conf
echo conf=1 > %{buildroot}/etc/imsdrop/same.conf
%endif
%files
%dir /opt/drop
/opt/drop/many
/opt/drop/keep
%dir /etc/imsdrop
%if "$v" == "1.0"
/opt/drop/dropped
%attr(0755,root,root) /opt/drop/dropdir
/opt/drop/droplink
/opt/drop/shared
/opt/drop/esc
%config(noreplace) /etc/imsdrop/changed.conf
%config /etc/imsdrop/same.conf
%endif
SPEC
	rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
		"$spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
	echo "$work/top/RPMS/noarch/imsdrop-$v-1.noarch.rpm"
}
v1=$(drop_pkg 1.0)
v2=$(drop_pkg 2.0)
cat >"$work/imsdrop-other.spec" <<'SPEC'
Name: imsdrop-other
Version: 1.0
Release: 1
Summary: imastream upgrade test package sharing a file
License: MIT
BuildArch: noarch
%description
Shares /opt/drop/shared with imsdrop 1.0.
%install
mkdir -p %{buildroot}/opt/drop
echo shared > %{buildroot}/opt/drop/shared
%files
/opt/drop/shared
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
	"$work/imsdrop-other.spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; exit 99; }
other=$work/top/RPMS/noarch/imsdrop-other-1.0-1.noarch.rpm

inst() {
	local root=$1
	shift
	"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$@"
}
# verified ROOT CASE: verify --root passes and checked every recorded object.
verified() {
	"$IMASTREAM" verify --root "$1" >"$work/verify.out" 2>&1 ||
		fail "$2: verify --root: $(grep -Ev ': OK( \(|$)' "$work/verify.out" | head -3)"
	# (a path two records list is checked once)
	[ "$(grep -Ec ': OK( \(|$)' "$work/verify.out")" = "$(cat "$1"/var/lib/imastream/packages/*.record | awk '/^[fdlcbp] / { print $8 }' | sort -u | wc -l)" ] ||
		fail "$2: verify --root did not check every recorded object"
}
# state ROOT: the tree and the records (but their install order), for comparing two roots.
state() {
	list_tree "$1"
	cat "$1"/var/lib/imastream/packages/*.record | grep -v '^serial '
}
# setup ROOT: 1.0 and imsdrop-other installed, one %config file changed by the admin,
# esc replaced by a symlink to outside the root, a file of nobody's in dropdir/sub's parent.
outside=$work/outside
setup() {
	rm -rf "$1"
	make_root "$1"
	inst "$1" "$v1" || fail "installing imsdrop 1.0 failed"
	inst "$1" "$other" || fail "installing imsdrop-other (a shared identical file) failed"
	echo "conf=admin" >"$1/etc/imsdrop/changed.conf"
	mkdir -p "$outside"
	echo "outside, keep me" >"$outside/f"
	rm -r "$1/opt/drop/esc"
	ln -s "$outside" "$1/opt/drop/esc"
	# Fixed times: roots set up at different times compare equal.
	touch -d @1000000000 "$1/etc/imsdrop/changed.conf"
	touch -h -d @1000000000 "$1/opt/drop/esc"
}
check_upgraded() {
	local root=$1 case=$2
	for p in opt/drop/dropped opt/drop/dropdir opt/drop/droplink etc/imsdrop/same.conf etc/imsdrop/changed.conf; do
		[ ! -e "$root/$p" ] && [ ! -L "$root/$p" ] || fail "$case: /$p of 1.0 is still there"
	done
	[ "$(cat "$root/opt/drop/shared")" = shared ] || fail "$case: the file imsdrop-other shares was removed"
	[ "$(cat "$root/etc/imsdrop/changed.conf.rpmsave")" = conf=admin ] ||
		fail "$case: the modified %config file was not saved as .rpmsave"
	[ "$(cat "$outside/f")" = "outside, keep me" ] || fail "$case: a file outside the root was touched"
	[ -L "$root/opt/drop/esc" ] || fail "$case: the symlink in place of a dropped directory was removed"
	[ "$(cat "$root/opt/drop/keep")" = "keep 2.0" ] || fail "$case: keep is not 2.0's"
	grep -qx 'nevra imsdrop-2.0-1.noarch' "$root/var/lib/imastream/packages/imsdrop.record" ||
		fail "$case: the record is not 2.0's"
	grep -qE 'dropped|dropdir|droplink|same.conf|changed.conf|/esc' "$root/var/lib/imastream/packages/imsdrop.record" &&
		fail "$case: the record still lists files of 1.0"
	grep -q ' /opt/drop/shared$' "$root/var/lib/imastream/packages/imsdrop-other.record" ||
		fail "$case: the shared file left imsdrop-other's record"
	[ ! -e "$root/var/lib/imastream/journal" ] || fail "$case: the journal stayed"
	no_leftovers "$root" "$case"
	verified "$root" "$case"
}

echo "== the record marks %config files, in format 2"
root=$work/root
setup "$root"
grep -qx 'f 0644 0 0 7 sha256:[0-9a-f]* ima+config /etc/imsdrop/changed.conf' "$root/var/lib/imastream/packages/imsdrop.record" ||
	{ grep conf "$root/var/lib/imastream/packages/imsdrop.record"; fail "the record does not mark %config"; }
# (in format 2: an imastream that reads only format 1 refuses it by its first line)
[ "$(head -1 "$root/var/lib/imastream/packages/imsdrop.record")" = "imastream-record 2" ] ||
	fail "a record with %config files is not in format 2: $(head -1 "$root/var/lib/imastream/packages/imsdrop.record")"
[ "$(head -1 "$root/var/lib/imastream/packages/imsdrop-other.record")" = "imastream-record 1" ] ||
	fail "a record without %config files is not in format 1"

echo "== an upgrade removes what 2.0 lacks; shared, symlinked and modified %config files are kept"
inst "$root" "$v2" 2>"$work/upgrade.err" || fail "the upgrade failed: $(cat "$work/upgrade.err")"
cat "$work/upgrade.err"
[ "$(grep -c 'saved as' "$work/upgrade.err")" = 1 ] &&
	grep -q "imsdrop-2.0-1.noarch: $root/etc/imsdrop/changed.conf saved as $root/etc/imsdrop/changed.conf.rpmsave" "$work/upgrade.err" ||
	fail "no one line saying the %config file was saved: $(cat "$work/upgrade.err")"
grep -q '/opt/drop/esc/f: not removed .*symlink' "$work/upgrade.err" ||
	fail "the file behind a symlinked directory was not reported: $(cat "$work/upgrade.err")"
check_upgraded "$root" "upgrade"
reference=$(state "$root")

echo "== reinstalling 2.0 removes nothing more"
inst "$root" "$v2" 2>"$work/re.err" || fail "the reinstall failed: $(cat "$work/re.err")"
[ ! -s "$work/re.err" ] || fail "the reinstall said: $(cat "$work/re.err")"
[ "$(state "$root")" = "$reference" ] || fail "the reinstall changed the root"

echo "== the chain sees each removal as an erase (the record plugin's log)"
root2=$work/root2
setup "$root2"
rm "$root2/opt/drop/esc" && mkdir "$root2/opt/drop/esc" && echo esc >"$root2/opt/drop/esc/f"
inst "$root2" --plugins ima,record -o record_log="$work/erase.log" "$v2" 2>"$work/upgrade.err" ||
	fail "the upgrade failed: $(cat "$work/upgrade.err")"
[ ! -e "$root2/opt/drop/esc" ] || fail "the dropped directory esc (not a symlink this time) is still there"
[ "$(cat "$root2/opt/drop/shared")" = shared ] || fail "the shared file went"
for p in /opt/drop/dropped /opt/drop/droplink /opt/drop/dropdir/sub/tool /opt/drop/dropdir/sub /opt/drop/dropdir \
	 /opt/drop/esc/f /opt/drop/esc /etc/imsdrop/same.conf; do
	grep -q "^$p imsdrop-2.0-1.noarch erased " "$work/erase.log" || fail "the chain did not see the erase of $p"
done
grep -E '^/opt/drop/shared |^/etc/imsdrop/changed.conf ' "$work/erase.log" &&
	fail "the chain was told of an erase of a kept file"
[ "$(grep -c ' erased ' "$work/erase.log")" = 8 ] || fail "not 8 erases: $(grep erased "$work/erase.log")"

echo "== kill -9 in the renames of an upgrade, then imastream recover: the same end state"
landed=0
journal=var/lib/imastream/journal
for i in 1 2 3; do
	root3=$work/root3
	setup "$root3"
	kill_in_renames "$root3" "$work/killed.err" "$v2" ||
		fail "kill $i: no journal after the stop before rename $killed_at: $(cat "$work/killed.err")"
	landed=$((landed + 1))
	grep -q '^remove /opt/drop dropped$' "$root3/$journal" && grep -q '^rmdir /opt/drop dropdir$' "$root3/$journal" &&
		grep -q '^rpmsave /etc/imsdrop changed.conf$' "$root3/$journal" ||
		fail "kill $i: the journal lacks the removals: $(grep -v '^rename' "$root3/$journal")"
	[ -e "$root3/opt/drop/dropped" ] || fail "kill $i: a removal came before the renames were done"
	# A second copy, where some removals were done before the kill.
	rm -rf "$work/root4"
	cp -a "$root3" "$work/root4"
	rm "$work/root4/opt/drop/dropped" "$work/root4/opt/drop/dropdir/sub/tool"
	mv "$work/root4/etc/imsdrop/changed.conf" "$work/root4/etc/imsdrop/changed.conf.rpmsave"
	for r in "$root3" "$work/root4"; do
		recover_completes "$r" imsdrop-2.0-1.noarch "$v2" "$work/recover.err" "kill $i"
		check_upgraded "$r" "kill $i, recovered"
		[ "$(state "$r")" = "$reference" ] || {
			diff <(echo "$reference") <(state "$r") | head -10
			fail "kill $i: recovery's end state differs from an uninterrupted upgrade's"
		}
	done
	echo "kill $i, before rename $killed_at: recovered to the same end state (and with some removals done before)"
done

echo "== a journal whose removal leads out of the root is refused in one line, nothing touched"
root5=$work/root5
setup "$root5"
true &
dead=$!
wait
echo "outside" >"$outside/passwd"
journal_with() {
	local body
	body=$(printf 'imastream-journal 1\npackage evil\npid %d\n%s\n' "$dead" "$1")
	printf '%s\nsha256 %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$root5/$journal"
}
before=$(state "$root5")
for step in "remove /opt/drop/esc passwd" "rpmsave /opt/drop/esc passwd" "rmdir /opt/drop/esc f" \
	    "remove /../../outside passwd" "remove /opt/drop/.. passwd" "rmdir / .." \
	    "remove /etc %2F$(printf %s "$outside" | sed 's,/,%2F,g')%2Fpasswd"; do
	journal_with "$step"
	rc=0
	"$IMASTREAM" recover --root "$root5" 2>"$work/evil.err" || rc=$?
	[ $rc != 0 ] || fail "recover took a journal with '$step'"
	[ "$(wc -l <"$work/evil.err")" = 1 ] || fail "'$step': not one line: $(cat "$work/evil.err")"
	grep -qE "corrupt intent journal|cannot be reached beneath the root" "$work/evil.err" ||
		fail "'$step': $(cat "$work/evil.err")"
	[ "$(cat "$outside/passwd")" = outside ] && [ ! -e "$outside/passwd.rpmsave" ] && [ -d "$outside" ] ||
		fail "'$step' changed something outside the root"
	[ -e "$root5/$journal" ] || fail "'$step': the refused journal was removed"
	echo "refused: $step: $(cut -c1-150 "$work/evil.err")"
done
rm "$root5/$journal"
[ "$(state "$root5")" = "$before" ] || fail "a refused journal changed the root"
# rmdir on the symlink itself is taken and does nothing: only an empty directory goes.
journal_with "rmdir /opt/drop esc"
"$IMASTREAM" recover --root "$root5" 2>"$work/evil.err" || fail "rmdir of a symlink: $(cat "$work/evil.err")"
[ -L "$root5/opt/drop/esc" ] && [ "$(cat "$outside/f")" = "outside, keep me" ] ||
	fail "rmdir of a symlink removed it or what it points to"

echo "PASS: upgrades remove dropped files, directories and symlinks; shared and symlinked paths kept; .rpmsave; $landed kills recovered to the same end; hostile removals refused"
