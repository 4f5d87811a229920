/* limen-portal: the frontend, org.freedesktop.portal.Desktop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib/gi18n.h>

#include "daemon.h"
#include "fast-path.h"
#include "permission-store.h"
#include "portal.h"
#include "request.h"
#include "session.h"

#include "portals/network-monitor.h"
#include "portals/deferred.h"

/* Every portal of limen-portal, one line each: its name, its file's prefix (limen_PREFIX_new in
 * portals/PREFIX.c) and its gdbus-codegen skeleton (limen_dbus_SKELETON_skeleton_get_type; for
 * the reader: each portal's file makes its own, so that only offered portals set up a class). */
#define LIMEN_PORTALS(P) \
  P ("Account", account, portal_account) \
  P ("Background", background, portal_background) \
  P ("Camera", camera, portal_camera) \
  P ("Clipboard", clipboard, portal_clipboard) \
  P ("DynamicLauncher", dynamic_launcher, portal_dynamic_launcher) \
  P ("Email", email, portal_email) \
  P ("FileChooser", file_chooser, portal_file_chooser) \
  P ("GameMode", game_mode, portal_game_mode) \
  P ("GlobalShortcuts", global_shortcuts, portal_global_shortcuts) \
  P ("Inhibit", inhibit, portal_inhibit) \
  P ("InputCapture", input_capture, portal_input_capture) \
  P ("Location", location, portal_location) \
  P ("MemoryMonitor", memory_monitor, portal_memory_monitor) \
  P ("NetworkMonitor", network_monitor, portal_network_monitor) \
  P ("Notification", notification, portal_notification) \
  P ("OpenURI", open_uri, portal_open_uri) \
  P ("PowerProfileMonitor", power_profile_monitor, portal_power_profile_monitor) \
  P ("Print", print, portal_print) \
  P ("ProxyResolver", proxy_resolver, portal_proxy_resolver) \
  P ("Realtime", realtime, portal_realtime) \
  P ("Registry", registry, host_portal_registry) \
  P ("RemoteDesktop", remote_desktop, portal_remote_desktop) \
  P ("ScreenCast", screen_cast, portal_screen_cast) \
  P ("Screenshot", screenshot, portal_screenshot) \
  P ("Secret", secret, portal_secret) \
  P ("Settings", settings, portal_settings) \
  P ("Trash", trash, portal_trash) \
  P ("Usb", usb, portal_usb) \
  P ("Wallpaper", wallpaper, portal_wallpaper)

#define DECLARE_PORTAL(name, prefix, skeleton) \
  GDBusInterfaceSkeleton *limen_##prefix##_new (LimenPortalContext *context);
LIMEN_PORTALS (DECLARE_PORTAL)

#define PORTAL_ROW(name, prefix, skeleton) { name, limen_##prefix##_new },

static const struct {
  const char        *name;
  LimenPortalNewFunc new_func;
} portals[] = {
  LIMEN_PORTALS (PORTAL_ROW)
};

static LimenPortalContext context;
static GPtrArray *skeletons;

/* How long after the exports the links to system services of portals/deferred.h are made:
 * long enough for the first calls that started the daemon to be answered first. */
#define DEFERRED_START_MS 50

static gboolean
start_deferred (gpointer user_data)
{
  limen_memory_monitor_start ();
  limen_realtime_start ();
  return G_SOURCE_REMOVE;
}

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
  /* Not deferred: power-saver-enabled is a property the app that started the daemon may read
   * at once (GLib's portal monitor does, GetAll on its proxy), and it reads FALSE until GIO's
   * monitor has heard from power-profiles-daemon. */
  limen_power_profile_monitor_start ();
  g_timeout_add_full (G_PRIORITY_LOW, DEFERRED_START_MS, start_deferred, NULL, NULL);
  return TRUE;
}

/* Runs while the bus connection is being made (see LimenDaemonSpec.prepare). The skeleton
 * classes are not set up here ahead of time: on two cores that work competes with the
 * connection for the CPU, and only the portals a configuration offers need theirs. */
static void
prepare (gpointer user_data)
{
  context.config = limen_portal_config_load ();
  limen_network_monitor_prepare ();
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
