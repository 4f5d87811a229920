/* limen-documents — the export of a caller's file as a document: which file an fd
 * names (on the host or on the mount), what the caller reaches of it, its canonical path,
 * and the document it becomes (reused or new) with the rights the fd proves.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-portal-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "app-access.h"
#include "app-info.h"
#include "compat.h"
#include "errors.h"
#include "fd-check.h"
#include "docs-bus.h"

/* The host path of @fd, checked to lead back to the same file without symlinks, so the
 * document's path is canonical (and a later symlink swap on it is detectable). */
static char *
canonical_path (int fd, const struct stat *st, GError **error)
{
  g_autofree char *path = limen_doc_fd_path (fd);
  struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  g_autofd int again = -1;
  struct stat st2;

  if (path == NULL || path[0] != '/' || g_str_has_suffix (path, " (deleted)"))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The file has no path");
      return NULL;
    }
  again = syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (again < 0 || fstat (again, &st2) != 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The file cannot be reached by its path");
      return NULL;
    }
  return g_steal_pointer (&path);
}

/* limen_fd_check() for a sandboxed caller; for the host only the file type matters (it
 * holds every right on what it can name), which saves resolving the fd in its root. @known
 * is @fd's stat when the caller has it already, or NULL. */
static gboolean
check_fd (LimenAppInfo *info, int fd, LimenFdFlags flags, const struct stat *known, LimenFdInfo *out,
          GError **error)
{
  struct stat st;

  if (!limen_app_info_is_host (info))
    return limen_fd_check (info, fd, flags, out, error);
  memset (out, 0, sizeof *out);
  if (known)
    st = *known;
  if ((!known && fstat (fd, &st) != 0) ||
      !((S_ISREG (st.st_mode) && (flags & LIMEN_FD_ALLOW_REGULAR)) ||
        (S_ISDIR (st.st_mode) && (flags & LIMEN_FD_ALLOW_DIRECTORY))))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           (flags & LIMEN_FD_ALLOW_DIRECTORY) && !(flags & LIMEN_FD_ALLOW_REGULAR) ?
                           "Not a directory" : (flags & LIMEN_FD_ALLOW_DIRECTORY) ?
                           "Not a regular file or directory" : "Not a regular file");
      return FALSE;
    }
  out->is_dir = S_ISDIR (st.st_mode);
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->readable = out->writable = TRUE;
  return TRUE;
}

static void
grant_caller (LimenDocPortal *portal, LimenAppInfo *info, LimenDoc *doc, guint rights)
{
  const char *app;

  if (limen_app_info_is_host (info))
    return;
  app = limen_app_info_get_id (info);
  limen_doc_model_set_perms (portal->model, doc, app, limen_doc_get_perms (doc, app) | rights, NULL);
}

/* @fd lies on our own mount: only a document's own entry (its file, or its directory
 * when exported as one), seen by this caller, and only to name that document again
 * (returned with its rights). Decided before any fstat, which would be a request to our
 * own filesystem from the D-Bus thread. */
static LimenDoc *
export_own_file (LimenDocPortal *portal, LimenAppInfo *info, const char *name, guint flags, LimenDoc *doc,
                 const char *node_app, gboolean is_doc_entry, guint *rights_out, GError **error)
{
  gboolean host = limen_app_info_is_host (info);
  const char *caller_app = host ? NULL : limen_app_info_get_id (info);

  if (name == NULL && doc && is_doc_entry && (flags & LIMEN_DOC_EXPORT_REUSE) &&
      ((limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY) != 0) == ((flags & LIMEN_DOC_EXPORT_DIRECTORY) != 0) &&
      (host || g_strcmp0 (node_app, caller_app) == 0) && limen_doc_get_perms (doc, caller_app) != 0)
    {
      *rights_out = limen_doc_get_perms (doc, caller_app);
      return limen_doc_ref (doc);
    }
  g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                       "Files inside the document store cannot be exported again");
  return NULL;
}

/* Kernel interfaces are no documents: a /proc or /sys file would hand out another
 * process's view of itself. Those filesystems all live on anonymous devices (major 0), so a
 * file on a block device (ext4, xfs: most home directories) needs no fstatfs(). Fills @st
 * from @stx. */
static gboolean
check_exportable_fs (int fd, const struct statx *stx, struct stat *st, GError **error)
{
  struct statfs sfs;

  memset (st, 0, sizeof *st);
  st->st_mode = stx->stx_mode;
  st->st_ino = stx->stx_ino;
  st->st_dev = makedev (stx->stx_dev_major, stx->stx_dev_minor);
  st->st_nlink = stx->stx_nlink;
  st->st_uid = stx->stx_uid;
  st->st_gid = stx->stx_gid;
  st->st_size = stx->stx_size;
  if (stx->stx_dev_major != 0)
    return TRUE;
  if (fstatfs (fd, &sfs) != 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid file descriptor");
      return FALSE;
    }
  if (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC || sfs.f_type == CGROUP_SUPER_MAGIC ||
      sfs.f_type == CGROUP2_SUPER_MAGIC || sfs.f_type == DEBUGFS_MAGIC || sfs.f_type == SECURITYFS_MAGIC)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Files of kernel filesystems cannot be exported");
      return FALSE;
    }
  return TRUE;
}

/* What a named export (@fd a directory, @name a file in it, existing or not) refers to:
 * the file's path, with its stat, rights and file handle when it exists. */
static char *
resolve_named (LimenAppInfo *info, int fd, const char *name, struct stat *st, guint *rights,
               GBytes **handle, int *handle_type, GError **error)
{
  g_auto(LimenFdInfo) fdinfo = { 0 };
  g_auto(LimenFdInfo) cinfo = { 0 };
  g_autofree char *dir = NULL;
  g_autofd int child = -1;
  struct stat cst;

  if (!check_fd (info, fd, LIMEN_FD_ALLOW_DIRECTORY | LIMEN_FD_ALLOW_O_PATH, st, &fdinfo, error))
    return NULL;
  if (name[0] == '\0' || strchr (name, '/') || strcmp (name, ".") == 0 || strcmp (name, "..") == 0 ||
      strlen (name) > NAME_MAX)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid filename: must be a plain file name");
      return NULL;
    }
  if ((dir = canonical_path (fd, st, error)) == NULL)
    return NULL;
  child = openat (fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (child < 0)
    {
      /* A file to be created through the document: only where the caller may write. */
      if (!fdinfo.writable)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                               "The directory is not writable by the caller");
          return NULL;
        }
      *rights = LIMEN_DOC_PERM_READ | LIMEN_DOC_PERM_WRITE;
      memset (st, 0, sizeof *st);
      return g_build_filename (dir, name, NULL);
    }
  if (fstat (child, &cst) != 0 || !S_ISREG (cst.st_mode))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid filename: not a regular file");
      return NULL;
    }
  if (!check_fd (info, child, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_O_PATH, &cst, &cinfo, error))
    return NULL;
  *rights = (cinfo.readable ? LIMEN_DOC_PERM_READ : 0) | (cinfo.writable ? LIMEN_DOC_PERM_WRITE : 0);
  *st = cst;
  *handle = limen_doc_file_handle (child, handle_type);
  return g_build_filename (dir, name, NULL);
}

/* What an export of a file or folder below the top of a directory document, through our
 * own mount, refers to: the host file behind it, as the reference exports it (by its host
 * path). @hostfd is that file's O_PATH fd, @doc the directory document, @view the view it
 * was reached through. A sandboxed caller must have reached it through its own view, and
 * gets the rights it holds on the directory document, no more than its fd was opened for. */
static char *
resolve_store_node (LimenAppInfo *info, int fd, int hostfd, LimenDoc *doc, const char *view, gboolean want_dir,
                    const char *name, struct stat *st, guint *rights, GBytes **handle, int *handle_type,
                    GError **error)
{
  gboolean host = limen_app_info_is_host (info);
  char *path;

  if (fstat (hostfd, st) != 0 || (name ? !S_ISDIR (st->st_mode)
                                       : (want_dir ? !S_ISDIR (st->st_mode) : !S_ISREG (st->st_mode))))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           name || want_dir ? "Not a directory" : "Not a regular file");
      return NULL;
    }
  if (host)
    *rights = LIMEN_DOC_PERM_READ | LIMEN_DOC_PERM_WRITE;
  else
    {
      int mode = fcntl (fd, F_GETFL);

      if (mode < 0 || g_strcmp0 (view, limen_app_info_get_id (info)) != 0)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                               "The file was not reached through the caller's own documents");
          return NULL;
        }
      *rights = limen_doc_get_perms (doc, view) & (LIMEN_DOC_PERM_READ | LIMEN_DOC_PERM_WRITE);
      if (!(mode & O_PATH) && (mode & O_ACCMODE) == O_RDONLY)
        *rights &= ~LIMEN_DOC_PERM_WRITE;
      if (!(mode & O_PATH) && (mode & O_ACCMODE) == O_WRONLY)
        *rights &= ~LIMEN_DOC_PERM_READ;
      if (*rights == 0)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "No access to the file");
          return NULL;
        }
    }
  if (name)   /* AddNamed: host callers only, which hold every right on what they name */
    return resolve_named (info, hostfd, name, st, rights, handle, handle_type, error);
  path = canonical_path (hostfd, st, error);
  if (path)
    *handle = limen_doc_file_handle (hostfd, handle_type);
  return path;
}

/* What a plain export (@fd the file or directory itself) refers to. */
static char *
resolve_fd (LimenAppInfo *info, int fd, gboolean want_dir, struct stat *st, guint *rights,
            GBytes **handle, int *handle_type, GError **error)
{
  g_auto(LimenFdInfo) fdinfo = { 0 };
  LimenFdFlags check = LIMEN_FD_ALLOW_O_PATH | (want_dir ? LIMEN_FD_ALLOW_DIRECTORY : LIMEN_FD_ALLOW_REGULAR);
  char *path;

  if (!check_fd (info, fd, check, st, &fdinfo, error))
    return NULL;
  *rights = (fdinfo.readable ? LIMEN_DOC_PERM_READ : 0) | (fdinfo.writable ? LIMEN_DOC_PERM_WRITE : 0);
  path = canonical_path (fd, st, error);
  if (path)
    *handle = limen_doc_file_handle (fd, handle_type);
  return path;
}

/* The document of host file @path (@st, file handle @handle) for an export with @flags: a
 * reused one, or a new one (*@created). As in the reference, a reuse finds only a document
 * kept as long as this export asks for: a grant meant for this session never outlives it. */
static LimenDoc *
find_or_add (LimenDocPortal *portal, const char *path, const struct stat *st, int handle_type, GBytes *handle,
             guint flags, gboolean *created, GError **error)
{
  gboolean want_dir = (flags & LIMEN_DOC_EXPORT_DIRECTORY) != 0;
  LimenDoc *doc = NULL;

  if (flags & LIMEN_DOC_EXPORT_REUSE)
    {
      doc = limen_doc_model_find_reusable (portal->model, path, (flags & LIMEN_DOC_EXPORT_PERSISTENT) != 0);
      if (doc && ((limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY) != 0) != want_dir)
        g_clear_pointer (&doc, limen_doc_unref);
    }
  if (doc == NULL)
    {
      doc = limen_doc_model_add (portal->model, path, st->st_dev, st->st_ino, handle_type, handle,
                                 (want_dir ? LIMEN_DOC_FLAG_DIRECTORY : 0) |
                                 ((flags & LIMEN_DOC_EXPORT_PERSISTENT) ? LIMEN_DOC_FLAG_PERSISTENT : 0) |
                                 ((flags & LIMEN_DOC_EXPORT_REUSE) ? 0 : LIMEN_DOC_FLAG_UNIQUE),
                                 error);
      if (doc == NULL)
        return NULL;
      *created = TRUE;
    }
  return doc;
}

LimenDoc *
limen_doc_portal_export_fd_full (LimenDocPortal *portal, LimenAppInfo *info, int fd, const char *name,
                                 guint flags, guint *rights_out, gboolean *created,
                                 LimenAppAccessRules *reach, LimenAppAccess need, gboolean *reached, GError **error)
{
  gboolean host = limen_app_info_is_host (info);
  gboolean want_dir = (flags & LIMEN_DOC_EXPORT_DIRECTORY) != 0;
  const char *mountpoint = limen_fuse_get_mountpoint (portal->fs);
  g_autofree char *path = NULL;
  g_autoptr(GBytes) handle = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *node_app = NULL;
  gboolean is_doc_entry = FALSE;
  int handle_type = 0;
  guint rights = 0;
  struct stat st;
  struct statx stx;

  *rights_out = 0;
  *created = FALSE;
  /* One statx for the mount id and the stat. Told not to sync, it asks no filesystem for
   * fresh attributes: on our own mount that would be a request from the D-Bus thread to our
   * own FUSE workers (and the type, device and inode it gives never change for a file). */
  if (statx (fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_BASIC_STATS | STATX_MNT_ID, &stx) != 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid file descriptor");
      return NULL;
    }
  if (limen_fuse_identify_fd (portal->fs, fd, (stx.stx_mask & STATX_MNT_ID) ? (int) stx.stx_mnt_id : -1,
                              makedev (stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino,
                              &doc, &node_app, &is_doc_entry))
    {
      g_autoptr(LimenDoc) dir_doc = NULL;
      g_autofree char *view = NULL;
      g_autofd int hostfd = -1;

      if (doc || (hostfd = limen_fuse_dup_inner_node (portal->fs, stx.stx_ino, &dir_doc, &view)) < 0)
        return export_own_file (portal, info, name, flags, doc, node_app, is_doc_entry, rights_out, error);
      path = resolve_store_node (info, fd, hostfd, dir_doc, view, want_dir, name, &st, &rights, &handle,
                                 &handle_type, error);
    }
  else if (!check_exportable_fs (fd, &stx, &st, error))
    return NULL;
  else if (name)
    path = resolve_named (info, fd, name, &st, &rights, &handle, &handle_type, error);
  else
    path = resolve_fd (info, fd, want_dir, &st, &rights, &handle, &handle_type, error);
  if (path == NULL)
    return NULL;

  if (g_str_has_prefix (path, mountpoint) && (path[strlen (mountpoint)] == '/' || path[strlen (mountpoint)] == '\0'))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Files inside the document store cannot be exported again");
      return NULL;
    }

  /* as-needed-by-app: no document for a file the app opens by its own path already. */
  if (reach && limen_app_access_rules_check (reach, path) >= need)
    {
      *reached = TRUE;
      return NULL;
    }

  /* What a sandboxed caller may pass on to another app (AddFull) is what its fd proves
   * plus granting and deleting; for itself it keeps delete only on a document of its own
   * (made without reuse), as in the reference: a shared one is not its to delete. */
  *rights_out = host ? LIMEN_DOC_PERM_ALL : (rights | LIMEN_DOC_PERM_GRANT | LIMEN_DOC_PERM_DELETE);
  rights |= LIMEN_DOC_PERM_GRANT | ((flags & LIMEN_DOC_EXPORT_REUSE) ? 0 : LIMEN_DOC_PERM_DELETE);

  doc = find_or_add (portal, path, &st, handle_type, handle, flags, created, error);
  if (doc == NULL)
    return NULL;
  if (!(flags & EXPORT_FOR_SELF))
    grant_caller (portal, info, doc, rights);
  return g_steal_pointer (&doc);
}

LimenDoc *
limen_doc_portal_export_fd (LimenDocPortal *portal, LimenAppInfo *info, int fd, const char *name,
                            guint flags, guint *rights, GError **error)
{
  gboolean created;

  return limen_doc_portal_export_fd_full (portal, info, fd, name, flags, rights, &created, NULL,
                                          LIMEN_APP_ACCESS_NONE, NULL, error);
}

LimenDoc *
limen_doc_portal_export_path (LimenDocPortal *portal, const char *path, gboolean is_dir,
                              const char *app, guint perms, GError **error)
{
  g_autoptr(LimenDoc) doc = limen_doc_model_find_reusable (portal->model, path, FALSE);
  g_autofd int fd = -1;
  struct stat st;

  if (doc && ((limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY) != 0) != is_dir)
    g_clear_pointer (&doc, limen_doc_unref);
  if (doc == NULL)
    {
      g_autoptr(GBytes) handle = NULL;
      int type = 0;

      fd = open (path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || fstat (fd, &st) != 0)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "The file is gone");
          return NULL;
        }
      handle = limen_doc_file_handle (fd, &type);
      doc = limen_doc_model_add (portal->model, path, st.st_dev, st.st_ino, type, handle,
                                 is_dir ? LIMEN_DOC_FLAG_DIRECTORY : 0, error);
      if (doc == NULL)
        return NULL;
    }
  if (!limen_doc_model_set_perms (portal->model, doc, app, limen_doc_get_perms (doc, app) | perms, error))
    return NULL;
  return g_steal_pointer (&doc);
}

