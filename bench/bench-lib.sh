# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the rpm benchmarks: a corpus of real binaries, packages cut from it or
# made of small files, a P-256 signing key, wall-clock timing of one command, medians and
# ratios.  Source it after setting $work.
# shellcheck shell=bash

: "${work:?bench-lib.sh needs \$work}"

# bench_corpus MIB: $work/corpus, MIB MiB of this machine's binaries and libraries, so the
# payload compresses like a real one.  Repeated if the machine has fewer.
bench_corpus() {
	local want=$(($1 * 1048576)) have
	corpus=$work/corpus
	find /usr/lib/x86_64-linux-gnu /usr/bin /usr/libexec -type f -size +16k 2>/dev/null |
		sort | while read -r f; do cat "$f"; done 2>/dev/null | head -c "$want" >"$corpus" || true
	have=$(stat -c %s "$corpus")
	[ "$have" -gt 0 ] || { echo "bench: no binaries to make a corpus from" >&2; return 1; }
	while [ "$have" -lt "$want" ]; do
		head -c $((want - have)) "$corpus" >>"$corpus.more"
		cat "$corpus.more" >>"$corpus"
		rm -f "$corpus.more"
		have=$(stat -c %s "$corpus")
	done
}

# bench_build_pkg NAME COUNT SIZE PAYLOAD: prints the path of a noarch package NAME-1-1
# holding COUNT files of SIZE bytes under /opt/NAME (consecutive slices of the corpus,
# 100 files per directory).  Build trees are removed; the package stays in $work/top.
bench_build_pkg() {
	local name=$1 count=$2 size=$3 payload=$4 dir=$work/src-$1 i=0 d
	mkdir -p "$dir"
	split -b "$size" -a 6 -d "$corpus" "$dir/f" 2>/dev/null
	find "$dir" -maxdepth 1 -type f | sort | tail -n +$((count + 1)) | xargs -r rm -f
	[ "$(find "$dir" -maxdepth 1 -type f | wc -l)" = "$count" ] ||
		{ echo "bench: corpus too small for $count files of $size bytes" >&2; return 1; }
	# Directories of 100 files, as packages have.
	for f in "$dir"/f*; do
		d=$dir/d$((i / 100))
		[ -d "$d" ] || mkdir "$d"
		mv "$f" "$d/"
		i=$((i + 1))
	done
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
		"$work/$name.spec" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; return 1; }
	rm -rf "$dir" "$work/top/BUILDROOT" "$work/top/BUILD"
	echo "$work/top/RPMS/noarch/$name-1-1.noarch.rpm"
}

# bench_text_pkg TOP K FILES: builds in rpm's _topdir TOP the noarch package benchK-1-1 of
# FILES one-line files under /bK ("package K file N"; "file N" for an empty K), packages
# that cost their signer per file, not per byte; prints its path.
bench_text_pkg() {
	local top=$1 k=$2 files=$3
	mkdir -p "$top/SPECS"
	cat >"$top/SPECS/b$k.spec" <<SPEC
Name: bench$k
Version: 1
Release: 1
Summary: b
License: MIT
BuildArch: noarch
%description
b
%install
mkdir -p %{buildroot}/b$k
i=0; while [ \$i -lt $files ]; do echo "${k:+package $k }file \$i" > %{buildroot}/b$k/f\$i; i=\$((i + 1)); done
%files
/b$k
SPEC
	rpmbuild -bb --quiet --define "_topdir $top" "$top/SPECS/b$k.spec" >/dev/null 2>&1 || return 1
	echo "$top/RPMS/noarch/bench$k-1-1.noarch.rpm"
}

# bench_text_pkgs TOP COUNT FILES: COUNT distinct packages (benchsub0-1-1 ...) of FILES
# small text files each, built by one rpmbuild as subpackages; their folder is printed.
# Copies of one package share its header, which a manifest refuses to hold twice.
bench_text_pkgs() {
	local top=$1 count=$2 files=$3 k
	mkdir -p "$top/SPECS"
	{
		printf 'Name: benchsub\nVersion: 1\nRelease: 1\nSummary: b\nLicense: MIT\n'
		printf 'BuildArch: noarch\n%%description\nb\n'
		for ((k = 0; k < count; k++)); do
			printf '%%package -n benchsub%d\nSummary: b\n%%description -n benchsub%d\nb\n' $k $k
		done
		printf '%%install\nk=0; while [ $k -lt %d ]; do mkdir -p %%{buildroot}/s$k\n' "$count"
		printf 'i=0; while [ $i -lt %d ]; do echo "package $k file $i" > %%{buildroot}/s$k/f$i; i=$((i + 1)); done\n' "$files"
		printf 'k=$((k + 1)); done\n'
		for ((k = 0; k < count; k++)); do
			printf '%%files -n benchsub%d\n/s%d\n' $k $k
		done
	} >"$top/SPECS/subs.spec"
	rpmbuild -bb --quiet --define "_topdir $top" --define "_build_id_links none" \
		--define "__os_install_post %{nil}" "$top/SPECS/subs.spec" >/dev/null 2>&1 || return 1
	echo "$top/RPMS/noarch"
}

# bench_p256_cert KEY CERT CN: a new P-256 key in KEY (mode 600) and its self-signed
# certificate in CERT, with the subject key id the kernel takes the key id from.
bench_p256_cert() {
	bench_ec_cert P-256 "$@"
}
# bench_ec_cert CURVE KEY CERT CN: the same on CURVE (P-256, P-384).
bench_ec_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:"$1" -nodes -days 2 -subj "/CN=$4" \
		-addext subjectKeyIdentifier=hash -keyout "$2" -out "$3" >/dev/null 2>&1
	chmod 600 "$2"
}

# bench_elapsed CMD...: "WALL CPU" seconds of one run of CMD (CPU: user + system of CMD
# and its children, every thread), output discarded; a failure is fatal (its stderr is
# shown).  $fresh is a new empty directory on $work for CMD to install into, removed
# afterwards, outside the timing.
bench_elapsed() {
	local rc=0 TIMEFORMAT='%R %U %S'
	fresh=$work/root.$RANDOM$RANDOM
	mkdir -p "$fresh"
	sync
	{ time "$@" >/dev/null 2>"$work/stderr" || rc=$?; } 2>"$work/time"
	if [ "$rc" != 0 ]; then
		echo "bench: '$*' failed ($rc):" >&2
		tail -5 "$work/stderr" >&2
		return 1
	fi
	rm -rf "$fresh"
	awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' "$work/time"
}

# bench_median T...: the median of the given times (the lower middle one for an even count).
bench_median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# bench_min T...: the best of the given times.
bench_min() {
	printf '%s\n' "$@" | sort -g | head -n 1
}

# bench_ratio A B [DIGITS]: A / B.
bench_ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-3}" 'BEGIN { printf "%.*f\n", d, a / b }'
}

# bench_unwrap VAR: when the program $VAR names is libtool's wrapper script (the program
# itself in .libs/ beside it), points VAR at the program and puts the build's libraries
# on LD_LIBRARY_PATH: the wrapper's shell and sed would otherwise be timed with it, which
# an installed program does not pay.
bench_unwrap() {
	local -n bench_prog=$1
	local dir=${bench_prog%/*} base=${bench_prog##*/}
	[ "$dir" != "$bench_prog" ] || dir=.
	[ -x "$dir/.libs/$base" ] || return 0
	bench_prog=$dir/.libs/$base
	export LD_LIBRARY_PATH=${top_builddir:-.}/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# bench_pair_min BEST "WALL CPU": the smaller wall and the smaller CPU time of two
# "WALL CPU" pairs, each on its own (BEST may be empty: the first round).
bench_pair_min() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(b, n, " ")
		if (a == "") { print b; exit }
		split(a, o, " ")
		printf "%s %s\n", (n[1] + 0 < o[1] + 0) ? n[1] : o[1], (n[2] + 0 < o[2] + 0) ? n[2] : o[2] }'
}
bench_wall() { echo "${1% *}"; }
bench_cpu() { echo "${1#* }"; }

# bench_row WIDTH LABEL PEER OURS: "LABEL  wall s  CPU s  (x wall ratio, x CPU ratio)" for
# "WALL CPU" pairs, the ratios being PEER / OURS; none without PEER.
bench_row() {
	printf "  %-${1}s %7.3f s wall %7.3f s CPU" "$2" "$(bench_wall "$4")" "$(bench_cpu "$4")"
	[ -z "$3" ] || printf '   (x%s wall, x%s CPU)' \
		"$(bench_ratio "$(bench_wall "$3")" "$(bench_wall "$4")" 2)" \
		"$(bench_ratio "$(bench_cpu "$3")" "$(bench_cpu "$4")" 2)"
	echo
}

# bench_issue_root ROOT NBIG PAYLOAD: installs with rpm into ROOT (rpm's own %_dbpath below
# it) the two bench packages the issues measure on, NBIG x 16 MiB and 5,000 x 16 KiB,
# built from a fresh corpus; sets $nfiles to the number of files.
bench_issue_root() {
	local root=$1 nbig=$2 payload=$3 big small
	bench_corpus $((nbig * 16 > 80 ? nbig * 16 : 80))
	big=$(bench_build_pkg big "$nbig" 16777216 "$payload")
	small=$(bench_build_pkg small 5000 16384 "$payload")
	rm -f "$corpus"
	mkdir -p "$root"
	rpm -i --nodeps --noscripts --notriggers --noplugins --root "$root" "$big" "$small"
	nfiles=$((nbig + 5000))
}

# bench_small_files DIR COUNT SIZE: COUNT files of SIZE random bytes under DIR, 1,000 to a
# directory, as packages have them.
bench_small_files() {
	local dir=$1 count=$2 size=$3 d n
	mkdir "$dir"
	for ((d = 0; d * 1000 < count; d++)); do
		n=$((count - d * 1000 < 1000 ? count - d * 1000 : 1000))
		mkdir "$dir/d$d"
		head -c $((n * size)) /dev/urandom | split -b "$size" -a 3 -d - "$dir/d$d/f"
	done
}
