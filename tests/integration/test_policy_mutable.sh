#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# policy keylime --mutable: %ghost and state files excluded, generated files at their current digest, and no exclude ever matching a packaged program or library.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
command -v jq >/dev/null || skip "jq not installed"
list=$top_srcdir/etc/mutable-files.conf

work=$(mktemp -d /tmp/imastream-mutable.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# A program, libraries in both multilib layouts, a %config file, a %ghost state file,
# a %ghost alternative in /usr/bin, the dynamic linker's cache as glibc lists it (%ghost),
# a data file and an executable outside the program directories.
cat >"$work/mt.spec" <<'SPEC'
Name: mt
Version: 1.0
Release: 1
Summary: imastream mutable files test package
License: MIT
BuildArch: noarch
%description
Programs, libraries, a config file and ghosts.
%install
mkdir -p %{buildroot}/usr/bin %{buildroot}/usr/lib64 %{buildroot}/usr/lib/x86_64-linux-gnu \
	%{buildroot}/etc %{buildroot}/opt/mt %{buildroot}/srv/mt
printf '#!/bin/sh\necho mt\n' >%{buildroot}/usr/bin/mtprog
chmod 755 %{buildroot}/usr/bin/mtprog
echo lib >%{buildroot}/usr/lib64/libmt.so.1
echo lib2 >%{buildroot}/usr/lib/x86_64-linux-gnu/libmt2.so
echo conf >%{buildroot}/etc/mt.conf
touch %{buildroot}/etc/mt.state %{buildroot}/etc/ld.so.cache %{buildroot}/usr/bin/mt-alt
echo data >%{buildroot}/opt/mt/data
printf '#!/bin/sh\n' >%{buildroot}/srv/mt/hook
chmod 755 %{buildroot}/srv/mt/hook
%files
/usr/bin/mtprog
/usr/lib64/libmt.so.1
/usr/lib/x86_64-linux-gnu/libmt2.so
%config(noreplace) /etc/mt.conf
%ghost /etc/mt.state
%ghost /etc/ld.so.cache
%ghost %attr(0755,root,root) /usr/bin/mt-alt
/opt/mt/data
/srv/mt/hook
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
	--define '__os_install_post %{nil}' "$work/mt.spec" >"$work/rpmbuild.log" 2>&1 ||
	{ cat "$work/rpmbuild.log" >&2; exit 99; }
root=$work/root
make_root "$root"
rpm --root "$root" -i --nodeps --noscripts "$work"/top/RPMS/noarch/mt-1.0-1.noarch.rpm \
	2>"$work/rpm.err" || { cat "$work/rpm.err" >&2; fail "rpm -i failed"; }
# What ldconfig and the first boot would have written.
echo "ldconfig's cache" >"$root/etc/ld.so.cache"
echo 0123456789abcdef0123456789abcdef >"$root/etc/machine-id"

echo "== the shipped list: ghosts and state excluded, the generated file at its digest"
"$IMASTREAM" policy keylime --root "$root" --mutable "$list" --output "$work/p.json" \
	2>"$work/err" || { cat "$work/err"; fail "policy keylime --mutable failed"; }
jq -e '.excludes | index("/etc/mt\\.state$") and index("/etc/machine-id$") and index("/var/log/")' \
	"$work/p.json" >/dev/null || { jq .excludes "$work/p.json"; fail "an exclude is missing"; }
cache=$(sha256sum <"$root/etc/ld.so.cache" | cut -d' ' -f1)
[ "$(jq -c '.digests["/etc/ld.so.cache"]' "$work/p.json")" = "[\"$cache\"]" ] ||
	fail "the generated file is not listed at its current digest"
# A %ghost the list calls generated is judged by its digest, not excluded.
jq -e '.excludes | index("/etc/ld\\.so\\.cache$") | not' "$work/p.json" >/dev/null ||
	fail "the generated %ghost is excluded"
jq -e '.digests["/usr/bin/mtprog"] and .digests["/etc/mt.conf"]' "$work/p.json" >/dev/null ||
	fail "a packaged file is missing"

if python3 -c 'import jsonschema' 2>/dev/null; then
	python3 "$top_srcdir/tests/integration/keylime-policy-check.py" \
		"$top_srcdir/tests/integration/keylime-policy.schema.json" "$work/p.json" >"$work/verdict" ||
		{ cat "$work/verdict"; fail "keylime would refuse the policy"; }
fi

echo "== no exclude matches a packaged program or library (keylime's re.match)"
# Every packaged path with an execute bit, below a library or program directory, or named *.so*.
rpm --root "$root" -qa --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' >"$work/files"
python3 - "$work/p.json" "$work/files" <<'PY' || fail "an exclude matches a program or library"
import json, re, sys
excludes = [re.compile(e) for e in json.load(open(sys.argv[1]))["excludes"]]
kept = 0
for line in open(sys.argv[2]):
    perms, path = line.rstrip("\n").split(" ", 1)
    if perms[0] == "d":
        continue
    if "x" in perms or re.match(r"/(usr/)?(s?bin|lib[^/]*)/", path) or re.search(r"\.so(\.[0-9]|$)", path):
        kept += 1
        for e in excludes:
            if e.match(path):
                sys.exit(f"{e.pattern} matches {path}")
if kept != 5:
    sys.exit(f"{kept} programs and libraries, not 5")
PY

echo "== the judge: the generated file matches, state and ghosts are excluded"
zero=0000000000000000000000000000000000000000
{
	echo "10 $zero ima-ng sha256:$cache /etc/ld.so.cache"
	echo "10 $zero ima-ng sha256:$(sha256sum <"$root/etc/machine-id" | cut -d' ' -f1) /etc/machine-id"
	echo "10 $zero ima-ng sha256:$cache /etc/mt.state"
} >"$work/ok.log"
"$IMASTREAM" attest check --policy "$work/p.json" --log "$work/ok.log" >"$work/out" 2>"$work/err" ||
	{ cat "$work/out" "$work/err"; fail "attest check refused the mutable files"; }
echo "10 $zero ima-ng sha256:$cache /usr/bin/mt-alt" >"$work/alt.log"
rc=0
"$IMASTREAM" attest check --policy "$work/p.json" --log "$work/alt.log" >/dev/null 2>&1 || rc=$?
[ $rc = 1 ] || fail "a %ghost in /usr/bin was excluded ($rc)"
echo "10 $zero ima-ng sha256:$(sha256sum <"$root/etc/mt.conf" | cut -d' ' -f1) /etc/ld.so.cache" >"$work/cache.log"
rc=0
"$IMASTREAM" attest check --policy "$work/p.json" --log "$work/cache.log" >/dev/null 2>&1 || rc=$?
[ $rc = 1 ] || fail "another digest of the generated file passed ($rc)"

echo "== bad input: one line each, nothing written"
refused() { # WANT, then the list's lines; extra policy options in $opts
	want=$1
	shift
	printf '%s\n' "$@" >"$work/bad.conf"
	rm -f "$work/bad.json"
	rc=0
	# shellcheck disable=SC2086
	"$IMASTREAM" policy keylime --root "$root" --mutable "$work/bad.conf" ${opts:-} \
		--output "$work/bad.json" >/dev/null 2>"$work/err" || rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -qF -- "$want" "$work/err" &&
		[ ! -e "$work/bad.json" ] ||
		{ cat "$work/err"; fail "not refused in one line ($rc): ${opts:-} $*"; }
}
refused "bad.conf:2: /usr/bin/ would cover /usr/bin/, where programs and libraries live: refused" \
	'state /var/log/ logs' 'state /usr/bin/ an attempt on the programs'
refused "bad.conf:1: /usr/lib64/libmt.so.1 would cover /usr/lib64/, where" \
	'generated /usr/lib64/libmt.so.1 a library'
refused "bad.conf:1: /usr/lib/ would cover /usr/lib/, where" 'state /usr/lib/ all'
refused "bad.conf:1: /usr/ would cover /usr/bin/, where" 'state /usr/ all of it'
# Program directories are refused by name, whatever rpm's database lists (dpkg's programs).
refused "bad.conf:1: /usr/sbin/x would cover /usr/sbin/, where" 'state /usr/sbin/x nothing packaged there'
refused "bad.conf:1: /lib/modules/ would cover /lib/, where" 'state /lib/modules/ no package here'
# Elsewhere the database says: an executable a package ships outside the program directories.
refused "bad.conf:1: /srv/mt/ would cover /srv/mt/hook, a program or library of package mt" \
	'state /srv/mt/ an executable outside bin'
refused "bad.conf:1: nonsense: not a class (generated or state)" 'nonsense /etc/x why'
refused "bad.conf:1: /etc/x: no reason" 'state /etc/x'
refused "bad.conf:1: state without a path" 'state'
refused "bad.conf:1: etc/x: not an absolute path" 'state etc/x why'
refused "bad.conf:1: /etc/../usr/bin/mtprog: not a plain path" 'state /etc/../usr/bin/mtprog why'
refused "bad.conf:1: /: the whole root" 'state / everything'
refused "bad.conf:1: /var/lib/x/: generated names one file" 'generated /var/lib/x/ a dir'
refused "bad.conf:1: /etc/$(printf '\377'): not UTF-8" "state /etc/$(printf '\377') latin-1"
# --exclude is checked too, once the classification knows the programs.
opts="--exclude /usr/b.*" refused "exclude /usr/b.* matches /usr/bin/mt-alt, a program or library of package mt" \
	'state /var/log/ logs'
opts="--exclude .*so$" refused "exclude .*so$ matches /usr/lib/x86_64-linux-gnu/libmt2.so" \
	'state /var/log/ logs'
opts="--path-prefix /mnt --exclude /mnt/srv/" refused "exclude /mnt/srv/ matches /mnt/srv/mt/hook" \
	'state /var/log/ logs'
# Without --mutable no classification is made: the same exclude is written as asked.
"$IMASTREAM" policy keylime --root "$root" --exclude '/usr/b.*' --output "$work/plain.json" 2>/dev/null ||
	fail "policy keylime without --mutable failed"
jq -e '.excludes == ["/usr/b.*"]' "$work/plain.json" >/dev/null || fail "the plain policy lost its exclude"
rc=0
"$IMASTREAM" policy keylime --root "$root" --mutable "$work/none.conf" --output "$work/bad.json" \
	2>"$work/err" || rc=$?
[ $rc = 2 ] && grep -q "none.conf: No such file" "$work/err" && [ ! -e "$work/bad.json" ] ||
	{ cat "$work/err"; fail "a missing list was not refused ($rc)"; }
# The programs are known from rpm's database: a root without one has no policy.
mkdir -p "$work/nodb/etc"
rc=0
"$IMASTREAM" policy keylime --root "$work/nodb" --record --mutable "$list" --output "$work/bad.json" \
	2>"$work/err" || rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q "no rpm database" "$work/err" &&
	[ ! -e "$work/bad.json" ] || { cat "$work/err"; fail "a root without rpm's database was not refused ($rc)"; }
echo PASS
