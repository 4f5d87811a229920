/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The InputCapture backend's signals reach only the owner of the session they name, checked
 * against the signal's option table and only in the states the specification allows them
 * in: when a person's capture starts and ends tells a lot about them, and a late signal must
 * never contradict what the app itself asked (Disable, Release). An option that fails its
 * check is left out, not the signal: the app must still learn that its capture started or
 * ended when a backend mistyped a detail (cursor_position as (ii), seen from a backend). */
#include "input-capture.h"

#include "backend.h"
#include "option-tables.h"
#include "portal.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.InputCapture"
#define PORTAL_IFACE "org.freedesktop.portal.InputCapture"

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

/* Activated, Deactivated, Disabled, ZonesChanged of a started session of @backend, checked. */
static GVariant *
relay_signal (const char *backend, const char *signal, GVariant *params, const char **destination)
{
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) raw = NULL;
  g_autofree char *what = NULL;
  const LimenOption *table = NULL;
  const char *session_path;
  LimenCapture *capture;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(oa{sv})")))
    return NULL;
  g_variant_get (params, "(&o@a{sv})", &session_path, &raw);
  capture = limen_input_capture_lookup (session_path);
  if (capture == NULL || !limen_session_is_open (capture->session) || capture->state != LIMEN_CAPTURE_STARTED ||
      g_strcmp0 (capture->backend, backend) != 0)
    return NULL;
  if ((table = signal_table (signal)) == NULL)
    return NULL;
  what = g_strdup_printf ("%s from %s for %s", signal, backend, session_path);
  limen_options_filter_lenient (raw, &options, what, table);
  if (!signal_allowed (capture, signal))
    return NULL;
  *destination = limen_session_get_sender (capture->session);
  return g_variant_new ("(o@a{sv})", session_path, g_variant_builder_end (&options));
}

static const LimenBackendRelay input_capture_relay = {
  .impl_interface = IMPL_IFACE,
  .portal_interface = PORTAL_IFACE,
  .signal = relay_signal,
  /* The backend's impl Sessions went with it, and its EIS servers: the app learns that its
   * sessions are closed and may create new ones. */
  .vanished = limen_input_capture_close_backend,
};

void
limen_input_capture_relay (GDBusConnection *connection, const char *backend)
{
  limen_backend_relay (connection, &input_capture_relay, backend);
}
