#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installer API example streams a staged tree through the chain: cp -a's tree, evmctl's digests, a record, a rollback.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (chown)"
EXAMPLE=$top_builddir/installer/examples/install-tree
[ -x "$EXAMPLE" ] || { echo "ERROR: $EXAMPLE not built"; exit 99; }

work=$(mktemp -d /tmp/imastream-install-example.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
stage=$work/stage
mkdir -p "$stage/usr/lib/app/plugins" "$stage/usr/bin" "$stage/var/empty"
for n in 0 1 4096 131073 1000000; do head -c $n /dev/urandom >"$stage/usr/lib/app/data-$n"; done
printf '#!/bin/sh\n' >"$stage/usr/bin/app"
chmod 4755 "$stage/usr/bin/app"
ln -s ../lib/app/data-1 "$stage/usr/bin/data-link"
ln "$stage/usr/lib/app/data-4096" "$stage/usr/lib/app/plugins/same"
chown 1234:2345 "$stage/usr/lib/app/data-1"
chmod 0700 "$stage/var/empty"
touch -d '2001-02-03 04:05:06' "$stage/usr/lib/app/data-0"
touch -h -d '2002-02-03 04:05:06' "$stage/usr/bin/data-link"

mkdir "$work/ours" "$work/cp"
"$EXAMPLE" "$stage" "$work/ours" || fail "install-tree failed"
cp -a "$stage/." "$work/cp/"
list_tree "$work/cp" >"$work/cp.list"
list_tree "$work/ours" >"$work/ours.list"
diff -u "$work/cp.list" "$work/ours.list" || fail "the trees differ (- cp -a, + ours)"
diff -u <(link_groups "$work/cp") <(link_groups "$work/ours") || fail "hard links differ"
no_leftovers "$work/ours"

# Through the chain: every regular file has evmctl's digest, and the record verifies.
if command -v evmctl >/dev/null && command -v getfattr >/dev/null; then
	n=0
	for f in $(cd "$work/ours" && find usr -type f); do
		want=$(evmctl ima_hash -n "$work/ours/$f" 2>/dev/null)
		got=$(getfattr --absolute-names -n security.ima -e hex "$work/ours/$f" 2>/dev/null | sed -n 's/^security.ima=0x//p')
		[ -n "$got" ] && [ "$got" = "$want" ] || fail "$f: security.ima '$got', evmctl says $want"
		n=$((n + 1))
	done
	echo "ok: $n files carry evmctl's security.ima"
fi
grep -qx 'package stage' "$work/ours/var/lib/imastream/packages/stage.record" || fail "no record for the stage"
"$top_builddir/imastream" verify --root "$work/ours" >"$work/verify" ||
	{ cat "$work/verify"; fail "imastream verify --root rejects the example's install"; }
[ "$(grep -Ec ': OK( \(|$)' "$work/verify")" -ge 10 ] || fail "verify --root checked too little: $(cat "$work/verify")"

# Another chain configuration from the command line: sha512 digests.
mkdir "$work/sha512"
"$EXAMPLE" -o hash_algo=sha512 --name app "$stage" "$work/sha512" || fail "install-tree -o hash_algo=sha512 failed"
getfattr --absolute-names -n security.ima -e hex "$work/sha512/usr/bin/app" 2>/dev/null | grep '=0x0406' >/dev/null ||
	fail "-o hash_algo=sha512 did not give a sha512 security.ima"
[ -f "$work/sha512/var/lib/imastream/packages/app.record" ] || fail "--name did not name the record"

# A file the root already has as a directory stops the package: nothing else is left.
mkdir -p "$work/busy/usr/bin/app"
before=$(cd "$work/busy" && find . | sort)
if "$EXAMPLE" "$stage" "$work/busy" 2>"$work/err"; then fail "installing over a directory succeeded"; fi
[ "$(wc -l <"$work/err")" -eq 1 ] || { cat "$work/err" >&2; fail "expected one line on stderr"; }
grep -q '/usr/bin/app: a directory exists at its path' "$work/err" || fail "unclear message: $(cat "$work/err")"
[ "$before" = "$(cd "$work/busy" && find . | sort)" ] || fail "the refused install left files behind"
echo "PASS: $(wc -l <"$work/ours.list") objects as cp -a copies them; a refused install left nothing"
