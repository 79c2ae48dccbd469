# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by scripts/matrix and tests/kernel/fetch-kernel.sh: where the host's Debian
# archive is, and whether another suite of it can be reached from here.
# shellcheck shell=bash

# debian_mirror: prints the URI of the Debian archive the host's apt uses for its own
# release (the main suite, not -security or -updates), e.g. ".../debian/". Empty if none.
debian_mirror() {
	local codename
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || return 1
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
		awk -v s="$codename" '$2 == s { print $1; exit }'
}

# debian_reachable MIRROR SUITE: 0 when MIRROR/dists/SUITE/Release can be fetched (20 s).
debian_reachable() {
	local tmp rc
	tmp=$(mktemp) || return 1
	timeout 20 /usr/lib/apt/apt-helper download-file "${1%/}/dists/$2/Release" "$tmp" \
		>/dev/null 2>&1
	rc=$?
	rm -f "$tmp"
	return $rc
}
