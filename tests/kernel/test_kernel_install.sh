#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel acceptance of trees that the streaming installer (imastream install) wrote:
# hash, IMA-signature and IMA+EVM modes, judged in one boot (see installed-tree.sh).
# Skips while the build has no 'imastream install'.
exec "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/kernel/installed-tree.sh" imastream
