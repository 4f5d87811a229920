/* Limen — org.freedesktop.impl.portal.Lockdown from KDE's Kiosk keys.
 *
 * The administrator's [KDE Action Restrictions] in kdeglobals (the whole cascade, so
 * /etc/xdg/kdeglobals with [$i] wins) decide; a key set to false disables:
 *   print/system, action/print                → disable-printing
 *   action/file_save, action/file_save_as     → disable-save-to-disk
 *   openwith                                  → disable-application-handlers
 *   camera, location (Limen's own keys)       → disable-camera, disable-location
 * The properties follow kdeglobals live; writes from the bus are undone, since the
 * Kiosk configuration, not a D-Bus peer, is the authority.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>

#include "errors.h"

#define GROUP "KDE Action Restrictions"

typedef struct {
  gboolean printing, save, handlers, camera, location;
} Restrictions;

static LimenDbusImplPortalLockdown *lockdown;
static Restrictions current;
static gboolean applying;
static GPtrArray *monitors;
static guint reload_id;

static gboolean
is_false (const char *value)
{
  return g_ascii_strcasecmp (value, "false") == 0 || g_str_equal (value, "0") ||
         g_ascii_strcasecmp (value, "no") == 0 || g_ascii_strcasecmp (value, "off") == 0;
}

static void
on_entry (const char *group, const char *key, const char *value, void *user_data)
{
  Restrictions *r = user_data;
  gboolean off;

  if (!g_str_equal (group, GROUP))
    return;
  off = is_false (value);
  if (g_str_equal (key, "print/system") || g_str_equal (key, "action/print"))
    r->printing |= off;
  else if (g_str_equal (key, "action/file_save") || g_str_equal (key, "action/file_save_as"))
    r->save |= off;
  else if (g_str_equal (key, "openwith"))
    r->handlers |= off;
  else if (g_str_equal (key, "camera"))
    r->camera |= off;
  else if (g_str_equal (key, "location"))
    r->location |= off;
}

static void
load (void)
{
  Restrictions r = { 0 };

  limen_qt_kdeglobals_foreach (on_entry, &r);
  current = r;
  applying = TRUE;
  g_debug ("Lockdown: printing %s, save %s, handlers %s, camera %s, location %s", r.printing ? "off" : "on",
           r.save ? "off" : "on", r.handlers ? "off" : "on", r.camera ? "off" : "on", r.location ? "off" : "on");
  limen_dbus_impl_portal_lockdown_set_disable_printing (lockdown, r.printing);
  limen_dbus_impl_portal_lockdown_set_disable_save_to_disk (lockdown, r.save);
  limen_dbus_impl_portal_lockdown_set_disable_application_handlers (lockdown, r.handlers);
  limen_dbus_impl_portal_lockdown_set_disable_camera (lockdown, r.camera);
  limen_dbus_impl_portal_lockdown_set_disable_location (lockdown, r.location);
  applying = FALSE;
}

static gboolean
reload (gpointer user_data)
{
  reload_id = 0;
  load ();
  return G_SOURCE_REMOVE;
}

static void
on_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event, gpointer user_data)
{
  if (event == G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED)
    return;
  if (reload_id)
    g_source_remove (reload_id);
  reload_id = g_timeout_add (100, reload, NULL);
}

/* The properties are read-write in the interface, and GDBus skeletons give no hook to
 * refuse a Properties.Set: a value written from the bus is put back at once. */
static void
on_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  /* Notifications may arrive after the setter returned (frozen queue): only a value
   * that differs from the Kiosk one needs undoing, which also ends the loop. */
  if (applying ||
      (limen_dbus_impl_portal_lockdown_get_disable_printing (lockdown) == current.printing &&
       limen_dbus_impl_portal_lockdown_get_disable_save_to_disk (lockdown) == current.save &&
       limen_dbus_impl_portal_lockdown_get_disable_application_handlers (lockdown) == current.handlers &&
       limen_dbus_impl_portal_lockdown_get_disable_camera (lockdown) == current.camera &&
       limen_dbus_impl_portal_lockdown_get_disable_location (lockdown) == current.location))
    return;
  g_warning ("Lockdown property %s written from the bus; the Kiosk configuration stays in force", pspec->name);
  applying = TRUE;
  limen_dbus_impl_portal_lockdown_set_disable_printing (lockdown, current.printing);
  limen_dbus_impl_portal_lockdown_set_disable_save_to_disk (lockdown, current.save);
  limen_dbus_impl_portal_lockdown_set_disable_application_handlers (lockdown, current.handlers);
  limen_dbus_impl_portal_lockdown_set_disable_camera (lockdown, current.camera);
  limen_dbus_impl_portal_lockdown_set_disable_location (lockdown, current.location);
  applying = FALSE;
}

gboolean
limen_kde_lockdown_check_printing (GError **error)
{
  if (lockdown && limen_dbus_impl_portal_lockdown_get_disable_printing (lockdown))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Printing is disabled by the administrator");
      return FALSE;
    }
  return TRUE;
}

GDBusInterfaceSkeleton *
limen_kde_lockdown_new (void)
{
  char **paths;

  lockdown = limen_dbus_impl_portal_lockdown_skeleton_new ();
  load ();
  g_signal_connect (lockdown, "notify", G_CALLBACK (on_notify), NULL);
  monitors = g_ptr_array_new_with_free_func (g_object_unref);
  paths = limen_qt_kdeglobals_paths ();
  for (char **p = paths; p && *p; p++)
    {
      g_autoptr(GFile) file = g_file_new_for_path (*p);
      GFileMonitor *monitor = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, NULL);

      if (!monitor)
        continue;
      g_signal_connect (monitor, "changed", G_CALLBACK (on_changed), NULL);
      g_ptr_array_add (monitors, monitor);
    }
  limen_qt_strv_free (paths);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (lockdown));
}
