/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-boot record of replaced files' digests, for the rpm adapter and imastream policy. */
#ifndef IMASTREAM_INSTALLED_BOOT_RECORD_H
#define IMASTREAM_INSTALLED_BOOT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

/*
 * ROOT/var/lib/imastream/boot/BOOTID, BOOTID the running kernel's boot id: the digests
 * the files a transaction replaced or erased had, which the kernel may have measured
 * before the transaction and keeps in its measurement list until the next boot.  Text:
 *	imastream boot record 1 BOOTID
 *	ALGO:HEX PATH			(one per file; '\' and newline in PATH as \\ and \n)
 */
#define IMS_BOOT_ID_LEN 36
#define IMS_BOOT_RECORD_DIR "var/lib/imastream/boot"

/*
 * The running kernel's boot id (/proc/sys/kernel/random/boot_id), or $IMASTREAM_BOOT_ID,
 * which the tests set to stand for another boot.  Return: 0; -EINVAL or -errno (said).
 */
int ims_boot_id(char out[IMS_BOOT_ID_LEN + 1], const struct imastream_log *log);

/* The lines of one transaction, appended to the record in a single write. */
struct ims_boot_batch {
	char *buf;
	size_t len, cap;
	size_t files;
};

/* Adds @path's digest in the imastream hash algorithm @algo.  Return: 0, -EINVAL, -ENOMEM. */
int ims_boot_batch_add(struct ims_boot_batch *b, int algo, const uint8_t *digest, size_t len,
		       const char *path);
void ims_boot_batch_free(struct ims_boot_batch *b);

/*
 * Appends @b to this boot's record below @rootfd (never through a symlink), creating it
 * with its first line and removing other boots' records; a last line a killed writer
 * cut short is dropped first.  Nothing is written for an empty batch.
 * Return: 0; -errno (said on @log).
 */
int ims_boot_record_append(int rootfd, const struct ims_boot_batch *b,
			   const struct imastream_log *log);

struct ims_boot_entry {
	int algo; /* imastream hash algorithm */
	const uint8_t *digest;
	size_t len;
	const char *path; /* as the package spells it, below the root */
};

/*
 * Calls @fn for each entry of the record of boot @boot_id below @rootfd; none when there
 * is no record.  A record that holds another boot's id, or a line that is not an entry,
 * is refused (-EINVAL, said naming the file and line); a last line cut short is skipped
 * with a warning.  Other boots' records are never read.
 */
int ims_boot_record_foreach(int rootfd, const char *boot_id,
			    int (*fn)(void *arg, const struct ims_boot_entry *e), void *arg,
			    const struct imastream_log *log);

#endif /* IMASTREAM_INSTALLED_BOOT_RECORD_H */
