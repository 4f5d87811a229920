/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An fd passed over D-Bus is a capability the caller already had, but only as far as it
 * goes: an O_PATH fd carries no read or write right, and a sandboxed app may have got an
 * fd to a file it cannot see at all. We check the file against the caller's own view of
 * the filesystem (its /proc/PID/root) before acting on it.
 */
#include "fd-check.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errors.h"

int
limen_fd_list_get (GUnixFDList *fd_list, gint32 index, const char *key, GError **error)
{
  if (index < 0 || fd_list == NULL || index >= g_unix_fd_list_get_length (fd_list))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for %s: no file descriptor at index %d", key, index);
      return -1;
    }
  return g_unix_fd_list_get (fd_list, index, error);
}

void
limen_fd_info_clear (LimenFdInfo *fdinfo)
{
  g_clear_pointer (&fdinfo->path, g_free);
}

static int
open_in_root (int root_fd, const char *path, guint64 flags)
{
  struct open_how how = {
    .flags = flags | O_CLOEXEC,
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };

  return (int) syscall (SYS_openat2, root_fd, path, &how, sizeof how);
}

static gboolean
mount_is_readonly (int fd)
{
  struct statfs sfs;

  return fstatfs (fd, &sfs) == 0 && (sfs.f_flags & ST_RDONLY);
}

/* Would the caller's credentials pass the mode bits of @st for @want (R_OK/W_OK/X_OK)? */
static gboolean
caller_may (LimenAppInfo *info, const struct stat *st, int want)
{
  uid_t uid = limen_app_info_get_uid (info);
  gid_t gid = limen_app_info_get_gid (info);
  mode_t bits;

  if (uid == 0)
    return (want & X_OK) == 0 || (st->st_mode & 0111) || S_ISDIR (st->st_mode);
  if (uid == st->st_uid)
    bits = (st->st_mode >> 6) & 7;
  else if (gid == st->st_gid)
    bits = (st->st_mode >> 3) & 7;
  else
    bits = st->st_mode & 7;
  return ((want & R_OK) == 0 || (bits & 4)) &&
         ((want & W_OK) == 0 || (bits & 2)) &&
         ((want & X_OK) == 0 || (bits & 1));
}

static gboolean
not_allowed (GError **error, const char *what)
{
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "File descriptor refused: %s", what);
  return FALSE;
}

static gboolean
check_delete (LimenAppInfo *info, int root_fd, const char *path, const struct stat *st, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofd int dir_fd = open_in_root (root_fd, dir, O_PATH | O_DIRECTORY);
  struct stat dst, est;

  if (dir_fd < 0 || fstat (dir_fd, &dst) != 0)
    return not_allowed (error, "its folder is not visible to the caller");
  if (fstatat (dir_fd, base, &est, AT_SYMLINK_NOFOLLOW) != 0 ||
      est.st_dev != st->st_dev || est.st_ino != st->st_ino)
    return not_allowed (error, "the file is not where the caller sees it");
  if (mount_is_readonly (dir_fd) || !caller_may (info, &dst, W_OK | X_OK))
    return not_allowed (error, "the caller cannot delete it");
  if ((dst.st_mode & S_ISVTX) && limen_app_info_get_uid (info) != 0 &&
      limen_app_info_get_uid (info) != st->st_uid && limen_app_info_get_uid (info) != dst.st_uid)
    return not_allowed (error, "the caller cannot delete it (sticky folder)");
  return TRUE;
}

gboolean
limen_fd_check (LimenAppInfo *info, int fd, LimenFdFlags flags, LimenFdInfo *out, GError **error)
{
  g_autofree char *path = NULL;
  g_autofree char *proc_path = g_strdup_printf ("/proc/self/fd/%d", fd);
  g_autofd int root_fd = -1;
  g_autofd int seen_fd = -1;
  struct stat st, seen;
  int fl;
  gboolean is_opath, readable, writable;

  memset (out, 0, sizeof *out);
  fl = fcntl (fd, F_GETFL);
  if (fl < 0 || fstat (fd, &st) != 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid file descriptor");
      return FALSE;
    }
  is_opath = (fl & O_PATH) != 0;
  if (is_opath && !(flags & LIMEN_FD_ALLOW_O_PATH))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "An O_PATH file descriptor is not accepted here");
      return FALSE;
    }
  if (!((S_ISREG (st.st_mode) && (flags & LIMEN_FD_ALLOW_REGULAR)) ||
        (S_ISDIR (st.st_mode) && (flags & LIMEN_FD_ALLOW_DIRECTORY))))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           (flags & LIMEN_FD_ALLOW_DIRECTORY) ?
                           (flags & LIMEN_FD_ALLOW_REGULAR) ? "Not a regular file or directory" : "Not a directory" :
                           "Not a regular file");
      return FALSE;
    }
  path = g_file_read_link (proc_path, NULL);
  if (path == NULL || path[0] != '/')
    return not_allowed (error, "it has no path");
  if (st.st_nlink == 0 && !S_ISDIR (st.st_mode))
    return not_allowed (error, "the file was deleted");

  root_fd = limen_app_info_open_root (info, error);
  if (root_fd < 0)
    return FALSE;

  /* Resolve the path the way the caller would, confined to its root. */
  seen_fd = open_in_root (root_fd, path, O_PATH | O_NOFOLLOW);
  if (seen_fd < 0 || fstat (seen_fd, &seen) != 0 ||
      seen.st_dev != st.st_dev || seen.st_ino != st.st_ino)
    return not_allowed (error, "the file is not visible to the caller");

  if (is_opath || S_ISDIR (st.st_mode) ||
      ((flags & LIMEN_FD_RIGHTS_FROM_VIEW) && (fl & O_ACCMODE) == O_RDONLY))
    {
      /* A directory fd can never be opened for writing, so what counts for it is the same. */
      /* An O_PATH fd carries no rights: only what the caller could open itself. */
      readable = caller_may (info, &seen, R_OK);
      writable = caller_may (info, &seen, W_OK) && !mount_is_readonly (seen_fd);
    }
  else
    {
      int acc = fl & O_ACCMODE;

      readable = (acc == O_RDONLY || acc == O_RDWR);
      writable = (acc == O_WRONLY || acc == O_RDWR);
    }

  if ((flags & LIMEN_FD_NEED_READ) && !readable)
    return not_allowed (error, "it gives no read access");
  if ((flags & LIMEN_FD_NEED_WRITE) && !writable)
    return not_allowed (error, "it gives no write access");
  if ((flags & LIMEN_FD_NEED_DELETE) && !check_delete (info, root_fd, path, &st, error))
    return FALSE;

  out->path = g_steal_pointer (&path);
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->is_dir = S_ISDIR (st.st_mode);
  out->readable = readable;
  out->writable = writable;
  return TRUE;
}
