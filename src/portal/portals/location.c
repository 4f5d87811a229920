/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each session gets its own GeoClue2 client, so each app's accuracy and thresholds are its
 * own, and closing the session (or the app leaving) stops that client. */
#include "location.h"

#include <glib/gi18n.h>

#include "access.h"
#include "backend.h"
#include "session.h"

#define GC_NAME "org.freedesktop.GeoClue2"
#define GC_MANAGER_PATH "/org/freedesktop/GeoClue2/Manager"
#define GC_MANAGER "org.freedesktop.GeoClue2.Manager"
#define GC_CLIENT "org.freedesktop.GeoClue2.Client"
#define GC_LOCATION "org.freedesktop.GeoClue2.Location"
#define GC_TIMEOUT_MS 5000
#define TABLE "location"

static LimenDbusPortalLocation *skeleton;

static gboolean
validate_accuracy (const LimenOption *o, GVariant *v, GError **error)
{
  if (g_variant_get_uint32 (v) > 5)
    {
      limen_option_set_error (error, o->key, "must be 0 (none) to 5 (exact)");
      return FALSE;
    }
  return TRUE;
}

static const LimenOption session_options[] = {
  { "session_handle_token", "s", limen_validate_token, 0 },
  { "distance-threshold", "u", NULL, 0 },
  { "time-threshold", "u", NULL, 0 },
  { "accuracy", "u", validate_accuracy, 0 },
  { NULL }
};

typedef struct {
  LimenSession    *session;   /* not owned: this struct is the session's data */
  GDBusConnection *system;
  char            *client;    /* GeoClue client path once made */
  guint            updated_id;
  guint32          distance, time, accuracy;
  gboolean         started;
} Loc;

/* Stop the GeoClue client and drop the signal match (which holds a session reference). */
static void
loc_stop (Loc *l)
{
  if (l->system && l->updated_id)
    g_dbus_connection_signal_unsubscribe (l->system, l->updated_id);
  l->updated_id = 0;
  if (l->system && l->client)
    g_dbus_connection_call (l->system, GC_NAME, l->client, GC_CLIENT, "Stop", NULL, NULL,
                            G_DBUS_CALL_FLAGS_NONE, GC_TIMEOUT_MS, NULL, NULL, NULL);
  g_clear_pointer (&l->client, g_free);
}

static void
on_session_closed (LimenSession *session, gpointer user_data)
{
  Loc *l = limen_session_get_data (session);

  if (l)
    loc_stop (l);
}

static void
loc_free (Loc *l)
{
  loc_stop (l);
  g_clear_object (&l->system);
  g_free (l->client);
  g_free (l);
}

/* Portal accuracy (none…exact) → GeoClue's GClueAccuracyLevel. */
static guint32
geoclue_level (guint32 accuracy)
{
  static const guint32 map[] = { 0, 1, 4, 5, 6, 8 };

  return map[MIN (accuracy, 5)];
}

static gboolean
handle_create_session (LimenDbusPortalLocation *object, GDBusMethodInvocation *invocation, GVariant *options,
                       LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  Loc *l;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, session_options, NULL) ||
      (session = limen_session_new (invocation, info, options, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  l = g_new0 (Loc, 1);
  l->session = session;
  l->accuracy = 5;
  g_variant_lookup (options, "distance-threshold", "u", &l->distance);
  g_variant_lookup (options, "time-threshold", "u", &l->time);
  g_variant_lookup (options, "accuracy", "u", &l->accuracy);
  limen_session_set_data (session, l, (GDestroyNotify) loc_free);
  limen_session_set_closed_func (session, on_session_closed, NULL);
  limen_dbus_portal_location_complete_create_session (object, invocation, limen_session_get_path (session));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

typedef struct {
  LimenRequest *request;
  LimenSession *session;
} StartCall;

static void
start_call_free (StartCall *s)
{
  limen_request_unref (s->request);
  limen_session_unref (s->session);
  g_free (s);
}

static void
fail (StartCall *s, const char *why)
{
  g_message ("Location for '%s' not started: %s",
             limen_app_info_get_id (limen_request_get_app_info (s->request)), why);
  limen_request_respond (s->request, LIMEN_RESPONSE_OTHER, NULL);
  start_call_free (s);
}

static void
on_location_props (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LimenSession *session = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) props = NULL;
  GVariantBuilder b;
  const char *keys[] = { "Latitude", "Longitude", "Altitude", "Accuracy", "Speed", "Heading", "Description",
                         "Timestamp", NULL };

  if (reply && limen_session_is_open (session))
    {
      g_variant_get (reply, "(@a{sv})", &props);
      g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
      for (guint i = 0; keys[i]; i++)
        {
          g_autoptr(GVariant) value = g_variant_lookup_value (props, keys[i], NULL);

          if (value)
            g_variant_builder_add (&b, "{sv}", keys[i], value);
        }
      /* Only the session's owner hears where it is. */
      g_dbus_connection_emit_signal (g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (skeleton)),
                                     limen_session_get_sender (session), LIMEN_PORTAL_PATH,
                                     "org.freedesktop.portal.Location", "LocationUpdated",
                                     g_variant_new ("(o@a{sv})", limen_session_get_path (session),
                                                    g_variant_builder_end (&b)),
                                     NULL);
    }
  limen_session_unref (session);
}

static void
on_location_updated (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                     const char *signal, GVariant *parameters, gpointer user_data)
{
  LimenSession *session = user_data;
  const char *old_path, *new_path;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(oo)")) || !limen_session_is_open (session))
    return;
  g_variant_get (parameters, "(&o&o)", &old_path, &new_path);
  g_dbus_connection_call (connection, GC_NAME, new_path, "org.freedesktop.DBus.Properties", "GetAll",
                          g_variant_new ("(s)", GC_LOCATION), G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE,
                          GC_TIMEOUT_MS, NULL, on_location_props, limen_session_ref (session));
}

static void
on_client_started (GObject *source, GAsyncResult *result, gpointer user_data)
{
  StartCall *s = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply == NULL)
    {
      fail (s, error->message);
      return;
    }
  limen_request_respond (s->request, LIMEN_RESPONSE_SUCCESS, NULL);
  start_call_free (s);
}

static void
set_client_property (Loc *l, const char *name, GVariant *value)
{
  g_dbus_connection_call (l->system, GC_NAME, l->client, "org.freedesktop.DBus.Properties", "Set",
                          g_variant_new ("(ssv)", GC_CLIENT, name, value), NULL, G_DBUS_CALL_FLAGS_NONE,
                          GC_TIMEOUT_MS, NULL, NULL, NULL);
}

static void
on_client (GObject *source, GAsyncResult *result, gpointer user_data)
{
  StartCall *s = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  Loc *l = limen_session_get_data (s->session);
  const char *app_id = limen_app_info_get_id (limen_request_get_app_info (s->request));

  if (reply == NULL || !limen_session_is_open (s->session))
    {
      fail (s, reply == NULL ? error->message : "session closed");
      return;
    }
  g_variant_get (reply, "(o)", &l->client);
  /* Property Sets go out before Start on the same connection, so GeoClue sees them first. */
  set_client_property (l, "DesktopId", g_variant_new_string (*app_id ? app_id : "limen-portal"));
  set_client_property (l, "DistanceThreshold", g_variant_new_uint32 (l->distance));
  set_client_property (l, "TimeThreshold", g_variant_new_uint32 (l->time));
  set_client_property (l, "RequestedAccuracyLevel", g_variant_new_uint32 (geoclue_level (l->accuracy)));
  l->updated_id = g_dbus_connection_signal_subscribe (l->system, GC_NAME, GC_CLIENT, "LocationUpdated", l->client,
                                                      NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_location_updated,
                                                      limen_session_ref (s->session),
                                                      (GDestroyNotify) limen_session_unref);
  g_dbus_connection_call (l->system, GC_NAME, l->client, GC_CLIENT, "Start", NULL, NULL, G_DBUS_CALL_FLAGS_NONE,
                          GC_TIMEOUT_MS, NULL, on_client_started, s);
}

static void
on_access (LimenRequest *request, gboolean allowed, gpointer user_data)
{
  StartCall *s = user_data;
  Loc *l = limen_session_get_data (s->session);
  g_autoptr(GError) error = NULL;

  if (!allowed)
    {
      fail (s, "not allowed");
      return;
    }
  if (l->system == NULL)
    l->system = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, &error);
  if (l->system == NULL)
    {
      fail (s, "no system bus, so no GeoClue: location is not available");
      return;
    }
  /* No auto-start wait beyond the timeout: a missing GeoClue is an answer, not a hang. */
  g_dbus_connection_call (l->system, GC_NAME, GC_MANAGER_PATH, GC_MANAGER, "GetClient", NULL,
                          G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NONE, GC_TIMEOUT_MS, NULL, on_client, s);
}

static gboolean
handle_start (LimenDbusPortalLocation *object, GDBusMethodInvocation *invocation, const char *session_handle,
              const char *parent_window, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenRequest) request = NULL;
  LimenSession *session;
  Loc *l;
  StartCall *s;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  session = limen_session_lookup (session_handle, g_dbus_method_invocation_get_sender (invocation));
  if (session == NULL || (l = limen_session_get_data (session)) == NULL || l->started)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for session_handle: no such session, or started");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  request = limen_request_new (invocation, info, options, &error);
  if (request == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  l->started = TRUE;
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(o)", limen_request_get_path (request)));
  s = g_new0 (StartCall, 1);
  s->request = limen_request_ref (request);
  s->session = limen_session_ref (session);
  limen_access_check (context, request, parent_window, TABLE, TABLE,
                      &(LimenAccessDialog) {
                        .title = _("Allow this app to know your location?"),
                        .subtitle = limen_app_info_get_id (info),
                        .body = _("It will be told where you are for as long as it keeps asking."),
                        .grant_label = _("Allow"),
                        .deny_label = _("Deny"),
                        .icon = "find-location",
                      },
                      on_access, s);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_location_new (LimenPortalContext *context)
{
  skeleton = limen_dbus_portal_location_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_location_set_version (skeleton, 1);
  g_signal_connect (skeleton, "handle-create-session", G_CALLBACK (handle_create_session), context);
  g_signal_connect (skeleton, "handle-start", G_CALLBACK (handle_start), context);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
