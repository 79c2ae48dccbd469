#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The extractor API example installs a staged tree exactly as cp -a copies it, and rolls back.
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

# A file the root already has as a directory stops the package: nothing else is left.
mkdir -p "$work/busy/usr/bin/app"
before=$(cd "$work/busy" && find . | sort)
if "$EXAMPLE" "$stage" "$work/busy" 2>"$work/err"; then fail "installing over a directory succeeded"; fi
[ "$(wc -l <"$work/err")" -eq 1 ] || { cat "$work/err" >&2; fail "expected one line on stderr"; }
grep -q '/usr/bin/app: a directory exists at its path' "$work/err" || fail "unclear message: $(cat "$work/err")"
[ "$before" = "$(cd "$work/busy" && find . | sort)" ] || fail "the refused install left files behind"
echo "PASS: $(wc -l <"$work/ours.list") objects as cp -a copies them; a refused install left nothing"
