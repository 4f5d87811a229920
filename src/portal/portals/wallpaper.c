/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A stored "no" in the wallpaper table ends the request at once; otherwise the backend's
 * preview decides, or, without a preview, the stored "yes" or the Access dialog. Files come
 * as fds and go on as host URIs. */
#include "portal.h"

#include <glib/gi18n.h>

#include <string.h>
#include <sys/stat.h>

#include "access.h"
#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "host-file.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Wallpaper"
#define TABLE "wallpaper"

/* Pre-step of SetWallpaperURI: a valid URI, passed on as given, also a file: URI from a
 * sandbox (as the reference does: the app learns nothing from it, the person confirms it or
 * the stored "wallpaper" permission allows it, and libportal turns a local file into
 * SetWallpaperFile itself). */
static void
check_uri (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) arg = limen_call_get_arg (call, 1);
  const char *uri = g_variant_get_string (arg, NULL);

  if (strlen (uri) > 16384 || !g_uri_is_valid (uri, G_URI_FLAGS_NONE, NULL))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid value for uri: not a valid URI");
      return;
    }
  g_task_return_boolean (task, TRUE);
}

/* Pre-step of SetWallpaperFile: the fd's file, reachable on the host, goes on as a file: URI. */
static void
check_file (LimenCall *call, GTask *task)
{
  GError *error = NULL;
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  g_autoptr(GVariant) fd_handle = limen_call_get_arg (call, 1);
  g_autofree char *path = limen_fd_host_path (limen_call_get_app_info (call), limen_call_get_fd_list (call),
                                              g_variant_get_handle (fd_handle), "fd",
                                              LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ,
                                              NULL, &error);
  g_autofree char *uri = NULL;

  if (path == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  uri = g_filename_to_uri (path, NULL, NULL);
  limen_call_set_impl_args (call, g_variant_new ("(@ss)", window, uri), NULL);
  g_task_return_boolean (task, TRUE);
}

/* After the handle: a stored "no" ends the request (response 2). With a preview the person
 * confirms the picture in the backend's dialog; without one nobody would see it coming, so
 * the stored "yes" or the person's answer in the Access dialog decides, as in the reference
 * (the answer is stored where nothing was). */
static void
check_permission (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  gboolean preview = FALSE;

  g_variant_lookup (limen_call_get_options (call), "show-preview", "b", &preview);
  if (preview)
    {
      limen_access_step (call, task, NULL, TABLE, LIMEN_ACCESS_NOT_DENIED, NULL);
      return;
    }
  limen_access_step (call, task, g_variant_get_string (window, NULL), TABLE, LIMEN_ACCESS_ASK,
                     &(LimenAccessDialog) {
                       .title = _("Allow this app to set the wallpaper?"),
                       .body = _("It will be able to change the desktop and lock screen pictures "
                                 "whenever it asks, without showing them to you first."),
                       .grant_label = _("Allow"),
                       .deny_label = _("Deny"),
                       .icon = "preferences-desktop-wallpaper",
                     });
}

static const LimenStep uri_pre[] = {
  { check_uri, LIMEN_STEP_BEFORE_HANDLE },
  { check_permission, LIMEN_STEP_AFTER_HANDLE },
  { NULL }
};

static const LimenStep file_pre[] = {
  { check_file, LIMEN_STEP_BEFORE_HANDLE },
  { check_permission, LIMEN_STEP_AFTER_HANDLE },
  { NULL }
};

/* Both methods end in the impl's one method, which answers just (u). */
static const LimenDriverMethod wallpaper_methods[] = {
  { .method = "SetWallpaperURI", .options = limen_options_wallpaper,
    .impl_interface = IMPL_IFACE, .impl_method = "SetWallpaperURI", .pre = uri_pre },
  { .method = "SetWallpaperFile", .options = limen_options_wallpaper,
    .impl_interface = IMPL_IFACE, .impl_method = "SetWallpaperURI", .pre = file_pre },
  { NULL }
};

/* SetWallpaperURI and SetWallpaperFile. */
GDBusInterfaceSkeleton *
limen_wallpaper_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_wallpaper_skeleton_new (), 1, wallpaper_methods);
}
