/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A stored "no" in the wallpaper table ends the request at once; otherwise the backend's
 * preview (or its own policy) decides. Files come as fds and go on as host URIs. */
#include "wallpaper.h"

#include <string.h>
#include <sys/stat.h>

#include "access.h"
#include "backend.h"
#include "driver.h"
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

/* Pre-step of SetWallpaperURI: a valid URI, and no file: URI from a sandbox. */
static void
check_uri (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) arg = limen_call_get_arg (call, 1);
  const char *uri = g_variant_get_string (arg, NULL);
  g_autofree char *scheme = NULL;

  if (strlen (uri) > 16384 || !g_uri_is_valid (uri, G_URI_FLAGS_NONE, NULL) ||
      (scheme = g_uri_parse_scheme (uri)) == NULL ||
      (g_ascii_strcasecmp (scheme, "file") == 0 && !limen_app_info_is_host (limen_call_get_app_info (call))))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid value for uri: a valid URI, and no file: URI from a sandbox (use SetWallpaperFile)");
      return;
    }
  g_task_return_boolean (task, TRUE);
}

/* Pre-step of SetWallpaperFile: the fd's file, reachable on the host, goes on as a file: URI. */
static void
check_file (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  g_autoptr(GVariant) fd_handle = limen_call_get_arg (call, 1);
  g_autofd int fd = -1;
  LimenFdInfo fdinfo = { 0 };
  g_autofree char *proc = NULL;
  g_autofree char *path = NULL;
  g_autofree char *uri = NULL;
  struct stat st;
  gboolean reachable;

  fd = limen_fd_list_get (limen_call_get_fd_list (call), g_variant_get_handle (fd_handle), "fd", &error);
  if (fd < 0 || !limen_fd_check (limen_call_get_app_info (call), fd,
                                 LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ, &fdinfo, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  proc = g_strdup_printf ("/proc/self/fd/%d", fd);
  path = g_file_read_link (proc, NULL);
  reachable = path && stat (path, &st) == 0 && st.st_dev == fdinfo.dev && st.st_ino == fdinfo.ino;
  limen_fd_info_clear (&fdinfo);
  if (!reachable)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                               "The file is not reachable outside the sandbox");
      return;
    }
  uri = g_filename_to_uri (path, NULL, NULL);
  limen_call_set_impl_args (call, g_variant_new ("(@ss)", window, uri), NULL);
  g_task_return_boolean (task, TRUE);
}

/* After the handle: a stored "no" ends the request; otherwise the backend decides. */
static void
check_permission (LimenCall *call, GTask *task)
{
  limen_access_step (call, task, NULL, TABLE, LIMEN_ACCESS_NOT_DENIED, NULL);
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
  { .method = "SetWallpaperURI", .options = wallpaper_options,
    .impl_interface = IMPL_IFACE, .impl_method = "SetWallpaperURI", .pre = uri_pre },
  { .method = "SetWallpaperFile", .options = wallpaper_options,
    .impl_interface = IMPL_IFACE, .impl_method = "SetWallpaperURI", .pre = file_pre },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_wallpaper_new (LimenPortalContext *context)
{
  LimenDbusPortalWallpaper *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_wallpaper_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_wallpaper_set_version (object, 1);
  limen_driver_export (G_DBUS_INTERFACE_SKELETON (object), context, wallpaper_methods);
  return G_DBUS_INTERFACE_SKELETON (object);
}
