#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes the installed macros.transaction_imastream to stdout: TEMPLATE with the line that
# names the plugin, and the configuration file below SYSCONFDIR.
#
# Usage: make-macros.sh TEMPLATE RPM_PLUGINDIR PLUGINDIR SYSCONFDIR
#   RPM_PLUGINDIR  rpm's own %__plugindir ("" when there is no rpm to ask)
#   PLUGINDIR      where imastream.so is installed
#
# rpm finds plugins only by globbing %{__plugindir}/*.so (with GLOB_BRACE, in rpm 4.18 to
# 6.1), then dlopen()s what %__transaction_NAME names for each NAME.so found.  A plugin
# outside rpm's folder therefore needs %__plugindir changed; set to PLUGINDIR alone, rpm's
# own plugins (selinux, syslog, systemd_inhibit...) would silently stop loading.  So the
# folders are joined, /{RPM,OURS} (rpm strips a body's leading brace: the "/" comes
# first), and every %__transaction_NAME rpm defines, "%{__plugindir}/NAME.so", is pinned
# to the path it gives with rpm's own folder: the joined pattern is no folder to dlopen().
set -eu

[ $# = 4 ] || { echo "usage: $0 TEMPLATE RPM_PLUGINDIR PLUGINDIR SYSCONFDIR" >&2; exit 2; }
template=$1 own=$2 dir=$3 sysconfdir=$4

# glob_safe PATH: an absolute path with nothing glob(3) or rpm's macro parser reads.
glob_safe() {
	case $1 in
	/*) ;;
	*) return 1 ;;
	esac
	case $1 in
	*[][{}*?,%\\\ \	]*) return 1 ;;
	esac
}

# The lines that replace the template's %__transaction_imastream line.
plugin_lines() {
	if [ "$dir" = "$own" ]; then
		echo '%__transaction_imastream %{__plugindir}/imastream.so'
		return
	fi
	if [ -z "$own" ] || ! command -v rpm >/dev/null 2>&1; then
		echo "# This plugin is outside rpm's own %__plugindir, which was not known when this"
		echo "# file was made: while it is loaded, rpm loads the plugins of $dir only."
		echo "%__plugindir $dir"
		echo "%__transaction_imastream $dir/imastream.so"
		return
	fi
	glob_safe "$own" && glob_safe "$dir" || {
		echo "$0: $own and $dir must be absolute paths without blanks, commas, braces," \
			"glob characters or %" >&2
		exit 1
	}
	echo "# This plugin is outside rpm's own %__plugindir ($own): rpm globs both"
	echo "# folders for plugins, and its own plugins are named by the paths they have there."
	echo "%__plugindir /{${own#/},${dir#/}}"
	echo "%__transaction_imastream $dir/imastream.so"
	rpm --showrc | sed -n 's/^ *-\{0,1\}[0-9]*[:=] __transaction_\([A-Za-z0-9_]*\).*/\1/p' |
		LC_ALL=C sort -u | while read -r name; do
		[ "$name" != imastream ] || continue
		path=$(rpm --define "__plugindir $own" --eval "%{?__transaction_$name}")
		[ -n "$path" ] || path='%{nil}'
		echo "%__transaction_$name $path"
	done
}

lines=$(plugin_lines)
awk -v lines="$lines" -v conf="$sysconfdir/imastream.conf" '
	/^%__transaction_imastream / { print lines; next }
	{ gsub("/etc/imastream.conf", conf); print }
' "$template"
