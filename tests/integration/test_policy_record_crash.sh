#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The record plugin's log under a crash and a failing disk: a package's lines are all on
# file, whole, before rpm runs its %post (rpm 4.18 adds the package to its database just
# before); a kill -9 during %post loses nothing and leaves whole lines; a log that cannot
# be written is reported in rpm's output and in the summary.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch
[ -x /bin/busybox ] || { echo "SKIP: busybox is needed for a %post in a scratch root"; exit 77; }

# 1,500 files with long names: about 170 KiB of lines, so the 64 KiB flush happens too.
# %post says it started, then opens /post-release for reading: a FIFO the test made, which
# nobody opens for writing until rpm is killed, so %post waits there as long as the test
# needs, however busy the machine (a regular file there lets it go on at once).
cat >"$T/crash.spec" <<'SPEC'
Name: reccrash
Version: %{pkgversion}
Release: 1
Summary: record plugin crash test
License: MIT
BuildArch: noarch
%description
Many small files and a %post that waits.
%install
mkdir -p %{buildroot}/opt/reccrash
i=0
while [ $i -lt 1500 ]; do
	echo $i >%{buildroot}/opt/reccrash/file-with-a-rather-long-name-to-fill-the-buffer-$i
	i=$((i + 1))
done
%post
touch /post-started
read line </post-release || :
%files
/opt/reccrash
SPEC
pkg=$(build_pkg "$T/crash.spec" 1)
want=$(rpm -qpl "$pkg" 2>/dev/null | wc -l)
[ "$want" = 1501 ] || fail "the test package lists $want files, not 1501"

# whole LOG: every line has the six fields and the log ends with a newline.
whole() {
	awk 'NF != 6 { print "bad line " NR ": " $0; bad = 1 } END { exit bad }' "$1" ||
		fail "a line of $1 is not whole"
	[ ! -s "$1" ] || [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "$1 does not end with a newline"
}

root="$T/root"
new_root "$root"
mkfifo "$root/post-release"
pid=
# Whatever happens, %post is let go (a writer on its FIFO: opening O_RDWR never waits)
# and rpm does not outlive the test.
release() {
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
	[ ! -p "$root/post-release" ] || { exec 9<>"$root/post-release"; echo go >&9; exec 9>&-; }
}
trap 'release; rm -rf "$T"' EXIT
log="$T/record.log"
echo "/earlier/line earlier-1-1.noarch - - - -" >"$log"
rpm --root "$root" --dbpath /var/lib/rpm --nodeps --define "__plugindir $top_builddir/.libs" \
	--define "_imastream_config %{nil}" --define "__transaction_imastream $SO" \
	--define "_imastream_plugins record" --define "_imastream_record_log $log" \
	--define "_imastream_record_syslog none" -i "$pkg" >"$T/out" 2>"$T/rpm.err" &
pid=$!
# Until %post has started (a state, waited for as long as it takes; rpm cannot get past
# it on its own).
while [ ! -e "$root/post-started" ]; do
	kill -0 "$pid" 2>/dev/null || { wait "$pid"; fail "rpm ended before %post ($?): $(cat "$T/rpm.err")"; }
	sleep 0.1
done
# In %post: the package's files are in place and in rpm's database; their lines are on file.
got=$(grep -c ' reccrash-1-1.noarch ' "$log")
[ "$got" = "$want" ] || fail "in %post, $got of $want lines on file"
whole "$log"
cp "$log" "$T/at-post"
kill -0 "$pid" || fail "rpm ended while %post was held"
kill -9 "$pid"
wait "$pid" && fail "rpm survived kill -9"
pid=
release
cmp -s "$log" "$T/at-post" || fail "the log changed after the kill"
whole "$log"
head -n 1 "$log" | grep -q -x '/earlier/line earlier-1-1.noarch - - - -' ||
	fail "the earlier line is gone"
cut -d' ' -f1 "$log" | tail -n +2 | sort >"$T/got"
rpm -qpl "$pkg" 2>/dev/null | sort >"$T/want"
diff -u "$T/want" "$T/got" >/dev/null || fail "the lines name other paths than the package's"
echo "ok: $want lines whole and complete before %post, unchanged by kill -9"

# A log that cannot be written (/dev/full): the install goes on, each failed write is
# logged, and the summary says records are missing.
root2="$T/root2"
new_root "$root2"
touch "$root2/post-release"
irpm "$root2" -v --define "_imastream_plugins record" --define "_imastream_record_log /dev/full" \
	--define "_imastream_record_syslog none" -i "$pkg" >"$T/out" ||
	fail "rpm -i with an unwritable record failed"
grep -q "record: cannot append [0-9]* records to /dev/full: No space left on device" \
	"$T/rpm.stderr" || fail "no write error reported"
grep -q "done: 0 files of 0 packages installed, .* (some records could not be written)" "$T/out" ||
	fail "the summary does not say records are missing: $(cat "$T/out")"
echo "ok: write errors reported"
