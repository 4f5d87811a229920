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
#include "docs-bus.h"
#include "fd-check.h"

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
  LimenDocsBus   *bus;
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

static void
return_error (LimenDocsCall *call, GError *error)
{
  limen_docs_call_return_gerror (call, error);
  g_error_free (error);
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
  /* Only the sender hears that its transfer ended. */
  if (ft->bus)
    limen_docs_bus_emit_signal (ft->bus, t->owner, LIMEN_FILE_TRANSFER_IFACE, "TransferClosed",
                                g_variant_new ("(s)", t->key));
  g_hash_table_remove (ft->transfers, t->key);
}

static void
handle_start (LimenDocsCall *call, gpointer user_data)
{
  LimenFileTransfer *ft = user_data;
  g_autoptr(GVariant) options = g_variant_get_child_value (limen_docs_call_get_parameters (call), 0);
  g_autoptr(LimenAppInfo) info = limen_docs_call_get_app_info (call);
  const char *sender = limen_docs_call_get_sender (call);
  gboolean writable = FALSE, autostop = TRUE;
  GHashTableIter iter;
  gpointer value;
  guint mine = 0;
  Transfer *t;
  GVariant *v;
  g_autofree char *key = NULL;
  GError *error = NULL;

  if (info == NULL)
    return;
  if ((v = g_variant_lookup_value (options, "writable", NULL)))
    {
      gboolean ok = g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN);

      if (ok)
        writable = g_variant_get_boolean (v);
      g_variant_unref (v);
      if (!ok)
        {
          return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                   "Invalid writable: expected a boolean"));
          return;
        }
    }
  if ((v = g_variant_lookup_value (options, "autostop", NULL)))
    {
      gboolean ok = g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN);

      if (ok)
        autostop = g_variant_get_boolean (v);
      g_variant_unref (v);
      if (!ok)
        {
          return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                   "Invalid autostop: expected a boolean"));
          return;
        }
    }
  g_hash_table_iter_init (&iter, ft->transfers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (strcmp (((Transfer *) value)->owner, sender) == 0)
      mine++;
  if (mine >= MAX_TRANSFERS_PER_PEER)
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                               "Too many transfers"));
      return;
    }
  if ((key = new_key (&error)) == NULL)
    {
      return_error (call, error);
      return;
    }
  t = g_new0 (Transfer, 1);
  t->key = g_steal_pointer (&key);
  t->owner = g_strdup (sender);
  t->writable = writable;
  t->autostop = autostop;
  t->files = g_array_new (FALSE, TRUE, sizeof (TransferFile));
  g_array_set_clear_func (t->files, (GDestroyNotify) transfer_file_clear);
  g_hash_table_insert (ft->transfers, t->key, t);
  limen_docs_call_return_value (call, g_variant_new ("(s)", t->key));
}

static Transfer *
owned_transfer (LimenFileTransfer *ft, LimenDocsCall *call, const char *key)
{
  Transfer *t = g_hash_table_lookup (ft->transfers, key);

  if (t == NULL || strcmp (t->owner, limen_docs_call_get_sender (call)) != 0)
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No such transfer"));
      return NULL;
    }
  return t;
}

static void
handle_add_files (LimenDocsCall *call, gpointer user_data)
{
  LimenFileTransfer *ft = user_data;
  g_autoptr(GVariant) fds = NULL;
  const char *key;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(GArray) added = g_array_new (FALSE, TRUE, sizeof (TransferFile));
  Transfer *t;
  gsize n;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s@ah@a{sv})", &key, &fds, NULL);
  t = owned_transfer (ft, call, key);
  n = g_variant_n_children (fds);
  g_array_set_clear_func (added, (GDestroyNotify) transfer_file_clear);
  if (t == NULL)
    return;
  if (t->files->len + n > MAX_FILES_PER_TRANSFER)
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                               "Invalid fds: too many files"));
      return;
    }
  if (!(info = limen_docs_call_get_app_info (call)))
    return;
  for (gsize i = 0; i < n; i++)
    {
      GError *error = NULL;
      g_auto(LimenFdInfo) fdinfo = { 0 };
      TransferFile f = { 0 };
      gint32 handle;
      int fd;
      char proc[64];

      g_variant_get_child (fds, i, "h", &handle);
      fd = limen_docs_call_peek_fd (call, handle, "fds", &error);
      if (fd < 0 ||
          !limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_DIRECTORY | LIMEN_FD_ALLOW_O_PATH |
                           LIMEN_FD_NEED_READ | (t->writable ? LIMEN_FD_NEED_WRITE : 0), &fdinfo, &error))
        {
          return_error (call, error);
          return;
        }
      g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
      f.path = g_file_read_link (proc, NULL);
      f.is_dir = fdinfo.is_dir;
      f.writable = fdinfo.writable;
      if (f.path == NULL || f.path[0] != '/')
        {
          g_free (f.path);
          return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The file has no path"));
          return;
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
  limen_docs_call_return_value (call, NULL);
}

static void
handle_retrieve (LimenDocsCall *call, gpointer user_data)
{
  LimenFileTransfer *ft = user_data;
  const char *key;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  Transfer *t;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s@a{sv})", &key, NULL);
  if (!(info = limen_docs_call_get_app_info (call)))
    return;
  t = g_hash_table_lookup (ft->transfers, key);
  if (t == NULL)
    {
      return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No such transfer"));
      return;
    }
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
        {
          return_error (call, error);
          return;
        }
      name = limen_doc_dup_name (doc);
      g_ptr_array_add (paths, g_build_filename (limen_fuse_get_mountpoint (ft->fs), limen_doc_get_id (doc), name, NULL));
    }
  g_ptr_array_add (paths, NULL);
  limen_docs_call_return_value (call, g_variant_new ("(^as)", (const char * const *) paths->pdata));
  if (t->autostop)
    stop_transfer (ft, t);
}

static void
handle_stop (LimenDocsCall *call, gpointer user_data)
{
  LimenFileTransfer *ft = user_data;
  const char *key;
  Transfer *t;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &key);
  if (!(t = owned_transfer (ft, call, key)))
    return;
  limen_docs_call_return_value (call, NULL);
  stop_transfer (ft, t);
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

void
limen_file_transfer_export (LimenFileTransfer *ft, LimenDocsBus *bus)
{
  /* Files retrieved are handed out as paths in the document filesystem: like every call on
   * the object, these want it mounted first (limen_doc_portal_export). */
  ft->bus = bus;
  limen_docs_bus_add_method (bus, LIMEN_FILE_TRANSFER_IFACE, "StartTransfer", handle_start, ft);
  limen_docs_bus_add_method (bus, LIMEN_FILE_TRANSFER_IFACE, "AddFiles", handle_add_files, ft);
  limen_docs_bus_add_method (bus, LIMEN_FILE_TRANSFER_IFACE, "RetrieveFiles", handle_retrieve, ft);
  limen_docs_bus_add_method (bus, LIMEN_FILE_TRANSFER_IFACE, "StopTransfer", handle_stop, ft);
}
