/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend sees the host and answers host URIs; what the caller gets depends on who it
 * is: a host app the URIs themselves, a sandboxed app documents granted to it alone. */
#include "file-chooser.h"

#include <string.h>

#include "backend.h"
#include "document-export.h"
#include "lockdown.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.FileChooser"
#define LABEL_MAX 1024

static gboolean
validate_current_name (const LimenOption *o, GVariant *v, GError **error)
{
  const char *s = g_variant_get_string (v, NULL);

  if (strchr (s, '/') != NULL)
    {
      limen_option_set_error (error, o->key, "must be a file name without a directory");
      return FALSE;
    }
  return limen_validate_string_length (o, v, error);
}

/* Absolute paths only: a relative one means nothing to a dialog in another process. */
static gboolean
validate_abs_path (const LimenOption *o, GVariant *v, GError **error)
{
  if (!limen_validate_byte_path (o, v, error))
    return FALSE;
  if (g_variant_get_bytestring (v)[0] != '/')
    {
      limen_option_set_error (error, o->key, "must be an absolute path");
      return FALSE;
    }
  return TRUE;
}

#define COMMON_OPTIONS \
  { "accept_label", "s", limen_validate_string_length, LABEL_MAX }, \
  { "modal", "b", limen_validate_bool, 0 }, \
  { "choices", "a(ssa(ss)s)", limen_validate_choices, 0 }, \
  { "current_folder", "ay", validate_abs_path, 0 }

static const LimenOption open_file_options[] = {
  COMMON_OPTIONS,
  { "multiple", "b", limen_validate_bool, 0 },
  { "directory", "b", limen_validate_bool, 0 },
  { "filters", "a(sa(us))", limen_validate_file_filters, 0 },
  { "current_filter", "(sa(us))", limen_validate_file_filter, 0 },
  { NULL }
};

static const LimenOption save_file_options[] = {
  COMMON_OPTIONS,
  { "filters", "a(sa(us))", limen_validate_file_filters, 0 },
  { "current_filter", "(sa(us))", limen_validate_file_filter, 0 },
  { "current_name", "s", validate_current_name, LABEL_MAX },
  { "current_file", "ay", validate_abs_path, 0 },
  { NULL }
};

static const LimenOption save_files_options[] = {
  COMMON_OPTIONS,
  { "files", "aay", limen_validate_file_names, 0 },
  { NULL }
};

typedef enum { OPEN_FILE, SAVE_FILE, SAVE_FILES } Method;

static const char *method_names[] = { "OpenFile", "SaveFile", "SaveFiles" };

/* What a request needs once the backend answered. */
typedef struct {
  Method           method;
  gboolean         directory;
  GDBusConnection *connection;
  GVariant        *results;   /* the backend's, kept for choices/current_filter */
} Pending;

static void
pending_free (Pending *p)
{
  g_clear_object (&p->connection);
  g_clear_pointer (&p->results, g_variant_unref);
  g_free (p);
}

typedef struct {
  LimenRequest *request;
  GVariant     *results;
} ExportDone;

/* The caller's results: exported uris plus the backend's choices and filter, if well-formed. */
static void
on_exported (char **uris, const GError *error, gpointer user_data)
{
  ExportDone *done = user_data;
  GVariantBuilder b;
  g_autoptr(GVariant) choices = NULL;
  g_autoptr(GVariant) filter = NULL;

  if (error)
    {
      g_message ("Could not export the chosen files for %s: %s",
                 limen_request_get_path (done->request), error->message);
      limen_request_respond (done->request, LIMEN_RESPONSE_OTHER, NULL);
    }
  else
    {
      g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&b, "{sv}", "uris",
                             g_variant_new_strv ((const char * const *) uris, -1));
      choices = g_variant_lookup_value (done->results, "choices", G_VARIANT_TYPE ("a(ss)"));
      if (choices)
        g_variant_builder_add (&b, "{sv}", "choices", choices);
      filter = g_variant_lookup_value (done->results, "current_filter", G_VARIANT_TYPE ("(sa(us))"));
      if (filter)
        g_variant_builder_add (&b, "{sv}", "current_filter", filter);
      limen_request_respond (done->request, LIMEN_RESPONSE_SUCCESS, g_variant_builder_end (&b));
    }
  limen_request_unref (done->request);
  g_variant_unref (done->results);
  g_free (done);
}

static void
on_backend_reply (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list,
                  const GError *error, gpointer user_data)
{
  Pending *p = user_data;
  g_autoptr(GVariant) results = NULL;
  guint response = limen_backend_reply_response (reply, &results);
  g_autofree const char **uris = NULL;
  LimenExportFlags flags = 0;
  gboolean writable = TRUE;
  ExportDone *done;

  if (response != LIMEN_RESPONSE_SUCCESS)
    {
      limen_request_respond (request, response, NULL);
      return;
    }
  if (!g_variant_lookup (results, "uris", "^a&s", &uris))
    uris = g_new0 (const char *, 1);
  if (p->method == SAVE_FILE && g_strv_length ((char **) uris) > 1)
    {
      g_message ("Backend answered SaveFile with %u files", g_strv_length ((char **) uris));
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      return;
    }
  if (p->method == OPEN_FILE)
    {
      /* A backend may offer "open read-only"; without an answer the file is for editing. */
      g_variant_lookup (results, "writable", "b", &writable);
      if (p->directory)
        flags |= LIMEN_EXPORT_DIRECTORY;
    }
  else
    flags |= LIMEN_EXPORT_FOR_SAVE;
  if (writable)
    flags |= LIMEN_EXPORT_WRITABLE;

  done = g_new0 (ExportDone, 1);
  done->request = limen_request_ref (request);
  done->results = g_variant_ref (results);
  limen_document_export (p->connection, limen_request_get_app_info (request), uris, flags,
                         limen_request_get_cancellable (request), on_exported, done);
}

typedef struct {
  LimenPortalContext    *context;
  GDBusMethodInvocation *invocation;
  Method                 method;
  char                  *parent_window;
  char                  *title;
  GVariant              *options;
} Call;

static void
call_free (Call *c)
{
  g_object_unref (c->invocation);
  g_free (c->parent_window);
  g_free (c->title);
  g_variant_unref (c->options);
  g_free (c);
}

static const LimenOption *
table_for (Method method)
{
  switch (method)
    {
    case OPEN_FILE: return open_file_options;
    case SAVE_FILE: return save_file_options;
    case SAVE_FILES: default: return save_files_options;
    }
}

static void
really_start (Call *c, LimenAppInfo *info)
{
  g_autoptr(LimenRequest) request = NULL;
  Pending *p;
  gboolean directory = FALSE;

  g_variant_lookup (c->options, "directory", "b", &directory);
  p = g_new0 (Pending, 1);
  p->method = c->method;
  p->directory = directory;
  p->connection = g_object_ref (c->context->connection);
  request = limen_backend_request_method (c->context, c->invocation, info, IMPL_IFACE,
                                          method_names[c->method],
                                          g_variant_new ("(ss)", c->parent_window, c->title), c->options,
                                          table_for (c->method), NULL, NULL, on_backend_reply, p,
                                          (GDestroyNotify) pending_free);
}

/* @options with @key's value replaced by @value. */
static GVariant *
replace_option (GVariant *options, const char *key, GVariant *value)
{
  GVariantBuilder b;
  GVariantIter iter;
  const char *k;
  GVariant *v;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &k, &v))
    {
      g_variant_builder_add (&b, "{sv}", k, g_str_equal (k, key) ? value : v);
      g_variant_unref (v);
    }
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static const char *doc_keys[] = { "current_folder", "current_file", NULL };

typedef struct {
  Call         *c;
  LimenAppInfo *info;
  guint         key;    /* index into doc_keys */
  char         *rest;   /* the path below the document id */
} Translate;

static void translate_next (Translate *t);

static void
on_doc_info (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Translate *t = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) apps = NULL;
  g_autoptr(GVariant) perms = NULL;
  const char *host = NULL;

  if (reply)
    {
      g_variant_get (reply, "(^&ay@a{sas})", &host, &apps);
      perms = g_variant_lookup_value (apps, limen_app_info_get_id (t->info), G_VARIANT_TYPE_STRING_ARRAY);
    }
  /* Only a document of this very app is translated; anything else stays as given. */
  if (host && perms && g_path_is_absolute (host))
    {
      g_autofree char *parent = g_path_get_dirname (host);
      g_autofree char *path = g_build_filename (parent, t->rest, NULL);
      GVariant *old = t->c->options;

      g_debug ("%s: document path mapped to its host path", doc_keys[t->key]);
      t->c->options = replace_option (old, doc_keys[t->key], g_variant_new_bytestring (path));
      g_variant_unref (old);
    }
  else if (error)
    g_debug ("No document behind %s: %s", doc_keys[t->key], error->message);
  t->key++;
  g_clear_pointer (&t->rest, g_free);
  translate_next (t);
}

/* A sandboxed app names its documents by their path in its own view of the document
 * store (/run/user/UID/doc/ID/...); the dialog, outside, needs the real place. */
static void
translate_next (Translate *t)
{
  for (; doc_keys[t->key]; t->key++)
    {
      const char *path = NULL;
      g_autofree char *prefix = g_strdup_printf ("/run/user/%u/doc/", (guint) limen_app_info_get_uid (t->info));
      g_auto(GStrv) parts = NULL;

      if (!g_variant_lookup (t->c->options, doc_keys[t->key], "^&ay", &path) || !g_str_has_prefix (path, prefix))
        continue;
      parts = g_strsplit (path + strlen (prefix), "/", 2);
      if (parts[0] == NULL || parts[1] == NULL || *parts[0] == '\0' || *parts[1] == '\0' ||
          g_strv_contains ((const char * const *) parts, "..") || strstr (parts[1], "/../") ||
          g_str_has_prefix (parts[1], "../") || g_str_has_suffix (parts[1], "/.."))
        continue;
      t->rest = g_strdup (parts[1]);
      g_dbus_connection_call (t->c->context->connection, "org.freedesktop.portal.Documents",
                              "/org/freedesktop/portal/documents", "org.freedesktop.portal.Documents", "Info",
                              g_variant_new ("(s)", parts[0]), G_VARIANT_TYPE ("(aya{sas})"),
                              G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_doc_info, t);
      return;
    }
  really_start (t->c, t->info);
  call_free (t->c);
  limen_app_info_unref (t->info);
  g_free (t);
}

/* Takes @c. */
static void
start_call (Call *c)
{
  LimenAppInfo *info = limen_app_info_get_for_invocation (c->invocation);
  Translate *t;

  if (info == NULL)
    {
      call_free (c);
      return;
    }
  if (limen_app_info_is_host (info))
    {
      really_start (c, info);
      call_free (c);
      limen_app_info_unref (info);
      return;
    }
  t = g_new0 (Translate, 1);
  t->c = c;
  t->info = info;
  translate_next (t);
}

static void
on_lockdown (gboolean locked, gpointer user_data)
{
  Call *c = user_data;

  if (locked)
    {
      g_dbus_method_invocation_return_error_literal (c->invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Saving files is disabled");
      call_free (c);
    }
  else
    start_call (c);
}

static gboolean
handle (LimenPortalContext *context, GDBusMethodInvocation *invocation, Method method,
        const char *parent_window, const char *title, GVariant *options)
{
  Call *c = g_new0 (Call, 1);

  c->context = context;
  c->invocation = g_object_ref (invocation);
  c->method = method;
  c->parent_window = g_strdup (parent_window);
  c->title = g_strdup (title);
  c->options = g_variant_ref (options);
  if (method == OPEN_FILE)
    start_call (c);
  else
    limen_lockdown_query (context, "disable-save-to-disk", on_lockdown, c);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_open_file (LimenDbusPortalFileChooser *object, GDBusMethodInvocation *invocation,
                  const char *parent_window, const char *title, GVariant *options, LimenPortalContext *context)
{
  return handle (context, invocation, OPEN_FILE, parent_window, title, options);
}

static gboolean
handle_save_file (LimenDbusPortalFileChooser *object, GDBusMethodInvocation *invocation,
                  const char *parent_window, const char *title, GVariant *options, LimenPortalContext *context)
{
  return handle (context, invocation, SAVE_FILE, parent_window, title, options);
}

static gboolean
handle_save_files (LimenDbusPortalFileChooser *object, GDBusMethodInvocation *invocation,
                   const char *parent_window, const char *title, GVariant *options, LimenPortalContext *context)
{
  return handle (context, invocation, SAVE_FILES, parent_window, title, options);
}

GDBusInterfaceSkeleton *
limen_file_chooser_new (LimenPortalContext *context)
{
  LimenDbusPortalFileChooser *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_file_chooser_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_file_chooser_set_version (object, 4);
  g_signal_connect (object, "handle-open-file", G_CALLBACK (handle_open_file), context);
  g_signal_connect (object, "handle-save-file", G_CALLBACK (handle_save_file), context);
  g_signal_connect (object, "handle-save-files", G_CALLBACK (handle_save_files), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
