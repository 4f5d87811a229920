/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each session gets its own GeoClue2 client, so each app's accuracy and thresholds are its
 * own, and closing the session (or the app leaving) stops that client.
 *
 * The permission is kept as the reference keeps it, so answers carry over either way: the
 * entry (location, location) of an app holds [ACCURACY, LAST-USED], ACCURACY one of NONE
 * (refused), COUNTRY, CITY, NEIGHBORHOOD, STREET, EXACT (the most the app is told), LAST-USED
 * the monotonic time of the last Start in µs. A plain "yes"/"no"/"ask" is read too. A host
 * app is not asked, as by the reference: it can ask GeoClue itself. */
#include "portal.h"

#include <glib/gi18n.h>

#include "access.h"
#include "driver.h"
#include "session.h"

#define GC_NAME "org.freedesktop.GeoClue2"
#define GC_MANAGER_PATH "/org/freedesktop/GeoClue2/Manager"
#define GC_MANAGER "org.freedesktop.GeoClue2.Manager"
#define GC_CLIENT "org.freedesktop.GeoClue2.Client"
#define GC_LOCATION "org.freedesktop.GeoClue2.Location"
#define GC_TIMEOUT_MS 5000
#define TABLE "location"

/* The reference's names of the portal's accuracies 0 (none) … 5 (exact). */
static const char * const accuracy_names[] = { "NONE", "COUNTRY", "CITY", "NEIGHBORHOOD", "STREET", "EXACT" };

/* The accuracy a stored entry names, or -1. */
static int
stored_accuracy (const char * const *stored)
{
  for (guint i = 0; stored && stored[0] && i < G_N_ELEMENTS (accuracy_names); i++)
    if (g_str_equal (stored[0], accuracy_names[i]))
      return (int) i;
  return -1;
}

static LimenPermission
read_permission (const char * const *stored)
{
  int accuracy = stored_accuracy (stored);

  if (accuracy < 0)
    return limen_permission_from_string (stored[0]);
  return accuracy == 0 ? LIMEN_PERMISSION_NO : LIMEN_PERMISSION_YES;
}

static const LimenAccessFormat location_format = {
  .read = read_permission,
  .granted = (const char * const[]) { "EXACT", "0", NULL },
  .denied = (const char * const[]) { "NONE", "0", NULL },
};

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

static void
on_stopped (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply == NULL)
    g_debug ("GeoClue client Stop: %s", error->message);
}

/* Stop the GeoClue client and drop the signal match (which holds a session reference). The
 * call keeps the system bus connection alive until GeoClue answers: GIO holds the bus
 * only weakly, and ours may be its last reference, dropped right after this. */
static void
loc_stop (Loc *l)
{
  if (l->system && l->updated_id)
    g_dbus_connection_signal_unsubscribe (l->system, l->updated_id);
  l->updated_id = 0;
  if (l->system && l->client)
    g_dbus_connection_call (l->system, GC_NAME, l->client, GC_CLIENT, "Stop", NULL, NULL,
                            G_DBUS_CALL_FLAGS_NONE, GC_TIMEOUT_MS, NULL, on_stopped, NULL);
  g_clear_pointer (&l->client, g_free);
}

static void
on_session_closed (LimenSession *session, gpointer user_data)
{
  Loc *l = limen_session_get_data (session);

  if (l)
    loc_stop (l);
}

/* Started sessions of sandboxed apps (Loc*, not owned): the ones a revocation ends. */
static GPtrArray *sandboxed_running;

static void
loc_free (Loc *l)
{
  if (sandboxed_running)
    g_ptr_array_remove_fast (sandboxed_running, l);
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

/* The in-process set-up of CreateSession: the session's own client settings. */
static void
set_up_session (LimenCall *call, GTask *task)
{
  LimenSession *session = limen_call_get_session (call);
  GVariant *options = limen_call_get_options (call);
  Loc *l = g_new0 (Loc, 1);

  l->session = session;
  l->accuracy = 5;
  g_variant_lookup (options, "distance-threshold", "u", &l->distance);
  g_variant_lookup (options, "time-threshold", "u", &l->time);
  g_variant_lookup (options, "accuracy", "u", &l->accuracy);
  limen_session_set_data (session, l, (GDestroyNotify) loc_free);
  limen_session_set_closed_func (session, on_session_closed, NULL);
  g_task_return_boolean (task, TRUE);
}

/* Start's GeoClue conversation ends here: a reason is a refusal (Response 2). */
static void
start_done (GTask *task, const char *why)
{
  if (why)
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "%s", why);
  else
    {
      limen_call_set_results (g_task_get_task_data (task), LIMEN_RESPONSE_SUCCESS, NULL);
      g_task_return_boolean (task, TRUE);
    }
  g_object_unref (task);
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
  GTask *task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  start_done (task, reply ? NULL : error->message);
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
  GTask *task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  LimenSession *session = limen_call_get_session (call);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  Loc *l = limen_session_get_data (session);
  const char *app_id = limen_app_info_get_id (limen_call_get_app_info (call));

  if (reply == NULL || !limen_session_is_open (session))
    {
      start_done (task, reply == NULL ? error->message : "session closed");
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
                                                      limen_session_ref (session),
                                                      (GDestroyNotify) limen_session_unref);
  g_dbus_connection_call (l->system, GC_NAME, l->client, GC_CLIENT, "Start", NULL, NULL, G_DBUS_CALL_FLAGS_NONE,
                          GC_TIMEOUT_MS, NULL, on_client_started, task);
}

static void get_client (GTask *task);

/* The app's stored accuracy caps the session's; its last use is now. */
static void
on_stored (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  Loc *l = limen_session_get_data (limen_call_get_session (call));
  const char *app_id = limen_app_info_get_id (limen_call_get_app_info (call));
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **stored = NULL;
  int accuracy = -1;

  if (reply)
    {
      g_variant_get_child (reply, 0, "@a{sas}", &perms);
      if (g_variant_lookup (perms, app_id, "^a&s", &stored))
        accuracy = stored_accuracy (stored);
    }
  if (accuracy > 0)
    {
      g_autofree char *now = g_strdup_printf ("%" G_GINT64_FORMAT, g_get_monotonic_time ());
      const char *entry[] = { accuracy_names[accuracy], now, NULL };

      if ((guint32) accuracy < l->accuracy)
        {
          g_debug ("Location of %s: accuracy lowered from %s to the stored %s", app_id,
                   accuracy_names[l->accuracy], accuracy_names[accuracy]);
          l->accuracy = accuracy;
        }
      g_dbus_connection_call (G_DBUS_CONNECTION (source), LIMEN_STORE_NAME, LIMEN_STORE_PATH,
                              LIMEN_STORE_NAME, "SetPermission",
                              g_variant_new ("(sbss^as)", TABLE, TRUE, TABLE, app_id, entry),
                              NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
    }
  get_client (task);
}

/* The in-process impl of Start: a GeoClue client of the session's own, for a sandboxed
 * app within the accuracy it was granted. */
static void
start_client (LimenCall *call, GTask *task)
{
  LimenAppInfo *info = limen_call_get_app_info (call);

  g_task_set_task_data (task, call, NULL);
  if (limen_app_info_is_host (info))
    {
      get_client (g_object_ref (task));
      return;
    }
  if (sandboxed_running == NULL)
    sandboxed_running = g_ptr_array_new ();
  g_ptr_array_add (sandboxed_running, limen_session_get_data (limen_call_get_session (call)));
  g_dbus_connection_call (limen_call_get_context (call)->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH,
                          LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", TABLE, TABLE), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, GC_TIMEOUT_MS, NULL, on_stored, g_object_ref (task));
}

/* Takes @task's reference. */
static void
get_client (GTask *task)
{
  LimenCall *call = g_task_get_task_data (task);
  Loc *l = limen_session_get_data (limen_call_get_session (call));
  g_autoptr(GError) error = NULL;

  if (l->system == NULL)
    l->system = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, &error);
  if (l->system == NULL)
    {
      start_done (task, "no system bus, so no GeoClue: location is not available");
      return;
    }
  /* No auto-start wait beyond the timeout: a missing GeoClue is an answer, not a hang. */
  g_dbus_connection_call (l->system, GC_NAME, GC_MANAGER_PATH, GC_MANAGER, "GetClient", NULL,
                          G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NONE, GC_TIMEOUT_MS, NULL, on_client, task);
}

/* Before the handle: a session starts once. */
static void
check_not_started (LimenCall *call, GTask *task)
{
  Loc *l = limen_session_get_data (limen_call_get_session (call));

  if (l == NULL || l->started)
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                             "Invalid value for session_handle: no such session, or started");
  else
    g_task_return_boolean (task, TRUE);
}

/* After the handle: this Start counts, and the user (or the stored answer) decides. */
static void
check_access (LimenCall *call, GTask *task)
{
  Loc *l = limen_session_get_data (limen_call_get_session (call));
  g_autoptr(GVariant) window = limen_call_get_arg (call, 1);

  l->started = TRUE;
  if (limen_app_info_is_host (limen_call_get_app_info (call)))
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  limen_access_step (call, task, g_variant_get_string (window, NULL), TABLE, LIMEN_ACCESS_ASK,
                     &(LimenAccessDialog) {
                       .title = _("Allow this app to know your location?"),
                       .body = _("It will be told where you are for as long as it keeps asking."),
                       .grant_label = _("Allow"),
                       .deny_label = _("Deny"),
                       .icon = "find-location",
                     });
}

static const LimenStep start_pre[] = {
  { check_not_started, LIMEN_STEP_BEFORE_HANDLE },
  { check_access, LIMEN_STEP_AFTER_HANDLE },
  { NULL }
};

static const LimenDriverMethod location_methods[] = {
  { .method = "CreateSession", .kind = LIMEN_CALL_NEW_SESSION, .options = session_options, .run = set_up_session },
  { .method = "Start", .kind = LIMEN_CALL_IN_SESSION, .pre = start_pre, .run = start_client },
  { NULL }
};

/* The location entry changed (the permissions page, flatpak permission-set, GNOME's or
 * Plasma 6's pages): a running session of an app no longer allowed is closed, its GeoClue
 * client stopped; the app hears Closed. */
static void
on_store_changed (const char *table, const char *id, GVariant *perms, gpointer user_data)
{
  g_autoptr(GPtrArray) ending = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);

  if (sandboxed_running == NULL || !g_str_equal (id, TABLE))
    return;
  for (guint i = 0; i < sandboxed_running->len; i++)
    {
      Loc *l = g_ptr_array_index (sandboxed_running, i);
      const char *app_id = limen_app_info_get_id (limen_session_get_app_info (l->session));
      g_autofree const char **stored = limen_permission_row (perms, app_id);

      if (limen_session_is_open (l->session)
          && !(stored && stored[0] && read_permission (stored) != LIMEN_PERMISSION_NO))
        g_ptr_array_add (ending, limen_session_ref (l->session));
    }
  for (guint i = 0; i < ending->len; i++)
    {
      LimenSession *session = g_ptr_array_index (ending, i);

      g_debug ("Location taken back from '%s': session %s closed",
               limen_app_info_get_id (limen_session_get_app_info (session)), limen_session_get_path (session));
      limen_session_close (session);
    }
}

/* CreateSession/Start through GeoClue2 on the system bus, after the app's location
 * permission; without GeoClue, Start answers 2 at once and says so in the log. */
GDBusInterfaceSkeleton *
limen_location_new (LimenPortalContext *context)
{
  skeleton = limen_dbus_portal_location_skeleton_new ();
  limen_access_set_format (TABLE, &location_format);
  limen_driver_offer (context, skeleton, 1, location_methods);
  limen_permission_store_watch (context->connection, TABLE, on_store_changed, NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
