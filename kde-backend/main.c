/* Limen — limen-kde: the KDE backend, org.freedesktop.impl.portal.desktop.limen.
 *
 * C on the core library answers every impl interface; dialogs, notifications and the
 * mail launcher come from the Qt shim, which is only loaded when first needed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <glib/gi18n.h>

#include "daemon.h"

typedef GDBusInterfaceSkeleton *(*InterfaceNew) (void);

/* Keep in step with limen.portal's Interfaces= (a test compares them). */
static const InterfaceNew interfaces[] = {
  limen_kde_settings_new,
  limen_kde_access_new,
  limen_kde_file_chooser_new,
  limen_kde_notification_new,
  limen_kde_inhibit_new,
  limen_kde_app_chooser_new,
  limen_kde_email_new,
  limen_kde_account_new,
  limen_kde_screenshot_new,
  limen_kde_lockdown_new,
  limen_kde_print_new,
  limen_kde_wallpaper_new,
  limen_kde_background_new,
  limen_kde_screencast_new,
  limen_kde_remote_desktop_new,
  limen_kde_clipboard_new,
  limen_kde_global_shortcuts_new,
};

static GPtrArray *skeletons;

static gboolean
on_bus (GDBusConnection *connection, gpointer user_data, GError **error)
{
  skeletons = g_ptr_array_new_with_free_func (g_object_unref);
  for (gsize i = 0; i < G_N_ELEMENTS (interfaces); i++)
    {
      GDBusInterfaceSkeleton *skeleton = interfaces[i] ();

      if (!g_dbus_interface_skeleton_export (skeleton, connection, LIMEN_KDE_OBJECT_PATH, error))
        return FALSE;
      g_ptr_array_add (skeletons, skeleton);
    }
  limen_kde_shim_preload_later ();
  return TRUE;
}

static void
on_shutdown (gpointer user_data)
{
  limen_kde_request_close_all ();
  for (guint i = 0; skeletons && i < skeletons->len; i++)
    g_dbus_interface_skeleton_unexport (g_ptr_array_index (skeletons, i));
}

int
main (int argc, char **argv)
{
  static const char *bus_names[] = { LIMEN_KDE_BUS_NAME, NULL };
  LimenDaemonSpec spec = {
    .program = "limen-kde",
    .summary = N_("The KDE backend of the Limen desktop portals"),
    .bus_names = bus_names,
    .on_bus = on_bus,
    .on_shutdown = on_shutdown,
  };

  return limen_daemon_main (&spec, argc, argv);
}
