/* Limen — org.freedesktop.impl.portal.Wallpaper: SetWallpaperURI with a preview dialog,
 * applied through Plasma's scripting D-Bus API (and kscreenlockerrc for the lock
 * screen) in the Qt shim.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include <string.h>
#include <sys/stat.h>

#include "errors.h"
#include "option-tables.h"

#define URI_ARG 3

static void
on_done (LimenQtDialog *dialog, int response, void *user_data)
{
  limen_kde_call_finish (user_data, response, NULL);
}

/* Only a local picture we can read: the frontend hands over document-portal paths. */
static gboolean
check_uri (LimenKdeCall *call, GError **error)
{
  const char *uri = limen_kde_call_get_string (call, URI_ARG);
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
open_wallpaper (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  LimenQtWallpaperSpec spec = { 0 };
  gboolean preview = FALSE;
  const char *set_on = "both";

  g_variant_lookup (opts, "show-preview", "b", &preview);
  g_variant_lookup (opts, "set-on", "&s", &set_on);
  limen_kde_call_window (call, &spec.window);
  spec.window.modal = TRUE;
  spec.app_id = limen_kde_call_get_app_id (call);
  spec.uri = limen_kde_call_get_string (call, URI_ARG);
  spec.show_preview = preview;
  spec.set_on = g_str_equal (set_on, "background") ? LIMEN_QT_WALLPAPER_BACKGROUND
                : g_str_equal (set_on, "lockscreen") ? LIMEN_QT_WALLPAPER_LOCKSCREEN : LIMEN_QT_WALLPAPER_BOTH;
  return limen_kde_call_opened (call, shim->limen_qt_wallpaper_open (&spec, (LimenQtWallpaperDone) done, call));
}

/* SetWallpaperURI answers (u), not the usual (ua{sv}). */
static const LimenKdeMethod wallpaper_methods[] = {
  { .method = "SetWallpaperURI", .options = limen_options_wallpaper, .check = check_uri,
    .open = open_wallpaper, .done = G_CALLBACK (on_done), .failed = "The wallpaper dialog could not be shown",
    .flags = LIMEN_KDE_METHOD_REPLY_RESPONSE_ONLY },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_wallpaper_new (void)
{
  return limen_kde_driver_offer (limen_dbus_impl_portal_wallpaper_skeleton_new (), wallpaper_methods);
}
