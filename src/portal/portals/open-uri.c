/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Everything a caller hands in is checked before a Request exists, so a bad fd index or
 * URI is an immediate InvalidArgument, never a request that is silently never answered.
 * The handler is launched by us, on the host, with the host's view of the file.
 *
 * As the reference does, the chooser is skipped for web, mail and calendar links and for
 * folders when the system has a default for them, for a type with a single handler, and for
 * a handler picked often enough in a row; never when the app passes "ask" or the user set
 * "always-ask" for the type (desktop-used-apps' data). */
#include "portal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <gio/gdesktopappinfo.h>

#include "backend.h"
#include "driver.h"
#include "document-export.h"
#include "document-path.h"
#include "host-file.h"
#include "lockdown.h"
#include "option-tables.h"
#include "permission-store.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.AppChooser"
#define URI_MAX 16384
#define SCHEME_MAX 255
#define USED_APPS_TABLE "desktop-used-apps"
/* The same handler picked this often in a row is used without asking again. */
#define USE_WITHOUT_ASKING 3
#define FM_NAME "org.freedesktop.FileManager1"
#define FM_PATH "/org/freedesktop/FileManager1"

typedef struct {
  LimenPortalContext    *context;
  GTask                 *task;         /* the run step's, until answered */
  char                  *parent_window;
  char                  *uri;          /* what the handler is launched with */
  char                  *content_type;
  char                  *display;      /* "uri" or "filename" option for the dialog */
  gboolean               is_file;
  gboolean               fd_writable;  /* a file's fd gives write access */
  char                  *scheme;         /* lower case; "file" for files */
  char                  *default_app;    /* the system's default for the type, if any */
  gboolean               always_ask;     /* the user's per-type setting */
  GVariant              *options;
  char                  *activation_token;
  gboolean               directory;      /* OpenDirectory: show in the file manager */
  gboolean               show_item;      /* ...with the file selected in its folder */
  LimenRequest          *request;
  char                 **choices;
  char                  *last_choice;    /* from desktop-used-apps */
  guint                  last_count;
} Open;

/* End the run step with @response (no results). */
static void
open_respond (Open *o, guint response)
{
  GTask *task = g_steal_pointer (&o->task);

  if (task == NULL)
    return;
  limen_call_set_results (g_task_get_task_data (task), response, NULL);
  g_task_return_boolean (task, FALSE);
  g_object_unref (task);
}

static void
open_free (Open *o)
{
  /* Never left unanswered: an Open dropped on the way answers 2 (or nothing, when closed). */
  open_respond (o, LIMEN_RESPONSE_OTHER);
  g_free (o->parent_window);
  g_free (o->uri);
  g_free (o->content_type);
  g_free (o->display);
  g_free (o->scheme);
  g_free (o->default_app);
  g_clear_pointer (&o->options, g_variant_unref);
  g_free (o->activation_token);
  g_clear_pointer (&o->request, limen_request_unref);
  g_strfreev (o->choices);
  g_free (o->last_choice);
  g_free (o);
}

static char **
handlers_for (const char *content_type)
{
  GList *apps = g_app_info_get_all_for_type (content_type);
  GPtrArray *ids = g_ptr_array_new ();

  for (GList *l = apps; l; l = l->next)
    {
      const char *id = g_app_info_get_id (l->data);

      if (id && g_str_has_suffix (id, ".desktop"))
        g_ptr_array_add (ids, g_strndup (id, strlen (id) - strlen (".desktop")));
    }
  g_list_free_full (apps, g_object_unref);
  g_ptr_array_add (ids, NULL);
  return (char **) g_ptr_array_free (ids, FALSE);
}

/* The id (without ".desktop") of the default handler of @content_type, if it is installed. */
static char *
default_handler_for (const char *content_type)
{
  g_autoptr(GAppInfo) app = g_app_info_get_default_for_type (content_type, FALSE);
  const char *id = app ? g_app_info_get_id (app) : NULL;

  if (id == NULL || !g_str_has_suffix (id, ".desktop"))
    return NULL;
  return g_strndup (id, strlen (id) - strlen (".desktop"));
}

/* A local file's type from its name and its first bytes: an extension-less text file is
 * text/plain, not application/octet-stream. */
static char *
content_type_of_file (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInfo) info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_CONTENT_TYPE,
                                                 G_FILE_QUERY_INFO_NONE, NULL, NULL);
  const char *type = info ? g_file_info_get_content_type (info) : NULL;
  g_autofree char *guess = type ? NULL : g_content_type_guess (path, NULL, 0, NULL);

  return g_content_type_get_mime_type (type ? type : guess);
}

/* Schemes whose links open in the system's browser, mail client or calendar directly. */
static gboolean
opens_with_default (Open *o)
{
  static const char * const schemes[] = { "http", "https", "ftp", "mailto", "webcal", "calendar", NULL };

  return g_strv_contains (schemes, o->scheme) || g_str_equal (o->content_type, "inode/directory");
}

static gboolean
launch (const char *choice, const char *uri, const char *activation_token, GError **error)
{
  g_autofree char *desktop_id = g_strconcat (choice, ".desktop", NULL);
  g_autoptr(GDesktopAppInfo) app = NULL;
  g_autoptr(GAppLaunchContext) ctx = g_app_launch_context_new ();
  GList uris = { (gpointer) uri, NULL, NULL };

  if (strchr (choice, '/') != NULL || (app = g_desktop_app_info_new (desktop_id)) == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No application %s", choice);
      return FALSE;
    }
  if (activation_token && *activation_token)
    {
      g_app_launch_context_setenv (ctx, "XDG_ACTIVATION_TOKEN", activation_token);
      g_app_launch_context_setenv (ctx, "DESKTOP_STARTUP_ID", activation_token);
    }
  g_debug ("Opening with %s", desktop_id);
  return g_app_info_launch_uris (G_APP_INFO (app), &uris, ctx, error);
}

/* Remember @choice for the content type: a run of the same choice counts up. */
static void
remember_choice (Open *o, const char *choice)
{
  const char *app_id = limen_app_info_get_id (limen_request_get_app_info (o->request));
  g_autofree char *count = NULL;
  const char *perms[3];

  if (*app_id == '\0')
    return;
  count = g_strdup_printf ("%u", g_strcmp0 (choice, o->last_choice) == 0 ? o->last_count + 1 : 1);
  perms[0] = choice;
  perms[1] = count;
  perms[2] = NULL;
  g_dbus_connection_call (o->context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "SetPermission",
                          g_variant_new ("(sbss^as)", USED_APPS_TABLE, TRUE, o->content_type, app_id, perms),
                          NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL, NULL);
}

typedef struct {
  Open *o;           /* a private copy of what the launch needs */
  char *choice;
  char *token;
} Launch;

static void
launch_and_respond (Open *o, const char *choice, const char *uri, const char *token)
{
  g_autoptr(GError) launch_error = NULL;

  if (!launch (choice, uri, token ? token : o->activation_token, &launch_error))
    {
      g_message ("Could not launch %s: %s", choice, launch_error->message);
      open_respond (o, LIMEN_RESPONSE_OTHER);
      return;
    }
  remember_choice (o, choice);
  open_respond (o, LIMEN_RESPONSE_SUCCESS);
}

static void
on_exported_for_handler (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Launch *l = user_data;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) uris = limen_document_export_finish (result, &error);

  if (error || uris == NULL || uris[0] == NULL)
    {
      g_message ("Could not hand the file to %s: %s", l->choice, error ? error->message : "no document");
      open_respond (l->o, LIMEN_RESPONSE_OTHER);
    }
  else
    launch_and_respond (l->o, l->choice, uris[0], l->token);
  open_free (l->o);
  g_free (l->choice);
  g_free (l->token);
  g_free (l);
}

/* Launch @choice on the URI; a Flatpak handler gets a local file as a document of its own. */
static void
finish_with (Open *o, const char *choice, const char *token)
{
  g_autofree char *desktop_id = g_strconcat (choice, ".desktop", NULL);
  g_autoptr(GDesktopAppInfo) app = strchr (choice, '/') ? NULL : g_desktop_app_info_new (desktop_id);
  g_autofree char *flatpak = app ? g_desktop_app_info_get_string (app, "X-Flatpak") : NULL;
  g_autofree char *data = NULL;
  g_autoptr(LimenAppInfo) handler = NULL;
  gboolean writable = FALSE;
  Launch *l;

  if (!o->is_file || flatpak == NULL || !limen_app_id_is_valid (flatpak))
    {
      launch_and_respond (o, choice, o->uri, token);
      return;
    }
  data = g_strdup_printf ("[Application]\nname=%s\n", flatpak);
  handler = limen_app_info_new_flatpak_from_data (data, strlen (data), 0, NULL);
  if (handler == NULL)
    {
      launch_and_respond (o, choice, o->uri, token);
      return;
    }
  /* Write access for the handler only if asked for and the fd gives it (as the reference,
   * which opens read-only what an app asked to open writable with a read-only fd). */
  g_variant_lookup (o->options, "writable", "b", &writable);
  writable = writable && o->fd_writable;
  l = g_new0 (Launch, 1);
  l->o = g_new0 (Open, 1);
  l->o->context = o->context;
  l->o->request = limen_request_ref (o->request);
  l->o->task = g_steal_pointer (&o->task);
  l->o->content_type = g_strdup (o->content_type);
  l->o->activation_token = g_strdup (o->activation_token);
  l->o->last_choice = g_strdup (o->last_choice);
  l->o->last_count = o->last_count;
  l->choice = g_strdup (choice);
  l->token = g_strdup (token);
  limen_document_export_async (o->context->connection, handler, (const char * const[]) { o->uri, NULL },
                               writable ? LIMEN_EXPORT_WRITABLE : 0, limen_request_get_cancellable (o->request),
                               on_exported_for_handler, l);
}

static void
on_chosen (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Open *o = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = limen_backend_call_finish (result, NULL, &error);
  g_autoptr(GVariant) results = NULL;
  guint response = limen_driver_reply_response (reply, &results);
  const char *choice = NULL, *token = NULL;

  if (response != LIMEN_RESPONSE_SUCCESS || !limen_request_is_open (o->request))
    {
      open_respond (o, response);
      open_free (o);
      return;
    }
  /* Success without a choice opens nothing and is passed on as success, as the reference
   * does (upstream's harness expects it; no real chooser answers so). */
  if (!g_variant_lookup (results, "choice", "&s", &choice) || *choice == '\0')
    {
      g_message ("AppChooser answered success without a choice: nothing opened");
      open_respond (o, LIMEN_RESPONSE_SUCCESS);
      open_free (o);
      return;
    }
  g_variant_lookup (results, "activation_token", "&s", &token);
  finish_with (o, choice, token);
  open_free (o);
}

/* Ask the AppChooser backend; @o is handed to the call. */
static void
choose (Open *o)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  const char *backend = limen_backend_find (o->context, IMPL_IFACE, &error);

  /* Nobody to ask for an app that is gone. */
  if (!limen_request_set_unattended (o->request, FALSE))
    {
      open_free (o);
      return;
    }
  if (backend == NULL || !limen_options_filter (o->options, &b, &error, limen_options_open_uri_open_uri, NULL))
    {
      g_message ("Cannot choose a handler: %s", error->message);
      open_free (o);
      return;
    }
  g_variant_builder_add (&b, "{sv}", "content_type", g_variant_new_string (o->content_type));
  /* A local file: its name to show and its URI (the backend may preview it). */
  if (o->is_file)
    g_variant_builder_add (&b, "{sv}", "filename", g_variant_new_string (o->display));
  g_variant_builder_add (&b, "{sv}", "uri", g_variant_new_string (o->uri));
  if (o->last_choice || o->default_app)
    g_variant_builder_add (&b, "{sv}", "last_choice",
                           g_variant_new_string (o->last_choice ? o->last_choice : o->default_app));
  limen_backend_call_async (o->context, o->request, backend, IMPL_IFACE, "ChooseApplication",
                            g_variant_new ("(oss^as@a{sv})", limen_request_get_path (o->request),
                                           limen_app_info_get_id (limen_request_get_app_info (o->request)),
                                           o->parent_window, o->choices, g_variant_builder_end (&b)),
                            NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_chosen, o);
}

/* The handler to use without asking, or NULL: ask. */
static const char *
direct_choice (Open *o)
{
  gboolean ask = FALSE;
  gboolean use_default = o->default_app && opens_with_default (o);

  g_variant_lookup (o->options, "ask", "b", &ask);
  if (ask || o->always_ask)
    return NULL;
  if (use_default)
    return o->default_app;
  if (o->last_choice && o->last_count >= USE_WITHOUT_ASKING)
    return o->last_choice;
  if (o->choices[0] && !o->choices[1])
    return o->choices[0];
  return NULL;
}

static void
read_used_apps (Open *o, GVariant *reply)
{
  const char *app_id = limen_app_info_get_id (limen_request_get_app_info (o->request));
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) data = NULL;
  g_autofree const char **entry = NULL;

  g_variant_get (reply, "(@a{sas}v)", &perms, &data);
  if (g_variant_is_of_type (data, G_VARIANT_TYPE_VARDICT))
    g_variant_lookup (data, "always-ask", "b", &o->always_ask);
  if (*app_id && g_variant_lookup (perms, app_id, "^a&s", &entry) && entry[0] && entry[1] &&
      g_strv_contains ((const char * const *) o->choices, entry[0]))
    {
      o->last_choice = g_strdup (entry[0]);
      o->last_count = (guint) g_ascii_strtoull (entry[1], NULL, 10);
    }
}

static void
on_used_apps (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Open *o = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  const char *direct;

  if (!limen_request_is_open (o->request))
    {
      open_free (o);
      return;
    }
  if (reply)
    read_used_apps (o, reply);
  direct = direct_choice (o);
  if (direct)
    {
      g_autofree char *choice = g_strdup (direct);

      g_debug ("Opening %s with %s without asking", o->content_type, choice);
      finish_with (o, choice, NULL);
      open_free (o);
      return;
    }
  choose (o);
}

/* The user's per-type settings and this app's last choices, then the decision. */
static void
decide (Open *o)
{
  g_dbus_connection_call (o->context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", USED_APPS_TABLE, o->content_type), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, 5000, limen_request_get_cancellable (o->request),
                          on_used_apps, o);
}

static void
on_shown (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Open *o = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply)
    {
      open_respond (o, LIMEN_RESPONSE_SUCCESS);
      open_free (o);
      return;
    }
  /* No file manager service: any handler of folders will do, given the folder. */
  g_debug ("FileManager1 failed (%s); choosing a folder handler", error->message);
  if (!limen_request_is_open (o->request))
    {
      open_free (o);
      return;
    }
  if (o->show_item)
    {
      g_autoptr(GFile) file = g_file_new_for_uri (o->uri);
      g_autoptr(GFile) parent = g_file_get_parent (file);

      g_free (o->uri);
      o->uri = parent ? g_file_get_uri (parent) : g_file_get_uri (file);
    }
  decide (o);
}

/* The in-process impl: show a folder, reuse the usual handler, or ask the AppChooser. */
static void
open_run (LimenCall *call, GTask *task)
{
  Open *o = limen_call_steal_data (call);

  g_task_set_task_data (task, call, NULL);
  o->task = g_object_ref (task);
  o->request = limen_request_ref (limen_call_get_request (call));
  o->choices = handlers_for (o->content_type);
  o->default_app = default_handler_for (o->content_type);
  if (o->directory)
    {
      g_dbus_connection_call (o->context->connection, FM_NAME, FM_PATH, FM_NAME,
                              o->show_item ? "ShowItems" : "ShowFolders",
                              g_variant_new ("(^ass)", (const char * const[]) { o->uri, NULL },
                                             o->activation_token ? o->activation_token : ""),
                              NULL, G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK,
                              limen_request_get_cancellable (o->request), on_shown, o);
      return;
    }
  decide (o);
}

/* Pre-step: an administrator may forbid opening things in other apps. */
static void
check_handlers_allowed (LimenCall *call, GTask *task)
{
  limen_lockdown_step (call, task, "disable-application-handlers", "Application handlers are disabled");
}

static Open *
open_new (LimenCall *call)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  Open *o = g_new0 (Open, 1);

  o->context = limen_call_get_context (call);
  o->parent_window = g_variant_dup_string (window, NULL);
  o->options = g_variant_ref (limen_call_get_caller_options (call));
  g_variant_lookup (o->options, "activation_token", "s", &o->activation_token);
  limen_call_set_data (call, o, (GDestroyNotify) open_free);
  return o;
}

/* A mailto: link that names files to attach ("attach", "attachment"): mail clients that take
 * them (Evolution, KMail, others) attach a host file the app may never have had, such as
 * ~/.ssh/id_rsa, to a message it addressed. A sandboxed app attaches through Email's fds. */
static gboolean
mailto_attaches (const char *uri)
{
  const char *query = strchr (uri, '?');
  g_autofree char *fields = NULL;
  g_auto(GStrv) parts = NULL;

  if (query == NULL)
    return FALSE;
  fields = g_strndup (query + 1, strcspn (query + 1, "#"));
  parts = g_strsplit (fields, "&", -1);
  for (guint i = 0; parts[i]; i++)
    {
      g_autofree char *raw = g_strndup (parts[i], strcspn (parts[i], "="));
      g_autofree char *key = g_uri_unescape_string (raw, NULL);

      /* A key that does not decode is taken for the worst. */
      if (key == NULL || g_ascii_strcasecmp (key, "attach") == 0 || g_ascii_strcasecmp (key, "attachment") == 0)
        return TRUE;
    }
  return FALSE;
}

/* Pre-step of OpenURI: a valid URI; a local file only from a host app. */
static void
check_uri (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) arg = limen_call_get_arg (call, 1);
  const char *uri = g_variant_get_string (arg, NULL);
  g_autofree char *scheme = NULL;
  Open *o;

  if (strlen (uri) > URI_MAX || !g_uri_is_valid (uri, G_URI_FLAGS_NONE, NULL) ||
      (scheme = g_uri_parse_scheme (uri)) == NULL)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid value for uri: not a valid URI");
      return;
    }
  if (g_ascii_strcasecmp (scheme, "file") == 0 && !limen_app_info_is_host (limen_call_get_app_info (call)))
    {
      /* A path names a file in the caller's own view; only an fd says which one it means. */
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid value for uri: sandboxed apps must use OpenFile for local files");
      return;
    }
  if (g_ascii_strcasecmp (scheme, "mailto") == 0 && !limen_app_info_is_host (limen_call_get_app_info (call)) &&
      mailto_attaches (uri))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid value for uri: sandboxed apps attach files through the Email portal");
      return;
    }
  o = open_new (call);
  o->uri = g_strdup (uri);
  o->display = g_strdup (uri);
  o->scheme = g_ascii_strdown (scheme, -1);
  if (g_str_equal (o->scheme, "file"))
    {
      g_autofree char *path = g_filename_from_uri (uri, NULL, NULL);

      o->is_file = TRUE;
      o->content_type = path ? content_type_of_file (path) : g_strdup ("application/octet-stream");
      g_free (o->display);
      o->display = path ? g_path_get_basename (path) : g_strdup (uri);
    }
  else
    o->content_type = g_strconcat ("x-scheme-handler/", o->scheme, NULL);
  g_task_return_boolean (task, TRUE);
}

/* The handler runs on the host: it needs our view of the file, which must still be the very
 * file the fd refers to. NULL + error otherwise. */
static char *
host_path_of_fd (LimenCall *call, LimenFdInfo *fdinfo, GError **error)
{
  g_autoptr(GVariant) handle = limen_call_get_arg (call, 1);
  LimenFdFlags flags = LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_DIRECTORY | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ;

  /* "writable" asks, it does not require: a read-only fd opens read-only (Qt asks for it
   * with every O_PATH fd). */
  return limen_fd_host_path (limen_call_get_app_info (call), limen_call_get_fd_list (call),
                             g_variant_get_handle (handle), "fd", flags, fdinfo, error);
}

/* Types whose handlers run the file: a binary, a script, a launcher, a Windows or Java
 * program (Wine's and Java's handlers are installed on many desktops, and take a type with a
 * single handler without a question). Given by a sandboxed app, such a file would run
 * outside its sandbox. */
static gboolean
is_program (const char *content_type)
{
  static const char * const programs[] = {
    "application/x-executable", "application/x-sharedlib", "application/x-desktop",
    "application/x-ms-dos-executable", "application/x-msdownload", "application/x-ms-ne-executable",
    "application/x-msi", "application/x-ms-shortcut", "application/x-bat", "application/x-java-archive",
    "application/java-archive", "application/x-jar", "application/x-java-jnlp-file", "application/vnd.appimage",
    NULL
  };

  for (guint i = 0; programs[i]; i++)
    if (g_content_type_is_a (content_type, programs[i]) || g_content_type_equals (content_type, programs[i]))
      return TRUE;
  return FALSE;
}

/* The Open of OpenFile or OpenDirectory for the file at @host_path; FALSE (@error set) for a
 * program a sandboxed app asked to open. */
static gboolean
open_file (LimenCall *call, const char *host_path, gboolean is_dir, gboolean writable, const char *display,
           GError **error)
{
  gboolean directory = g_str_equal (limen_call_get_method (call)->method, "OpenDirectory");
  g_autofree char *type = directory || is_dir ? NULL : content_type_of_file (host_path);
  Open *o;

  if (type && is_program (type) && !limen_app_info_is_host (limen_call_get_app_info (call)))
    {
      g_message ("OpenFile from %s refused: a program (%s)", limen_app_info_get_id (limen_call_get_app_info (call)),
                 type);
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Sandboxed apps cannot open programs, scripts or launchers outside the sandbox");
      return FALSE;
    }
  o = open_new (call);
  o->is_file = TRUE;
  o->fd_writable = writable;
  o->scheme = g_strdup ("file");
  o->uri = g_filename_to_uri (host_path, NULL, NULL);
  if (directory || is_dir)
    {
      /* A file's folder is shown with the file selected; a folder is shown itself. */
      o->directory = directory;
      o->show_item = directory && !is_dir;
      o->content_type = g_strdup ("inode/directory");
    }
  else
    o->content_type = g_steal_pointer (&type);
  o->display = g_strdup (display);
  return TRUE;
}

typedef struct {
  LimenCall *call;
  char      *store_path;   /* the file's path in the document store */
  char      *display;
  gboolean   is_dir;
  gboolean   writable;
} StoreFile;

static void
store_file_free (StoreFile *f)
{
  g_free (f->store_path);
  g_free (f->display);
  g_free (f);
}

static void
on_host_path (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  StoreFile *f = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *host = limen_document_host_path_finish (result, NULL, &error);

  if (host == NULL)
    g_debug ("No host path behind %s: %s", f->store_path, error->message);
  g_clear_error (&error);
  if (open_file (f->call, host ? host : f->store_path, f->is_dir, f->writable, f->display, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, g_steal_pointer (&error));
}

/* Pre-step of OpenFile and OpenDirectory: the fd's file, reachable on the host. A file in the
 * document store (a sandboxed app's documents) is opened at its place on the host, as the
 * reference does: there the handler finds it under its own name, and a sandboxed handler gets
 * a document of its own for it. */
static void
check_fd (LimenCall *call, GTask *task)
{
  GError *error = NULL;
  g_auto(LimenFdInfo) fdinfo = { 0 };
  g_autofree char *host_path = host_path_of_fd (call, &fdinfo, &error);
  g_autofree char *store = g_build_filename (g_get_user_runtime_dir (), "doc", NULL);
  g_autofree char *doc_id = NULL;
  g_autofree char *rest = NULL;
  g_autofree char *display = NULL;
  StoreFile *f;

  if (host_path == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  display = g_path_get_basename (fdinfo.path);
  if (!limen_document_store_path_parse (host_path, store, &doc_id, &rest))
    {
      if (open_file (call, host_path, fdinfo.is_dir, fdinfo.writable, display, &error))
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, error);
      return;
    }
  f = g_new0 (StoreFile, 1);
  f->call = call;
  f->store_path = g_steal_pointer (&host_path);
  f->display = g_steal_pointer (&display);
  f->is_dir = fdinfo.is_dir;
  f->writable = fdinfo.writable;
  g_task_set_task_data (task, f, (GDestroyNotify) store_file_free);
  limen_document_host_path_async (limen_call_get_context (call)->connection, doc_id, rest, on_host_path,
                                  g_object_ref (task));
}

static const LimenStep uri_pre[] = {
  { check_uri, LIMEN_STEP_BEFORE_HANDLE },
  { check_handlers_allowed, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

static const LimenStep fd_pre[] = {
  { check_fd, LIMEN_STEP_BEFORE_HANDLE },
  { check_handlers_allowed, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

static const LimenDriverMethod open_uri_methods[] = {
  /* Unattended: apps (xdg-open) ask and exit without waiting; what opens without a
   * question still opens, as in the reference. */
  { .method = "OpenURI", .options = limen_options_open_uri_open_uri, .pre = uri_pre, .run = open_run,
    .flags = LIMEN_DRIVER_UNATTENDED },
  { .method = "OpenFile", .options = limen_options_open_uri_open_uri, .pre = fd_pre, .run = open_run,
    .flags = LIMEN_DRIVER_UNATTENDED },
  { .method = "OpenDirectory", .options = limen_options_open_uri_open_uri, .pre = fd_pre, .run = open_run,
    .flags = LIMEN_DRIVER_UNATTENDED },
  { NULL }
};

/* RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ); longer than any scheme in use
 * (reverse-DNS OAuth redirect schemes reach about 80). */
static gboolean
scheme_is_valid (const char *scheme)
{
  gsize len = strlen (scheme);

  if (len == 0 || len > SCHEME_MAX || !g_ascii_isalpha (scheme[0]))
    return FALSE;
  for (gsize i = 1; i < len; i++)
    if (!g_ascii_isalnum (scheme[i]) && !strchr ("+-.", scheme[i]))
      return FALSE;
  return TRUE;
}

/* SchemeSupported: answered at once from the host's own handlers of x-scheme-handler/SCHEME
 * (its default, else any app that lists the type), as the reference answers; no backend. */
static gboolean
handle_scheme_supported (LimenDbusPortalOpenURI *object, GDBusMethodInvocation *invocation,
                         const char *scheme, GVariant *options, gpointer user_data)
{
  g_autofree char *lower = NULL;
  g_autoptr(GAppInfo) handler = NULL;

  if (!scheme_is_valid (scheme))
    {
      g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                             "Invalid scheme: it must be a letter followed by at most %d "
                                             "letters, digits, '+', '-' or '.'", SCHEME_MAX - 1);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* Schemes are case-insensitive; handlers are registered under the lower-case form. */
  lower = g_ascii_strdown (scheme, -1);
  handler = g_app_info_get_default_for_uri_scheme (lower);
  g_debug ("SchemeSupported(%s): %s", lower, handler ? g_app_info_get_id (handler) : "no handler");
  limen_dbus_portal_open_uri_complete_scheme_supported (object, invocation, handler != NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* OpenURI, OpenFile, OpenDirectory: the AppChooser backend picks among the handlers of the
 * content type, the frontend launches the choice. SchemeSupported (version 5) answers from the
 * host's handlers. */
GDBusInterfaceSkeleton *
limen_open_uri_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *skeleton;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  skeleton = limen_driver_offer (context, limen_dbus_portal_open_uri_skeleton_new (), 5, open_uri_methods);
  g_signal_connect (skeleton, "handle-scheme-supported", G_CALLBACK (handle_scheme_supported), NULL);
  return skeleton;
}
