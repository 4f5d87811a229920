/* limen-documents — who sends a FUSE request, and which views it may use.
 *
 * The kernel tells the pid of the thread behind each request. A host process may use
 * every view (the root, by-app and each app's); a sandboxed app only its own
 * by-app/APPID. A process that cannot be identified may use none.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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

/* Is the process behind @proc_fd (its /proc entry) a host process that is no app of any
 * kind: its root holds no /.flatpak-info and its cgroup is no Snap's? That is the answer
 * identify_pid gives such a process, found with three reads of its /proc entry instead of
 * a whole identification (its status, its stat twice, errors made and logged): a new `ls`
 * is a new process, and this is most of what its first walk through a gate costs. FALSE
 * for anything else, or when a read fails: identify_pid then decides. A reaped process's
 * entry answers nothing more, so what is read here is about the process @proc_fd was
 * opened on. */
static gboolean
is_plain_host (int proc_fd)
{
  g_autofd int root = -1;
  g_autofd int cgroup = -1;
  char buf[4096];
  size_t len = 0;
  ssize_t n;
  struct stat st;

#ifdef LIMEN_TEST_HOOKS
  /* Test harnesses name every caller's identity there: only identify_pid follows it. */
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND") != NULL)
    return FALSE;
#endif
  root = openat (proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0 || fstatat (root, ".flatpak-info", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
    return FALSE;
  cgroup = openat (proc_fd, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (cgroup < 0)
    return FALSE;
  while ((n = read (cgroup, buf + len, sizeof buf - 1 - len)) > 0)
    len += n;
  if (n < 0 || len == sizeof buf - 1)
    return FALSE;   /* unread, or longer than a cgroup line of a real system */
  buf[len] = '\0';
  return !limen_cgroup_is_snap (buf);
}

/* Identify the process @pid started at @start: *@host, or *@app for an app. */
static void
identify_caller (pid_t pid, guint64 start, gboolean *host, char **app)
{
  char path[64];
  g_autofd int proc_fd = -1;
  guint64 at_fd;

  g_snprintf (path, sizeof path, "/proc/%d", (int) pid);
  proc_fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd >= 0 && limen_proc_stat_read_start_time_at (proc_fd, &at_fd, NULL) && at_fd == start &&
      is_plain_host (proc_fd))
    {
      *host = TRUE;
      *app = NULL;
      return;
    }
  identify_pid (pid, start, host, app);
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
      identify_caller (pid, start, &host, &app);
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
