# SPDX-License-Identifier: LGPL-2.1-or-later
# A tree built without root, for installed-tree.sh's boot: nobody, root of a new user
# namespace (unshare -r, as rootless podman builds), installs the test package with the
# INSTALLER in sign mode with EVM portable signatures; the security xattrs go pending;
# root then writes them with imastream relabel --pending, and the kernel judges the tree
# like the others.
# shellcheck shell=bash

# rootless_why: empty when this machine can build as nobody in a user namespace, else why
# not (the tree is then left out of the boot, said in one line).
rootless_why() {
	command -v unshare >/dev/null || { echo "no unshare"; return; }
	command -v setpriv >/dev/null || { echo "no setpriv"; return; }
	id nobody >/dev/null 2>&1 || { echo "no user nobody"; return; }
	setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -r true 2>/dev/null ||
		echo "an unprivileged user cannot unshare -r here"
}

# rootless_tree ROOT: the tree, or 1 with what failed said.
rootless_tree() {
	local root=$1 keys=$tmp/rootless-keys log=$tmp/rootless.log
	local as=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$keys" unshare -r)
	chmod 755 "$tmp" && mkdir -p "$root" "$keys" &&
		cp "$tmp/trusted.pem" "$tmp/trusted.der" "$keys/" &&
		chown -R nobody:nogroup "$root" "$keys" && chmod -R a+rX "$tmp/topdir" || return 1
	case "$installer" in
	rpm)
		"${as[@]}" rpm --root "$root" --dbpath /var/lib/rpm --nodeps --noscripts \
			--define "__plugindir $builddir/.libs" --define "__transaction_imastream $so" \
			--define "_imastream_mode sign" --define "_imastream_evm portable" \
			--define "_imastream_key $keys/trusted.pem" \
			--define "_imastream_cert $keys/trusted.der" -i "$pkg" ;;
	imastream)
		"${as[@]}" "$imastream" install --root "$root" --allow-unsigned --mode sign \
			--evm portable --key "$keys/trusted.pem" --cert "$keys/trusted.der" "$pkg" ;;
	esac >"$log" 2>&1 || { echo "the rootless $installer build failed:"; cat "$log"; return 1; }
	grep -q 'security xattrs pending' "$log" ||
		{ echo "the rootless $installer build left no labels pending:"; cat "$log"; return 1; }
	"$imastream" relabel --pending --root "$root" --dbpath /var/lib/rpm >"$log" 2>&1 ||
		{ echo "relabel --pending of the rootless tree failed:"; cat "$log"; return 1; }
}
