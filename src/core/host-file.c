/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A handler, mail client or wallpaper setter runs on the host and opens a path, not the
 * app's fd; the path it gets must name the very file the app handed over, or a rename
 * between the check and the use would give it another. */
#include "host-file.h"

#include <sys/stat.h>

#include "errors.h"

char *
limen_fd_host_path (LimenAppInfo *info, GUnixFDList *fd_list, gint32 index, const char *key,
                    LimenFdFlags flags, LimenFdInfo *out, GError **error)
{
  g_autofd int fd = limen_fd_list_get (fd_list, index, key, error);
  LimenFdInfo fdinfo = { 0 };
  g_autofree char *proc = NULL;
  g_autofree char *path = NULL;
  struct stat st;
  gboolean same;

  if (fd < 0 || !limen_fd_check (info, fd, flags, &fdinfo, error))
    {
      limen_fd_info_clear (&fdinfo);
      return NULL;
    }
  proc = g_strdup_printf ("/proc/self/fd/%d", fd);
  path = g_file_read_link (proc, NULL);
  same = path && stat (path, &st) == 0 && st.st_dev == fdinfo.dev && st.st_ino == fdinfo.ino;
  if (!same)
    {
      limen_fd_info_clear (&fdinfo);
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Invalid value for %s: the file is not reachable outside the sandbox", key);
      return NULL;
    }
  if (out)
    *out = fdinfo;
  else
    limen_fd_info_clear (&fdinfo);
  return g_steal_pointer (&path);
}
