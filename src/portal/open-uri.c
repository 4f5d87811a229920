/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Everything a caller hands in is checked before a Request exists, so a bad fd index or
 * URI is an immediate InvalidArgument, never a request that is silently never answered.
 * The handler is launched by us, on the host, with the host's view of the file. */
#include "open-uri.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <gio/gdesktopappinfo.h>

#include "backend.h"
#include "fd-check.h"
#include "lockdown.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.AppChooser"
#define URI_MAX 16384

static const LimenOption open_uri_options[] = {
  { "writable", "b", limen_validate_bool, 0 },
  { "ask", "b", limen_validate_bool, 0 },
  { "activation_token", "s", limen_validate_string_length, 1024 },
  { NULL }
};

typedef struct {
  LimenPortalContext    *context;
  GDBusMethodInvocation *invocation;
  char                  *parent_window;
  char                  *uri;          /* what the handler is launched with */
  char                  *content_type;
  char                  *display;      /* "uri" or "filename" option for the dialog */
  gboolean               is_file;
  GVariant              *options;
  char                  *activation_token;
} Open;

static void
open_free (Open *o)
{
  g_clear_object (&o->invocation);
  g_free (o->parent_window);
  g_free (o->uri);
  g_free (o->content_type);
  g_free (o->display);
  g_clear_pointer (&o->options, g_variant_unref);
  g_free (o->activation_token);
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

static gboolean
launch (Open *o, const char *choice, const char *activation_token, GError **error)
{
  g_autofree char *desktop_id = g_strconcat (choice, ".desktop", NULL);
  g_autoptr(GDesktopAppInfo) app = NULL;
  g_autoptr(GAppLaunchContext) ctx = g_app_launch_context_new ();
  GList uris = { o->uri, NULL, NULL };

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
  g_debug ("Opening %s with %s", o->is_file ? "a file" : o->uri, desktop_id);
  return g_app_info_launch_uris (G_APP_INFO (app), &uris, ctx, error);
}

static void
on_chosen (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error, gpointer user_data)
{
  Open *o = user_data;
  g_autoptr(GVariant) results = NULL;
  guint response = limen_backend_reply_response (reply, &results);
  const char *choice = NULL, *token = NULL;
  g_autoptr(GError) launch_error = NULL;

  if (response != LIMEN_RESPONSE_SUCCESS)
    {
      limen_request_respond (request, response, NULL);
      return;
    }
  if (!g_variant_lookup (results, "choice", "&s", &choice) || *choice == '\0')
    {
      g_message ("AppChooser answered no choice");
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      return;
    }
  g_variant_lookup (results, "activation_token", "&s", &token);
  if (!launch (o, choice, token ? token : o->activation_token, &launch_error))
    {
      g_message ("Could not launch %s: %s", choice, launch_error->message);
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      return;
    }
  limen_request_respond (request, LIMEN_RESPONSE_SUCCESS, NULL);
}

static void
start (Open *o)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_invocation (o->invocation);
  g_auto(GStrv) choices = NULL;
  g_autoptr(LimenRequest) request = NULL;
  GVariantBuilder extra;

  if (info == NULL)
    return;
  choices = handlers_for (o->content_type);
  g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&extra, "{sv}", "content_type", g_variant_new_string (o->content_type));
  g_variant_builder_add (&extra, "{sv}", o->is_file ? "filename" : "uri", g_variant_new_string (o->display));
  request = limen_backend_request_method (o->context, o->invocation, info, IMPL_IFACE, "ChooseApplication",
                                          g_variant_new ("(s^as)", o->parent_window, choices), o->options,
                                          open_uri_options, g_variant_builder_end (&extra), NULL,
                                          on_chosen, o, (GDestroyNotify) open_free);
}

static void
on_lockdown (gboolean locked, gpointer user_data)
{
  Open *o = user_data;

  if (locked)
    {
      g_dbus_method_invocation_return_error_literal (o->invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Application handlers are disabled");
      open_free (o);
      return;
    }
  start (o);
}

static Open *
open_new (LimenPortalContext *context, GDBusMethodInvocation *invocation, const char *parent_window,
          GVariant *options)
{
  Open *o = g_new0 (Open, 1);

  o->context = context;
  o->invocation = g_object_ref (invocation);
  o->parent_window = g_strdup (parent_window);
  o->options = g_variant_ref (options);
  g_variant_lookup (options, "activation_token", "s", &o->activation_token);
  return o;
}

/* Check the options now, so errors come back as the method's reply. */
static gboolean
options_ok (GDBusMethodInvocation *invocation, GVariant *options)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;

  if (limen_options_filter (options, &b, &error, open_uri_options, NULL))
    return TRUE;
  limen_invocation_return_gerror (invocation, error);
  return FALSE;
}

static gboolean
handle_open_uri (LimenDbusPortalOpenURI *object, GDBusMethodInvocation *invocation,
                 const char *parent_window, const char *uri, GVariant *options, LimenPortalContext *context)
{
  g_autofree char *scheme = NULL;
  Open *o;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!options_ok (invocation, options))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (strlen (uri) > URI_MAX || !g_uri_is_valid (uri, G_URI_FLAGS_NONE, NULL) ||
      (scheme = g_uri_parse_scheme (uri)) == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for uri: not a valid URI");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (g_ascii_strcasecmp (scheme, "file") == 0 && !limen_app_info_is_host (info))
    {
      /* A path names a file in the caller's own view; only an fd says which one it means. */
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for uri: sandboxed apps must use OpenFile for local files");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  o = open_new (context, invocation, parent_window, options);
  o->uri = g_strdup (uri);
  o->display = g_strdup (uri);
  if (g_ascii_strcasecmp (scheme, "file") == 0)
    {
      g_autofree char *path = g_filename_from_uri (uri, NULL, NULL);
      g_autofree char *guess = path ? g_content_type_guess (path, NULL, 0, NULL) : NULL;

      o->is_file = TRUE;
      o->content_type = g_content_type_get_mime_type (guess ? guess : "application/octet-stream");
    }
  else
    {
      g_autofree char *lower = g_ascii_strdown (scheme, -1);

      o->content_type = g_strconcat ("x-scheme-handler/", lower, NULL);
    }
  limen_lockdown_query (context, "disable-application-handlers", on_lockdown, o);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_open_fd (GDBusMethodInvocation *invocation, GUnixFDList *fd_list, const char *parent_window,
                GVariant *fd_handle, GVariant *options, LimenPortalContext *context, gboolean directory)
{
  g_autoptr(GError) error = NULL;
  g_autofd int fd = -1;
  LimenFdInfo fdinfo = { 0 };
  gboolean writable = FALSE;
  g_autofree char *proc = NULL;
  g_autofree char *host_path = NULL;
  struct stat st;
  Open *o;
  LimenFdFlags flags;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!options_ok (invocation, options))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  g_variant_lookup (options, "writable", "b", &writable);
  flags = LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_DIRECTORY | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ;
  if (writable && !directory)
    flags |= LIMEN_FD_NEED_WRITE;
  fd = limen_fd_list_get (fd_list, g_variant_get_handle (fd_handle), "fd", &error);
  if (fd < 0 || !limen_fd_check (info, fd, flags, &fdinfo, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* The handler runs on the host: it needs our view of the file, which must still be the
   * very file the fd refers to. */
  proc = g_strdup_printf ("/proc/self/fd/%d", fd);
  host_path = g_file_read_link (proc, NULL);
  if (host_path == NULL || stat (host_path, &st) != 0 || st.st_dev != fdinfo.dev || st.st_ino != fdinfo.ino)
    {
      limen_fd_info_clear (&fdinfo);
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "The file is not reachable outside the sandbox");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  o = open_new (context, invocation, parent_window, options);
  o->is_file = TRUE;
  if (directory)
    {
      g_autofree char *dir = fdinfo.is_dir ? g_strdup (host_path) : g_path_get_dirname (host_path);

      o->uri = g_filename_to_uri (dir, NULL, NULL);
      o->content_type = g_strdup ("inode/directory");
    }
  else if (fdinfo.is_dir)
    {
      o->uri = g_filename_to_uri (host_path, NULL, NULL);
      o->content_type = g_strdup ("inode/directory");
    }
  else
    {
      g_autofree char *guess = g_content_type_guess (host_path, NULL, 0, NULL);

      o->uri = g_filename_to_uri (host_path, NULL, NULL);
      o->content_type = g_content_type_get_mime_type (guess);
    }
  o->display = g_path_get_basename (fdinfo.path);
  limen_fd_info_clear (&fdinfo);
  limen_lockdown_query (context, "disable-application-handlers", on_lockdown, o);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_open_file (LimenDbusPortalOpenURI *object, GDBusMethodInvocation *invocation, GUnixFDList *fd_list,
                  const char *parent_window, GVariant *fd, GVariant *options, LimenPortalContext *context)
{
  return handle_open_fd (invocation, fd_list, parent_window, fd, options, context, FALSE);
}

static gboolean
handle_open_directory (LimenDbusPortalOpenURI *object, GDBusMethodInvocation *invocation, GUnixFDList *fd_list,
                       const char *parent_window, GVariant *fd, GVariant *options, LimenPortalContext *context)
{
  return handle_open_fd (invocation, fd_list, parent_window, fd, options, context, TRUE);
}

GDBusInterfaceSkeleton *
limen_open_uri_new (LimenPortalContext *context)
{
  LimenDbusPortalOpenURI *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_open_uri_skeleton_new ();
  limen_dbus_portal_open_uri_set_version (object, 4);
  g_signal_connect (object, "handle-open-uri", G_CALLBACK (handle_open_uri), context);
  g_signal_connect (object, "handle-open-file", G_CALLBACK (handle_open_file), context);
  g_signal_connect (object, "handle-open-directory", G_CALLBACK (handle_open_directory), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
