/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A stored "no" in the wallpaper table ends the request at once; otherwise the backend's
 * preview (or its own policy) decides. Files come as fds and go on as host URIs. */
#include "wallpaper.h"

#include <string.h>
#include <sys/stat.h>

#include "access.h"
#include "backend.h"
#include "fd-check.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Wallpaper"
#define TABLE "wallpaper"

static gboolean
validate_set_on (const LimenOption *o, GVariant *v, GError **error)
{
  const char *s = g_variant_get_string (v, NULL);

  if (!g_str_equal (s, "background") && !g_str_equal (s, "lockscreen") && !g_str_equal (s, "both"))
    {
      limen_option_set_error (error, o->key, "must be background, lockscreen or both");
      return FALSE;
    }
  return TRUE;
}

static const LimenOption wallpaper_options[] = {
  { "show-preview", "b", limen_validate_bool, 0 },
  { "set-on", "s", validate_set_on, 0 },
  { NULL }
};

typedef struct {
  LimenPortalContext *context;
  char               *parent_window;
  char               *uri;
  GVariant           *options;
} Wall;

static void
wall_free (Wall *w)
{
  g_free (w->parent_window);
  g_free (w->uri);
  g_clear_pointer (&w->options, g_variant_unref);
  g_free (w);
}

/* The impl method answers just (u). */
static void
on_reply (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error, gpointer user_data)
{
  guint response = LIMEN_RESPONSE_OTHER;

  if (reply && g_variant_is_of_type (reply, G_VARIANT_TYPE ("(u)")))
    g_variant_get (reply, "(u)", &response);
  limen_request_respond (request, MIN (response, LIMEN_RESPONSE_OTHER), NULL);
}

static void
on_permission (LimenRequest *request, gboolean allowed, gpointer user_data)
{
  Wall *w = user_data;
  const char *backend = limen_backend_find (w->context, IMPL_IFACE, NULL);

  if (!allowed || backend == NULL)
    {
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      wall_free (w);
      return;
    }
  limen_backend_call (request, backend, IMPL_IFACE, "SetWallpaperURI",
                      limen_backend_build_parameters (request, g_variant_new ("(ss)", w->parent_window, w->uri),
                                                      w->options),
                      NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_reply, NULL, NULL);
  wall_free (w);
}

static void
start (LimenPortalContext *context, GDBusMethodInvocation *invocation, LimenAppInfo *info,
       const char *parent_window, const char *uri, GVariant *options)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenRequest) request = NULL;
  const char *backend;
  Wall *w;

  if (!limen_options_filter (options, &b, &error, wallpaper_options, NULL) ||
      (backend = limen_backend_find (context, IMPL_IFACE, &error)) == NULL ||
      (request = limen_backend_start_request (invocation, info, options, backend, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return;
    }
  w = g_new0 (Wall, 1);
  w->context = context;
  w->parent_window = g_strdup (parent_window);
  w->uri = g_strdup (uri);
  w->options = g_variant_ref_sink (g_variant_builder_end (&b));
  limen_access_lookup_stored (context, request, TABLE, TABLE, on_permission, w);
}

static gboolean
handle_set_wallpaper_uri (LimenDbusPortalWallpaper *object, GDBusMethodInvocation *invocation,
                          const char *parent_window, const char *uri, GVariant *options, LimenPortalContext *context)
{
  g_autofree char *scheme = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (strlen (uri) > 16384 || !g_uri_is_valid (uri, G_URI_FLAGS_NONE, NULL) ||
      (scheme = g_uri_parse_scheme (uri)) == NULL ||
      (g_ascii_strcasecmp (scheme, "file") == 0 && !limen_app_info_is_host (info)))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for uri: a valid URI, and no file: URI from a sandbox (use SetWallpaperFile)");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  start (context, invocation, info, parent_window, uri, options);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_wallpaper_file (LimenDbusPortalWallpaper *object, GDBusMethodInvocation *invocation,
                           GUnixFDList *fd_list, const char *parent_window, GVariant *fd_handle,
                           GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autofd int fd = -1;
  LimenFdInfo fdinfo = { 0 };
  g_autofree char *proc = NULL;
  g_autofree char *path = NULL;
  g_autofree char *uri = NULL;
  struct stat st;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  fd = limen_fd_list_get (fd_list, g_variant_get_handle (fd_handle), "fd", &error);
  if (fd < 0 || !limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ,
                                 &fdinfo, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  proc = g_strdup_printf ("/proc/self/fd/%d", fd);
  path = g_file_read_link (proc, NULL);
  if (path == NULL || stat (path, &st) != 0 || st.st_dev != fdinfo.dev || st.st_ino != fdinfo.ino)
    {
      limen_fd_info_clear (&fdinfo);
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "The file is not reachable outside the sandbox");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_fd_info_clear (&fdinfo);
  uri = g_filename_to_uri (path, NULL, NULL);
  start (context, invocation, info, parent_window, uri, options);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_wallpaper_new (LimenPortalContext *context)
{
  LimenDbusPortalWallpaper *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_wallpaper_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_wallpaper_set_version (object, 1);
  g_signal_connect (object, "handle-set-wallpaper-uri", G_CALLBACK (handle_set_wallpaper_uri), context);
  g_signal_connect (object, "handle-set-wallpaper-file", G_CALLBACK (handle_set_wallpaper_file), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
