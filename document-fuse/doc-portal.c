/* limen-documents — org.freedesktop.portal.Documents (version 5).
 *
 * Callers are identified by the core's app-info; a sandboxed caller can only export
 * what its fd proves it reaches in its own namespace (fd-check), gets only the rights
 * the fd proves, can only pass on rights it holds, and never reaches the host-only
 * methods (Lookup, Info, List).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-portal.h"

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

#define ADD_FULL_MAX_FDS 16384

struct _LimenDocPortal {
  LimenDocModel *model;
  LimenFuse     *fs;
  gboolean       mount_settled;   /* the mount is up, or will not come */
  GPtrArray     *mount_waiters;   /* GetMountPoint calls that came before */
  guint          mount_timeout;
  void         (*want_mount) (gpointer user_data);
  gpointer       want_mount_data;
  GList         *lookups;         /* LookupCall*: Lookup calls opening their path */
};

static void
return_error (LimenDocsCall *call, GError *error)
{
  limen_docs_call_return_gerror (call, error);
  g_error_free (error);
}

static void
return_not_allowed (LimenDocsCall *call, const char *what)
{
  return_error (call, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s", what));
}

static void
return_mount_point (LimenDocPortal *portal, LimenDocsCall *call)
{
  limen_docs_call_return_value (call, g_variant_new ("(^ay)", limen_fuse_get_mountpoint (portal->fs)));
}

/* export_fd() for a sandboxed AddFull naming the caller's own app: the app gets what it
 * asks for there, not a caller's rights besides (as in the reference). Internal, above the
 * flags of the API. */
#define EXPORT_FOR_SELF (1u << 16)

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

static LimenDoc *
export_fd (LimenDocPortal *portal, LimenAppInfo *info, int fd, const char *name,
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

  /* As in the reference, a reuse finds only a document kept as long as this export asks
   * for: a grant meant for this session never outlives it. */
  if (flags & LIMEN_DOC_EXPORT_REUSE)
    {
      doc = limen_doc_model_find_reusable (portal->model, path, (flags & LIMEN_DOC_EXPORT_PERSISTENT) != 0);
      if (doc && ((limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY) != 0) != want_dir)
        g_clear_pointer (&doc, limen_doc_unref);
    }
  if (doc == NULL)
    {
      doc = limen_doc_model_add (portal->model, path, st.st_dev, st.st_ino, handle_type, handle,
                                 (want_dir ? LIMEN_DOC_FLAG_DIRECTORY : 0) |
                                 ((flags & LIMEN_DOC_EXPORT_PERSISTENT) ? LIMEN_DOC_FLAG_PERSISTENT : 0) |
                                 ((flags & LIMEN_DOC_EXPORT_REUSE) ? 0 : LIMEN_DOC_FLAG_UNIQUE),
                                 error);
      if (doc == NULL)
        return NULL;
      *created = TRUE;
    }
  if (!(flags & EXPORT_FOR_SELF))
    grant_caller (portal, info, doc, rights);
  return g_steal_pointer (&doc);
}

LimenDoc *
limen_doc_portal_export_fd (LimenDocPortal *portal, LimenAppInfo *info, int fd, const char *name,
                            guint flags, guint *rights, GError **error)
{
  gboolean created;

  return export_fd (portal, info, fd, name, flags, rights, &created, NULL, LIMEN_APP_ACCESS_NONE, NULL, error);
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

static GVariant *
extra_out (LimenDocPortal *portal)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "mountpoint",
                         g_variant_new_bytestring (limen_fuse_get_mountpoint (portal->fs)));
  return g_variant_builder_end (&b);
}

/* Check AddFull's @app_id / @permissions; a sandboxed caller may only pass on @held. */
static gboolean
check_grant (LimenAppInfo *info, const char *app_id, guint perms, guint held, GError **error)
{
  if (app_id[0] == '\0')
    return TRUE;
  if (!limen_app_id_is_valid (app_id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id");
      return FALSE;
    }
  if (!limen_app_info_is_host (info) && (perms & ~held) != 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "A sandboxed application can only grant permissions it holds");
      return FALSE;
    }
  return TRUE;
}

/* The daemon mounts at the first call on Documents or FileTransfer, and only once it owns
 * the Documents name, so GetMountPoint can come before the mount is up; clients (flatpak
 * run) bind by-app/APP into the sandbox right after the answer, so GetMountPoint answers
 * once the mount is there. */
#define MOUNT_WAIT_MS 5000

static void
answer_mount_waiters (LimenDocPortal *portal)
{
  g_autoptr(GPtrArray) waiters = g_steal_pointer (&portal->mount_waiters);

  for (guint i = 0; waiters && i < waiters->len; i++)
    return_mount_point (portal, g_ptr_array_index (waiters, i));
}

static gboolean
on_mount_wait_timeout (gpointer user_data)
{
  LimenDocPortal *portal = user_data;

  portal->mount_timeout = 0;
  g_message ("The document filesystem is not up after %d ms; telling its place anyway", MOUNT_WAIT_MS);
  answer_mount_waiters (portal);
  return G_SOURCE_REMOVE;
}

void
limen_doc_portal_set_mount_func (LimenDocPortal *portal, void (*func) (gpointer user_data), gpointer user_data)
{
  portal->want_mount = func;
  portal->want_mount_data = user_data;
}

void
limen_doc_portal_want_mount (LimenDocPortal *portal)
{
  if (portal->want_mount)
    portal->want_mount (portal->want_mount_data);
}

void
limen_doc_portal_mount_settled (LimenDocPortal *portal)
{
  portal->mount_settled = TRUE;
  g_clear_handle_id (&portal->mount_timeout, g_source_remove);
  answer_mount_waiters (portal);
}

static void
handle_get_mount_point (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;

  if (!portal->mount_settled)
    {
      if (portal->mount_waiters == NULL)
        portal->mount_waiters = g_ptr_array_new ();
      g_ptr_array_add (portal->mount_waiters, call);
      if (portal->mount_timeout == 0)
        portal->mount_timeout = g_timeout_add (MOUNT_WAIT_MS, on_mount_wait_timeout, portal);
      return;
    }
  return_mount_point (portal, call);
}

/* Argument @index of @params as a byte string: with or without the customary trailing
 * NUL (GDBus's bytestring getter turns one without it into ""), never with another. */
static char *
bytestring_child (GVariant *params, gsize index, const char *key, GError **error)
{
  g_autoptr(GVariant) v = g_variant_get_child_value (params, index);
  gsize len;
  const char *data = g_variant_get_fixed_array (v, &len, 1);

  if (len > 0 && data[len - 1] == '\0')
    len--;
  if (len == 0 || memchr (data, '\0', len) != NULL || len > PATH_MAX)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid %s", key);
      return NULL;
    }
  return g_strndup (data, len);
}

static char *
bytestring_arg (LimenDocsCall *call, gsize index, const char *key, GError **error)
{
  return bytestring_child (limen_docs_call_get_parameters (call), index, key, error);
}

#define KNOWN_FLAGS (LIMEN_DOC_EXPORT_REUSE | LIMEN_DOC_EXPORT_PERSISTENT | LIMEN_DOC_EXPORT_AS_NEEDED | \
                     LIMEN_DOC_EXPORT_DIRECTORY)

/* Shared by AddFull and AddNamedFull: @n fds (or one parent fd with @name). */
static GPtrArray *
add_full (LimenDocPortal *portal, LimenAppInfo *info, int *fds, guint n, const char *name, guint flags,
          const char *app_id, const char * const *permissions, GError **error)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) docs = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_doc_unref);
  g_autoptr(GPtrArray) created_docs = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_doc_unref);
  gboolean host = limen_app_info_is_host (info);
  g_autoptr(LimenAppAccessRules) reach = NULL;
  LimenAppAccess need;
  guint perms, for_self = 0;

  if (flags & ~KNOWN_FLAGS)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid flags: unknown bits");
      return NULL;
    }
  if (name && (flags & LIMEN_DOC_EXPORT_DIRECTORY))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid flags: export-directory does not apply to AddNamedFull");
      return NULL;
    }
  if (!limen_doc_perms_from_strv (permissions, "permissions", &perms, error))
    return NULL;
  if (app_id[0] != '\0' && !limen_app_id_is_valid (app_id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id");
      return NULL;
    }

  /* as-needed-by-app from the host (a frontend exporting for @app_id): what the app's
   * installed permissions let it reach needs no document. A sandboxed caller naming another
   * app always gets documents: the answer would tell it about that app's permissions. */
  if ((flags & LIMEN_DOC_EXPORT_AS_NEEDED) && host && app_id[0] != '\0')
    reach = limen_app_access_rules_load (app_id);
  need = (perms & (LIMEN_DOC_PERM_WRITE | LIMEN_DOC_PERM_DELETE)) ? LIMEN_APP_ACCESS_WRITE : LIMEN_APP_ACCESS_READ;
  if (!host && app_id[0] != '\0' && g_strcmp0 (app_id, limen_app_info_get_id (info)) == 0)
    for_self = EXPORT_FOR_SELF;

  /* All files in one transaction: all are exported, or none is. */
  if (!limen_doc_model_begin (portal->model, error))
    return NULL;
  for (guint i = 0; i < n; i++)
    {
      LimenDoc *doc;
      guint rights;
      gboolean created, reached = FALSE;

      if ((flags & LIMEN_DOC_EXPORT_AS_NEEDED) && !host && g_strcmp0 (app_id, limen_app_info_get_id (info)) == 0)
        {
          /* The fd proves the caller reaches the file itself: no document needed. */
          g_auto(LimenFdInfo) fdinfo = { 0 };
          LimenFdFlags check = LIMEN_FD_ALLOW_O_PATH |
            (name || (flags & LIMEN_DOC_EXPORT_DIRECTORY) ? LIMEN_FD_ALLOW_DIRECTORY : LIMEN_FD_ALLOW_REGULAR);

          if (!limen_fd_check (info, fds[i], check, &fdinfo, error))
            goto fail;
          g_ptr_array_add (ids, g_strdup (""));
          continue;
        }
      doc = export_fd (portal, info, fds[i], name, (flags & ~LIMEN_DOC_EXPORT_AS_NEEDED) | for_self, &rights, &created,
                       reach, need, &reached, error);
      if (doc == NULL && reached)
        {
          g_ptr_array_add (ids, g_strdup (""));
          continue;
        }
      if (doc == NULL)
        goto fail;
      g_ptr_array_add (docs, doc);
      if (created)
        g_ptr_array_add (created_docs, limen_doc_ref (doc));
      g_ptr_array_add (ids, g_strdup (limen_doc_get_id (doc)));
      if (!check_grant (info, app_id, perms, rights, error))
        goto fail;
      if (app_id[0] != '\0' &&
          !limen_doc_model_set_perms (portal->model, doc, app_id, limen_doc_get_perms (doc, app_id) | perms, error))
        goto fail;
    }
  if (!limen_doc_model_commit (portal->model, error))
    goto fail_committed;
  g_ptr_array_add (ids, NULL);
  return g_steal_pointer (&ids);

fail:
  limen_doc_model_rollback (portal->model);
fail_committed:
  /* The database is back to before the call; drop the documents it made in memory
   * (rights granted on reused ones stay in memory only until the next restart). */
  for (guint i = 0; i < created_docs->len; i++)
    limen_doc_model_delete (portal->model, created_docs->pdata[i], NULL);
  return NULL;
}

/* The arguments of one call of the Add family, checked in the order the methods always
 * checked them: the fds (and the name) before the caller's identity. */
typedef struct {
  gboolean full;          /* AddFull / AddNamedFull: (as a{sv}) or (s a{sv}) answers */
  int     *fds;          /* borrowed from the call's message */
  gsize    n;
  char    *name;          /* AddNamed / AddNamedFull */
  guint    flags;
  const char *app_id;     /* borrowed from the parameters */
  const char **permissions;
} AddCall;

static void
add_call_clear (AddCall *call)
{
  g_clear_pointer (&call->fds, g_free);
  g_clear_pointer (&call->name, g_free);
  g_clear_pointer (&call->permissions, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (AddCall, add_call_clear)

/* The fd of @dcall for @handle into @call: borrowed, the call's message keeps it open. */
static gboolean
add_call_take_fd (AddCall *call, LimenDocsCall *dcall, gint32 handle, const char *key, GError **error)
{
  int fd = limen_docs_call_peek_fd (dcall, handle, key, error);

  if (fd < 0)
    return FALSE;
  call->fds[call->n++] = fd;
  return TRUE;
}

static gboolean
add_call_parse (AddCall *call, LimenDocsCall *dcall, GError **error)
{
  const char *method = limen_docs_call_get_method (dcall);
  GVariant *params = limen_docs_call_get_parameters (dcall);
  gboolean named = strcmp (method, "AddNamed") == 0 || strcmp (method, "AddNamedFull") == 0;
  gboolean reuse, persistent;
  g_autoptr(GVariant) handles = NULL;
  gint32 handle;

  memset (call, 0, sizeof *call);
  call->full = g_str_has_suffix (method, "Full");
  if (strcmp (method, "AddFull") == 0)
    {
      g_variant_get (params, "(@ahu&s^a&s)", &handles, &call->flags, &call->app_id, &call->permissions);
      if (g_variant_n_children (handles) > ADD_FULL_MAX_FDS)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid o_path_fds: too many");
          return FALSE;
        }
      call->fds = g_new (int, g_variant_n_children (handles) + 1);
      for (gsize i = 0; i < g_variant_n_children (handles); i++)
        {
          g_variant_get_child (handles, i, "h", &handle);
          if (!add_call_take_fd (call, dcall, handle, "o_path_fds", error))
            return FALSE;
        }
      return TRUE;
    }
  call->fds = g_new (int, 1);
  if (call->full)
    g_variant_get (params, "(h@ayu&s^a&s)", &handle, NULL, &call->flags, &call->app_id, &call->permissions);
  else
    {
      if (named)
        g_variant_get (params, "(h@aybb)", &handle, NULL, &reuse, &persistent);
      else
        g_variant_get (params, "(hbb)", &handle, &reuse, &persistent);
      call->flags = (reuse ? LIMEN_DOC_EXPORT_REUSE : 0) | (persistent ? LIMEN_DOC_EXPORT_PERSISTENT : 0);
    }
  if (!add_call_take_fd (call, dcall, handle, named ? (call->full ? "o_path_fd" : "o_path_parent_fd") : "o_path_fd",
                         error))
    return FALSE;
  if (named && !(call->name = bytestring_child (params, 1, "filename", error)))
    return FALSE;
  return TRUE;
}

/* The answer to @call from @info's caller: its reply's body, or NULL and @error. */
static GVariant *
add_call_run (LimenDocPortal *portal, LimenAppInfo *info, AddCall *call, GError **error)
{
  g_autoptr(GPtrArray) ids = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  guint rights;

  /* A file to be named in a folder is the host's to ask for, as in the reference: from a
   * sandbox the answer would tell which names exist in any folder it holds an fd of (also
   * where only this daemon may look). Sandboxed apps save through FileChooser. */
  if (call->name && !limen_app_info_is_host (info))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Not available to sandboxed applications");
      return NULL;
    }
  if (!call->full)
    {
      doc = limen_doc_portal_export_fd (portal, info, call->fds[0], call->name, call->flags, &rights, error);
      return doc ? g_variant_new ("(s)", limen_doc_get_id (doc)) : NULL;
    }
  ids = add_full (portal, info, call->fds, call->n, call->name, call->flags, call->app_id, call->permissions,
                  error);
  if (ids == NULL)
    return NULL;
  if (call->name)
    return g_variant_new ("(s@a{sv})", ids->pdata[0], extra_out (portal));
  return g_variant_new ("(^as@a{sv})", ids->pdata, extra_out (portal));
}

/* Add, AddNamed, AddFull and AddNamedFull. */
static void
handle_add_call (LimenDocsCall *dcall, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenAppInfo) info = NULL;
  g_auto(AddCall) call = { 0 };
  GError *error = NULL;
  GVariant *reply;

  if (!add_call_parse (&call, dcall, &error))
    {
      return_error (dcall, error);
      return;
    }
  if (!(info = limen_docs_call_get_app_info (dcall)))
    return;
  reply = add_call_run (portal, info, &call, &error);
  if (reply == NULL)
    return_error (dcall, error);
  else
    limen_docs_call_return_value (dcall, reply);
}

/* The document @doc_id for a permission change by the caller; NULL after answering. */
static LimenDoc *
doc_for_change (LimenDocPortal *portal, LimenDocsCall *call, const char *doc_id, guint need,
                LimenAppInfo **info_out)
{
  g_autoptr(LimenAppInfo) info = NULL;
  LimenDoc *doc;

  if (!limen_doc_id_is_valid (doc_id))
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid doc_id"));
      return NULL;
    }
  if (!(info = limen_docs_call_get_app_info (call)))
    return NULL;
  doc = limen_doc_model_lookup (portal->model, doc_id);
  /* A sandbox learns nothing about documents it has no rights on: NotFound either way. */
  if (doc == NULL || (!limen_app_info_is_host (info) &&
                      limen_doc_get_perms (doc, limen_app_info_get_id (info)) == 0))
    {
      g_clear_pointer (&doc, limen_doc_unref);
      return_error (call, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No document %s", doc_id));
      return NULL;
    }
  if (!limen_app_info_is_host (info) && (limen_doc_get_perms (doc, limen_app_info_get_id (info)) & need) != need)
    {
      limen_doc_unref (doc);
      return_not_allowed (call, "The application lacks the permission for this document");
      return NULL;
    }
  *info_out = g_steal_pointer (&info);
  return doc;
}

/* GrantPermissions and RevokePermissions. */
static void
handle_change_perms (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  gboolean grant = strcmp (limen_docs_call_get_method (call), "GrantPermissions") == 0;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree const char **permissions = NULL;
  const char *doc_id, *app_id;
  GError *error = NULL;
  guint perms, held, current;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s&s^a&s)", &doc_id, &app_id, &permissions);
  if (!limen_doc_perms_from_strv (permissions, "permissions", &perms, &error))
    {
      return_error (call, error);
      return;
    }
  if (!limen_app_id_is_valid (app_id))
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id"));
      return;
    }
  doc = doc_for_change (portal, call, doc_id, LIMEN_DOC_PERM_GRANT, &info);
  if (doc == NULL)
    return;
  held = limen_app_info_is_host (info) ? LIMEN_DOC_PERM_ALL : limen_doc_get_perms (doc, limen_app_info_get_id (info));
  if ((perms & ~held) != 0)
    {
      return_not_allowed (call, grant ? "A sandboxed application can only grant permissions it holds"
                                     : "A sandboxed application can only revoke permissions it holds");
      return;
    }
  current = limen_doc_get_perms (doc, app_id);
  if (!limen_doc_model_set_perms (portal->model, doc, app_id, grant ? (current | perms) : (current & ~perms), &error))
    {
      return_error (call, error);
      return;
    }
  limen_docs_call_return_value (call, NULL);
}

static void
handle_delete (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  const char *doc_id;
  GError *error = NULL;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &doc_id);
  if (!(doc = doc_for_change (portal, call, doc_id, LIMEN_DOC_PERM_DELETE, &info)))
    return;
  if (!limen_doc_model_delete (portal->model, doc, &error))
    {
      return_error (call, error);
      return;
    }
  limen_docs_call_return_value (call, NULL);
}

/* Host-only methods: FALSE after answering a sandboxed caller. */
static gboolean
host_only (LimenDocsCall *call)
{
  g_autoptr(LimenAppInfo) info = limen_docs_call_get_app_info (call);

  if (info == NULL)
    return FALSE;
  if (!limen_app_info_is_host (info))
    {
      return_not_allowed (call, "Not available to sandboxed applications");
      return FALSE;
    }
  return TRUE;
}

/* Lookup opens the path as the caller named it (symlinks followed), on a thread: a path on
 * our own mount is a request to our own filesystem, which the D-Bus thread never waits for,
 * and a path elsewhere may sit on a slow one. What the fd is decides, as in the reference:
 * a document's own entry on the mount (DOCID/NAME, by-app/APP/DOCID/NAME, or a directory
 * document's directory) names it, anything else on the mount names nothing, and a file
 * elsewhere names the document exported from its path. A path that does not open is
 * NotFound. */
typedef struct {
  LimenDocPortal *portal;      /* NULL once the portal is gone */
  LimenDocsCall  *call;
} LookupCall;

static void
lookup_open (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const char *filename = g_object_get_data (G_OBJECT (task), "filename");
  int fd = open (filename, O_PATH | O_CLOEXEC);

  if (fd < 0)
    {
      int saved = errno;

      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "%s", g_strerror (saved));
      return;
    }
  g_task_return_int (task, fd);
}

static void
lookup_opened (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LookupCall *lookup = user_data;
  LimenDocPortal *portal = lookup->portal;
  GError *error = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *node_app = NULL;
  g_autofd int fd = (int) g_task_propagate_int (G_TASK (result), &error);
  gboolean is_doc_entry = FALSE;
  struct statx stx;

  if (portal == NULL)
    {
      g_clear_error (&error);
      g_free (lookup);         /* answered when the portal went away */
      return;
    }
  portal->lookups = g_list_remove (portal->lookups, lookup);
  if (fd < 0)
    {
      return_error (lookup->call, error);
      g_free (lookup);
      return;
    }
  /* Told not to sync, statx asks no filesystem (see export_fd). */
  if (statx (fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID | STATX_INO, &stx) != 0)
    memset (&stx, 0, sizeof stx);
  if (limen_fuse_identify_fd (portal->fs, fd, (stx.stx_mask & STATX_MNT_ID) ? (int) stx.stx_mnt_id : -1,
                              makedev (stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino,
                              &doc, &node_app, &is_doc_entry))
    {
      if (!is_doc_entry)
        g_clear_pointer (&doc, limen_doc_unref);
    }
  else
    {
      /* The fd's path is what Add stores: canonical, symlinks resolved. */
      g_autofree char *path = limen_doc_fd_path (fd);

      if (path && path[0] == '/')
        doc = limen_doc_model_find_by_path (portal->model, path);
    }
  limen_docs_call_return_value (lookup->call, g_variant_new ("(s)", doc ? limen_doc_get_id (doc) : ""));
  g_free (lookup);
}

static void
handle_lookup (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autofree char *arg = NULL;
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;
  LookupCall *lookup;

  if (!host_only (call))
    return;
  if (!(arg = bytestring_arg (call, 0, "filename", &error)))
    {
      return_error (call, error);
      return;
    }
  if (arg[0] != '/')
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                               "Invalid filename: not an absolute path"));
      return;
    }
  lookup = g_new0 (LookupCall, 1);
  lookup->portal = portal;
  lookup->call = call;
  portal->lookups = g_list_prepend (portal->lookups, lookup);
  task = g_task_new (NULL, NULL, lookup_opened, lookup);
  g_task_set_source_tag (task, handle_lookup);
  g_object_set_data_full (G_OBJECT (task), "filename", g_steal_pointer (&arg), g_free);
  g_task_run_in_thread (task, lookup_open);
}

static void
handle_info (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *path = NULL;
  const char *doc_id;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &doc_id);
  if (!host_only (call))
    return;
  if (!limen_doc_id_is_valid (doc_id) || !(doc = limen_doc_model_lookup (portal->model, doc_id)))
    {
      return_error (call, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No document %s", doc_id));
      return;
    }
  path = limen_doc_dup_path (doc);
  limen_docs_call_return_value (call, g_variant_new ("(^ay@a{sas})", path, limen_doc_perms_to_variant (doc)));
}

static void
handle_list (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(GPtrArray) docs = NULL;
  const char *app_id;
  GVariantBuilder b;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &app_id);
  if (!host_only (call))
    return;
  if (app_id[0] != '\0' && !limen_app_id_is_valid (app_id))
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id"));
      return;
    }
  docs = limen_doc_model_list (portal->model, app_id[0] ? app_id : NULL);
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{say}"));
  for (guint i = 0; i < docs->len; i++)
    {
      g_autofree char *path = limen_doc_dup_path (docs->pdata[i]);
      g_variant_builder_add (&b, "{s@ay}", limen_doc_get_id (docs->pdata[i]), g_variant_new_bytestring (path));
    }
  limen_docs_call_return_value (call, g_variant_new ("(a{say})", &b));
}

static void
handle_get_host_paths (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autofree const char **doc_ids = NULL;
  GVariantBuilder b;

  g_variant_get (limen_docs_call_get_parameters (call), "(^a&s)", &doc_ids);
  if (!(info = limen_docs_call_get_app_info (call)))
    return;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{say}"));
  for (guint i = 0; doc_ids[i]; i++)
    {
      g_autoptr(LimenDoc) doc = NULL;
      g_autofree char *path = NULL;

      if (!limen_doc_id_is_valid (doc_ids[i]) || !(doc = limen_doc_model_lookup (portal->model, doc_ids[i])))
        continue;
      if (!limen_app_info_is_host (info) && limen_doc_get_perms (doc, limen_app_info_get_id (info)) == 0)
        continue;
      path = limen_doc_dup_path (doc);
      g_variant_builder_add (&b, "{s@ay}", doc_ids[i], g_variant_new_bytestring (path));
    }
  limen_docs_call_return_value (call, g_variant_new ("(a{say})", &b));
}

LimenDocPortal *
limen_doc_portal_new (LimenDocModel *model, LimenFuse *fs)
{
  LimenDocPortal *portal = g_new0 (LimenDocPortal, 1);

  portal->model = model;
  portal->fs = fs;
  return portal;
}

static void
want_mount (gpointer user_data)
{
  limen_doc_portal_want_mount (user_data);
}

void
limen_doc_portal_export (LimenDocPortal *portal, LimenDocsBus *bus)
{
  static const struct {
    const char *method;
    LimenDocsMethodFunc func;
  } methods[] = {
    { "GetMountPoint", handle_get_mount_point },
    { "Add", handle_add_call },
    { "AddNamed", handle_add_call },
    { "AddFull", handle_add_call },
    { "AddNamedFull", handle_add_call },
    { "GrantPermissions", handle_change_perms },
    { "RevokePermissions", handle_change_perms },
    { "Delete", handle_delete },
    { "Lookup", handle_lookup },
    { "Info", handle_info },
    { "List", handle_list },
    { "GetHostPaths", handle_get_host_paths },
  };

  /* Every call on the object, Documents or FileTransfer, asks for the mount first, before
   * its caller is identified. */
  limen_docs_bus_set_before_call (bus, want_mount, portal);
  for (gsize i = 0; i < G_N_ELEMENTS (methods); i++)
    limen_docs_bus_add_method (bus, LIMEN_DOCS_IFACE, methods[i].method, methods[i].func, portal);
}

