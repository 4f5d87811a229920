/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A live process seen through its /proc directory, held open as an fd: reads of a dead
 * process's entry fail (ESRCH) instead of reaching a successor that got its pid, and the
 * start time read before and after identifying shows that the process stayed the same.
 * Which kind of app it is decides the per-kind file: a /.flatpak-info in its root
 * (app-info-flatpak.c), a Snap scope in its cgroup (app-info-snap.c), else its systemd
 * unit (app-info-host.c).
 */
#include "app-info-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "proc-stat.h"

char *
limen_app_info_read_fd (int fd, const char *name, gsize max, gsize *len_out, GError **error)
{
  g_autoptr(GString) buf = g_string_sized_new (4096);

  for (;;)
    {
      char chunk[4096];
      ssize_t r = read (fd, chunk, sizeof chunk);

      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s: %s", name, g_strerror (errsv));
          return NULL;
        }
      if (r == 0)
        break;
      if (buf->len + (gsize) r > max)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: too large", name);
          return NULL;
        }
      g_string_append_len (buf, chunk, r);
    }
  if (len_out)
    *len_out = buf->len;
  return g_string_free (g_steal_pointer (&buf), FALSE);
}

char *
limen_app_info_read_at (int dirfd, const char *name, gsize max, gsize *len_out, GError **error)
{
  g_autofd int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s: %s", name, g_strerror (errsv));
      return NULL;
    }
  return limen_app_info_read_fd (fd, name, max, len_out, error);
}

void
limen_app_info_read_ids (LimenAppInfo *info)
{
  g_autofree char *status = limen_app_info_read_at (info->proc_fd, "status", LIMEN_APP_INFO_PROC_FILE_MAX,
                                                    NULL, NULL);
  g_auto(GStrv) lines = NULL;

  if (status == NULL)
    return;
  lines = g_strsplit (status, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      if (g_str_has_prefix (lines[i], "Uid:"))
        info->uid = (uid_t) g_ascii_strtoull (lines[i] + 4, NULL, 10);
      else if (g_str_has_prefix (lines[i], "Gid:"))
        info->gid = (gid_t) g_ascii_strtoull (lines[i] + 4, NULL, 10);
    }
}

int
limen_app_info_open_root (LimenAppInfo *info, GError **error)
{
  int fd;
  guint64 start_time;

  if (info->proc_fd < 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller has no process to inspect");
      return -1;
    }
  fd = openat (info->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller's root is not accessible: %s",
                   g_strerror (errno));
      return -1;
    }
  /* /proc/PID of a dead process answers ESRCH; a live one must still be the same process. */
  if (!limen_proc_stat_read_start_time_at (info->proc_fd, &start_time, NULL) || start_time != info->start_time)
    {
      close (fd);
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller's process is gone");
      return -1;
    }
  return fd;
}

int
limen_app_info_open_proc_dir (pid_t pid, GError **error)
{
  char path[64];
  int fd;

  g_snprintf (path, sizeof path, "/proc/%d", pid);
  fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller process %d is gone", pid);
  return fd;
}

pid_t
limen_pidfd_get_pid (int pidfd)
{
  char path[64];
  g_autofree char *contents = NULL;
  const char *p;

  g_snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return -1;
  p = strstr (contents, "\nPid:");
  if (p == NULL)
    return -1;
  return (pid_t) g_ascii_strtoll (p + 5, NULL, 10);
}

/* Which kind of app @info's process is, and its id: Flatpak, else Snap, else host. */
static gboolean
identify_kind (LimenAppInfo *info, GError **error)
{
  g_autofd int root_fd = -1;
  g_autofree char *cgroup = NULL;
  gboolean flatpak;

  root_fd = openat (info->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot open root of caller process %d: %s",
                   info->pid, g_strerror (errno));
      return FALSE;
    }
  if (!limen_app_info_flatpak_identify (info, root_fd, &flatpak, error))
    return FALSE;
  if (flatpak)
    return TRUE;
  cgroup = limen_app_info_read_at (info->proc_fd, "cgroup", LIMEN_APP_INFO_PROC_FILE_MAX, NULL, NULL);
  if (cgroup && limen_cgroup_is_snap (cgroup))
    return limen_app_info_snap_identify (info, error);
  limen_app_info_host_identify (info, cgroup);
  return TRUE;
}

LimenAppInfo *
limen_app_info_identify_process (int proc_fd_in, pid_t pid, guint64 not_after, GError **error)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_alloc (LIMEN_APP_KIND_HOST, pid);
  g_autoptr(GError) local_error = NULL;
  guint64 again;

  info->proc_fd = proc_fd_in;
  if (!limen_proc_stat_read_start_time_at (info->proc_fd, &info->start_time, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot inspect caller process %d: %s",
                   pid, local_error->message);
      info->proc_fd = -1;       /* the caller keeps its fd on failure */
      return NULL;
    }
  if (not_after && info->start_time > not_after)
    {
      /* The pid now belongs to a process younger than the connection: the process that
       * connected is gone and its pid was reused. Never mistake the newcomer for the caller. */
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Caller process %d started after its connection appeared (pid reused)", pid);
      info->proc_fd = -1;
      return NULL;
    }
  limen_app_info_read_ids (info);

  /* The metadata must describe the process we started with, not a successor. */
  if (!identify_kind (info, error) ||
      !limen_proc_stat_read_start_time_at (info->proc_fd, &again, NULL) || again != info->start_time)
    {
      if (error && *error == NULL)
        g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller process %d went away", pid);
      info->proc_fd = -1;
      return NULL;
    }
  return g_steal_pointer (&info);
}
