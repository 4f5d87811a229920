/* Limen — process ids as a sandboxed caller sees them, translated to ours.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "app-info.h"

G_BEGIN_DECLS

/* Translate @n pids from @info's pid namespace into host pids, in place. A pid that is no
 * process of the caller's namespace is NOT_FOUND. Host callers' pids stay as they are. */
gboolean limen_pid_map_to_host (LimenAppInfo *info, pid_t *pids, guint n, GError **error);

/* Translate thread id @tid of host process @host_pid from @info's namespace; same rules. */
gboolean limen_pid_map_thread_to_host (LimenAppInfo *info, pid_t host_pid, pid_t *tid, GError **error);

G_END_DECLS
