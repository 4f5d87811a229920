/* limen-documents — who a pid is, remembered per (pid, start time) for the FUSE gate.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef struct _LimenFusePidCache LimenFusePidCache;

/* An empty cache (thread-safe: every call takes its lock). */
LimenFusePidCache *limen_fuse_pid_cache_new (void);
/* 1 when @pid, checked against /proc less than the recheck window before @now, may use the
 * view of @view_app (NULL: host view), 0 when it may not, -1 when it must be checked again. */
int limen_fuse_pid_cache_check_recent (LimenFusePidCache *cache, pid_t pid, gint64 now, const char *view_app);
/* TRUE when an answer for the process (@pid, @start) is kept: *@host and *@app (a copy,
 * NULL for the host or an unidentifiable process) are set and its check time moves to @now. */
gboolean limen_fuse_pid_cache_lookup (LimenFusePidCache *cache, pid_t pid, guint64 start, gint64 now,
                                      gboolean *host, char **app);
/* Remember the answer for the process (@pid, @start), replacing any for @pid. */
void limen_fuse_pid_cache_store (LimenFusePidCache *cache, pid_t pid, guint64 start, gint64 now,
                                 gboolean host, const char *app);

/* Is the cgroup @id known to be no Snap's (read from a process in it)? */
gboolean limen_fuse_pid_cache_cgroup_is_plain (LimenFusePidCache *cache, guint64 id);
/* Remember that the cgroup @id is no Snap's. */
void limen_fuse_pid_cache_set_cgroup_plain (LimenFusePidCache *cache, guint64 id);

G_END_DECLS
