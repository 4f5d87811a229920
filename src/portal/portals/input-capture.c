/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * InputCapture: an app (a software KVM) asks that the pointer and keyboard be handed to it
 * when the pointer crosses one of its barriers; the compositor's backend decides when, and the
 * input itself travels over the EIS socket of ConnectToEIS. Works in front of any backend
 * that implements org.freedesktop.impl.portal.InputCapture (KWin 5.27 has none, so limen-kde
 * does not offer it).
 *
 * What this side adds to the backend: a session does nothing before the person allowed it
 * (CreateSession, or CreateSession2 + Start), barriers are checked (non-zero unique ids,
 * the zone_set GetZones answered last) before a backend sees them and one that is not a
 * horizontal or vertical line is failed whatever the backend says, Enable/Disable/Release
 * wait for ConnectToEIS, and the backend's signals reach only
 * the session's owner, checked and only in the states the specification allows them in
 * (input-capture-relay.c). A session of CreateSession2 may ask for the clipboard before its
 * Start (Clipboard.RequestClipboard, screencast/clipboard.c); Start then answers
 * clipboard_enabled. */
#include "portal.h"

#include <string.h>
#include <sys/stat.h>
#include <gio/gunixfdlist.h>

#include "backend.h"
#include "driver.h"
#include "input-capture.h"
#include "option-tables.h"
#include "permission-store.h"
#include "restore-tokens.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.InputCapture"
#define PORTAL_IFACE "org.freedesktop.portal.InputCapture"
#define INPUT_CAPTURE_VERSION 2
#define RESTORE_TABLE "input-capture"
#define MAX_BARRIERS 256
#define MAX_ZONES 64
#define RESTORE_TOKEN_MAX 4096

static LimenDbusPortalInputCapture *skeleton;
static GDBusConnection *connection;
static GHashTable *captures;   /* session path → LimenCapture (removed when the session closes) */

/* ---- properties from the backend ---- */

/* SupportedCapabilities is the backend's; the version is min(backend's, 2), a backend without
 * one being a version 1 backend (CreateSession2 and Start need version 2). */
static void
on_backend_properties (GVariant *props, gpointer user_data)
{
  guint32 value, version = 1;

  if (skeleton == NULL)
    return;
  if (g_variant_lookup (props, "SupportedCapabilities", "u", &value))
    limen_dbus_portal_input_capture_set_supported_capabilities (skeleton, value);
  g_variant_lookup (props, "version", "u", &version);
  limen_dbus_portal_input_capture_set_version (skeleton, CLAMP (version, 1, INPUT_CAPTURE_VERSION));
}

/* ---- captures ---- */

static void
capture_free (LimenCapture *capture)
{
  g_free (capture->backend);
  g_free (capture->restore_token);
  g_clear_pointer (&capture->transfers, g_hash_table_unref);
  g_free (capture);
}

static void
on_session_closed (LimenSession *session, gpointer user_data)
{
  g_hash_table_remove (captures, limen_session_get_path (session));
}

/* Make @session an input-capture session held by @backend. */
static LimenCapture *
capture_attach (LimenSession *session, const char *backend, LimenCaptureState state)
{
  LimenCapture *capture = g_new0 (LimenCapture, 1);

  capture->session = session;
  capture->backend = g_strdup (backend);
  capture->state = state;
  limen_session_set_data (session, capture, (GDestroyNotify) capture_free);
  limen_session_set_closed_func (session, on_session_closed, NULL);
  g_hash_table_replace (captures, (gpointer) limen_session_get_path (session), capture);
  limen_input_capture_relay (connection, backend);
  return capture;
}

/* The capture of a session the driver found for its caller; it must be one of ours. */
static LimenCapture *
capture_of (LimenSession *session, GError **error)
{
  LimenCapture *capture = session ? g_hash_table_lookup (captures, limen_session_get_path (session)) : NULL;

  if (capture == NULL || capture->session != session || !limen_session_is_open (session))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for session_handle: not an input capture session");
      return NULL;
    }
  return capture;
}

LimenCapture *
limen_input_capture_lookup (const char *path)
{
  LimenCapture *capture = captures ? g_hash_table_lookup (captures, path) : NULL;

  return capture && limen_session_is_open (capture->session) ? capture : NULL;
}

void
limen_input_capture_close_backend (const char *backend)
{
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  LimenCapture *capture;

  g_hash_table_iter_init (&iter, captures);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &capture))
    if (g_strcmp0 (capture->backend, backend) == 0)
      g_ptr_array_add (gone, limen_session_ref (capture->session));
  for (guint i = 0; i < gone->len; i++)
    {
      g_message ("InputCapture backend %s left: closing %s", backend, limen_session_get_path (g_ptr_array_index (gone, i)));
      limen_session_close (g_ptr_array_index (gone, i));
    }
}

/* The capture, if it has started (the person allowed it). */
static LimenCapture *
started_capture (LimenSession *session, GError **error)
{
  LimenCapture *capture = capture_of (session, error);

  if (capture && capture->state != LIMEN_CAPTURE_STARTED)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           capture->state == LIMEN_CAPTURE_NEW ? "The session has not been started (Start)"
                                                         : "The session is still being set up");
      return NULL;
    }
  return capture;
}

/* The specification makes capabilities required (and the table non-zero). */
static gboolean
asked_capabilities (LimenCall *call, guint32 *asked, GError **error)
{
  if (!g_variant_lookup (limen_call_get_options (call), "capabilities", "u", asked))
    {
      limen_option_set_error (error, "capabilities", "required");
      return FALSE;
    }
  return TRUE;
}

/* Go on, or refuse with @error (taken). */
static void
step_return (GTask *task, GError *error)
{
  if (error)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/* What the backend granted: never more than was asked (unknown bits included: a later
 * specification's capability, for an app that knows it).
 * FALSE when the backend left it out (it is required). */
static gboolean
granted_capabilities (LimenCall *call, LimenCapture *capture)
{
  GVariant *results = limen_call_get_results (call);
  guint32 granted;

  if (results == NULL || !g_variant_lookup (results, "capabilities", "u", &granted))
    {
      g_message ("InputCapture backend %s answered without capabilities", capture->backend);
      return FALSE;
    }
  capture->capabilities = granted & capture->asked;
  return TRUE;
}

/* ---- CreateSession (version 1): session and question at once ---- */

/* Before the handle: capabilities given, parent_window sane. */
static void
check_create (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  GError *error = NULL;
  guint32 asked;

  if (asked_capabilities (call, &asked, &error))
    limen_check_parent_window (g_variant_get_string (window, NULL), &error);
  step_return (task, error);
}

/* After the handle: the new session is ours while the backend asks. */
static void
attach_created (LimenCall *call, GTask *task)
{
  LimenSession *session = limen_call_get_session (call);
  g_autoptr(GError) error = NULL;
  const char *backend = limen_backend_find (limen_call_get_context (call), IMPL_IFACE, &error);
  LimenCapture *capture;

  if (backend == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  capture = capture_attach (session, backend, LIMEN_CAPTURE_STARTING);
  g_variant_lookup (limen_call_get_options (call), "capabilities", "u", &capture->asked);
  limen_backend_read_properties (connection, backend, IMPL_IFACE, on_backend_properties, NULL);
  g_task_return_boolean (task, TRUE);
}

/* On response 0: started with what was granted (the driver adds session_handle). */
static void
created (LimenCall *call, GTask *task)
{
  LimenCapture *capture = capture_of (limen_call_get_session (call), NULL);

  if (capture == NULL || !granted_capabilities (call, capture))
    limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
  else
    {
      capture->state = LIMEN_CAPTURE_STARTED;
      limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS,
                              g_variant_new_parsed ("{'capabilities': <%u>}", capture->capabilities));
    }
  g_task_return_boolean (task, TRUE);
}

/* ---- Start (version 2) ---- */

/* A Start in flight, and whether the backend was asked yet. */
typedef struct {
  LimenSession *session;
  gboolean      asked;
} StartHold;

/* Start may run once: when the backend was asked and it did not end in a started session,
 * the session is useless and is closed (the app hears Closed), whether the person refused,
 * the backend failed or the request was closed. Refused before that (its Request could not
 * be made), the app may try again. */
static void
start_done (StartHold *hold)
{
  LimenCapture *capture = capture_of (hold->session, NULL);

  if (capture && capture->state == LIMEN_CAPTURE_STARTING && hold->asked)
    limen_session_close (hold->session);
  else if (capture && capture->state == LIMEN_CAPTURE_STARTING)
    capture->state = LIMEN_CAPTURE_NEW;
  limen_session_unref (hold->session);
  g_free (hold);
}

/* After the handle: from here on, an unfinished Start ends the session. */
static void
start_asked (LimenCall *call, GTask *task)
{
  StartHold *hold = limen_call_get_data (call);

  hold->asked = TRUE;
  g_task_return_boolean (task, TRUE);
}

/* The app's restore token (any string; one that is not a live token of this app is ignored
 * later, the same way whatever it is, so the answer never tells whether it exists). */
static gboolean
caller_restore_token (LimenCall *call, const char **token, GError **error)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (limen_call_get_caller_options (call), "restore_token", NULL);

  *token = NULL;
  if (value == NULL)
    return TRUE;
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      limen_option_set_error (error, "restore_token", "must be a string (s)");
      return FALSE;
    }
  if (strlen (g_variant_get_string (value, NULL)) > RESTORE_TOKEN_MAX)
    {
      limen_option_set_error (error, "restore_token", "too long");
      return FALSE;
    }
  g_variant_lookup (limen_call_get_caller_options (call), "restore_token", "&s", token);
  return TRUE;
}

/* Before the handle: a session of CreateSession2 not started yet, capabilities given; a good
 * restore token becomes the backend's restore_data. */
static void
check_start (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 1);
  g_autoptr(GVariant) data = NULL;
  LimenSession *session = limen_call_get_session (call);
  GError *error = NULL;
  const char *token = NULL;
  LimenCapture *capture;
  StartHold *hold;
  guint32 asked;

  if ((capture = capture_of (session, &error)) == NULL ||
      !limen_check_parent_window (g_variant_get_string (window, NULL), &error) ||
      !asked_capabilities (call, &asked, &error) || !caller_restore_token (call, &token, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (capture->state != LIMEN_CAPTURE_NEW)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s",
                               capture->state == LIMEN_CAPTURE_CREATING
                                 ? "The session is still being created"
                                 : "The session was already started (Start runs once, on a session of CreateSession2)");
      return;
    }
  capture->asked = asked;
  capture->persist_mode = 0;
  g_variant_lookup (limen_call_get_options (call), "persist_mode", "u", &capture->persist_mode);
  capture->state = LIMEN_CAPTURE_STARTING;
  hold = g_new0 (StartHold, 1);
  hold->session = limen_session_ref (session);
  limen_call_set_data (call, hold, (GDestroyNotify) start_done);
  if (token && (data = limen_restore_token_take (RESTORE_TABLE, limen_app_info_get_id (limen_call_get_app_info (call)),
                                                 limen_call_get_sender (call), token)) != NULL)
    limen_call_set_option (call, "restore_data", g_steal_pointer (&data));
  g_task_return_boolean (task, TRUE);
}

/* On response 0: started with what was granted, and a restore token when the backend allows
 * the permission to persist (never longer than the app asked). */
static void
started (LimenCall *call, GTask *task)
{
  LimenCapture *capture = capture_of (limen_call_get_session (call), NULL);
  GVariant *results = limen_call_get_results (call);
  g_autoptr(GVariant) data = NULL;
  g_autofree char *token = NULL;
  GVariantBuilder b;
  guint32 mode = 0;

  if (capture == NULL || !granted_capabilities (call, capture))
    {
      limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
      g_task_return_boolean (task, TRUE);
      return;
    }
  capture->state = LIMEN_CAPTURE_STARTED;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "capabilities", g_variant_new_uint32 (capture->capabilities));
  /* Only for a session that asked (Clipboard.RequestClipboard before Start), whatever the
   * backend says. */
  if (capture->clipboard_requested)
    {
      gboolean clipboard = FALSE;

      g_variant_lookup (results, "clipboard_enabled", "b", &clipboard);
      capture->clipboard_enabled = clipboard;
      g_variant_builder_add (&b, "{sv}", "clipboard_enabled", g_variant_new_boolean (clipboard));
    }
  data = g_variant_lookup_value (results, "restore_data", G_VARIANT_TYPE ("(suv)"));
  if (data && g_variant_lookup (results, "persist_mode", "u", &mode) &&
      (token = limen_restore_token_store (RESTORE_TABLE, limen_app_info_get_id (limen_call_get_app_info (call)),
                                          limen_call_get_sender (call), MIN (mode, capture->persist_mode), data,
                                          capture->capabilities)) != NULL)
    {
      g_variant_builder_add (&b, "{sv}", "restore_token", g_variant_new_string (token));
      g_free (capture->restore_token);
      capture->restore_token = g_strdup (token);
    }
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, g_variant_builder_end (&b));
  g_task_return_boolean (task, TRUE);
}

/* ---- GetZones ---- */

/* Before the handle (GetZones and the barriers' check): the session has started. */
static void
check_started (LimenCall *call, GTask *task)
{
  GError *error = NULL;

  started_capture (limen_call_get_session (call), &error);
  step_return (task, error);
}

/* The backend's zones, each with a size; NULL when unusable. */
static GVariant *
checked_zones (GVariant *zones)
{
  GVariantIter iter;
  guint32 w, h;
  gint32 x, y;

  if (zones == NULL)
    return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(uuii)"), NULL, 0));
  if (g_variant_n_children (zones) > MAX_ZONES)
    return NULL;
  g_variant_iter_init (&iter, zones);
  while (g_variant_iter_next (&iter, "(uuii)", &w, &h, &x, &y))
    if (w == 0 || h == 0 || w > G_MAXINT32 || h > G_MAXINT32)
      return NULL;
  return g_variant_ref (zones);
}

/* On response 0: the zones pass checked, and their serial becomes the one barriers need. */
static void
zones_answered (LimenCall *call, GTask *task)
{
  LimenCapture *capture = capture_of (limen_call_get_session (call), NULL);
  GVariant *results = limen_call_get_results (call);
  g_autoptr(GVariant) zones = results ? g_variant_lookup_value (results, "zones", G_VARIANT_TYPE ("a(uuii)")) : NULL;
  g_autoptr(GVariant) checked = checked_zones (zones);
  guint32 zone_set;

  if (capture == NULL || results == NULL || checked == NULL || !g_variant_lookup (results, "zone_set", "u", &zone_set))
    {
      g_message ("InputCapture backend answered GetZones without usable zones or zone_set");
      limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
      g_task_return_boolean (task, TRUE);
      return;
    }
  capture->has_zones = TRUE;
  capture->zones_stale = FALSE;
  capture->zone_set = zone_set;
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS,
                          g_variant_new_parsed ("{'zones': <%@a(uuii)>, 'zone_set': <%u>}",
                                                checked, zone_set));
  g_task_return_boolean (task, TRUE);
}

/* ---- SetPointerBarriers ---- */

typedef struct {
  GVariant *barriers;    /* aa{sv}: all of them, each with only the known keys, for the backend */
  GArray   *forwarded;   /* their ids */
  GArray   *failed;      /* ids failed here too: not a horizontal or vertical line */
} Barriers;

static void
barriers_free (Barriers *b)
{
  g_clear_pointer (&b->barriers, g_variant_unref);
  g_array_unref (b->forwarded);
  g_array_unref (b->failed);
  g_free (b);
}

static gboolean
has_id (GArray *ids, guint32 id)
{
  for (guint i = 0; i < ids->len; i++)
    if (g_array_index (ids, guint32, i) == id)
      return TRUE;
  return FALSE;
}

/* One barrier dict: its known keys, barrier_id and position required, ids unique. A line
 * that is neither horizontal nor vertical (or only a point) is a failed barrier, as the
 * specification reports a barrier it cannot set, whatever the backend says; it still goes
 * to the backend with the others, as the reference passes every barrier on. Anything else
 * wrong is the app's error. */
static gboolean
check_barrier (Barriers *out, GVariantBuilder *list, GVariant *dict, guint index, GError **error)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) kept = NULL;
  gint32 x1, y1, x2, y2;
  guint32 id;

  if (!limen_options_filter (dict, &b, error, limen_options_input_capture_barrier, NULL))
    {
      g_prefix_error (error, "barriers[%u]: ", index);
      return FALSE;
    }
  kept = g_variant_ref_sink (g_variant_builder_end (&b));
  if (!g_variant_lookup (kept, "barrier_id", "u", &id) || !g_variant_lookup (kept, "position", "(iiii)", &x1, &y1, &x2, &y2))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for barriers[%u]: barrier_id (u) and position (iiii) are required", index);
      return FALSE;
    }
  if (has_id (out->forwarded, id))      /* every barrier is forwarded, the failed ones too */
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for barriers[%u]: barrier_id %u is used twice", index, id);
      return FALSE;
    }
  if ((x1 == x2) == (y1 == y2))
    g_array_append_val (out->failed, id);
  g_array_append_val (out->forwarded, id);
  g_variant_builder_add_value (list, kept);
  return TRUE;
}

/* The zone_set must be the serial GetZones answered last for this session. */
static gboolean
check_zone_set (LimenCapture *capture, guint32 zone_set, GError **error)
{
  if (!capture->has_zones)
    g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                         "Call GetZones first: zone_set is the serial it answers");
  else if (zone_set != capture->zone_set)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                 "Invalid value for zone_set: %u is not the zone set GetZones answered last (%u)",
                 zone_set, capture->zone_set);
  else
    return TRUE;
  return FALSE;
}

/* Before the handle: a started session, the current zone_set, every barrier checked. */
static void
check_barriers (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) list = limen_call_get_arg (call, 2);
  g_autoptr(GVariant) zone_set = limen_call_get_arg (call, 3);
  g_auto(GVariantBuilder) kept = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  GError *error = NULL;
  Barriers *out;
  LimenCapture *capture;
  gsize n = g_variant_n_children (list);

  if ((capture = started_capture (limen_call_get_session (call), &error)) == NULL ||
      !check_zone_set (capture, g_variant_get_uint32 (zone_set), &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (n > MAX_BARRIERS)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid value for barriers: at most %d barriers", MAX_BARRIERS);
      return;
    }
  out = g_new0 (Barriers, 1);
  out->forwarded = g_array_new (FALSE, FALSE, sizeof (guint32));
  out->failed = g_array_new (FALSE, FALSE, sizeof (guint32));
  limen_call_set_data (call, out, (GDestroyNotify) barriers_free);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) dict = g_variant_get_child_value (list, i);

      if (!check_barrier (out, &kept, dict, i, &error))
        {
          g_task_return_error (task, error);
          return;
        }
    }
  out->barriers = g_variant_ref_sink (g_variant_builder_end (&kept));
  /* The backend's arguments after (handle, session_handle, app_id). */
  limen_call_set_impl_args (call, g_variant_new ("(@a{sv}@aa{sv}u)", limen_call_get_options (call), out->barriers,
                                                 capture->zone_set), NULL);
  g_task_return_boolean (task, TRUE);
}

static GVariant *
failed_barriers (GArray *a, GArray *b)
{
  GVariantBuilder ids;

  g_variant_builder_init (&ids, G_VARIANT_TYPE ("au"));
  for (guint i = 0; a && i < a->len; i++)
    g_variant_builder_add (&ids, "u", g_array_index (a, guint32, i));
  for (guint i = 0; b && i < b->len; i++)
    g_variant_builder_add (&ids, "u", g_array_index (b, guint32, i));
  return g_variant_new_parsed ("{'failed_barriers': <%@au>}", g_variant_builder_end (&ids));
}

/* After the handle: zones that changed since GetZones make every barrier fail, as the
 * specification says (the app hears ZonesChanged and asks again); the backend is not asked. */
static void
check_zones_current (LimenCall *call, GTask *task)
{
  LimenCapture *capture = capture_of (limen_call_get_session (call), NULL);
  Barriers *out = limen_call_get_data (call);

  if (capture && capture->zones_stale)
    {
      limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, failed_barriers (out->forwarded, NULL));
      g_task_return_boolean (task, FALSE);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

/* On response 0: the backend's failures (only among the barriers it got) and ours. Barriers
 * suspend capture until the next Enable. */
static void
barriers_answered (LimenCall *call, GTask *task)
{
  LimenCapture *capture = capture_of (limen_call_get_session (call), NULL);
  Barriers *out = limen_call_get_data (call);
  GVariant *results = limen_call_get_results (call);
  g_autoptr(GVariant) theirs = results ? g_variant_lookup_value (results, "failed_barriers", G_VARIANT_TYPE ("au")) : NULL;
  g_autoptr(GArray) refused = g_array_new (FALSE, FALSE, sizeof (guint32));
  GVariantIter iter;
  guint32 id;

  if (theirs)
    {
      g_variant_iter_init (&iter, theirs);
      while (g_variant_iter_next (&iter, "u", &id))
        if (has_id (out->forwarded, id) && !has_id (out->failed, id) && !has_id (refused, id))
          g_array_append_val (refused, id);
    }
  if (capture)
    capture->trigger = LIMEN_TRIGGER_DISABLED;
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, failed_barriers (out->failed, refused));
  g_task_return_boolean (task, TRUE);
}

static const LimenStep create_pre[] = {
  { check_create, LIMEN_STEP_BEFORE_HANDLE }, { attach_created, LIMEN_STEP_AFTER_HANDLE }, { NULL }
};
static const LimenStep create_post[] = { { created }, { NULL } };
static const LimenStep start_pre[] = {
  { check_start, LIMEN_STEP_BEFORE_HANDLE }, { start_asked, LIMEN_STEP_AFTER_HANDLE }, { NULL }
};
static const LimenStep start_post[] = { { started }, { NULL } };
static const LimenStep zones_pre[] = { { check_started, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep zones_post[] = { { zones_answered }, { NULL } };
static const LimenStep barriers_pre[] = {
  { check_barriers, LIMEN_STEP_BEFORE_HANDLE }, { check_zones_current, LIMEN_STEP_AFTER_HANDLE }, { NULL }
};
static const LimenStep barriers_post[] = { { barriers_answered }, { NULL } };

static const LimenDriverMethod input_capture_methods[] = {
  { .method = "CreateSession", .kind = LIMEN_CALL_CREATE_SESSION,
    .options = limen_options_input_capture_create_session, .impl_interface = IMPL_IFACE,
    .impl_method = "CreateSession", .pre = create_pre, .post = create_post,
    .flags = LIMEN_DRIVER_SESSION_RESULTS | LIMEN_DRIVER_SESSION_HANDLE_PATH },
  { .method = "Start", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_input_capture_start,
    .impl_interface = IMPL_IFACE, .impl_method = "Start", .pre = start_pre, .post = start_post },
  { .method = "GetZones", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_input_capture_request,
    .impl_interface = IMPL_IFACE, .impl_method = "GetZones", .pre = zones_pre, .post = zones_post,
    .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK },
  { .method = "SetPointerBarriers", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_input_capture_request,
    .impl_interface = IMPL_IFACE, .impl_method = "SetPointerBarriers", .pre = barriers_pre,
    .post = barriers_post, .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK, .flags = LIMEN_DRIVER_NO_IMPL_OPTIONS },
  { NULL }
};

/* ---- CreateSession2 (version 2): a session, no question yet, no Request ---- */

typedef struct {
  GDBusMethodInvocation *invocation;
  LimenSession          *session;
} Pending;

static void
on_created2 (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Pending *p = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  LimenCapture *capture = capture_of (p->session, NULL);

  if (reply == NULL || capture == NULL)
    {
      gboolean old = g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD);

      if (error)
        g_dbus_error_strip_remote_error (error);
      g_message ("InputCapture.CreateSession2 for %s failed: %s", limen_session_get_path (p->session),
                 error ? error->message : "the session was closed");
      /* Gone before the caller hears of the failure. */
      limen_session_discard (p->session);
      g_dbus_method_invocation_return_error (p->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED, "%s",
                                             old ? "The input capture backend implements version 1 only: use CreateSession"
                                                 : "The input capture backend could not create the session");
    }
  else
    {
      capture->state = LIMEN_CAPTURE_NEW;
      g_dbus_method_invocation_return_value (p->invocation,
                                             g_variant_new_parsed ("({'session_handle': <%o>},)",
                                                                   limen_session_get_path (p->session)));
    }
  limen_session_unref (p->session);
  g_free (p);
}

static gboolean
handle_create_session2 (LimenDbusPortalInputCapture *object, GDBusMethodInvocation *invocation,
                        GVariant *options, LimenPortalContext *context)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  const char *backend;
  LimenSession *session;
  Pending *p;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, limen_options_input_capture_create_session2, NULL) ||
      (backend = limen_backend_find (context, IMPL_IFACE, &error)) == NULL ||
      (session = limen_session_new (invocation, info, options, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_session_set_backend (session, backend);
  capture_attach (session, backend, LIMEN_CAPTURE_CREATING);
  limen_backend_read_properties (connection, backend, IMPL_IFACE, on_backend_properties, NULL);
  p = g_new0 (Pending, 1);
  p->invocation = invocation;
  p->session = session;
  g_dbus_connection_call (context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE, "CreateSession2",
                          g_variant_new ("(os@a{sv})", limen_session_get_path (session), limen_app_info_get_id (info),
                                         g_variant_builder_end (&b)),
                          G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK, NULL,
                          on_created2, p);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- Enable, Disable, Release: answered at once, as the reference does ---- */

/* The caller's started capture that has its EIS connection (the specification orders
 * ConnectToEIS before Enable), with @options checked into @b. */
static LimenCapture *
plain_capture (GDBusMethodInvocation *invocation, const char *session_handle, GVariant *options,
               const LimenOption *table, GVariantBuilder *b, LimenSession **session, GError **error)
{
  LimenCapture *capture;

  if (!limen_options_filter (options, b, error, table, NULL) ||
      (*session = limen_driver_lookup_session (invocation, session_handle, error)) == NULL ||
      (capture = started_capture (*session, error)) == NULL)
    return NULL;
  if (!capture->eis_connected)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Connect to EIS first (ConnectToEIS)");
      return NULL;
    }
  return capture;
}

static void
on_plain_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree char *method = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply == NULL)
    g_debug ("InputCapture backend %s: %s", method, error->message);
}

/* Enable, Disable or Release (@method, the handler's data). */
static gboolean
handle_plain (LimenDbusPortalInputCapture *object, GDBusMethodInvocation *invocation, const char *session_handle,
              GVariant *options, const char *method)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  g_autoptr(GError) error = NULL;
  gboolean release = g_str_equal (method, "Release");
  LimenCapture *capture = plain_capture (invocation, session_handle, options,
                                    release ? limen_options_input_capture_release : limen_options_input_capture_plain,
                                    &b, &session, &error);

  if (capture == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* The app may race the backend's signals: these are never refused for the trigger state,
   * only the state moves as the specification says. */
  if (g_str_equal (method, "Enable"))
    capture->trigger = capture->trigger == LIMEN_TRIGGER_DISABLED ? LIMEN_TRIGGER_ENABLED : capture->trigger;
  else if (!release)
    capture->trigger = LIMEN_TRIGGER_DISABLED;
  else if (capture->trigger == LIMEN_TRIGGER_ACTIVE)
    capture->trigger = LIMEN_TRIGGER_ENABLED;
  g_dbus_connection_call (connection, capture->backend, LIMEN_PORTAL_PATH, IMPL_IFACE, method,
                          g_variant_new ("(os@a{sv})", session_handle,
                                         limen_app_info_get_id (limen_session_get_app_info (session)),
                                         g_variant_builder_end (&b)),
                          NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, on_plain_reply,
                          g_strdup (method));
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- ConnectToEIS: the backend's socket, passed through ---- */

/* The one fd of a ConnectToEIS reply, if it is a socket; else why not. */
static const char *
eis_fd_problem (GVariant *reply, GUnixFDList *fds)
{
  struct stat st;
  gint32 index;

  if (reply == NULL || fds == NULL || g_unix_fd_list_get_length (fds) != 1)
    return "it gave no fd";
  g_variant_get (reply, "(h)", &index);
  if (index != 0)
    return "its answer names no fd it sent";
  if (fstat (g_unix_fd_list_peek_fds (fds, NULL)[0], &st) != 0 || !S_ISSOCK (st.st_mode))
    return "its fd is not a socket";
  return NULL;
}

static void
on_eis (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Pending *p = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source), &fds,
                                                                               result, &error);
  LimenCapture *capture = capture_of (p->session, NULL);
  const char *problem = capture ? eis_fd_problem (reply, fds) : "the session was closed";

  if (problem)
    {
      g_message ("No EIS for %s: %s%s%s", limen_session_get_path (p->session), problem,
                 error ? ": " : "", error ? error->message : "");
      if (capture)
        capture->eis_connected = FALSE;
      g_dbus_method_invocation_return_error (p->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                             "The input capture backend gave no EIS connection for this session");
    }
  else
    limen_dbus_portal_input_capture_complete_connect_to_eis (skeleton, p->invocation, fds, g_variant_new_handle (0));
  limen_session_unref (p->session);
  g_free (p);
}

static gboolean
handle_connect_to_eis (LimenDbusPortalInputCapture *object, GDBusMethodInvocation *invocation,
                       GUnixFDList *in_fds, const char *session_handle, GVariant *options,
                       LimenPortalContext *context)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  LimenSession *session = NULL;
  LimenCapture *capture = NULL;
  Pending *p;

  if (!limen_options_filter (options, &b, &error, limen_options_input_capture_plain, NULL) ||
      (session = limen_driver_lookup_session (invocation, session_handle, &error)) == NULL ||
      (capture = started_capture (session, &error)) == NULL || capture->eis_connected)
    {
      if (capture && error == NULL)
        g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "This session is already connected to EIS");
      g_clear_pointer (&session, limen_session_unref);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* Taken now, so a second call while the first is with the backend is refused too. */
  capture->eis_connected = TRUE;
  p = g_new0 (Pending, 1);
  p->invocation = invocation;
  p->session = session;
  g_dbus_connection_call_with_unix_fd_list (connection, capture->backend, LIMEN_PORTAL_PATH, IMPL_IFACE,
                                            "ConnectToEIS",
                                            g_variant_new ("(os@a{sv})", session_handle,
                                                           limen_app_info_get_id (limen_session_get_app_info (session)),
                                                           g_variant_builder_end (&b)),
                                            G_VARIANT_TYPE ("(h)"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                            LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, on_eis, p);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The person took back a kept restore token (the permissions page, limen-permissions,
 * flatpak permission-reset): the session it was issued for ends now, as a screen cast's does
 * (screencast/cast-session.c): the backend's session is closed, the app hears Closed. */
static void
on_store_changed (const char *table, const char *id, GVariant *perms, gpointer user_data)
{
  g_autoptr(GPtrArray) ending = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  LimenCapture *capture;

  g_hash_table_iter_init (&iter, captures);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &capture))
    {
      const char *app_id = limen_app_info_get_id (limen_session_get_app_info (capture->session));
      g_autofree const char **row = limen_permission_row (perms, app_id);

      if (capture->restore_token && g_str_equal (capture->restore_token, id) && row == NULL
          && limen_session_is_open (capture->session))
        g_ptr_array_add (ending, limen_session_ref (capture->session));
    }
  for (guint i = 0; i < ending->len; i++)
    {
      LimenSession *session = g_ptr_array_index (ending, i);

      g_debug ("Input capture restore token of %s revoked: the session is closed", limen_session_get_path (session));
      limen_session_close (session);
    }
}

/* Sessions of input capture held by the InputCapture backend; its signals to their owners. */
GDBusInterfaceSkeleton *
limen_input_capture_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  connection = context->connection;
  captures = g_hash_table_new (g_str_hash, g_str_equal);
  limen_restore_tokens_init (context->connection);
  limen_permission_store_watch (context->connection, RESTORE_TABLE, on_store_changed, NULL);
  skeleton = limen_dbus_portal_input_capture_skeleton_new ();
  /* Until the backend has told, the version every backend has (CreateSession works on all). */
  limen_driver_offer (context, skeleton, 1, input_capture_methods);
  g_signal_connect (skeleton, "handle-create-session2", G_CALLBACK (handle_create_session2), context);
  g_signal_connect (skeleton, "handle-enable", G_CALLBACK (handle_plain), (gpointer) "Enable");
  g_signal_connect (skeleton, "handle-disable", G_CALLBACK (handle_plain), (gpointer) "Disable");
  g_signal_connect (skeleton, "handle-release", G_CALLBACK (handle_plain), (gpointer) "Release");
  g_signal_connect (skeleton, "handle-connect-to-eis", G_CALLBACK (handle_connect_to_eis), context);
  limen_backend_watch_properties (context, IMPL_IFACE, on_backend_properties, NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
