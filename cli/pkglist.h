/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The packages of a sign-package run: the PKG operands, and the *.rpm files under each DIR operand. */
#ifndef IMASTREAM_CLI_PKGLIST_H
#define IMASTREAM_CLI_PKGLIST_H

#include <stddef.h>

struct cli_pkglist {
	char **paths;
	size_t n, cap;
	unsigned long dirs;   /* directory operands */
	unsigned long failed; /* operands or directories that could not be read (said) */
};

/*
 * Adds @arg: a file as it is (whatever its name: the user named it), or for a directory
 * every regular file whose name ends in ".rpm" but not ".src.rpm" under it, in byte
 * order of the names, directory by directory; symlinks are never followed.  The order
 * is fixed before any package is signed, so a package renamed into place while the run
 * goes on is never met twice.  A directory without any package is a failure (said).
 * Return: 0, or -ENOMEM (said).
 */
int cli_pkglist_add(struct cli_pkglist *l, const char *arg);
void cli_pkglist_free(struct cli_pkglist *l);

#endif /* IMASTREAM_CLI_PKGLIST_H */
