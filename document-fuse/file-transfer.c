/* limen-documents — org.freedesktop.portal.FileTransfer (version 1).
 *
 * The sender proves each file with an fd it could reach itself (fd-check); the
 * receiver, when sandboxed, gets session documents with only the rights the sender's
 * fds proved (write only for writable transfers), at paths of its own doc mount.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "file-transfer.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app-info.h"
#include "compat.h"
#include "errors.h"
#include "fd-check.h"
#include "limen-dbus.h"

#define MAX_TRANSFERS_PER_PEER 64
#define MAX_FILES_PER_TRANSFER 16384

typedef struct {
  char    *path;      /* host path */
  gboolean is_dir;
  gboolean writable;  /* what the sender's fd proved */
} TransferFile;

typedef struct {
  char      *key;
  char      *owner;   /* unique name of the sender */
  gboolean   writable;
  gboolean   autostop;
  GArray    *files;   /* TransferFile */
} Transfer;

struct _LimenFileTransfer {
  LimenDocPortal *portal;
  LimenFuse      *fs;
  GHashTable     *transfers;  /* key → Transfer */
  LimenDbusPortalFileTransfer *skeleton;
};

static void
transfer_file_clear (TransferFile *f)
{
  g_free (f->path);
}

static void
transfer_free (Transfer *t)
{
  g_free (t->key);
  g_free (t->owner);
  g_array_unref (t->files);
  g_free (t);
}

static gboolean
return_error (GDBusMethodInvocation *invocation, GError *error)
{
  limen_invocation_return_gerror (invocation, error);
  g_error_free (error);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* 32 hex digits from the kernel's random pool; NULL (and @error) when it cannot be read. */
static char *
new_key (GError **error)
{
  guint8 bytes[16];
  GString *s;
  ssize_t r;

  do
    r = getrandom (bytes, sizeof bytes, 0);
  while (r < 0 && errno == EINTR);
  if (r != sizeof bytes)
    {
      int errsv = r < 0 ? errno : EIO;

      g_warning ("Cannot make a transfer key: getrandom: %s", g_strerror (errsv));
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "No random numbers for a transfer key: %s",
                   g_strerror (errsv));
      return NULL;
    }
  s = g_string_new (NULL);
  for (gsize i = 0; i < sizeof bytes; i++)
    g_string_append_printf (s, "%02x", bytes[i]);
  return g_string_free (s, FALSE);
}

static void
stop_transfer (LimenFileTransfer *ft, Transfer *t)
{
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (ft->skeleton));

  /* Only the sender hears that its transfer ended. */
  if (connection)
    g_dbus_connection_emit_signal (connection, t->owner, "/org/freedesktop/portal/documents",
                                   "org.freedesktop.portal.FileTransfer", "TransferClosed",
                                   g_variant_new ("(s)", t->key), NULL);
  g_hash_table_remove (ft->transfers, t->key);
}

static gboolean
handle_start (LimenDbusPortalFileTransfer *object, GDBusMethodInvocation *invocation, GVariant *options,
              LimenFileTransfer *ft)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_invocation (invocation);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  gboolean writable = FALSE, autostop = TRUE;
  GHashTableIter iter;
  gpointer value;
  guint mine = 0;
  Transfer *t;
  GVariant *v;
  g_autofree char *key = NULL;
  GError *error = NULL;

  if (info == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if ((v = g_variant_lookup_value (options, "writable", NULL)))
    {
      gboolean ok = g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN);

      if (ok)
        writable = g_variant_get_boolean (v);
      g_variant_unref (v);
      if (!ok)
        return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                              "Invalid writable: expected a boolean"));
    }
  if ((v = g_variant_lookup_value (options, "autostop", NULL)))
    {
      gboolean ok = g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN);

      if (ok)
        autostop = g_variant_get_boolean (v);
      g_variant_unref (v);
      if (!ok)
        return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                              "Invalid autostop: expected a boolean"));
    }
  g_hash_table_iter_init (&iter, ft->transfers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (strcmp (((Transfer *) value)->owner, sender) == 0)
      mine++;
  if (mine >= MAX_TRANSFERS_PER_PEER)
    return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                          "Too many transfers"));
  if ((key = new_key (&error)) == NULL)
    return return_error (invocation, error);
  t = g_new0 (Transfer, 1);
  t->key = g_steal_pointer (&key);
  t->owner = g_strdup (sender);
  t->writable = writable;
  t->autostop = autostop;
  t->files = g_array_new (FALSE, TRUE, sizeof (TransferFile));
  g_array_set_clear_func (t->files, (GDestroyNotify) transfer_file_clear);
  g_hash_table_insert (ft->transfers, t->key, t);
  limen_dbus_portal_file_transfer_complete_start_transfer (object, invocation, t->key);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static Transfer *
owned_transfer (LimenFileTransfer *ft, GDBusMethodInvocation *invocation, const char *key)
{
  Transfer *t = g_hash_table_lookup (ft->transfers, key);

  if (t == NULL || strcmp (t->owner, g_dbus_method_invocation_get_sender (invocation)) != 0)
    {
      return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No such transfer"));
      return NULL;
    }
  return t;
}

static gboolean
handle_add_files (LimenDbusPortalFileTransfer *object, GDBusMethodInvocation *invocation, GUnixFDList *fd_list,
                  const char *key, GVariant *fds, GVariant *options, LimenFileTransfer *ft)
{
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(GArray) added = g_array_new (FALSE, TRUE, sizeof (TransferFile));
  Transfer *t = owned_transfer (ft, invocation, key);
  gsize n = g_variant_n_children (fds);

  g_array_set_clear_func (added, (GDestroyNotify) transfer_file_clear);
  if (t == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (t->files->len + n > MAX_FILES_PER_TRANSFER)
    return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                          "Invalid fds: too many files"));
  if (!(info = limen_app_info_get_for_invocation (invocation)))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  for (gsize i = 0; i < n; i++)
    {
      GError *error = NULL;
      g_auto(LimenFdInfo) fdinfo = { 0 };
      TransferFile f = { 0 };
      gint32 handle;
      g_autofd int fd = -1;
      char proc[64];

      g_variant_get_child (fds, i, "h", &handle);
      fd = limen_fd_list_get (fd_list, handle, "fds", &error);
      if (fd < 0 ||
          !limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_DIRECTORY | LIMEN_FD_ALLOW_O_PATH |
                           LIMEN_FD_NEED_READ | (t->writable ? LIMEN_FD_NEED_WRITE : 0), &fdinfo, &error))
        return return_error (invocation, error);
      g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
      f.path = g_file_read_link (proc, NULL);
      f.is_dir = fdinfo.is_dir;
      f.writable = fdinfo.writable;
      if (f.path == NULL || f.path[0] != '/')
        {
          g_free (f.path);
          return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                                "The file has no path"));
        }
      g_array_append_val (added, f);
    }
  /* All or nothing. */
  for (guint i = 0; i < added->len; i++)
    {
      TransferFile f = g_array_index (added, TransferFile, i);

      g_array_append_val (t->files, f);
    }
  g_array_set_clear_func (added, NULL);
  limen_dbus_portal_file_transfer_complete_add_files (object, invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_retrieve (LimenDbusPortalFileTransfer *object, GDBusMethodInvocation *invocation, const char *key,
                 GVariant *options, LimenFileTransfer *ft)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_invocation (invocation);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  Transfer *t;

  if (info == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  t = g_hash_table_lookup (ft->transfers, key);
  if (t == NULL)
    return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No such transfer"));
  for (guint i = 0; i < t->files->len; i++)
    {
      TransferFile *f = &g_array_index (t->files, TransferFile, i);
      g_autoptr(LimenDoc) doc = NULL;
      g_autofree char *name = NULL;
      GError *error = NULL;
      guint perms;

      if (limen_app_info_is_host (info))
        {
          g_ptr_array_add (paths, g_strdup (f->path));
          continue;
        }
      perms = LIMEN_DOC_PERM_READ | ((t->writable && f->writable) ? LIMEN_DOC_PERM_WRITE : 0);
      doc = limen_doc_portal_export_path (ft->portal, f->path, f->is_dir, limen_app_info_get_id (info), perms, &error);
      if (doc == NULL)
        return return_error (invocation, error);
      name = limen_doc_dup_name (doc);
      g_ptr_array_add (paths, g_build_filename (limen_fuse_get_mountpoint (ft->fs), limen_doc_get_id (doc), name, NULL));
    }
  g_ptr_array_add (paths, NULL);
  limen_dbus_portal_file_transfer_complete_retrieve_files (object, invocation, (const char * const *) paths->pdata);
  if (t->autostop)
    stop_transfer (ft, t);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_stop (LimenDbusPortalFileTransfer *object, GDBusMethodInvocation *invocation, const char *key,
             LimenFileTransfer *ft)
{
  Transfer *t = owned_transfer (ft, invocation, key);

  if (t == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  limen_dbus_portal_file_transfer_complete_stop_transfer (object, invocation);
  stop_transfer (ft, t);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
on_peer_vanished (const char *unique_name, gpointer user_data)
{
  LimenFileTransfer *ft = user_data;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, ft->transfers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (strcmp (((Transfer *) value)->owner, unique_name) == 0)
      g_hash_table_iter_remove (&iter);
}

LimenFileTransfer *
limen_file_transfer_new (LimenDocPortal *portal, LimenFuse *fs)
{
  LimenFileTransfer *ft = g_new0 (LimenFileTransfer, 1);

  ft->portal = portal;
  ft->fs = fs;
  ft->transfers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) transfer_free);
  limen_app_info_add_vanished_watch (on_peer_vanished, ft);
  return ft;
}

gboolean
limen_file_transfer_export (LimenFileTransfer *ft, GDBusConnection *connection, GError **error)
{
  ft->skeleton = limen_dbus_portal_file_transfer_skeleton_new ();
  limen_dbus_portal_file_transfer_set_version (ft->skeleton, 1);
  /* Files retrieved are handed out as paths in the document filesystem: it must be up. */
  limen_doc_portal_mount_before_calls (ft->portal, G_DBUS_INTERFACE_SKELETON (ft->skeleton));
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (ft->skeleton));
  g_signal_connect (ft->skeleton, "handle-start-transfer", G_CALLBACK (handle_start), ft);
  g_signal_connect (ft->skeleton, "handle-add-files", G_CALLBACK (handle_add_files), ft);
  g_signal_connect (ft->skeleton, "handle-retrieve-files", G_CALLBACK (handle_retrieve), ft);
  g_signal_connect (ft->skeleton, "handle-stop-transfer", G_CALLBACK (handle_stop), ft);
  return g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (ft->skeleton), connection,
                                           "/org/freedesktop/portal/documents", error);
}
