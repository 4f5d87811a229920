/* limen-documents — who sends a FUSE request, and which views it may use.
 *
 * The kernel tells the pid of the thread behind each request. A host process may use
 * every view (the root, by-app and each app's); a sandboxed app only its own
 * by-app/APPID. A process that cannot be identified may use none.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <string.h>

#include "app-info.h"
#include "proc-stat.h"

/* Identify @pid, started at @start, through the core: *@host, or *@app for an app.
 * The answer counts only if it is about the same process (no pid reuse in between). */
static void
identify_pid (pid_t pid, guint64 start, gboolean *host, char **app)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_pid (pid, &error);

  *host = FALSE;
  *app = NULL;
  if (info && limen_app_info_get_start_time (info) == start)
    {
      *host = limen_app_info_is_host (info);
      *app = *host ? NULL : g_strdup (limen_app_info_get_id (info));
    }
  else if (error)
    g_debug ("FUSE request from unidentifiable pid %d: %s", (int) pid, error->message);
}

gboolean
limen_fuse_caller_allowed (LimenFuse *fs, fuse_req_t req, const char *view_app)
{
  pid_t pid = fuse_req_ctx (req)->pid;
  guint64 start;
  gboolean host = FALSE;
  g_autofree char *app = NULL;
  gint64 now = g_get_monotonic_time ();
  int recent;

  if (pid <= 0)
    return FALSE;
  recent = limen_fuse_pid_cache_check_recent (fs->pids, pid, now, view_app);
  if (recent >= 0)
    return recent;
  if ((start = limen_proc_stat_start_time (pid)) == 0)
    return FALSE;
  if (!limen_fuse_pid_cache_lookup (fs->pids, pid, start, now, &host, &app))
    {
      identify_pid (pid, start, &host, &app);
      limen_fuse_pid_cache_store (fs->pids, pid, start, now, host, app);
    }
  if (host)
    return TRUE;
  return view_app != NULL && app != NULL && app[0] != '\0' && strcmp (app, view_app) == 0;
}

gboolean
limen_fuse_node_gate (LimenFuse *fs, fuse_req_t req, Node *node)
{
  if (node->kind == NODE_ROOT || node->kind == NODE_BY_APP)
    return limen_fuse_caller_allowed (fs, req, NULL);
  return limen_fuse_caller_allowed (fs, req, node->app);
}
