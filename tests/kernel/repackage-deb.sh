#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes one rpm spec whose subpackages are the packages of a Debian root, each with the
# files it installed, so that one rpmbuild over that root repackages the whole system.
#
# Usage: repackage-deb.sh ROOT LISTS OUT.spec
#   ROOT   the installed root, also the spec's buildroot (rpmbuild --buildroot)
#   LISTS  a folder with, per package NAME: NAME.list (the paths it installed, as
#          dpkg's info/NAME.list), NAME.version (a Debian version), optionally
#          NAME.conffiles (dpkg's conffiles: %config(noreplace)) and NAME.ghost (paths
#          that the system writes at run time: %ghost, not installed). The package
#          "image-accounts" comes first: every other requires it before its files,
#          since rpm looks owners up in the root's /etc/passwd and /etc/group.
# Every path is written as it really is in ROOT: the folders of a listed /bin/x are
# resolved (a merged /usr has it at /usr/bin/x), so that rpm never writes through a
# folder link. Modes, owners (by name, from ROOT's passwd and group) and file
# capabilities (getcap) come from ROOT. A listed path ROOT lacks is left out. Prints the
# number of packages and paths (the root folder itself is no package's); exits 1 with one line naming what is wrong (an owner
# with no name in ROOT, a path no folder of ROOT resolves to).
set -uo pipefail

[ $# = 3 ] || { echo "usage: repackage-deb.sh ROOT LISTS OUT.spec" >&2; exit 2; }
root=$(realpath -e -- "$1") || { echo "repackage-deb: no root $1" >&2; exit 1; }
lists=$2 out=$3
die() { echo "repackage-deb: $*" >&2; exit 1; }
[ -f "$lists/image-accounts.list" ] || die "$lists has no image-accounts.list"
command -v getcap >/dev/null || die "getcap not found (package libcap2-bin)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Every entry of ROOT: type, mode (with setuid, setgid, sticky), uid, gid, path.
(cd "$root" && find . -xdev -printf '%y\t%#m\t%U\t%G\t%P\n') >"$tmp/meta" || die "cannot list $root"
getcap -r "$root" 2>/dev/null | awk -v r="$root" '
	{ p = substr($1, length(r) + 2); print p "\t" $2 }' >"$tmp/caps"

# The real folder of every listed path's folder, once each (realpath of ROOT's links;
# a link that leaves ROOT keeps the spelled name).
cat "$lists"/*.list | sed -e 's|/[^/]*$||' -e 's|^$|/|' | LC_ALL=C sort -u >"$tmp/dirs"
awk -v r="$root" '{ print r $0 }' "$tmp/dirs" | xargs -d '\n' -r realpath -m -- >"$tmp/real" ||
	die "cannot resolve the folders of the lists"
paste "$tmp/dirs" "$tmp/real" >"$tmp/dirmap"

cut -d: -f1,3 "$root/etc/passwd" >"$tmp/passwd" && cut -d: -f1,3 "$root/etc/group" >"$tmp/group" ||
	die "cannot read $root/etc/passwd and group"
# image-accounts first: the others require it.
(cd "$lists" && ls -1 -- *.list) | sed 's/\.list$//' |
	awk '$0 == "image-accounts" { print; next } $0 == "image-local" { l = 1; next }
		{ o[++n] = $0 } END { for (i = 1; i <= n; i++) print o[i]; if (l) print "image-local" }' >"$tmp/pkgs"
# Written aside and moved into place whole: a failure leaves no spec.
awk -F'\t' -v root="$root" -v lists="$lists" -v out="$tmp/spec" '
function esc(p,   q) {
	# rpm expands macros in %files: % doubled. Quoted, a lone "[" is taken as it is
	# (a backslash would be kept in the name).
	q = p; gsub(/%/, "%%", q)
	return "\"" q "\""
}
function debver(v, part,   e, u, r, i) {
	e = ""; u = v; r = "0"
	if ((i = index(u, ":")) > 0) { e = substr(u, 1, i - 1); u = substr(u, i + 1) }
	if (match(u, /-[^-]*$/)) { r = substr(u, RSTART + 1); u = substr(u, 1, RSTART - 1) }
	gsub(/[-:]/, "_", u); gsub(/[-:]/, "_", r)
	return part == "e" ? e : part == "v" ? u : r
}
# emit PACKAGE PATH GHOST CONFIG: the %files line of PATH, with its mode and owners.
function emit(n, p, g, c,   m, pre) {
	if (!(uid[p] in uname)) { print "repackage-deb: " p ": owner uid " uid[p] " has no name in " root "/etc/passwd" >"/dev/stderr"; failed = 1; exit 1 }
	if (!(gid[p] in gname)) { print "repackage-deb: " p ": group gid " gid[p] " has no name in " root "/etc/group" >"/dev/stderr"; failed = 1; exit 1 }
	m = type[p] == "l" ? "-" : mode[p]
	pre = "%attr(" m "," uname[uid[p]] "," gname[gid[p]] ") "
	if (type[p] == "d") pre = "%dir " pre
	if (p in caps) pre = pre "%caps(" caps[p] ") "
	if (g) pre = pre "%ghost "
	else if (type[p] == "f" && (c || (n == "image-local" && p ~ /^\/etc\//))) pre = pre "%config(noreplace) "
	print pre esc(p) >out
	owned[p] = 1
	paths++
}
FILENAME ~ /dirmap$/ {
	real = $2
	if (real == root) real = "/"
	else if (index(real, root "/") == 1) real = substr(real, length(root) + 1)
	else real = $1
	dmap[$1] = real; next
}
FILENAME ~ /meta$/ { p = "/" $5; if ($5 == "") p = "/"; type[p] = $1; mode[p] = $2; uid[p] = $3; gid[p] = $4; next }
FILENAME ~ /caps$/ { caps["/" $1] = $2; next }
FILENAME ~ /passwd$/ { split($0, f, ":"); uname[f[2]] = f[1]; next }
FILENAME ~ /group$/ { split($0, f, ":"); gname[f[2]] = f[1]; next }
FILENAME ~ /pkgs$/ { pkgs[++npkgs] = $1; next }
END {
	if (failed) exit 1
	print "# Generated by tests/kernel/repackage-deb.sh: do not edit." >out
	print "%global __os_install_post %{nil}" >out
	print "%global __arch_install_post %{nil}" >out
	print "%global _build_id_links none" >out
	print "%global debug_package %{nil}" >out
	print "%global _binary_payload w1.zstdio" >out
	print "%global _unpackaged_files_terminate_build 1" >out
	print "Name: imastream-image-root\nVersion: 1\nRelease: 1\nSummary: the repackaged root\nLicense: distributable" >out
	print "%description\nThe packages of one Debian root, repackaged.\n" >out
	paths = 0
	for (k = 1; k <= npkgs; k++) {
		n = pkgs[k]
		vf = lists "/" n ".version"; v = "0"
		if ((getline v < vf) <= 0) v = "0"
		close(vf)
		delete conf; delete ghost
		cf = lists "/" n ".conffiles"
		while ((getline l < cf) > 0) { sub(/ .*/, "", l); conf[l] = 1 }
		close(cf)
		gf = lists "/" n ".ghost"
		while ((getline l < gf) > 0) ghost[l] = 1
		close(gf)
		print "%package -n " n >out
		if (debver(v, "e") != "") print "Epoch: " debver(v, "e") >out
		print "Version: " debver(v, "v") "\nRelease: " debver(v, "r") >out
		print "Summary: Debian package " n " " v ", repackaged\nAutoReqProv: no" >out
		if (n != "image-accounts") print "Requires(pre): image-accounts" >out
		print "%description -n " n "\nThe files of Debian package " n " " v ".\n" >out
		print "%files -n " n >out
		lf = lists "/" n ".list"
		while ((getline l < lf) > 0) {
			if (l == "" || l == "/." ) continue
			d = l; sub(/\/[^\/]*$/, "", d); if (d == "") d = "/"
			b = substr(l, length(d == "/" ? "" : d) + 2)
			if (!(d in dmap)) { print "repackage-deb: " l ": its folder was not resolved" >"/dev/stderr"; exit 1 }
			p = (dmap[d] == "/" ? "" : dmap[d]) "/" b
			if (seen[n, p]++) continue
			if (!(p in type)) continue
			emit(n, p, l in ghost, l in conf)
		}
		close(lf)
		if (n == "image-local")
			for (p in type)
				if (!(p in owned) && p != "/") {
					emit(n, p, p in ghost, 0)
					extra++
				}
		print "" >out
	}
	if (failed) exit 1
	print "repackage-deb: " npkgs " packages, " paths " paths, " extra " of them in no list (image-local)"
}' "$tmp/dirmap" "$tmp/meta" "$tmp/caps" "$tmp/passwd" "$tmp/group" "$tmp/pkgs" || exit 1
mv "$tmp/spec" "$out" || die "cannot write $out"
