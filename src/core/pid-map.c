/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pid-map.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errors.h"

static gboolean
pidns_of (const char *proc_entry, struct stat *st)
{
  g_autofree char *path = g_strdup_printf ("%s/ns/pid", proc_entry);

  return stat (path, st) == 0;
}

/* The innermost pid of NSpid in @status_path's file, or -1. */
static pid_t
innermost_pid (const char *status_path)
{
  g_autofree char *status = NULL;
  const char *line;
  g_auto(GStrv) fields = NULL;
  g_autofree char *values = NULL;
  guint n;

  if (!g_file_get_contents (status_path, &status, NULL, NULL))
    return -1;
  line = strstr (status, "\nNSpid:");
  if (line == NULL)
    return -1;
  line += strlen ("\nNSpid:");
  values = g_strndup (line, strcspn (line, "\n"));
  fields = g_strsplit_set (g_strstrip (values), " \t", -1);
  n = g_strv_length (fields);
  while (n > 0 && *fields[n - 1] == '\0')
    n--;
  return n > 0 ? (pid_t) g_ascii_strtoll (fields[n - 1], NULL, 10) : -1;
}

/* Look through @dir (/proc or /proc/PID/task) for the entry whose innermost id in the
 * namespace @ns is @wanted. */
static pid_t
find_in_dir (const char *dir, const struct stat *ns, pid_t wanted)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  if (d == NULL)
    return -1;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *entry = NULL;
      g_autofree char *status = NULL;
      struct stat st;
      char *end;
      long id = strtol (name, &end, 10);

      if (*end != '\0' || id <= 0)
        continue;
      entry = g_build_filename (dir, name, NULL);
      if (!pidns_of (entry, &st) || st.st_ino != ns->st_ino || st.st_dev != ns->st_dev)
        continue;
      status = g_build_filename (entry, "status", NULL);
      if (innermost_pid (status) == wanted)
        return (pid_t) id;
    }
  return -1;
}

/* Whether @info's pids need translating at all; if so, its pid namespace in @ns. */
static gboolean
needs_translation (LimenAppInfo *info, struct stat *ns, gboolean *needed, GError **error)
{
  g_autofree char *entry = g_strdup_printf ("/proc/%d", limen_app_info_get_pid (info));
  struct stat own;

  *needed = FALSE;
  if (limen_app_info_is_host (info))
    return TRUE;
  if (!pidns_of (entry, ns) || !pidns_of ("/proc/self", &own))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller's process is gone");
      return FALSE;
    }
  *needed = ns->st_ino != own.st_ino || ns->st_dev != own.st_dev;
  return TRUE;
}

gboolean
limen_pid_map_to_host (LimenAppInfo *info, pid_t *pids, guint n, GError **error)
{
  struct stat ns;
  gboolean needed;

  if (!needs_translation (info, &ns, &needed, error))
    return FALSE;
  for (guint i = 0; needed && i < n; i++)
    {
      pid_t host = find_in_dir ("/proc", &ns, pids[i]);

      if (host <= 0)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No process %d in the caller's sandbox", pids[i]);
          return FALSE;
        }
      pids[i] = host;
    }
  return TRUE;
}

gboolean
limen_pid_map_thread_to_host (LimenAppInfo *info, pid_t host_pid, pid_t *tid, GError **error)
{
  struct stat ns;
  gboolean needed;
  g_autofree char *tasks = NULL;
  pid_t host;

  if (!needs_translation (info, &ns, &needed, error))
    return FALSE;
  if (!needed)
    return TRUE;
  tasks = g_strdup_printf ("/proc/%d/task", host_pid);
  host = find_in_dir (tasks, &ns, *tid);
  if (host <= 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No thread %d in that process", *tid);
      return FALSE;
    }
  *tid = host;
  return TRUE;
}
