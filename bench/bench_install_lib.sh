# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the install benchmarks: the scratch folder, packages built from this machine's binaries, timing.
# Reads mb, nsmall, payload and runs; sets work and corpus.  Sourced, not run.
# shellcheck shell=bash

work=$(mktemp -d /dev/shm/imastream-bench-install.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Content: concatenated binaries and libraries, cut into files.
corpus=$work/corpus
find /usr/lib/x86_64-linux-gnu /usr/bin -type f -size +16k 2>/dev/null | sort |
	while read -r f; do cat "$f"; done 2>/dev/null | head -c $((mb * 1024 * 1024)) >"$corpus" || true

# build NAME FILES SIZE: a package whose files are consecutive slices of the corpus; prints its path.
build() {
	local name=$1 count=$2 size=$3 dir=$work/src-$1
	mkdir -p "$dir"
	split -b "$size" -a 5 -d "$corpus" "$dir/f" 2>/dev/null
	find "$dir" -type f | sort | tail -n +$((count + 1)) | xargs -r rm -f
	cat >"$work/$name.spec" <<SPEC
Name: $name
Version: 1
Release: 1
Summary: bench
License: MIT
BuildArch: noarch
%description
bench
%install
mkdir -p %{buildroot}/opt/$name
cp -a $dir/. %{buildroot}/opt/$name/
%files
/opt/$name
SPEC
	rpmbuild -bb --quiet --define "_topdir $work/top" --define "_binary_payload $payload" \
		--define '_build_id_links none' --define '__os_install_post %{nil}' \
		"$work/$name.spec" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; exit 1; }
	echo "$work/top/RPMS/noarch/$name-1-1.noarch.rpm"
}

# payload_of PKG OUT: the compressed payload bytes (after lead, signature and header).
payload_of() {
	local pkg=$1 off=96 n hs
	be32() { od -An -tu1 -j "$1" -N4 "$pkg" | awk '{ print ($1 * 16777216) + ($2 * 65536) + ($3 * 256) + $4 }'; }
	n=$(be32 $((off + 8))); hs=$(be32 $((off + 12)))
	off=$((off + 16 + 16 * n + hs)); off=$(((off + 7) / 8 * 8))
	n=$(be32 $((off + 8))); hs=$(be32 $((off + 12)))
	off=$((off + 16 + 16 * n + hs))
	tail -c +$((off + 1)) "$pkg" >"$2"
}

# best CMD...: the best wall time of $runs runs, in seconds; $fresh is a new empty root.
best() {
	local b="" t s e
	for _ in $(seq "$runs"); do
		fresh=$work/root.$RANDOM$RANDOM
		mkdir -p "$fresh"
		sync
		s=$(date +%s.%N)
		"$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; echo "bench-install: '$*' failed" >&2; exit 1; }
		e=$(date +%s.%N)
		rm -rf "$fresh"
		t=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
