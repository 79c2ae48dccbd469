#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installer's tree equals rpm -i --root's for gzip, xz and zstd packages of every entry kind.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions

work=$(mktemp -d /tmp/imastream-install-tree.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

pkgs=()
for c in gz:w9.gzdio xz:w6.xzdio zstd:w19.zstdio; do
	pkgs+=("$(build_pkg "$work" "imstest-${c%%:*}" "${c#*:}")")
done
for p in "${pkgs[@]}"; do
	want=${p##*imstest-}; want=${want%%-*}
	case $want in gz) want=gzip ;; esac
	got=$(rpm -qp --qf '%{PAYLOADCOMPRESSOR}' "$p")
	[ "$got" = "$want" ] || fail "$p has a $got payload, expected $want"
done

ours=$work/ours theirs=$work/theirs
make_root "$ours"
make_root "$theirs"

"$INSTALL_RPM" --trace "$ours" "${pkgs[@]}" >"$work/trace" 2>"$work/stderr" ||
	{ cat "$work/stderr" >&2; fail "install-rpm failed"; }
[ ! -s "$work/stderr" ] || { cat "$work/stderr" >&2; fail "install-rpm wrote to stderr"; }
rpm -i --root "$theirs" --nodeps --noscripts --notriggers --define '_dbpath /rpmdb' \
	--define '_pkgverify_level digest' "${pkgs[@]}" 2>"$work/rpm-stderr" ||
	{ cat "$work/rpm-stderr" >&2; echo "ERROR: rpm -i failed"; exit 99; }

list_tree "$ours" >"$work/ours.list"
list_tree "$theirs" >"$work/theirs.list"
if ! diff -u "$work/theirs.list" "$work/ours.list"; then
	fail "the trees differ (- rpm -i, + ours)"
fi
# The same stages in turn on one thread give the same tree.
make_root "$work/ours1"
"$INSTALL_RPM" --one-thread "$work/ours1" "${pkgs[@]}" || fail "install-rpm --one-thread failed"
list_tree "$work/ours1" >"$work/ours1.list"
diff -u "$work/ours.list" "$work/ours1.list" || fail "one-thread and pipelined installs differ"
link_groups "$ours" >"$work/ours.links"
link_groups "$theirs" >"$work/theirs.links"
diff -u "$work/theirs.links" "$work/ours.links" || fail "hard-link sets differ"
[ "$(wc -l <"$work/ours.links")" -eq 3 ] || fail "expected 3 hard-link sets, got $(cat "$work/ours.links")"
no_leftovers "$ours"

# The listing must have seen the interesting cases, or the comparison proves little.
for want in 'caps=0x' '|4755|' '|1234|2345|' '->sub/size-100' 'size=0 ' 'size=1048579 ' 'links=3'; do
	grep -qF -- "$want" "$work/ours.list" || fail "tree listing lacks '$want'"
done

# What a hook chain would see: every object complete under a temp name before commit,
# content in chunks, the header digest verified, and each package committed.
trace=$work/trace
[ "$(grep -c '^end_package 0$' "$trace")" -eq 3 ] || fail "not every package committed: $(grep end_package "$trace")"
if grep '^entry_end' "$trace" | grep -v 'mode=040' | grep -v 'name=temp'; then
	fail "a non-directory reached the sink under its final name"
fi
if grep '^entry_end' "$trace" | grep 'mode=0100' | grep -v 'fd=no' | grep -v 'digest=verified'; then
	fail "a regular file reached the sink without a verified digest"
fi
grep -q 'entry_end /opt/imstest-zstd/sub/size-1048579 name=temp fd=yes chunks=[1-9][0-9]* bytes=1048579 ' "$trace" ||
	fail "the 1 MiB file did not stream in chunks: $(grep size-1048579 "$trace")"
[ "$(grep -c 'entry_begin .*hardlink' "$trace")" -eq 6 ] || fail "expected 6 further hard links in the trace"
[ "$(grep -c '^entry_end .*hl-.* fd=no .*digest=none' "$trace")" -eq 6 ] ||
	fail "further hard links must reach the sink with no fd: $(grep 'entry_end .*hl-' "$trace")"
[ "$(grep -c '^entry_begin' "$trace")" -eq "$(grep -c '^entry_end' "$trace")" ] ||
	fail "every entry_begin needs its entry_end"
grep -q ghost "$trace" && fail "a %ghost entry reached the sink"
[ ! -e "$ours/opt/imstest-gz/ghost.log" ] || fail "a %ghost file was created"
grep -q 'entry_begin /opt unowned\|entry_begin /opt mode=040755 unowned' "$trace" || fail "unowned /opt not shown to the sink"
n=$(grep -c '^entry_end' "$trace")
echo "PASS: 3 packages (gzip, xz, zstd), $(wc -l <"$work/ours.list") objects identical to rpm -i; $n sink entries checked"
