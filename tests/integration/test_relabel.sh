#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream relabel and verify --rpmdb on roots installed by stock rpm without the plugin: evmctl verifies what relabel wrote, tampered files are named and left alone, reruns change nothing, kill -9 then rerun completes, the audit agrees.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need evmctl
need getfattr
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
p256_signing_key
SIGN="--mode sign --evm portable -k $T/key.pem -c $KEYS/ec-p256.crt"

PKG1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
PKG2=$(build_pkg "$top_srcdir/tests/rpm/imsextra.rpmspec")

# stock_root DIR: the two packages installed by rpm itself, no plugin, no scriptlet; the
# database at rpm's own %_dbpath below DIR (Debian: /root/.rpmdb), as relabel reads it.
stock_root() {
	new_root "$1"
	rpm --root "$1" -i --nodeps --noscripts --noplugins "$PKG1" "$PKG2" 2>"$T/rpm.err" ||
		{ cat "$T/rpm.err"; fail "rpm -i failed"; }
}

# The regular files of both packages, below the root.
FILES="opt/imstest/bin/tool opt/imstest/bin/run.sh opt/imstest/bin/run-again.sh
etc/imstest.conf opt/imstest/empty opt/imsextra/bin/helper opt/imsextra/share/a
opt/imsextra/share/b opt/imsextra/share/c etc/imsextra.conf"
CONFIGS="etc/imstest.conf etc/imsextra.conf"

xattr() { getfattr -h -e hex -n "$2" "$1" 2>/dev/null | sed -n "s/^$2=//p"; }
is_config() { case " $(echo $CONFIGS) " in *" $1 "*) return 0 ;; esac; return 1; }
dump() { (cd "$1" && getfattr -h -d -m '^security\.' -e hex $FILES 2>/dev/null); }

# --- hash mode: security.ima is 0404 and the content's sha256, nothing else ---------------
R=$T/hash
stock_root "$R"
"$IMS" relabel --root "$R" >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "hash relabel failed"; }
[ ! -s "$T/out" ] || { cat "$T/out"; fail "a clean root printed file lines"; }
grep -q "2 packages, 7 files labelled, 10 already correct, 0 modified, 0 missing, 0 failed" "$T/err" ||
	{ cat "$T/err"; fail "hash relabel summary"; }
for f in $FILES; do
	want="0x0404$(sha256sum "$R/$f" | cut -c1-64)"
	[ "$(xattr "$R/$f" security.ima)" = "$want" ] || fail "$f: security.ima is not its sha256"
	[ -z "$(xattr "$R/$f" security.evm)" ] || fail "$f: security.evm without --evm"
done
dump "$R" >"$T/before"
"$IMS" relabel --root "$R" >"$T/out" 2>"$T/err" || fail "second hash relabel failed"
grep -q "0 files labelled, 17 already correct" "$T/err" || { cat "$T/err"; fail "rerun rewrote files"; }
dump "$R" >"$T/after"
cmp -s "$T/before" "$T/after" || fail "rerun changed xattrs"

# --- --progress: the total comes from the headers first, so the line says how far ----------
# progress_lines ARGS: the progress lines of a dry run, one a line.
progress_lines() {
	"$IMS" relabel --root "$R" --dry-run --progress "$@" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "relabel --progress $*"; }
	tr '\r' '\n' <"$T/err" | sed 's/\x1b\[K//g' | grep '^imastream relabel: [0-9]* of '
}
progress_lines >"$T/progress"
# The first file always draws (no line before it to rate-limit against); the last, 100%.
grep '^imastream relabel: 1 of 17 files, 6%' "$T/progress" >/dev/null ||
	{ cat "$T/progress"; fail "no percentage after the first file"; }
[ "$(tail -n 1 "$T/progress" | cut -d, -f1-2)" = "imastream relabel: 17 of 17 files, 100%" ] ||
	{ cat "$T/progress"; fail "the last progress line is not 17 of 17, 100%"; }
[ "$(tail -n 1 "$T/progress" | sed 's/.* MiB, //')" = "2 packages done" ] ||
	{ cat "$T/progress"; fail "the last progress line does not count 2 packages done"; }
# Named packages: their files only, not the whole database's.
progress_lines imsextra >"$T/progress"
n=$(tail -n 1 "$T/progress" | sed -n 's/^imastream relabel: \([0-9]*\) of \1 files, 100%.*/\1/p')
[ -n "$n" ] && [ "$n" -lt 17 ] || { cat "$T/progress"; fail "imsextra alone: not its own total at 100%"; }
# One package: singular.
[ "$(tail -n 1 "$T/progress" | sed 's/.* MiB, //')" = "1 package done" ] ||
	{ cat "$T/progress"; fail "imsextra alone: the last progress line does not say 1 package done"; }
# Without --progress (not a terminal), no line at all.
"$IMS" relabel --root "$R" --dry-run >/dev/null 2>"$T/err" || fail "dry run without --progress"
if grep ' of 17 files' "$T/err" >/dev/null; then cat "$T/err"; fail "a progress line on a pipe"; fi

# --- where the content is hashed: on worker threads when the header's digest is all the
# chain wants, else streamed through the chain (another algorithm, verity = on) ----------
workers() {
	${ONE_CORE:-} "$IMS" relabel --root "$R" -v --dry-run "$@" >"$T/out" 2>"$T/err" ||
		{ cat "$T/err"; fail "relabel -v --dry-run $*"; }
	sed -n 's/.*relabel: \([0-9]*\) files hashed on worker threads.*/\1/p' "$T/err"
}
if [ "$(nproc)" -gt 1 ]; then
	[ "$(workers)" = 10 ] || { cat "$T/err"; fail "hash mode: the 10 files not hashed on worker threads"; }
	[ "$(workers $SIGN)" = 10 ] || { cat "$T/err"; fail "sign mode: the 10 files not hashed on worker threads"; }
else
	echo "one core: no worker threads to see"
fi
# On one core, the content streams through the chain on the caller's thread.
if command -v taskset >/dev/null; then
	[ "$(ONE_CORE="taskset -c 0" workers $SIGN)" = 0 ] || { cat "$T/err"; fail "one core: not streamed"; }
fi
[ "$(workers -o hash_algo=sha512)" = 0 ] || { cat "$T/err"; fail "sha512 is not the header's: not streamed"; }
[ "$(workers $SIGN -o verity=on)" = 0 ] || { cat "$T/err"; fail "verity = on: not streamed"; }

# --- sign + EVM portable (P-256): evmctl 1.4 verifies every file ---------------------------
"$IMS" relabel --root "$R" $SIGN >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "sign relabel failed"; }
for f in $FILES; do
	if is_config "$f"; then
		# %config files keep a digest (config_files = hash), covered by EVM as usual.
		want="0x0404$(sha256sum "$R/$f" | cut -c1-64)"
		[ "$(xattr "$R/$f" security.ima)" = "$want" ] || fail "$f: %config security.ima is not a digest"
	else
		(cd "$R" && evmctl ima_verify --key "$T/cert.der" "$f") >/dev/null 2>&1 ||
			fail "$f: evmctl ima_verify rejects the relabelled security.ima"
	fi
	(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >/dev/null 2>&1 ||
		fail "$f: evmctl verify rejects the relabelled security.evm"
done
dump "$R" >"$T/before"
"$IMS" relabel --root "$R" $SIGN -vv >"$T/out" 2>"$T/err" || fail "second sign relabel failed"
grep -q "0 files labelled, 17 already correct" "$T/err" ||
	{ cat "$T/err"; fail "signatures that verify were made again"; }
# Checked before signing: the 8 IMA signatures (%config files hold digests) and the 10 EVM
# ones are kept as they are, none is made again.
[ "$(grep -c ': security.ima holds a signature that verifies: kept$' "$T/err")" = 8 ] &&
	[ "$(grep -c ': security.evm holds a signature that verifies: kept$' "$T/err")" = 10 ] ||
	{ cat "$T/err"; fail "a rerun signed again instead of keeping the signatures that verify"; }
dump "$R" >"$T/after"
cmp -s "$T/before" "$T/after" || fail "rerun in sign mode changed xattrs"

# --- verify --rpmdb: the audit of what relabel wrote ----------------------------------------
"$IMS" verify --root "$R" --rpmdb --evm require -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb rejects a relabelled root"; }
[ ! -s "$T/out" ] || { cat "$T/out"; fail "verify --rpmdb printed lines for a sound root"; }
grep -qF "verify: $R: 17 files, 0 failed" "$T/err" || { cat "$T/err"; fail "verify --rpmdb total"; }
"$IMS" verify --root "$R" --rpmdb --format json -t "$KEYS/ec-p256.crt" imstest >"$T/json" 2>/dev/null ||
	fail "verify --rpmdb --format json failed"
[ "$(grep -c '"result":"ok"' "$T/json")" = 9 ] || { cat "$T/json"; fail "json: not 9 ok records for imstest (5 files, 3 directories, a symlink)"; }
grep -q '^{"record":"file","package":"imstest-1.0-1.noarch","path":"/opt/imstest/bin/tool","config":false,"result":"ok","content":"ok","rpm":".........","marker":" ","ima":"ok","ima_type":"signature","evm":"ok","evm_type":"portable signature"}$' "$T/json" ||
	{ cat "$T/json"; fail "json record of tool"; }
# security.ima and security.evm copied from a file of the same owner and mode: the EVM
# portable signature and the header digest pass; only security.ima's own check fails.
ima=$(xattr "$R/etc/imstest.conf" security.ima) evm=$(xattr "$R/etc/imstest.conf" security.evm)
for a in security.ima security.evm; do
	setfattr -h -n $a -v "$(xattr "$R/etc/imsextra.conf" $a)" "$R/etc/imstest.conf" || fail "setfattr $a"
done
"$IMS" verify --root "$R" --rpmdb --evm require -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" &&
	fail "verify --rpmdb passed a security.ima copied from another file"
grep -qxF "/etc/imstest.conf: FAIL: security.ima: content changed (package imstest-1.0-1.noarch)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb: no line for the copied security.ima"; }
grep -qF "verify: $R: 17 files, 1 failed" "$T/err" || { cat "$T/err"; fail "verify --rpmdb total with a copied security.ima"; }
setfattr -h -n security.ima -v "$ima" "$R/etc/imstest.conf" && setfattr -h -n security.evm -v "$evm" "$R/etc/imstest.conf" ||
	fail "setfattr: restoring imstest.conf"

# --- labels: the audit requires security.selinux when asked; relabel with file contexts --
"$IMS" verify --root "$R" --rpmdb --labels require -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" &&
	fail "verify --labels require passed files without security.selinux"
grep -qxF "/opt/imstest/bin/tool: FAIL: missing security.selinux (package imstest-1.0-1.noarch)" "$T/out" ||
	{ cat "$T/out"; fail "verify --labels require: no missing-label line"; }
grep -qF "verify: $R: 17 files, 10 failed" "$T/err" || { cat "$T/err"; fail "verify --labels require total"; }
printf '/.*\tsystem_u:object_r:usr_t:s0\n/opt/imstest/bin(/.*)?\t--\tsystem_u:object_r:bin_t:s0\n' >"$T/fc"
"$IMS" relabel --root "$R" $SIGN -o file_contexts="$T/fc" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err"; fail "relabel with file contexts failed"; }
# (share/a, b and c are one inode: labelled once; the 6 directories and the symlink too.)
grep -q "14 files labelled, 3 already correct" "$T/err" || { cat "$T/err"; fail "labels were not added"; }
[ "$(xattr "$R/opt/imstest/bin/tool" security.selinux)" = "0x$(printf 'system_u:object_r:bin_t:s0' | od -An -tx1 | tr -d ' \n')00" ] ||
	fail "tool: security.selinux is not its file context"
# Directories and symlinks get their label as at install, and nothing else (IMA appraises
# regular files; an EVM portable signature needs a security.ima).
usr_t="0x$(printf 'system_u:object_r:usr_t:s0' | od -An -tx1 | tr -d ' \n')00"
for f in opt/imstest opt/imstest/data opt/imstest/tool-link; do
	[ "$(xattr "$R/$f" security.selinux)" = "$usr_t" ] || fail "$f: no security.selinux from the file contexts"
	[ -z "$(xattr "$R/$f" security.ima)$(xattr "$R/$f" security.evm)" ] || fail "$f: IMA or EVM on a directory or symlink"
done
for f in $FILES; do
	(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >/dev/null 2>&1 ||
		fail "$f: security.evm does not cover the label relabel added"
done
"$IMS" verify --root "$R" --rpmdb --labels require --evm require -t "$KEYS/ec-p256.crt" --format json >"$T/json" 2>"$T/err" ||
	{ cat "$T/json" "$T/err"; fail "verify --labels require rejects a labelled root"; }
[ "$(grep -c '"selinux":"ok"}$' "$T/json")" = 10 ] || { cat "$T/json"; fail "json: selinux not ok on 10 files"; }
"$IMS" verify --root "$R" --rpmdb --labels none -t "$KEYS/ec-p256.crt" --format json imstest >"$T/json" 2>/dev/null ||
	fail "verify --labels none failed"
! grep -q '"selinux"' "$T/json" || fail "json: a selinux verdict with --labels none"

# --- one package signed with sha512, the other with sha256: the audit verifies both with
# one key through the same verifier (its kept contexts must follow the algorithm) ---------
R=$T/mixed
stock_root "$R"
"$IMS" relabel --root "$R" $SIGN -a sha512 imstest >/dev/null 2>"$T/err" || { cat "$T/err"; fail "relabel -a sha512 failed"; }
"$IMS" relabel --root "$R" $SIGN imsextra >/dev/null 2>"$T/err" || { cat "$T/err"; fail "relabel imsextra failed"; }
case "$(xattr "$R/opt/imstest/bin/tool" security.ima)" in 0x030206*) ;; *) fail "tool: no sha512 signature" ;; esac
case "$(xattr "$R/opt/imsextra/bin/helper" security.ima)" in 0x030204*) ;; *) fail "helper: no sha256 signature" ;; esac
"$IMS" verify --root "$R" --rpmdb --evm require -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb rejects a root signed with sha512 and sha256"; }
grep -qF "verify: $R: 17 files, 0 failed" "$T/err" || { cat "$T/err"; fail "verify --rpmdb total, sha512 and sha256"; }

# --- only the packages named; one not installed is an error -------------------------------
R=$T/named
stock_root "$R"
"$IMS" relabel --root "$R" imsextra >/dev/null 2>"$T/err" || { cat "$T/err"; fail "relabel imsextra failed"; }
[ -n "$(xattr "$R/opt/imsextra/share/a" security.ima)" ] || fail "imsextra was not labelled"
[ -z "$(xattr "$R/opt/imstest/bin/tool" security.ima)" ] || fail "imstest was labelled too"
"$IMS" relabel --root "$R" nosuchpkg >/dev/null 2>"$T/err" && fail "an unknown package succeeded"
grep -q "package nosuchpkg is not installed" "$T/err" || { cat "$T/err"; fail "unknown package message"; }

# A root stock rpm installed, never relabelled: every file lacks security.ima.
R=$T/stock
stock_root "$R"
"$IMS" verify --root "$R" --rpmdb >"$T/out" 2>"$T/err" && fail "verify --rpmdb passed an unlabelled root"
[ "$(grep -c ': FAIL: missing security.ima (package ' "$T/out")" = 10 ] ||
	{ cat "$T/out"; fail "verify --rpmdb on an unlabelled root"; }

# A root without a database is an error, and none is created in it.
mkdir "$T/nodb"
"$IMS" relabel --root "$T/nodb" >/dev/null 2>"$T/err" && fail "a root without a database succeeded"
grep -q "no rpm database" "$T/err" || { cat "$T/err"; fail "no-database message"; }
[ -z "$(ls -A "$T/nodb")" ] || fail "relabel created something in a root without a database"

# --- --dry-run writes nothing and says what it would --------------------------------------
R=$T/dry
stock_root "$R"
"$IMS" relabel --root "$R" -n $SIGN >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "dry run failed"; }
grep -q "^would label /opt/imstest/bin/tool (security.ima,security.evm)$" "$T/out" ||
	{ cat "$T/out"; fail "dry run does not say what it would write"; }
for f in $FILES; do
	[ -z "$(xattr "$R/$f" security.ima)$(xattr "$R/$f" security.evm)" ] || fail "$f: dry run wrote"
done

# --- hostile: every difference is named, none of those files gets a value ----------------
R=$T/hostile
stock_root "$R"
sed -i 's/euid/EUID/' "$R/opt/imsextra/bin/helper"            # same size, other content
echo "edited = yes" >>"$R/etc/imstest.conf"                  # an edited %config file
chmod 0700 "$R/opt/imstest/bin/tool"                          # mode
rm "$R/opt/imstest/empty"                                     # missing
mkdir "$T/outside"                                            # share/ swapped for a link out
cp -p "$R/opt/imsextra/share/a" "$R/opt/imsextra/share/b" "$R/opt/imsextra/share/c" "$T/outside/"
mv "$R/opt/imsextra/share" "$R/opt/imsextra/share.real"
ln -s "$T/outside" "$R/opt/imsextra/share"
rm "$R/opt/imstest/bin/run.sh"                                # a file swapped for a link
ln -s "$T/outside/a" "$R/opt/imstest/bin/run.sh"
# An edit within the second of the install keeps rpm's whole-second mtime: a later one.
touch -d @1500000000 "$R/opt/imsextra/bin/helper" "$R/etc/imstest.conf"
"$IMS" relabel --root "$R" $SIGN >"$T/out" 2>"$T/err" && fail "a tampered root exited 0"
[ $? = 1 ] || fail "a tampered root did not exit 1"
expect() { grep -qx -- "$1" "$T/out" || { cat "$T/out"; fail "no line '$1'"; }; }
expect "..5....T.   /opt/imsextra/bin/helper"
expect "S......T. c /etc/imstest.conf"
expect ".M.......   /opt/imstest/bin/tool"
expect "missing     /opt/imstest/empty"
expect ".M.......   /opt/imstest/bin/run.sh (replaced by a symlink)"
for f in a b c; do
	expect ".........   /opt/imsextra/share/$f (a symlink or non-directory in a path component)"
	[ -z "$(xattr "$T/outside/$f" security.ima)" ] || fail "a file outside the root was labelled"
done
expect ".M.......   /opt/imsextra/share (not a directory)"
grep -q "2 packages, 2 files labelled, 6 already correct, 8 modified, 1 missing, 0 failed" "$T/err" ||
	{ cat "$T/err"; fail "hostile summary"; }
for f in opt/imsextra/bin/helper etc/imstest.conf opt/imstest/bin/tool; do
	[ -z "$(xattr "$R/$f" security.ima)$(xattr "$R/$f" security.evm)" ] || fail "$f: labelled although modified"
done
for f in opt/imstest/bin/run-again.sh etc/imsextra.conf; do
	(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >/dev/null 2>&1 ||
		fail "$f: an intact file next to tampered ones was not labelled"
done
# The audit names the same files.
"$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" && fail "verify --rpmdb passed a tampered root"
for l in "/opt/imsextra/bin/helper: FAIL: differs from its header (..5....T.); missing security.ima (package imsextra-1.0-1.noarch)" \
	"/opt/imstest/empty: FAIL: missing (package imstest-1.0-1.noarch)" \
	"/opt/imsextra/share/a: FAIL: differs from its header (........., a symlink or non-directory in a path component) (package imsextra-1.0-1.noarch)"; do
	grep -qxF -- "$l" "$T/out" || { cat "$T/out"; fail "verify --rpmdb: no line '$l'"; }
done
# The edited %config file, unlabelled (relabel refused it), is one of the failures: the
# kernel would not read it; share/, a symlink now, is one too.
grep -qF "verify: $R: 17 files, 9 failed" "$T/err" || { cat "$T/err"; fail "verify --rpmdb total on the tampered root"; }
grep -qxF "/etc/imstest.conf: FAIL: edited (S.5....T. c); missing security.ima (package imstest-1.0-1.noarch)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb: the edited %config file"; }
# The edited %config file, on request, with what it holds now.
"$IMS" relabel --root "$R" --label-modified-config imstest >"$T/out" 2>"$T/err"
grep -qx "S......T. c /etc/imstest.conf" "$T/out" && fail "--label-modified-config still refused the %config file"
want="0x0404$(sha256sum "$R/etc/imstest.conf" | cut -c1-64)"
[ "$(xattr "$R/etc/imstest.conf" security.ima)" = "$want" ] || fail "edited %config file: security.ima is not its current digest"

# --- a hard link to a file outside the root: named, never written through ----------------
# Same content, mode, owner and mtime as the header says: only the link count tells.
R=$T/hardlink
stock_root "$R"
cp -p "$R/opt/imsextra/bin/helper" "$T/outside-helper"
rm "$R/opt/imsextra/bin/helper"
ln "$T/outside-helper" "$R/opt/imsextra/bin/helper"
# A symlink of the package hard-linked from outside: labels would land on the outside one.
ln -P "$R/opt/imstest/tool-link" "$T/outside-symlink" 2>/dev/null || fail "cannot hard-link a symlink"
before=$(getfattr -h -d -m - -e hex "$T/outside-helper" "$T/outside-symlink" 2>/dev/null; stat -c '%n %Z %z' "$T/outside-helper" "$T/outside-symlink")
"$IMS" relabel --root "$R" $SIGN >"$T/out" 2>"$T/err" && fail "a root with an outside hard link exited 0"
why="more hard links than rpm's database has paths for it (a link from elsewhere, maybe outside the root): not written"
expect "failed      /opt/imsextra/bin/helper ($why)"
expect "failed      /opt/imstest/tool-link ($why)"
after=$(getfattr -h -d -m - -e hex "$T/outside-helper" "$T/outside-symlink" 2>/dev/null; stat -c '%n %Z %z' "$T/outside-helper" "$T/outside-symlink")
[ "$before" = "$after" ] || fail "a file outside the root was written through a hard link: $before / $after"
# The package's own hard-link sets (share/a, b, c; run.sh and run-again.sh) are labelled.
for f in opt/imsextra/share/a opt/imsextra/share/b opt/imsextra/share/c opt/imstest/bin/run.sh; do
	(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >/dev/null 2>&1 ||
		fail "$f: a hard link of its own package's set was not labelled"
done
grep -q "2 packages, 6 files labelled, 9 already correct, 0 modified, 0 missing, 2 failed" "$T/err" ||
	{ cat "$T/err"; fail "hard link summary"; }
# Links between packages, as a tool that links identical files makes them: every link is a
# path of rpm's database, so both are labelled.
cat >"$T/imsdup.rpmspec" <<'SPEC'
Name: imsdup
Version: 1.0
Release: 1
Summary: a file with the content of imsextra's hard-link set
License: LGPL-2.1-or-later
BuildArch: noarch
%description
Linked to imsextra's share/a after install, as hardlink(1) would.
%install
mkdir -p %{buildroot}/opt/imsdup
printf 'one content, three names\n' > %{buildroot}/opt/imsdup/a
%files
/opt/imsdup
SPEC
PKGDUP=$(build_pkg "$T/imsdup.rpmspec")
R=$T/crosslink
stock_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKGDUP" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i imsdup"; }
ln -f "$R/opt/imsextra/share/a" "$R/opt/imsdup/a"
[ "$(stat -c %h "$R/opt/imsdup/a")" = 4 ] || fail "the cross-package link was not made"
"$IMS" relabel --root "$R" $SIGN >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "relabel with a link between packages"; }
for f in opt/imsextra/share/a opt/imsdup/a; do
	(cd "$R" && evmctl verify --generation=0 --key "$T/cert.der" "$f") >/dev/null 2>&1 ||
		fail "$f: linked to another package's file, not labelled"
done

# --- capabilities against the header's (rpm -V's P): changed or removed, named, not labelled --
need setcap
R=$T/caps
stock_root "$R"
getcap "$R/opt/imstest/bin/tool" | grep -q "cap_net_raw=ep" || fail "rpm did not set tool's capability"
rpm -V --nodeps --noscripts --root "$R" imstest >/dev/null || fail "rpm -V rejects a fresh root"
setcap cap_net_raw,cap_sys_admin=ep "$R/opt/imstest/bin/tool" || fail "setcap"
setcap cap_net_raw=ep "$R/opt/imstest/bin/run-again.sh" || fail "setcap" # and run.sh: one inode
ln -sfn bin/run.sh "$R/opt/imstest/tool-link"                   # a symlink's target (L)
chmod 0700 "$R/opt/imstest/data"                               # a directory's mode
rpm -V --nodeps --noscripts --root "$R" imstest | grep -qx "........P    /opt/imstest/bin/tool" ||
	fail "rpm -V itself does not see the changed capability"
"$IMS" relabel --root "$R" $SIGN >"$T/out" 2>"$T/err" && fail "changed capabilities exited 0"
expect "........P   /opt/imstest/bin/tool"
expect "........P   /opt/imstest/bin/run-again.sh"
expect "........P   /opt/imstest/bin/run.sh"
expect "....L....   /opt/imstest/tool-link"
expect ".M.......   /opt/imstest/data"
for f in opt/imstest/bin/tool opt/imstest/bin/run-again.sh opt/imstest/bin/run.sh; do
	[ -z "$(xattr "$R/$f" security.ima)$(xattr "$R/$f" security.evm)" ] || fail "$f: labelled although its capabilities changed"
done
grep -q "2 packages, 5 files labelled, 7 already correct, 5 modified, 0 missing, 0 failed" "$T/err" ||
	{ cat "$T/err"; fail "capabilities summary"; }
"$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" && fail "verify --rpmdb passed changed capabilities"
grep -qxF "/opt/imstest/bin/tool: FAIL: differs from its header (........P); missing security.ima (package imstest-1.0-1.noarch)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb does not name the changed capability"; }
# Removed: the header still says cap_net_raw=ep.
setcap -r "$R/opt/imstest/bin/tool" || fail "setcap -r"
"$IMS" relabel --root "$R" -n imstest >"$T/out" 2>&1
expect "........P   /opt/imstest/bin/tool"

# --- kill -9 at any moment, then a rerun: everything verifies, no stale security.evm ------
spec=$T/imsmany.rpmspec
cat >"$spec" <<'EOF'
Name: imsmany
Version: %{?pkgversion}%{!?pkgversion:1.0}
Release: 1
Summary: many files
License: LGPL-2.1-or-later
BuildArch: noarch
%description
Enough content for the relabel kill test to land mid-run.
%install
mkdir -p %{buildroot}/opt/imsmany
i=0; while [ $i -lt 100 ]; do { head -c 1048576 /dev/zero; echo "file $i"; } > %{buildroot}/opt/imsmany/f$i; i=$((i + 1)); done
%files
/opt/imsmany
EOF
PKG3=$(build_pkg "$spec" 1.0 w0.gzdio)
R=$T/kill
new_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG3" 2>"$T/rpm.err" || fail "rpm -i imsmany"
"$IMS" relabel --root "$R" $SIGN >/dev/null 2>&1 &
pid=$!
# Killed as soon as the first file is done: the others are somewhere on the way.
while kill -0 "$pid" 2>/dev/null && [ -z "$(xattr "$R/opt/imsmany/f0" security.evm)" ]; do
	sleep 0.01
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
# Whatever it reached: a security.evm present covers the security.ima present.
n=0
for f in "$R"/opt/imsmany/f*; do
	[ -n "$(xattr "$f" security.evm)" ] || continue
	n=$((n + 1))
	evmctl verify --generation=0 --key "$T/cert.der" "$f" >/dev/null 2>&1 ||
		fail "${f#$R}: a security.evm that does not cover the file after kill -9"
done
echo "killed with $n of 100 files signed"
"$IMS" relabel --root "$R" $SIGN >/dev/null 2>"$T/err" || { cat "$T/err"; fail "rerun after kill failed"; }
for f in "$R"/opt/imsmany/f*; do
	evmctl ima_verify --key "$T/cert.der" "$f" >/dev/null 2>&1 &&
		evmctl verify --generation=0 --key "$T/cert.der" "$f" >/dev/null 2>&1 ||
		fail "${f#$R}: not right after kill -9 and a rerun"
done
"$IMS" relabel --root "$R" $SIGN >/dev/null 2>"$T/err" || fail "third run failed"
grep -q "0 files labelled, 101 already correct" "$T/err" || { cat "$T/err"; fail "third run rewrote files"; }
# What a kill between security.ima and security.evm leaves, made on purpose: the rerun's
# ECDSA signature differs from the one on disk, and its security.evm must cover the one kept.
f=$R/opt/imsmany/f7
setfattr -x security.evm "$f" || fail "setfattr -x security.evm"
"$IMS" relabel --root "$R" $SIGN >/dev/null 2>"$T/err" || { cat "$T/err"; fail "relabel after removing a security.evm"; }
evmctl verify --generation=0 --key "$T/cert.der" "$f" >/dev/null 2>&1 ||
	fail "${f#$R}: security.ima kept without its security.evm, and the new security.evm does not cover it"
grep -q "1 files labelled, 100 already correct" "$T/err" || { cat "$T/err"; fail "a lone missing security.evm: wrong count"; }
echo "PASS: relabel"
