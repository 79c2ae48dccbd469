#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel acceptance of trees that stock rpm installed through the imastream.so plugin:
# hash, IMA-signature and IMA+EVM modes, judged in one boot (see installed-tree.sh).
exec "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/kernel/installed-tree.sh" rpm
