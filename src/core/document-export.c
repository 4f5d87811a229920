/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * dbus-daemon refuses messages with more than 16 fds (its max_message_unix_fds default,
 * which session buses keep) and disconnects the sender for it, so a selection of thousands
 * of files travels as many AddFull calls of 16; keeping several in flight hides the round
 * trips without holding thousands of fds open at once. */
#include "document-export.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <gio/gunixfdlist.h>

#include "document-path.h"
#include "errors.h"

#define DOCUMENTS_NAME "org.freedesktop.portal.Documents"
#define DOCUMENTS_PATH "/org/freedesktop/portal/documents"
#define DOCUMENTS_IFACE "org.freedesktop.portal.Documents"
#define DOCUMENTS_TIMEOUT_MS 60000
#define INFO_TIMEOUT_MS 5000
#define BATCH_MAX 16
#define IN_FLIGHT_MAX 16

/* AddFull flags of the specification. */
enum {
  ADD_REUSE_EXISTING   = 1 << 0,
  ADD_PERSISTENT       = 1 << 1,
  ADD_AS_NEEDED_BY_APP = 1 << 2,
  ADD_EXPORT_DIRECTORY = 1 << 3,
};

typedef struct {
  GDBusConnection *connection;
  LimenAppInfo    *info;
  LimenExportFlags flags;
  GCancellable    *cancellable;
  GTask           *task;
  char           **uris;       /* result, filled in place */
  char           **paths;      /* host path per entry, NULL for non-file URIs */
  gboolean        *left_out;   /* per entry: left out (LIMEN_EXPORT_LEAVE_OUT) */
  guint            n_left_out;
  guint           *retry;      /* entries of refused batches, to be sent again one by one */
  guint            n_retry;
  guint            n;
  guint            next;       /* first entry not yet sent */
  guint            in_flight;
  GError          *error;
} Export;

typedef struct {
  Export *export;
  guint   count;
  guint  *index;   /* entry of each fd in the batch */
} Batch;

static void send_more (Export *export);

static void
export_free (Export *export)
{
  g_clear_object (&export->task);
  g_object_unref (export->connection);
  limen_app_info_unref (export->info);
  g_clear_object (&export->cancellable);
  g_strfreev (export->uris);
  for (guint i = 0; i < export->n; i++)
    g_free (export->paths[i]);
  g_free (export->paths);
  g_free (export->left_out);
  g_free (export->retry);
  g_clear_error (&export->error);
  g_free (export);
}

static void
export_maybe_finish (Export *export)
{
  if (export->in_flight > 0 || ((export->next < export->n || export->n_retry > 0) && export->error == NULL))
    return;
  if (export->error == NULL && export->n_left_out > 0 && export->n_left_out == export->n)
    export->error = g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_FAILED, "None of the files could be exported");
  if (export->error)
    g_task_return_error (export->task, g_steal_pointer (&export->error));
  else
    {
      /* What was left out goes; the others keep their order. */
      guint kept = 0;

      for (guint i = 0; i < export->n; i++)
        if (export->left_out[i])
          g_clear_pointer (&export->uris[i], g_free);
        else
          export->uris[kept++] = export->uris[i];
      if (export->uris)
        export->uris[kept] = NULL;
      g_task_return_pointer (export->task, g_steal_pointer (&export->uris), (GDestroyNotify) g_strfreev);
    }
  export_free (export);
}

/* @i did not open or was refused (@why): left out when the caller allows it, TRUE then. */
static gboolean
leave_out (Export *export, guint i, const char *why)
{
  g_autofree char *base = NULL;

  if (!(export->flags & LIMEN_EXPORT_LEAVE_OUT))
    return FALSE;
  base = g_path_get_basename (export->paths[i]);
  g_message ("Leaving %s out of the files for %s: %s", base, limen_app_info_get_id (export->info), why);
  export->left_out[i] = TRUE;
  export->n_left_out++;
  return TRUE;
}

static const char * const *
permissions_for (Export *export)
{
  static const char * const rw[] = { "read", "write", NULL };
  static const char * const ro[] = { "read", NULL };

  return (export->flags & LIMEN_EXPORT_WRITABLE) ? rw : ro;
}

static guint
add_flags_for (Export *export)
{
  guint flags = ADD_REUSE_EXISTING | ADD_PERSISTENT | ADD_AS_NEEDED_BY_APP;

  if (export->flags & LIMEN_EXPORT_DIRECTORY)
    flags |= ADD_EXPORT_DIRECTORY;
  return flags;
}

static void
set_document_uri (Export *export, guint i, const char *mountpoint, const char *doc_id)
{
  g_autofree char *base = g_path_get_basename (export->paths[i]);
  g_autofree char *path = NULL;

  /* as-needed-by-app: no document when the app can already reach the file itself. The
   * store decided that for the file's real path (symlinks resolved), which is then the
   * answer: a symlink the user went through may not exist in the app's sandbox. */
  if (*doc_id == '\0')
    {
      g_autofree char *dir = g_path_get_dirname (export->paths[i]);
      char *real = realpath (export->paths[i], NULL);
      char *real_dir = real ? NULL : realpath (dir, NULL);   /* a file still to be created */

      if (real || real_dir)
        {
          g_autofree char *resolved = real ? g_strdup (real) : g_build_filename (real_dir, base, NULL);

          g_free (export->uris[i]);
          export->uris[i] = g_filename_to_uri (resolved, NULL, NULL);
        }
      free (real);
      free (real_dir);
      return;
    }
  if (export->flags & LIMEN_EXPORT_APP_VIEW)
    mountpoint = limen_document_path_app_mount (limen_app_info_get_kind (export->info), mountpoint);
  path = g_build_filename (mountpoint, doc_id, base, NULL);
  g_free (export->uris[i]);
  export->uris[i] = g_filename_to_uri (path, NULL, NULL);
}

/* The store refused the files of the call for what they are (a file it does not take, one
 * gone by now), not for being unreachable or broken itself: the batch's files are worth
 * sending again one by one, and a single one refused can be left out. */
static gboolean
refused_by_store (Export *export, const GError *error)
{
  static const char * const refusals[] = {
    "org.freedesktop.portal.Error.NotAllowed", "org.freedesktop.portal.Error.InvalidArgument",
    "org.freedesktop.portal.Error.NotFound", NULL,
  };
  g_autofree char *name = NULL;

  if (!(export->flags & LIMEN_EXPORT_LEAVE_OUT))
    return FALSE;
  name = g_dbus_error_get_remote_error (error);
  return name != NULL && g_strv_contains (refusals, name);
}

static void
batch_failed (Export *export, GError *error)
{
  if (export->error == NULL)
    export->error = error;
  else
    g_error_free (error);
}

static const char *
mountpoint_of (GVariant *extra)
{
  const char *mountpoint = NULL;

  if (!g_variant_lookup (extra, "mountpoint", "^&ay", &mountpoint))
    return NULL;
  return mountpoint;
}

/* AddFull answers (as a{sv}) for a batch, AddNamedFull (s a{sv}) for its one file. */
static void
on_added (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Batch *batch = user_data;
  Export *export = batch->export;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source),
                                                                               NULL, result, &error);

  export->in_flight--;
  if (reply)
    {
      g_autofree const char **ids = NULL;
      g_autoptr(GVariant) extra = NULL;
      const char *mountpoint;
      gsize n_ids;

      if (g_variant_is_of_type (reply, G_VARIANT_TYPE ("(sa{sv})")))
        {
          ids = g_new0 (const char *, 2);
          g_variant_get (reply, "(&s@a{sv})", &ids[0], &extra);
        }
      else
        g_variant_get (reply, "(^a&s@a{sv})", &ids, &extra);
      n_ids = g_strv_length ((char **) ids);
      mountpoint = mountpoint_of (extra);
      if (n_ids != batch->count || mountpoint == NULL)
        batch_failed (export, g_error_new (LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                           "The document store answered %" G_GSIZE_FORMAT " ids for %u files",
                                           n_ids, batch->count));
      else
        for (guint k = 0; k < batch->count; k++)
          set_document_uri (export, batch->index[k], mountpoint, ids[k]);
    }
  else if (refused_by_store (export, error))
    {
      if (batch->count == 1)
        leave_out (export, batch->index[0], error->message);
      else
        {
          /* Which file it was is not said: each goes again on its own. */
          if (export->retry == NULL)
            export->retry = g_new (guint, export->n);
          for (guint k = batch->count; k > 0; k--)
            export->retry[export->n_retry++] = batch->index[k - 1];
        }
      g_error_free (error);
    }
  else
    batch_failed (export, error);
  g_free (batch->index);
  g_free (batch);
  send_more (export);
  export_maybe_finish (export);
}

/* One AddNamedFull: the file itself may not exist yet, so its directory is what we pass. */
static gboolean
send_named (Export *export, guint i)
{
  g_autofree char *dir = g_path_get_dirname (export->paths[i]);
  g_autofree char *base = g_path_get_basename (export->paths[i]);
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  g_autofd int fd = open (dir, O_PATH | O_CLOEXEC | O_DIRECTORY);
  Batch *batch;

  if (fd < 0 && leave_out (export, i, g_strerror (errno)))
    return TRUE;
  if (fd < 0 || g_unix_fd_list_append (fds, fd, NULL) < 0)
    {
      batch_failed (export, g_error_new (LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot open the folder of %s: %s",
                                         base, g_strerror (errno)));
      return FALSE;
    }
  batch = g_new0 (Batch, 1);
  batch->export = export;
  batch->count = 1;
  batch->index = g_new (guint, 1);
  batch->index[0] = i;
  export->in_flight++;
  g_dbus_connection_call_with_unix_fd_list (export->connection, DOCUMENTS_NAME, DOCUMENTS_PATH, DOCUMENTS_IFACE,
                                            "AddNamedFull",
                                            g_variant_new ("(h^ayus^as)", 0, base, add_flags_for (export),
                                                           limen_app_info_get_id (export->info),
                                                           permissions_for (export)),
                                            G_VARIANT_TYPE ("(sa{sv})"), G_DBUS_CALL_FLAGS_NONE,
                                            DOCUMENTS_TIMEOUT_MS, fds, export->cancellable, on_added, batch);
  return TRUE;
}

/* The next entry for an AddFull: one to send again on its own first (*@alone), else the
 * next one in order; FALSE when none is left for this batch. */
static gboolean
next_entry (Export *export, guint count, guint *i, gboolean *alone)
{
  if (count == 0 && export->n_retry > 0)
    {
      *i = export->retry[--export->n_retry];
      *alone = TRUE;
      return TRUE;
    }
  if (*alone || export->next >= export->n || count >= BATCH_MAX)
    return FALSE;
  *i = export->next++;
  return TRUE;
}

/* One AddFull: a file sent again on its own, or up to BATCH_MAX files from export->next on. */
static gboolean
send_batch (Export *export)
{
  gboolean alone = FALSE;
  guint i;
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  GVariantBuilder handles;
  Batch *batch = g_new0 (Batch, 1);

  batch->export = export;
  batch->index = g_new (guint, BATCH_MAX);
  g_variant_builder_init (&handles, G_VARIANT_TYPE ("ah"));
  while (next_entry (export, batch->count, &i, &alone))
    {
      g_autofd int fd = -1;
      int handle;

      if (export->paths[i] == NULL)
        continue;
      fd = open (export->paths[i], O_PATH | O_CLOEXEC);
      if (fd < 0 && leave_out (export, i, g_strerror (errno)))
        continue;
      if (fd < 0 || (handle = g_unix_fd_list_append (fds, fd, NULL)) < 0)
        {
          g_autofree char *base = g_path_get_basename (export->paths[i]);

          batch_failed (export, g_error_new (LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot open %s: %s",
                                             base, g_strerror (errno)));
          g_variant_builder_clear (&handles);
          g_free (batch->index);
          g_free (batch);
          return FALSE;
        }
      g_variant_builder_add (&handles, "h", handle);
      batch->index[batch->count++] = i;
    }
  if (batch->count == 0)
    {
      g_variant_builder_clear (&handles);
      g_free (batch->index);
      g_free (batch);
      return TRUE;
    }
  export->in_flight++;
  g_dbus_connection_call_with_unix_fd_list (export->connection, DOCUMENTS_NAME, DOCUMENTS_PATH, DOCUMENTS_IFACE,
                                            "AddFull",
                                            g_variant_new ("(ahus^as)", &handles, add_flags_for (export),
                                                           limen_app_info_get_id (export->info),
                                                           permissions_for (export)),
                                            G_VARIANT_TYPE ("(asa{sv})"), G_DBUS_CALL_FLAGS_NONE,
                                            DOCUMENTS_TIMEOUT_MS, fds, export->cancellable, on_added, batch);
  return TRUE;
}

static void
send_more (Export *export)
{
  while (export->error == NULL && (export->next < export->n || export->n_retry > 0) &&
         export->in_flight < IN_FLIGHT_MAX)
    {
      if (export->flags & LIMEN_EXPORT_FOR_SAVE)
        {
          guint i = export->next++;

          if (export->paths[i] != NULL && !send_named (export, i))
            return;
        }
      else if (!send_batch (export))
        return;
    }
}

void
limen_document_export_async (GDBusConnection *connection, LimenAppInfo *info, const char * const *uris,
                             LimenExportFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  Export *export;

  g_task_set_source_tag (task, limen_document_export_async);
  if (limen_app_info_is_host (info))
    {
      /* The host app sees the host's files: nothing to export. */
      g_task_return_pointer (task, g_strdupv ((char **) uris), (GDestroyNotify) g_strfreev);
      g_object_unref (task);
      return;
    }
  export = g_new0 (Export, 1);
  export->task = task;
  export->connection = g_object_ref (connection);
  export->info = limen_app_info_ref (info);
  export->flags = flags;
  export->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  export->uris = g_strdupv ((char **) uris);
  export->n = export->uris ? g_strv_length (export->uris) : 0;
  export->paths = g_new0 (char *, export->n + 1);
  export->left_out = g_new0 (gboolean, export->n + 1);
  for (guint i = 0; i < export->n; i++)
    if (g_str_has_prefix (export->uris[i], "file:"))
      {
        export->paths[i] = g_filename_from_uri (export->uris[i], NULL, NULL);
        if (export->paths[i] == NULL || !g_path_is_absolute (export->paths[i]))
          {
            batch_failed (export, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                       "The backend answered an invalid file URI"));
            break;
          }
      }
  if (export->error == NULL)
    send_more (export);
  export_maybe_finish (export);
}

char **
limen_document_export_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- a document's place on the host --------------------------------------------------- */

typedef struct {
  char     *path;   /* the host path, once known */
  GVariant *apps;
} HostPath;

static void
host_path_free (HostPath *h)
{
  g_free (h->path);
  g_clear_pointer (&h->apps, g_variant_unref);
  g_free (h);
}

static void
on_info (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  const char *rest = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  HostPath *h;
  const char *host = NULL;

  if (reply == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  h = g_new0 (HostPath, 1);
  g_variant_get (reply, "(^&ay@a{sas})", &host, &h->apps);
  if (!g_path_is_absolute (host))
    {
      host_path_free (h);
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "The document has no host path");
      return;
    }
  h->path = limen_document_path_to_host (host, rest);
  g_task_return_pointer (task, h, (GDestroyNotify) host_path_free);
}

void
limen_document_host_path_async (GDBusConnection *connection, const char *doc_id, const char *rest,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, limen_document_host_path_async);
  g_task_set_task_data (task, g_strdup (rest), g_free);
  g_dbus_connection_call (connection, DOCUMENTS_NAME, DOCUMENTS_PATH, DOCUMENTS_IFACE, "Info",
                          g_variant_new ("(s)", doc_id), G_VARIANT_TYPE ("(aya{sas})"),
                          G_DBUS_CALL_FLAGS_NONE, INFO_TIMEOUT_MS, NULL, on_info, task);
}

char *
limen_document_host_path_finish (GAsyncResult *result, GVariant **apps, GError **error)
{
  HostPath *h = g_task_propagate_pointer (G_TASK (result), error);
  char *path;

  if (h == NULL)
    return NULL;
  path = g_steal_pointer (&h->path);
  if (apps)
    *apps = g_steal_pointer (&h->apps);
  host_path_free (h);
  return path;
}
