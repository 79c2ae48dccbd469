/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rpm transaction-plugin ABI (rpm 4.18 to 6.0): rpm installs <rpm/rpmplugin.h> only
 * from 4.20 on, so for 4.18 and 4.19 we declare the hook table ourselves, field for field
 * in rpm's order (the order is the ABI; nothing checks it at load time).
 */
#ifndef IMASTREAM_PLUGIN_RPM_RPMPLUGIN_COMPAT_H
#define IMASTREAM_PLUGIN_RPM_RPMPLUGIN_COMPAT_H

#include <sys/types.h>

#include <rpm/rpmfi.h>
#include <rpm/rpmte.h>
#include <rpm/rpmts.h>
#include <rpm/rpmtypes.h>

#if defined(__has_include)
#if __has_include(<rpm/rpmplugin.h>)
#include <rpm/rpmplugin.h>
#define IMS_HAVE_RPMPLUGIN_H 1
#endif
#endif

#ifndef IMS_HAVE_RPMPLUGIN_H
/* Low 16 bits: the rpmFileAction; high bits: flags. */
typedef rpmFlags rpmFsmOp;
#define XFO_ACTION(_a) ((rpmFileAction)((_a) & 0x0000ffff))
#define XFO_FLAGS(_a) ((rpmFsmOp)((_a) & 0xffff0000))
/* A parent directory created by rpm that no package owns (fi is NULL then). */
#define FAF_UNOWNED (1U << 31)

/* The type argument of the scriptlet hooks. */
typedef enum rpmScriptletExecutionFlow_e {
	RPMSCRIPTLET_NONE = 0,
	RPMSCRIPTLET_FORK = 1 << 0,
	RPMSCRIPTLET_EXEC = 1 << 1,
} rpmScriptletExecutionFlow;

typedef rpmRC (*plugin_init_func)(rpmPlugin plugin, rpmts ts);
typedef void (*plugin_cleanup_func)(rpmPlugin plugin);
typedef rpmRC (*plugin_tsm_pre_func)(rpmPlugin plugin, rpmts ts);
typedef rpmRC (*plugin_tsm_post_func)(rpmPlugin plugin, rpmts ts, int res);
typedef rpmRC (*plugin_psm_pre_func)(rpmPlugin plugin, rpmte te);
typedef rpmRC (*plugin_psm_post_func)(rpmPlugin plugin, rpmte te, int res);
typedef rpmRC (*plugin_scriptlet_pre_func)(rpmPlugin plugin, const char *s_name, int type);
typedef rpmRC (*plugin_scriptlet_fork_post_func)(rpmPlugin plugin, const char *path, int type);
typedef rpmRC (*plugin_scriptlet_post_func)(rpmPlugin plugin, const char *s_name, int type,
					    int res);
typedef rpmRC (*plugin_fsm_file_pre_func)(rpmPlugin plugin, rpmfi fi, const char *path,
					  mode_t file_mode, rpmFsmOp op);
typedef rpmRC (*plugin_fsm_file_post_func)(rpmPlugin plugin, rpmfi fi, const char *path,
					   mode_t file_mode, rpmFsmOp op, int res);
/* 4.18 added @fd; a plugin built for the 4.17 prototype would misread every argument. */
typedef rpmRC (*plugin_fsm_file_prepare_func)(rpmPlugin plugin, rpmfi fi, int fd,
					      const char *path, const char *dest,
					      mode_t file_mode, rpmFsmOp op);

struct rpmPluginHooks_s {
	plugin_init_func init;
	plugin_cleanup_func cleanup;
	plugin_tsm_pre_func tsm_pre;
	plugin_tsm_post_func tsm_post;
	plugin_psm_pre_func psm_pre;
	plugin_psm_post_func psm_post;
	plugin_scriptlet_pre_func scriptlet_pre;
	plugin_scriptlet_fork_post_func scriptlet_fork_post;
	plugin_scriptlet_post_func scriptlet_post;
	plugin_fsm_file_pre_func fsm_file_pre;
	plugin_fsm_file_post_func fsm_file_post;
	plugin_fsm_file_prepare_func fsm_file_prepare;
};
typedef struct rpmPluginHooks_s *rpmPluginHooks;

/* Exported by librpm.so.9 although their header is private. */
const char *rpmPluginName(rpmPlugin plugin);
char *rpmPluginOpts(rpmPlugin plugin);
void rpmPluginSetData(rpmPlugin plugin, void *data);
void *rpmPluginGetData(rpmPlugin plugin);
#endif /* !IMS_HAVE_RPMPLUGIN_H */

#endif /* IMASTREAM_PLUGIN_RPM_RPMPLUGIN_COMPAT_H */
