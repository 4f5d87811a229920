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

/* Every impl interface of limen-kde, one line each: the prefix of its file's
 * limen_kde_PREFIX_new () (kde-backend/PREFIX.c). Keep in step with limen.portal's
 * Interfaces= (a test compares them). */
#define LIMEN_KDE_INTERFACES(I) \
  I (settings) \
  I (access) \
  I (file_chooser) \
  I (notification) \
  I (inhibit) \
  I (app_chooser) \
  I (email) \
  I (account) \
  I (screenshot) \
  I (lockdown) \
  I (print) \
  I (wallpaper) \
  I (background) \
  I (screencast) \
  I (remote_desktop) \
  I (clipboard) \
  I (global_shortcuts) \
  I (dynamic_launcher) \
  I (usb)

#define DECLARE_INTERFACE(prefix) GDBusInterfaceSkeleton *limen_kde_##prefix##_new (void);
LIMEN_KDE_INTERFACES (DECLARE_INTERFACE)

#define INTERFACE_ROW(prefix) limen_kde_##prefix##_new,
static const InterfaceNew interfaces[] = {
  LIMEN_KDE_INTERFACES (INTERFACE_ROW)
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
