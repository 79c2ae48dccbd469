# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers of the policy plugin tests: OpenPGP keys made with gpg, packages built from
# tests/rpm/poltest.rpmspec and signed with rpmsign, rpm runs with a policy configuration.
# shellcheck shell=sh

. "$top_srcdir/tests/integration/rpm-lib.sh"

# pol_setup: the scratch folder, rpm and gpg checks.  With pol_without_rpm_plugin set, the
# test never loads imastream.so into rpm (the sanitizer build cannot): only rpmbuild is needed.
pol_setup() {
	if [ -n "${pol_without_rpm_plugin:-}" ]; then
		need rpmbuild
		T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-policy.XXXXXX")
	else
		setup_scratch
	fi
	need gpg
	need rpmsign
	export GNUPGHOME="$T/gnupg"
	mkdir -m 700 "$GNUPGHOME"
	# The agent rpmsign starts must not outlive the test.
	trap 'gpgconf --kill gpg-agent 2>/dev/null; rm -rf "$T"' EXIT
}

# pol_key NAME: a passphrase-less RSA signing key "NAME Test <NAME@imastream.test>",
# exported armored to $T/NAME.asc; prints its long key id.
pol_key() {
	gpg --batch --passphrase '' --quick-gen-key "$1 Test <$1@imastream.test>" rsa2048 sign never \
		>"$T/gpg.log" 2>&1 || { cat "$T/gpg.log"; exit 99; }
	gpg --batch --armor --export "$1@imastream.test" >"$T/$1.asc" 2>>"$T/gpg.log"
	gpg --batch --with-colons --list-keys "$1@imastream.test" 2>>"$T/gpg.log" | awk -F: '$1 == "pub" { print tolower($5) }'
}

# pol_build NAME [rpmbuild args...]: builds poltest.rpmspec as NAME; prints the package path.
pol_build() {
	n=$1
	shift
	rpmbuild -bb --quiet --nodeps --define "_topdir $T/topdir" --define "_build_id_links none" \
		--define "_binary_payload w9.gzdio" --define "pname $n" "$@" \
		"$top_srcdir/tests/rpm/poltest.rpmspec" >"$T/rpmbuild.log" 2>&1 ||
		{ cat "$T/rpmbuild.log"; exit 99; }
	ls "$T/topdir/RPMS/noarch/$n"-[0-9]*.noarch.rpm | tail -n 1
}

# pol_sign FILE KEYNAME: signs the package header with the key made by pol_key KEYNAME.
pol_sign() {
	rpmsign --addsign --define '__gpg /usr/bin/gpg' --define "_gpg_name $2@imastream.test" \
		"$1" >"$T/rpmsign.log" 2>&1 || { cat "$T/rpmsign.log"; exit 99; }
}

# leftovers ROOT: prints what a failed install may have left: rpm temp files ("name;tid").
leftovers() {
	find "$1" -name '*;*' 2>/dev/null
}
