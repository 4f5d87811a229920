/* Limen — org.freedesktop.impl.portal.Lockdown from KDE's Kiosk keys.
 *
 * The administrator's [KDE Action Restrictions] in kdeglobals (the whole cascade, so
 * /etc/xdg/kdeglobals with [$i] wins) decide; a key set to false disables:
 *   print/system, action/print                → disable-printing
 *   action/file_save, action/file_save_as     → disable-save-to-disk
 *   openwith                                  → disable-application-handlers
 *   camera, location (Limen's own keys)       → disable-camera, disable-location
 * The properties follow kdeglobals live. The Kiosk configuration, not a D-Bus peer, is
 * the authority: a Properties.Set is refused with Error.NotAllowed naming the key to
 * change instead (the interface XML says readwrite; no value is ever written).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>

#include "errors.h"
#include "kdeglobals.h"

#define GROUP "KDE Action Restrictions"

typedef struct {
  gboolean printing, save, handlers, camera, location;
} Restrictions;

static LimenDbusImplPortalLockdown *lockdown;
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

  limen_kdeglobals_foreach (on_entry, &r);
  g_debug ("Lockdown: printing %s, save %s, handlers %s, camera %s, location %s", r.printing ? "off" : "on",
           r.save ? "off" : "on", r.handlers ? "off" : "on", r.camera ? "off" : "on", r.location ? "off" : "on");
  limen_dbus_impl_portal_lockdown_set_disable_printing (lockdown, r.printing);
  limen_dbus_impl_portal_lockdown_set_disable_save_to_disk (lockdown, r.save);
  limen_dbus_impl_portal_lockdown_set_disable_application_handlers (lockdown, r.handlers);
  limen_dbus_impl_portal_lockdown_set_disable_camera (lockdown, r.camera);
  limen_dbus_impl_portal_lockdown_set_disable_location (lockdown, r.location);
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

/* The Kiosk key an administrator edits for each property. */
static const char *
kiosk_key (const char *property)
{
  static const char *const keys[][2] = {
    { "disable-printing", "print/system" },
    { "disable-save-to-disk", "action/file_save_as" },
    { "disable-application-handlers", "openwith" },
    { "disable-camera", "camera" },
    { "disable-location", "location" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    if (g_str_equal (property, keys[i][0]))
      return keys[i][1];
  return NULL;
}

/* Properties.Set: GDBus has already checked that the property exists and the value's
 * type; the answer is always no, with where the value really comes from. */
static gboolean
refuse_set (GDBusConnection *connection, const char *sender, const char *object_path,
            const char *interface_name, const char *property_name, GVariant *value,
            GError **error, gpointer user_data)
{
  const char *key = kiosk_key (property_name);

  g_message ("Lockdown: %s refused a write to %s", sender ? sender : "(unknown)", property_name);
  if (key)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                 "Lockdown property %s is read-only: its value comes from the KDE Kiosk key %s=false "
                 "in [" GROUP "] of kdeglobals", property_name, key);
  else
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                 "Lockdown property %s is read-only: KDE has no Kiosk key for it, so it is never set",
                 property_name);
  return FALSE;
}

/* The generated skeleton writes the GObject property on a Set; ours swaps in a vtable
 * whose set_property refuses, so a write is never reported as done. */
typedef LimenDbusImplPortalLockdownSkeleton LimenKdeLockdown;
typedef LimenDbusImplPortalLockdownSkeletonClass LimenKdeLockdownClass;
G_DEFINE_TYPE (LimenKdeLockdown, limen_kde_lockdown_skeleton, LIMEN_DBUS_TYPE_IMPL_PORTAL_LOCKDOWN_SKELETON)

static GDBusInterfaceVTable *(*parent_get_vtable) (GDBusInterfaceSkeleton *skeleton);

static GDBusInterfaceVTable *
get_vtable (GDBusInterfaceSkeleton *skeleton)
{
  static GDBusInterfaceVTable vtable;

  vtable = *parent_get_vtable (skeleton);
  vtable.set_property = refuse_set;
  return &vtable;
}

static void
limen_kde_lockdown_skeleton_class_init (LimenKdeLockdownClass *klass)
{
  GDBusInterfaceSkeletonClass *skeleton_class = G_DBUS_INTERFACE_SKELETON_CLASS (klass);

  parent_get_vtable = skeleton_class->get_vtable;
  skeleton_class->get_vtable = get_vtable;
}

static void
limen_kde_lockdown_skeleton_init (LimenKdeLockdown *self)
{
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
  lockdown = g_object_new (limen_kde_lockdown_skeleton_get_type (), NULL);
  load ();
  monitors = limen_kdeglobals_watch (G_CALLBACK (on_changed), NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (lockdown));
}
