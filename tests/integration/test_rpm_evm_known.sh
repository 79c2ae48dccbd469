#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The EVM input of the files rpm creates, without reading each back: in sign + EVM mode the plugin reads the inode back (flistxattr) for one file of each package, the first the chain set no label on, and predicts the rest from rpm's header and its own values; evmctl verifies every regular file, the ones with capabilities or hard links (always read back) included.  Under an LSM that labels new inodes (emulated: tests/integration/lsm_label_new.c), that one file disagrees and every file is read back, so the label is signed too.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need strace
need evmctl
need cc
setup_scratch
p256_signing_key
cc -shared -fPIC -O2 -o "$T/lsm_label_new.so" "$top_srcdir/tests/integration/lsm_label_new.c" -ldl ||
	{ echo "ERROR: cannot build the LD_PRELOAD library"; exit 99; }

# A package of 20 plain files beside imstest (capabilities, a hard link pair, %config).
cat >"$T/many.rpmspec" <<'SPEC'
Name:		many
Version:	1.0
Release:	1
Summary:	twenty plain files
License:	LGPL-2.1-or-later
BuildArch:	noarch
%description
Twenty plain files.
%install
mkdir -p %{buildroot}/opt/many
for i in $(seq -w 1 20); do echo "file $i" > %{buildroot}/opt/many/f$i; done
%files
/opt/many
SPEC
many=$(build_pkg "$T/many.rpmspec")
imstest=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
R=$T/root

# install [LABEL [CHAIN]]: both packages, sign + EVM (CHAIN: the plugins, with the
# file_contexts $T/fc), every flistxattr logged with the fd's path.
install() {
	new_root "$R"
	chain=()
	[ -z "${2:-}" ] || chain=(--define "_imastream_plugins $2" --define "_imastream_file_contexts $T/fc")
	strace -f -y -qq -e trace=flistxattr -o "$T/trace" ${1:+-E LD_PRELOAD=$T/lsm_label_new.so} \
		${1:+-E LSM_LABEL_NEW=$1} \
		rpm --root "$R" --dbpath /var/lib/rpm --nodeps --noscripts \
		--define "__plugindir $top_builddir/.libs" --define "_imastream_config %{nil}" \
		--define "__transaction_imastream $SO" --define "_imastream_mode sign" \
		--define "_imastream_key $T/key.pem" --define "_imastream_evm portable" "${chain[@]}" \
		-i "$many" "$imstest" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i failed"; }
}
# read_back PATTERN: how many files whose temp name matches PATTERN were read back.
read_back() { grep -c "^[0-9]* *flistxattr([0-9]*<$R$1;" "$T/trace" || true; }
# all_verify: evmctl verifies security.evm of every regular file of both packages.
all_verify() {
	n=0
	for f in $(cd "$R" && find opt etc -type f | sort); do
		(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; getfattr -h -d -m - -e hex "$R/$f"; fail "$f: evmctl verify ($1)"; }
		n=$((n + 1))
	done
	[ "$n" = 25 ] || fail "$n regular files verified, expected 25 ($1)"
}

echo "== no LSM labels new inodes: one file of each package read back"
install
all_verify "no LSM"
got=$(read_back "/opt/many/f[0-9]*")
[ "$got" = 1 ] || { cat "$T/trace"; fail "$got files of many read back, expected 1"; }
# imstest: its first plain file, the file with capabilities, the hard link pair (rpm
# labels its inode once, under the name it writes the content to).
got=$(read_back "/\(opt/imstest/[a-z/.-]*\|etc/imstest.conf\)")
[ "$got" = 3 ] || { cat "$T/trace"; fail "$got files of imstest read back, expected 3"; }
echo "ok: 25 files verify; many: 1 of 20 read back, imstest: 3 of 5"

echo "== an LSM labels every new inode: every file read back, the label signed"
install "system_u:object_r:usr_t:s0"
[ "$(getfattr -h --only-values -n security.selinux "$R/opt/many/f07" 2>/dev/null | tr -d '\0')" = \
	system_u:object_r:usr_t:s0 ] || fail "the emulated LSM did not label /opt/many/f07"
all_verify "labelled"
got=$(read_back "/opt/many/f[0-9]*")
[ "$got" = 20 ] || { cat "$T/trace"; fail "$got files of many read back, expected 20"; }
echo "ok: 25 files verify with their labels; many: 20 of 20 read back"

echo "== the chain labels the first files, the LSM every one: the read back waits for an unlabelled file"
# The chain's label over the LSM's would hide it: only f06 on can show the LSM's.
printf '/opt/many/f0[1-5]\tsystem_u:object_r:bin_t:s0\n' >"$T/fc"
install "system_u:object_r:usr_t:s0" selinux,ima,evm
[ "$(getfattr -h --only-values -n security.selinux "$R/opt/many/f03" 2>/dev/null | tr -d '\0')" = \
	system_u:object_r:bin_t:s0 ] || fail "the chain did not label /opt/many/f03"
all_verify "chain and LSM labels"
got=$(read_back "/opt/many/f[0-9]*")
[ "$got" = 20 ] || { cat "$T/trace"; fail "$got files of many read back, expected 20"; }
echo "ok: 25 files verify with either label; many: 20 of 20 read back"
