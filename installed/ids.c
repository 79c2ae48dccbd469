// SPDX-License-Identifier: LGPL-2.1-or-later
/* Owner names of a package resolved to ids through the root's own etc/passwd and etc/group. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/private.h"
#include "installed/private.h"

/*
 * Reads the root's etc/passwd or etc/group into @map; a missing one is an empty one, one
 * that is not a regular file (never followed, never waited on) is refused.
 */
static int load(int rootfd, const char *file, struct ims_strmap *map, bool users,
		const struct imastream_log *log)
{
	int etc, fd;
	FILE *f;

	etc = openat(rootfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (etc < 0)
		return 0;
	fd = ims_open_regular(etc, file, O_RDONLY | O_NOFOLLOW, 0);
	close(etc);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return ims_err(log, fd, "etc/%s of the root: %s", file, ims_open_strerror(fd));
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (users) {
		struct passwd *pw;

		while ((pw = fgetpwent(f)))
			ims_strmap_add(map, pw->pw_name, (int)pw->pw_uid);
	} else {
		struct group *gr;

		while ((gr = fgetgrent(f)))
			ims_strmap_add(map, gr->gr_name, (int)gr->gr_gid);
	}
	fclose(f);
	return 0;
}

int ims_ids_load(struct ims_ids *ids, int rootfd, const struct imastream_log *log)
{
	int err = load(rootfd, "passwd", &ids->users, true, log);

	return err ? err : load(rootfd, "group", &ids->groups, false, log);
}

/* rpm's rule: a name the root does not know is root, with a warning (once per name). */
static unsigned int resolve(struct ims_ids *ids, struct ims_strmap *map, const char *name,
			    const char *what, const char *pkg, const struct imastream_log *log)
{
	int id;

	if (!name || !strcmp(name, "root"))
		return 0;
	id = ims_strmap_get(map, name);
	if (id >= 0)
		return (unsigned int)id;
	if (ims_strmap_add(&ids->unknown, name, 0) == 0)
		ims_logf(log, IMASTREAM_LOG_WARNING, "%s: %s %s does not exist in the root - using root",
			 pkg, what, name);
	return 0;
}

unsigned int ims_ids_user(struct ims_ids *ids, const char *name, const char *pkg,
			  const struct imastream_log *log)
{
	return resolve(ids, &ids->users, name, "user", pkg, log);
}

unsigned int ims_ids_group(struct ims_ids *ids, const char *name, const char *pkg,
			   const struct imastream_log *log)
{
	return resolve(ids, &ids->groups, name, "group", pkg, log);
}

void ims_ids_clear(struct ims_ids *ids)
{
	ims_strmap_clear(&ids->users);
	ims_strmap_clear(&ids->groups);
	ims_strmap_clear(&ids->unknown);
}
