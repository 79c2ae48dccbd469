# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the installer tests: preconditions, test packages built with rpmbuild,
# a tree listing that two installs can be compared by, and a kill during the renames.

# skip REASON: exit 77 with the reason, the automake way.
skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

install_preconditions() {
	[ "$(id -u)" = 0 ] || skip "needs root (chown, capabilities, rpm --root)"
	command -v rpmbuild >/dev/null || skip "rpmbuild not installed"
	command -v rpm >/dev/null || skip "rpm not installed"
	INSTALL_RPM=$top_builddir/installer/examples/install-rpm
	[ -x "$INSTALL_RPM" ] || { echo "ERROR: $INSTALL_RPM not built"; exit 99; }
	# Run a libtool wrapper's real binary where it exists, so sanitizers see our code.
	export INSTALL_RPM
}

# build_pkg WORK NAME PAYLOAD-MACRO: builds a package with every kind of entry and prints
# its path.  The files live under /opt/NAME, so packages of several names coexist.
build_pkg() {
	local work=$1 name=$2 payload=$3 spec
	spec=$work/$name.spec
	cat >"$spec" <<SPEC
Name: $name
Version: 1.0
Release: 1
Summary: imastream installer test package
License: MIT
BuildArch: noarch
%description
Every kind of entry the installer handles.
%install
d=%{buildroot}/opt/$name
mkdir -p \$d/sub/deeper \$d/emptydir %{buildroot}/etc/$name
for n in 1 100 4095 4096 4097 65536 65537 262145 1048579; do
	head -c \$n /dev/urandom > \$d/sub/size-\$n
done
head -c 3145728 /dev/zero > \$d/zeros-3m
: > \$d/empty
printf '#!/bin/sh\necho hi\n' > \$d/run.sh
cp \$d/run.sh \$d/setuid
cp \$d/run.sh \$d/capbin
ln -s sub/size-100 \$d/link-rel
ln -s /etc/$name/main.conf \$d/link-abs
ln -s ../../does/not/exist \$d/sub/deeper/dangling
# One inode, three modes and owners: rpm leaves the last link's (sub/deeper/hl-c: 0644 root).
echo "linked content" > \$d/hl-a
ln \$d/hl-a \$d/hl-b
ln \$d/hl-a \$d/sub/deeper/hl-c
echo owned > \$d/owned
echo "not installed" > \$d/ghost.log
echo conf=1 > %{buildroot}/etc/$name/main.conf
echo x=2 > %{buildroot}/etc/$name/other.conf
%files
%dir /opt/$name
/opt/$name/sub
%dir /opt/$name/emptydir
/opt/$name/zeros-3m
/opt/$name/empty
%attr(0755,root,root) /opt/$name/run.sh
%attr(4755,root,root) /opt/$name/setuid
%attr(0755,root,root) %caps(cap_net_raw,cap_net_admin=ep) /opt/$name/capbin
/opt/$name/link-rel
/opt/$name/link-abs
%attr(4755,root,root) /opt/$name/hl-a
%attr(0600,imsuser,imsgrp) /opt/$name/hl-b
%attr(0640,imsuser,imsgrp) /opt/$name/owned
%ghost /opt/$name/ghost.log
%dir %attr(0750,imsuser,root) /etc/$name
%config(noreplace) /etc/$name/main.conf
%config /etc/$name/other.conf
SPEC
	# Header mtimes of 2001 (clamped): what keeps them is told apart from the install time.
	SOURCE_DATE_EPOCH=1000000000 rpmbuild -bb --quiet --define "_topdir $work/top" \
		--define "_binary_payload $payload" --define 'clamp_mtime_to_source_date_epoch 1' \
		--define '_build_id_links none' "$spec" >"$work/rpmbuild-$name.log" 2>&1 ||
		{ cat "$work/rpmbuild-$name.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
	echo "$work/top/RPMS/noarch/$name-1.0-1.noarch.rpm"
}

# make_root DIR: an empty root that knows the test user and group, as rpm needs them.
make_root() {
	mkdir -p "$1/etc"
	printf 'root:x:0:0:root:/root:/bin/sh\nimsuser:x:1234:1234::/:/bin/false\n' >"$1/etc/passwd"
	printf 'root:x:0:\nimsgrp:x:2345:\n' >"$1/etc/group"
}

# list_tree ROOT: one line per object: path, type, mode, owner, size, content digest or
# symlink target, mtime (not for directories: adding entries changes it), hard-link group,
# file capabilities.  rpm's database is left out, and so is ./root: Debian's %_dbpath is
# ~/.rpmdb, where the transaction lock rpm and imastream install take lives.
list_tree() {
	(cd "$1" && find . -path ./rpmdb -prune -o -path ./var -prune -o -path ./root -prune \
		-o -path ./etc/passwd -prune \
		-o -path ./etc/group -prune -o -print0 | sort -z |
		while IFS= read -r -d '' p; do
			local t extra
			t=$(stat -c '%F|%a|%u|%g' "$p")
			case $t in
			directory*) extra="" ;;
			symbolic*) extra="->$(readlink "$p") mtime=$(stat -c %Y "$p")" ;;
			*) extra="$(stat -c 'size=%s mtime=%Y links=%h' "$p") $(sha256sum <"$p" | cut -c1-16)"
			   extra="$extra $({ getfattr --absolute-names -h -e hex -n security.capability "$p" 2>/dev/null || true; } |
				sed -n 's/^security.capability=/caps=/p')" ;;
			esac
			echo "$p|$t|$extra"
		done)
}

# link_groups ROOT: the hard-link sets, as sorted path lists per inode.
link_groups() {
	(cd "$1" && find . -path ./rpmdb -prune -o -type f -links +1 -printf '%i %p\n' | sort |
		awk '{ g[$1] = g[$1] " " $2 } END { for (i in g) print g[i] }' | sort)
}

# root_listing ROOT: every object below ROOT, one line each (path, type, mode, size; no
# size for directories, which counts their entries on tmpfs), without rpm's transaction
# lock file and the directories made for it: rpm -i --root and imastream install both
# create them, and leave them.
root_listing() {
	local lock
	lock=.$(rpm --eval '%{_rpmlock_path}')
	(cd "$1" && find . -printf '%p %y %m %s\n' | sort |
		awk -v lock="$lock" '{
			for (p = lock; p != "." && p != ""; sub(/\/[^\/]*$/, "", p))
				if (substr($0, 1, length(p) + 1) == p " " && substr($0, length(p) + 2) ~ /^[a-z] [0-7]+ [0-9]+$/)
					next
			if ($0 ~ / d [0-7]+ [0-9]+$/)
				sub(/ [0-9]+$/, "")
			print
		}')
}

# no_leftovers ROOT [CASE]: fails if any temp file of ours is left below ROOT.
no_leftovers() {
	local left
	left=$(find "$1" -name '.imastream-tmp-*' | head -5)
	[ -z "$left" ] || fail "${2:+$2: }temp files left behind: $left"
}

# kill_in_renames ROOT ERRFILE PACKAGE: runs $IMASTREAM install of PACKAGE into ROOT
# (stderr to ERRFILE), stopped by the library's test hook IMASTREAM_TEST_RENAME_STOP_AT
# before a random one of its renames (in $killed_at: 1 is before the first), and kills it
# with SIGKILL there.  The point is the test's, not the clock's: a busy machine moves it
# nowhere.  Returns 0 when the kill landed in the rename phase (the journal is there).
kill_in_renames() {
	local root=$1 err=$2 pkg=$3 files pid state
	# Every regular file is renamed into place: the stop comes before one of them.
	files=$(rpm -qp --qf '[%{FILEMODES:perms}\n]' "$pkg" 2>/dev/null | grep -c '^-')
	[ "$files" -gt 0 ] || fail "kill_in_renames: $pkg has no regular file"
	killed_at=$((RANDOM % files + 1))
	# (The command itself in the background: $! must be imastream, not a subshell.)
	IMASTREAM_TEST_RENAME_STOP_AT=$killed_at "$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$pkg" 2>"$err" &
	pid=$!
	# Until it stops itself (state T) or ends: a state, waited for as long as it takes.
	while state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) &&
		[ -n "$state" ] && [ "$state" != T ] && [ "$state" != Z ]; do
		sleep 0.01
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	[ -e "$root/var/lib/imastream/journal" ]
}

# recover_completes ROOT NEVRA PACKAGE ERRFILE CASE: imastream recover succeeds and says
# it completed the interrupted transaction of NEVRA from the file PACKAGE.
recover_completes() {
	"$IMASTREAM" recover --root "$1" 2>"$4" || fail "$5: recover failed: $(cat "$4")"
	grep -q "completed the interrupted transaction of $2 from $3 (" "$4" ||
		fail "$5: recover did not complete it: $(cat "$4")"
}
