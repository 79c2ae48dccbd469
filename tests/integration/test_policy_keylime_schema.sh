#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every policy keylime writes passes keylime's rules (keylime-policy.schema.json), for each option of policy keylime; attest check refuses what those rules refuse.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
command -v jq >/dev/null || skip "jq not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
schema=$top_srcdir/tests/integration/keylime-policy.schema.json
check() { python3 "$top_srcdir/tests/integration/keylime-policy-check.py" "$schema" "$@"; }

work=$(mktemp -d /tmp/imastream-klschema.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
keys=$top_srcdir/tests/keys
cp "$keys/rsa2048.pem" "$work/key.pem"
chmod 600 "$work/key.pem"

# A package whose paths hold what rpm lets a name hold (a blank, a backslash, UTF-8),
# and one without files.
cat >"$work/klnames.spec" <<'SPEC'
Name: klnames
Version: 1.0
Release: 1
Summary: imastream policy schema test package
License: MIT
BuildArch: noarch
%description
Names of every kind rpm allows.
%package -n klempty
Summary: no files
%description -n klempty
No files.
%install
d=%{buildroot}/opt/kln
mkdir -p "$d/dir with space"
echo blank >"$d/a b"
echo backslash >"$d/a\\b"
echo utf8 >"$d/café"
echo inner >"$d/dir with space/f"
%files
/opt/kln
%files -n klempty
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
	"$work/klnames.spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; exit 99; }
pkgs=("$work"/top/RPMS/noarch/kl*.rpm)
[ ${#pkgs[@]} = 2 ] || { echo "ERROR: rpmbuild made ${#pkgs[@]} packages"; exit 99; }

rpmroot=$work/rpmroot
imsroot=$work/imsroot
make_root "$rpmroot"
make_root "$imsroot"
rpm --root "$rpmroot" -i --nodeps --noscripts "${pkgs[@]}" 2>"$work/rpm.err" ||
	{ cat "$work/rpm.err" >&2; fail "rpm -i failed"; }
"$IMASTREAM" install --root "$imsroot" --allow-unsigned --quiet --mode sign \
	-k "$work/key.pem" -c "$keys/rsa2048.crt" "${pkgs[@]}" || fail "imastream install failed"

echo "== each option combination gives a policy keylime's rules accept"
n=0
for src in "--root $rpmroot --rpmdb" "--root $imsroot --record"; do
	for algo in sha256 sha1 sha384 sha512; do
		for trust in "" "--trust $keys/rsa2048.crt"; do
			for excl in "" "--exclude /tmp/.* --exclude ^/var/log/[a-z]+\.log$"; do
				n=$((n + 1))
				# The rest in turn, so that each value meets the others.
				logalg=$(echo sha1 sha256 sha384 sha512 | cut -d' ' -f$((n % 4 + 1)))
				prefix=() names=()
				[ $((n % 3)) = 0 ] && prefix=(--path-prefix /sys\ root)
				[ $((n % 5)) = 1 ] && names=(klnames)
				# Split, never globbed: /tmp/.* would match what other tests leave in /tmp.
				set -f
				# shellcheck disable=SC2086
				"$IMASTREAM" policy keylime $src -a $algo $trust $excl --log-hash-algo $logalg \
					"${prefix[@]}" --output "$work/p$n.json" "${names[@]}" 2>"$work/err" ||
					{ cat "$work/err"; fail "policy keylime $src -a $algo $trust $excl ${prefix[*]} ${names[*]} failed"; }
				set +f
				echo "p$n: $src -a $algo $trust $excl --log-hash-algo $logalg ${prefix[*]} ${names[*]}" >>"$work/combos"
			done
		done
	done
done
check "$work"/p*.json >"$work/verdicts" || { paste "$work/combos" <(sort -V "$work/verdicts"); fail "keylime would refuse a policy"; }
[ "$(grep -c ': OK$' "$work/verdicts")" = $n ] || fail "not every policy was checked"
# Not vacuous: the policies list the files, the keys and the excludes asked for.
jq -e '.digests | length == 4' "$work/p1.json" >/dev/null || fail "p1 does not list the four files"
jq -e '(."verification-keys" | fromjson | .pubkeys | length) == 1 and (.excludes | length) == 2' \
	"$work/p4.json" >/dev/null || fail "p4 lacks its key or its excludes"
jq -e '.digests | keys | all(startswith("/sys_root/"))' "$work/p3.json" >/dev/null ||
	fail "p3's prefix is not spelled as the kernel logs it"

echo "== paths as the kernel logs them: a blank as '_', every other byte as it is"
# p1 is from rpm's database, p17 from the install record (both sha256, no prefix).
grep -q "^p1: --root $rpmroot --rpmdb -a sha256 *--log" "$work/combos" &&
	grep -q "^p17: --root $imsroot --record -a sha256 *--log" "$work/combos" || fail "p1 and p17 are not what this part reads"
want='["/opt/kln/a\\b","/opt/kln/a_b","/opt/kln/café","/opt/kln/dir_with_space/f"]'
for p in p1 p17; do
	[ "$(jq -c '.digests | keys' "$work/$p.json")" = "$want" ] ||
		{ jq -c '.digests | keys' "$work/$p.json"; fail "$p does not spell the paths as the kernel logs them"; }
done
zero=0000000000000000000000000000000000000000
: >"$work/names.log"
for f in "a b" 'a\b' café "dir with space/f"; do
	# What ima_write_template_field_data() records of the name.
	logged=/opt/kln/$(printf '%s' "$f" | tr ' ' _)
	sha=$(sha256sum <"$rpmroot/opt/kln/$f" | cut -d' ' -f1)
	printf '10 %s ima-ng sha256:%s %s\n' $zero "$sha" "$logged" >>"$work/names.log"
	printf '10 %s ima-sig sha256:%s %s \n' $zero "$sha" "$logged" >>"$work/names.log"
done
for p in p1 p17; do
	"$IMASTREAM" attest check --policy "$work/$p.json" --log "$work/names.log" >"$work/out" 2>"$work/err" ||
		{ cat "$work/out" "$work/err"; fail "the kernel's spelling of the names does not pass $p"; }
	grep -q '8 entries: 8 matched' "$work/err" || { cat "$work/err"; fail "not every name matched in $p"; }
done
# A blank inside a name is not how the kernel writes one: a malformed line.
printf '10 %s ima-ng sha256:%s /opt/kln/a b\n' $zero "$sha" >"$work/blank.log"
rc=0
"$IMASTREAM" attest check --policy "$work/p1.json" --log "$work/blank.log" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q "blank.log:1: a blank in the file name, which the kernel writes as '_'" "$work/err" ||
	{ cat "$work/err"; fail "a name with a blank was not refused ($rc)"; }

echo "== the schema refuses what keylime refuses, and attest check with it"
echo "10 $zero ima-ng sha256:$(sha256sum <"$rpmroot/opt/kln/café" | cut -d' ' -f1) /opt/kln/café" >"$work/one.log"
i=0
while IFS= read -r mutation; do
	i=$((i + 1))
	jq "$mutation" "$work/p1.json" >"$work/m$i.json"
	rc=0
	"$IMASTREAM" attest check --policy "$work/m$i.json" --log "$work/one.log" >/dev/null 2>"$work/err" || rc=$?
	if check "$work/m$i.json" >"$work/verdict"; then
		[ $rc = 0 ] || { cat "$work/err"; fail "attest check refused ($rc) a policy keylime takes: $mutation"; }
	else
		[ $rc = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] ||
			{ cat "$work/verdict" "$work/err"; fail "attest check took ($rc) a policy keylime refuses: $mutation"; }
	fi
done <<'MUTATIONS'
.
del(.meta.generator)
.meta.generator = 4
.meta.generator = "3"
.meta.generator = 2 | .meta.timestamp = "2026-01-01"
.meta.timestamp = 0
del(.release)
.release = -1
.release = 7
.digests["/x"] = []
.digests["/x"] = ["ABCDEF0123456789ABCDEF0123456789ABCDEF01"]
.digests["/x"] = ["abc"]
del(.excludes)
.excludes = [7]
.keyrings = []
.keyrings[".ima"] = []
.["ima-buf"]["kexec-cmdline"] = ["0123456789abcdef0123456789abcdef01234567"]
.["ima-buf"]["kexec-cmdline"] = []
.ima.log_hash_alg = "md5"
.ima.log_hash_alg = "sha384"
del(.ima.dm_policy)
.ima.dm_policy = {}
del(.ima.ignored_keyrings)
.["verification-keys"] = ({pubkeys: []} | tojson)
.["verification-keys"] = ({keyids: [], pubkeys: []} | tojson)
.["verification-keys"] = ({meta: {version: 0}, keyids: [], pubkeys: []} | tojson)
.["verification-keys"] = ({tenant: ({keyids: [], pubkeys: []} | tojson)} | tojson)
del(.["verification-keys"])
MUTATIONS
echo "PASS ($n policies, $i mutations)"
