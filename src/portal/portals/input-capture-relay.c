/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The InputCapture backend's signals reach only the owner of the session they name, checked
 * against the signal's option table and only in the states the specification allows them in:
 * when a person's capture starts and ends tells a lot about them, and a late signal must
 * never contradict what the app itself asked (Disable, Release). */
#include "input-capture.h"

#include "option-tables.h"
#include "portal.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.InputCapture"
#define PORTAL_IFACE "org.freedesktop.portal.InputCapture"

/* A backend we hear signals from, and who owns its name now. */
typedef struct {
  char  *name;
  char  *owner;
  guint  subscription;
  guint  watch;
} Backend;

static GDBusConnection *connection;
static GHashTable *backends;   /* name → Backend */

/* The options table of a backend signal; NULL for a signal the portal does not have. */
static const LimenOption *
signal_table (const char *signal)
{
  if (g_str_equal (signal, "Activated"))
    return limen_options_input_capture_activated;
  if (g_str_equal (signal, "Deactivated"))
    return limen_options_input_capture_deactivated;
  if (g_str_equal (signal, "Disabled"))
    return limen_options_input_capture_plain;
  if (g_str_equal (signal, "ZonesChanged"))
    return limen_options_input_capture_zones_changed;
  return NULL;
}

/* Whether a (well-formed) @signal may reach the app now, moving the trigger state as it goes:
 * Activated only while enabled, Deactivated only while active, Disabled only while enabled or
 * active (so a Disable or Release of the app is never contradicted by a late signal). */
static gboolean
signal_allowed (LimenCapture *capture, const char *signal)
{
  LimenCaptureTrigger before = capture->trigger;

  if (g_str_equal (signal, "Activated"))
    capture->trigger = before == LIMEN_TRIGGER_ENABLED ? LIMEN_TRIGGER_ACTIVE : before;
  else if (g_str_equal (signal, "Deactivated"))
    capture->trigger = before == LIMEN_TRIGGER_ACTIVE ? LIMEN_TRIGGER_ENABLED : before;
  else if (g_str_equal (signal, "Disabled"))
    capture->trigger = LIMEN_TRIGGER_DISABLED;
  else
    {
      capture->zones_stale = TRUE;
      return TRUE;
    }
  return capture->trigger != before;
}

static void
on_backend_signal (GDBusConnection *c, const char *sender, const char *path, const char *iface,
                   const char *signal, GVariant *params, gpointer user_data)
{
  Backend *b = user_data;
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) raw = NULL;
  g_autoptr(GError) error = NULL;
  const LimenOption *table = NULL;
  const char *session_path;
  LimenCapture *capture;

  /* Only the name's owner speaks for the backend (a unicast signal names any sender). */
  if (g_strcmp0 (sender, b->owner) != 0 || !g_variant_is_of_type (params, G_VARIANT_TYPE ("(oa{sv})")))
    return;
  g_variant_get (params, "(&o@a{sv})", &session_path, &raw);
  capture = limen_input_capture_lookup (session_path);
  if (capture == NULL || !limen_session_is_open (capture->session) || capture->state != LIMEN_CAPTURE_STARTED ||
      g_strcmp0 (capture->backend, b->name) != 0)
    return;
  if ((table = signal_table (signal)) == NULL)
    return;
  if (!limen_options_filter (raw, &options, &error, table, NULL))
    {
      g_message ("%s from %s for %s dropped: %s", signal, b->name, session_path, error->message);
      return;
    }
  if (!signal_allowed (capture, signal))
    return;
  if (!g_dbus_connection_emit_signal (connection, limen_session_get_sender (capture->session), LIMEN_PORTAL_PATH,
                                      PORTAL_IFACE, signal,
                                      g_variant_new ("(o@a{sv})", session_path, g_variant_builder_end (&options)),
                                      &error))
    g_debug ("%s not delivered: %s", signal, error->message);
}

static void
on_backend_appeared (GDBusConnection *c, const char *name, const char *owner, gpointer user_data)
{
  Backend *b = user_data;

  g_free (b->owner);
  b->owner = g_strdup (owner);
}

/* The backend's impl Sessions went with it, and its EIS servers: the app learns that its
 * sessions are closed and may create new ones. */
static void
on_backend_vanished (GDBusConnection *c, const char *name, gpointer user_data)
{
  Backend *b = user_data;

  g_clear_pointer (&b->owner, g_free);
  limen_input_capture_close_backend (b->name);
}

void
limen_input_capture_relay (GDBusConnection *bus, const char *name)
{
  Backend *b;

  if (backends == NULL)
    backends = g_hash_table_new (g_str_hash, g_str_equal);
  if (g_hash_table_contains (backends, name))
    return;
  connection = bus;
  b = g_new0 (Backend, 1);
  b->name = g_strdup (name);
  b->subscription = g_dbus_connection_signal_subscribe (connection, name, IMPL_IFACE, NULL, LIMEN_PORTAL_PATH,
                                                        NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_backend_signal, b, NULL);
  b->watch = g_bus_watch_name_on_connection (connection, name, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                             on_backend_appeared, on_backend_vanished, b, NULL);
  g_hash_table_insert (backends, b->name, b);
}
