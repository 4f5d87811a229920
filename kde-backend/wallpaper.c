/* Limen — org.freedesktop.impl.portal.Wallpaper: SetWallpaperURI with a preview dialog,
 * applied through Plasma's scripting D-Bus API (and kscreenlockerrc for the lock
 * screen) in the Qt shim.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include <string.h>
#include <sys/stat.h>

#include "errors.h"

typedef struct {
  GDBusMethodInvocation *invocation;
  LimenKdeRequest       *request;
  LimenQtDialog         *dialog;
} WallpaperCall;

static void
wallpaper_call_free (WallpaperCall *call)
{
  g_clear_object (&call->invocation);
  g_free (call);
}

/* SetWallpaperURI answers (u), not the usual (ua{sv}). */
static void
reply (WallpaperCall *call, guint response)
{
  g_dbus_method_invocation_return_value (call->invocation, g_variant_new ("(u)", response));
}

static void
on_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  WallpaperCall *call = user_data;

  limen_kde_shim_get (NULL)->limen_qt_close (call->dialog);
  reply (call, 2);
  wallpaper_call_free (call);
}

static void
on_done (LimenQtDialog *dialog, int response, void *user_data)
{
  WallpaperCall *call = user_data;

  g_debug ("SetWallpaperURI answered %d", response);
  reply (call, (guint) response);
  limen_kde_request_finish (call->request);
  wallpaper_call_free (call);
}

/* Only a local picture we can read: the frontend hands over document-portal paths. */
static gboolean
check_uri (const char *uri, GError **error)
{
  g_autofree char *path = NULL;
  struct stat st;

  if (strlen (uri) > 4096 || !g_str_has_prefix (uri, "file://") ||
      !(path = g_filename_from_uri (uri, NULL, NULL)))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid uri: expected a file:// URI");
      return FALSE;
    }
  if (stat (path, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "The picture is not a readable file");
      return FALSE;
    }
  return TRUE;
}

static gboolean
on_set_wallpaper_uri (LimenDbusImplPortalWallpaper *skeleton,
                      GDBusMethodInvocation        *invocation,
                      const char                   *handle,
                      const char                   *app_id,
                      const char                   *parent_window,
                      const char                   *uri,
                      GVariant                     *options,
                      gpointer                      user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  const LimenKdeShim *shim = NULL;
  gboolean preview = FALSE;
  const char *set_on = "both";
  LimenQtWallpaperSpec spec = { 0 };
  WallpaperCall *call;

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_wallpaper, NULL) ||
      !check_uri (uri, &error) ||
      !(shim = limen_kde_shim_get_for_dialog (&error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "show-preview", "b", &preview);
  g_variant_lookup (opts, "set-on", "&s", &set_on);

  call = g_new0 (WallpaperCall, 1);
  call->invocation = g_object_ref (invocation);
  call->request = limen_kde_request_new (invocation, handle, on_request_closed, call, &error);
  if (!call->request)
    {
      limen_invocation_return_gerror (invocation, error);
      wallpaper_call_free (call);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.window.modal = TRUE;
  spec.app_id = app_id;
  spec.uri = uri;
  spec.show_preview = preview;
  spec.set_on = g_str_equal (set_on, "background") ? LIMEN_QT_WALLPAPER_BACKGROUND
                : g_str_equal (set_on, "lockscreen") ? LIMEN_QT_WALLPAPER_LOCKSCREEN : LIMEN_QT_WALLPAPER_BOTH;
  call->dialog = shim->limen_qt_wallpaper_open (&spec, on_done, call);
  if (!call->dialog)
    {
      limen_kde_fail_dialog (invocation, call->request, "The wallpaper dialog could not be shown");
      wallpaper_call_free (call);
    }
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_wallpaper_new (void)
{
  LimenDbusImplPortalWallpaper *skeleton = limen_dbus_impl_portal_wallpaper_skeleton_new ();

  g_signal_connect (skeleton, "handle-set-wallpaper-uri", G_CALLBACK (on_set_wallpaper_uri), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
