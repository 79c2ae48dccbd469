#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make install into a DESTDIR gives what the README promises: the command, the library and
# imastream.pc that the EXAMPLES program of libimastream(3) builds and links with (its
# digest equals sha256sum's), every public header (installer.h alone still enough to build
# with), the man pages, the example /etc/imastream.conf, the rpm plugin without its
# libtool archive, the macros file; make uninstall leaves no file.
set -uo pipefail
: "${top_srcdir:?run through make check}" "${top_builddir:?}"

fail() { echo "FAIL: $*"; exit 1; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config not found"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no C compiler (cc)"; exit 77; }
if ldd "$top_builddir/.libs/libimastream.so" 2>/dev/null | grep libasan >/dev/null; then
	echo "SKIP: a sanitizer build links its runtime into programs differently"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_make_install.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root

# The build's own folder variables, as make expands them.
# Without the outer make's flags, whose jobserver and directory lines would mix in.
dirs=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top_builddir" \
	-f Makefile -f - imastream-print-dirs <<'MK' | tail -n 1
imastream-print-dirs:
	@echo DIRS $(bindir) $(libdir) $(includedir) $(mandir) $(sysconfdir) $(rpmplugindir) $(rpmmacrosdir) $(docdir)
MK
) || fail "cannot read the build's folder variables"
read -r tag bindir libdir includedir mandir sysconfdir plugindir macrosdir docdir <<<"$dirs"
[ "$tag" = DIRS ] || fail "cannot read the build's folder variables: $dirs"

make -s -C "$top_builddir" install DESTDIR="$dest" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "make install DESTDIR=... failed"; }
for f in "$bindir/imastream" "$libdir/libimastream.so" "$libdir/pkgconfig/imastream.pc" \
	"$includedir/imastream/hash.h" "$includedir/imastream/chain.h" \
	"$mandir/man3/libimastream.3" "$mandir/man8/imastream-rpm.8" "$mandir/man1/imastream.1" \
	"$sysconfdir/imastream.conf" "$docdir/imastream.conf" "$plugindir/imastream.so" \
	"$macrosdir/macros.transaction_imastream"; do
	[ -e "$dest$f" ] || fail "make install did not install $f"
done
for h in "$top_srcdir"/include/imastream/*.h; do
	[ -e "$dest$includedir/imastream/${h##*/}" ] || fail "make install did not install imastream/${h##*/}"
done
[ ! -e "$dest$plugindir/imastream.la" ] || fail "the libtool archive is in rpm's plugin folder"
cmp -s "$top_srcdir/etc/imastream.conf" "$dest$sysconfdir/imastream.conf" ||
	fail "the installed imastream.conf is not etc/imastream.conf"
if command -v groff >/dev/null; then
	groff -man -ww -z "$dest$mandir/man3/libimastream.3" 2>"$tmp/groff.log"
	[ ! -s "$tmp/groff.log" ] || { cat "$tmp/groff.log"; fail "libimastream.3 has roff warnings"; }
fi

# The EXAMPLES program of the man page, built only with what pkg-config says.
sed -n '/^\.EX$/,/^\.EE$/p' "$top_srcdir/man/libimastream.3" | sed '1d;$d' |
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$tmp/example.c"
[ "$(wc -l <"$tmp/example.c")" -ge 15 ] || fail "no EXAMPLES program in libimastream.3"
export PKG_CONFIG_LIBDIR=$dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs imastream) || fail "pkg-config does not know imastream"
# shellcheck disable=SC2086
cc -Wall -Werror -o "$tmp/example" "$tmp/example.c" $flags 2>"$tmp/cc.log" ||
	{ cat "$tmp/cc.log"; fail "the example does not build with: $flags"; }
got=$(LD_LIBRARY_PATH=$dest$libdir "$tmp/example" "$top_srcdir/README.md") ||
	fail "the example program failed"
want=$(sha256sum "$top_srcdir/README.md")
[ "$got" = "$want" ] || fail "example printed '$got', sha256sum '$want'"
LD_LIBRARY_PATH=$dest$libdir ldd "$tmp/example" | grep "$dest$libdir/libimastream.so" >/dev/null ||
	fail "the example is not linked with the installed library"

# The umbrella header alone still declares what it did before the split into subsystems.
printf '#include <imastream/installer.h>\nint main(void) { return imastream_root_interrupted(-1) + !IMASTREAM_RECORD_MAX_DIGEST; }\n' \
	>"$tmp/umbrella.c"
# shellcheck disable=SC2086
cc -Wall -Werror -o "$tmp/umbrella" "$tmp/umbrella.c" $flags 2>"$tmp/cc.log" ||
	{ cat "$tmp/cc.log"; fail "a program including only imastream/installer.h does not build"; }

make -s -C "$top_builddir" uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1 ||
	{ cat "$tmp/uninstall.log"; fail "make uninstall failed"; }
left=$(find "$dest" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok: make install: command, library, imastream.pc (example built and matches sha256sum), man pages, imastream.conf, plugin and macros; make uninstall removes them"
