#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Without openat2(2): a kernel before 5.6 (ENOSYS), or a container whose seccomp filter
# refuses it (EPERM). Opens below a root keep their rules by a walk of single opens: the
# directory-link unit test (hostile links included) and the merged-/usr install, relabel,
# audit and policy test pass unchanged with openat2 made to fail in every process.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc) to build the LD_PRELOAD library"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-no-openat2.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$cc" -shared -fPIC -O2 -o "$T/no_openat2.so" "$top_srcdir/tests/integration/no_openat2.c" -ldl ||
	{ echo "FAIL: cannot build the LD_PRELOAD library"; exit 1; }
fails=0
# A sanitizer build wants its runtime first among the preloads; this one needs no checking.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

for how in ENOSYS EPERM; do
	if LD_PRELOAD="$T/no_openat2.so" NO_OPENAT2_ERRNO=$how "$top_builddir/tests/unit/test_dirlink" \
		>"$T/out" 2>&1; then
		echo "ok: directory links followed as rpm follows them, openat2 failing $how"
	else
		cat "$T/out"
		echo "FAIL: test_dirlink with openat2 failing $how"
		fails=$((fails + 1))
	fi
done

# The merged-/usr test as it is, every process of it without openat2.
LD_PRELOAD="$T/no_openat2.so" sh "$top_srcdir/tests/integration/test_rpm_merged_usr.sh" >"$T/out" 2>&1
rc=$?
case $rc in
0) echo "ok: merged-/usr install, relabel, audit and policy without openat2" ;;
77) echo "SKIP: the merged-/usr half: $(tail -n 1 "$T/out" | sed 's/^SKIP: //')"; [ "$fails" = 0 ] && exit 77 ;;
*) cat "$T/out"; echo "FAIL: the merged-/usr test without openat2 (exit $rc)"; fails=$((fails + 1)) ;;
esac
[ "$fails" = 0 ]
