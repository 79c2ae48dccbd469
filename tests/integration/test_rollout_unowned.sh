#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ima-rollout's rule for files no rpm package owns, on a merged-/usr root: rpm's /bin/x is
# /usr/bin/x and counts as owned (signed once, by relabel), while the executables and
# libraries nothing lists are the ones "ima-rollout label" signs with imastream sign.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

# Not setup_scratch: no imastream.so is loaded here, so a sanitizer build runs this too.
need rpm
need rpmbuild
[ "$(id -u)" = 0 ] || { echo "SKIP: ima-rollout and rpm --root need root"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-rollout.XXXXXX")
trap 'rm -rf "$T"' EXIT
PKG=$(build_pkg "$top_srcdir/tests/rpm/imsusr.rpmspec")
R=$T/root
mkdir -p "$R/usr/bin" "$R/usr/sbin" "$R/usr/lib" "$R/usr/share" "$R/etc/init.d" "$R/opt/tool"
for d in bin sbin lib; do
	ln -s "usr/$d" "$R/$d"
done
rpm --root "$R" --nodeps --noscripts --noplugins -i "$PKG" 2>"$T/rpm.err" ||
	{ cat "$T/rpm.err"; fail "rpm -i on a merged-/usr root"; }
[ -f "$R/usr/bin/imsusr" ] && [ -f "$R/usr/sbin/imsusr-admin" ] ||
	fail "rpm did not put /bin/imsusr and /sbin/imsusr-admin below /usr"

# What no package lists: two programs, a library, a program with a blank in its name; and
# what the rule leaves alone: a data file, and a program outside /usr, /etc and /opt.
for f in usr/bin/local-tool "etc/init.d/local service" opt/tool/run; do
	printf '#!/bin/sh\n' >"$R/$f"
	chmod 0755 "$R/$f"
done
printf 'lib\n' >"$R/usr/lib/libextra.so.1"
printf 'data\n' >"$R/usr/share/data"
mkdir -p "$R/srv" && printf '#!/bin/sh\n' >"$R/srv/tool" && chmod 0755 "$R/srv/tool"

# The script runs imastream keys and others only in its steps; unowned needs rpm alone,
# but checks that imastream is on the PATH as every step does.
PATH="$top_builddir:$PATH" sh "$top_srcdir/scripts/ima-rollout" unowned --root "$R" \
	>"$T/out" 2>"$T/err" || { cat "$T/err"; fail "ima-rollout unowned failed"; }
cat >"$T/want" <<EOF
$R/etc/init.d/local service
$R/opt/tool/run
$R/usr/bin/local-tool
$R/usr/lib/libextra.so.1
EOF
diff -u "$T/want" "$T/out" || fail "ima-rollout unowned: not exactly the files no package owns (above)"

# A usage error says how to call it, with exit 2.
PATH="$top_builddir:$PATH" sh "$top_srcdir/scripts/ima-rollout" unowned --root "$T/missing" >/dev/null 2>"$T/err"
[ $? = 2 ] || fail "unowned --root of a missing directory: exit 2 expected"
grep 'ima-rollout unowned \[--root DIR\]' "$T/err" >/dev/null || fail "the usage text lacks unowned"
echo "PASS: ima-rollout unowned lists exactly the executables and libraries no package owns"
