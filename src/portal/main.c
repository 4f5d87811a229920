/* limen-portal: the frontend, org.freedesktop.portal.Desktop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib/gi18n.h>

#include "daemon.h"
#include "fast-path.h"
#include "permission-store.h"
#include "portal.h"
#include "request.h"
#include "session.h"

#include "portals/account.h"
#include "portals/background.h"
#include "portals/camera.h"
#include "portals/dynamic-launcher.h"
#include "portals/email.h"
#include "portals/file-chooser.h"
#include "portals/game-mode.h"
#include "portals/global-shortcuts.h"
#include "portals/inhibit.h"
#include "portals/location.h"
#include "portals/memory-monitor.h"
#include "portals/network-monitor.h"
#include "portals/notification.h"
#include "portals/open-uri.h"
#include "portals/power-profile-monitor.h"
#include "portals/print.h"
#include "portals/proxy-resolver.h"
#include "portals/realtime.h"
#include "portals/registry.h"
#include "portals/screencast/clipboard.h"
#include "portals/screencast/remote-desktop.h"
#include "portals/screencast/screencast.h"
#include "portals/screenshot.h"
#include "portals/secret.h"
#include "portals/settings.h"
#include "portals/trash.h"
#include "portals/wallpaper.h"

static const struct {
  const char        *name;
  LimenPortalNewFunc new_func;
} portals[] = {
  { "Account", limen_account_new },
  { "Background", limen_background_new },
  { "Camera", limen_camera_new },
  { "Clipboard", limen_clipboard_new },
  { "DynamicLauncher", limen_dynamic_launcher_new },
  { "Email", limen_email_new },
  { "FileChooser", limen_file_chooser_new },
  { "GameMode", limen_game_mode_new },
  { "GlobalShortcuts", limen_global_shortcuts_new },
  { "Inhibit", limen_inhibit_new },
  { "Location", limen_location_new },
  { "MemoryMonitor", limen_memory_monitor_new },
  { "NetworkMonitor", limen_network_monitor_new },
  { "Notification", limen_notification_new },
  { "OpenURI", limen_open_uri_new },
  { "PowerProfileMonitor", limen_power_profile_monitor_new },
  { "Print", limen_print_new },
  { "ProxyResolver", limen_proxy_resolver_new },
  { "Realtime", limen_realtime_new },
  { "Registry", limen_registry_new },
  { "RemoteDesktop", limen_remote_desktop_new },
  { "ScreenCast", limen_screen_cast_new },
  { "Screenshot", limen_screenshot_new },
  { "Secret", limen_secret_new },
  { "Settings", limen_settings_new },
  { "Trash", limen_trash_new },
  { "Wallpaper", limen_wallpaper_new },
};

/* Their classes are set up (properties, handle-* signals) in prepare, off the startup path. */
static GType (*const skeleton_types[]) (void) = {
  limen_dbus_portal_account_skeleton_get_type,
  limen_dbus_portal_background_skeleton_get_type,
  limen_dbus_portal_camera_skeleton_get_type,
  limen_dbus_portal_dynamic_launcher_skeleton_get_type,
  limen_dbus_portal_email_skeleton_get_type,
  limen_dbus_portal_file_chooser_skeleton_get_type,
  limen_dbus_portal_game_mode_skeleton_get_type,
  limen_dbus_portal_inhibit_skeleton_get_type,
  limen_dbus_portal_location_skeleton_get_type,
  limen_dbus_portal_memory_monitor_skeleton_get_type,
  limen_dbus_portal_network_monitor_skeleton_get_type,
  limen_dbus_portal_notification_skeleton_get_type,
  limen_dbus_portal_open_uri_skeleton_get_type,
  limen_dbus_portal_power_profile_monitor_skeleton_get_type,
  limen_dbus_portal_print_skeleton_get_type,
  limen_dbus_portal_proxy_resolver_skeleton_get_type,
  limen_dbus_portal_realtime_skeleton_get_type,
  limen_dbus_host_portal_registry_skeleton_get_type,
  limen_dbus_portal_screenshot_skeleton_get_type,
  limen_dbus_portal_secret_skeleton_get_type,
  limen_dbus_portal_settings_skeleton_get_type,
  limen_dbus_portal_trash_skeleton_get_type,
  limen_dbus_portal_wallpaper_skeleton_get_type,
  limen_dbus_portal_request_skeleton_get_type,
  limen_dbus_portal_session_skeleton_get_type,
};

static LimenPortalContext context;
static GPtrArray *skeletons;

static gboolean
on_bus (GDBusConnection *connection, gpointer user_data, GError **error)
{
  context.connection = connection;
  limen_permission_store_init (connection);
  skeletons = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < G_N_ELEMENTS (portals); i++)
    {
      GDBusInterfaceSkeleton *skeleton = portals[i].new_func (&context);

      if (skeleton == NULL)
        {
          g_debug ("%s is not offered", portals[i].name);
          continue;
        }
      if (!g_dbus_interface_skeleton_export (skeleton, connection, LIMEN_PORTAL_PATH, error))
        return FALSE;
      g_ptr_array_add (skeletons, skeleton);
      g_debug ("Offering %s", portals[i].name);
    }
  limen_fast_path_install (connection);
  return TRUE;
}

/* Runs while the bus connection is being authenticated (see LimenDaemonSpec.prepare). */
static void
prepare (gpointer user_data)
{
  context.config = limen_portal_config_load ();
  limen_network_monitor_prepare ();
  for (guint i = 0; i < G_N_ELEMENTS (skeleton_types); i++)
    g_type_class_unref (g_type_class_ref (skeleton_types[i] ()));
}

static void
on_shutdown (gpointer user_data)
{
  /* Backends are told; callers see their requests end. */
  limen_request_close_all ();
  limen_session_close_all ();
  for (guint i = 0; skeletons && i < skeletons->len; i++)
    g_dbus_interface_skeleton_unexport (g_ptr_array_index (skeletons, i));
}

int
main (int argc, char **argv)
{
  const char *names[] = { "org.freedesktop.portal.Desktop", NULL };
  LimenDaemonSpec spec = {
    .program = "limen-portal",
    .summary = N_("Desktop portal frontend: answers org.freedesktop.portal.* for sandboxed and host apps."),
    .bus_names = names,
    .prepare = prepare,
    .on_bus = on_bus,
    .on_shutdown = on_shutdown,
  };

  return limen_daemon_main (&spec, argc, argv);
}
