/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * RemoteDesktop: the person grants device types in the backend's dialog at Start; from then
 * on each input event is checked here (session started, device granted, no EIS connection
 * in use, values sane) before it reaches the backend, so a backend never sees input it
 * would have to refuse itself. Events are forwarded without waiting for the backend. */
#include "remote-desktop.h"

#include <math.h>
#include <gio/gunixfdlist.h>

#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "cast-session.h"
#include "restore-tokens.h"

#define REMOTE_DESKTOP_VERSION 2

static LimenDbusPortalRemoteDesktop *skeleton;

/* The backend's AvailableDeviceTypes becomes ours (read by backend.c without activating it). */
static void
on_backend_properties (GVariant *props, gpointer user_data)
{
  guint32 value;

  if (skeleton && g_variant_lookup (props, "AvailableDeviceTypes", "u", &value))
    limen_dbus_portal_remote_desktop_set_available_device_types (skeleton, value & LIMEN_DEVICE_ALL);
}

/* CreateSession, post: the backend runs now, so AvailableDeviceTypes can be read. */
static void
on_session_created (LimenCall *call, GTask *task)
{
  LimenCast *cast = limen_cast_lookup_path (limen_session_get_path (limen_call_get_session (call)));

  if (cast)
    limen_backend_read_properties (limen_call_get_context (call)->connection, cast->backend,
                                   LIMEN_REMOTE_DESKTOP_IMPL, on_backend_properties, NULL);
  g_task_return_boolean (task, TRUE);
}

/* SelectDevices, before the handle: the session can take it, a restore token is exchanged
 * for the backend's restore data, and the asked device types are kept as the most Start
 * may grant. */
static void
check_select_devices (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  const char *token = NULL;
  LimenCast *cast;

  if (!limen_cast_caller_token (call, &token, &error) || (cast = limen_cast_begin_select (call, &error)) == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (cast->kind != LIMEN_CAST_REMOTE_DESKTOP || cast->devices_selected)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s",
                               cast->devices_selected ? "Devices were already selected for this session"
                                                      : "Not a remote desktop session");
      return;
    }
  /* None asked (no types, or 0) is every type, as the specification's default. */
  if (!g_variant_lookup (limen_call_get_options (call), "types", "u", &cast->devices) || cast->devices == 0)
    cast->devices = LIMEN_DEVICE_ALL;
  limen_cast_restore (call, cast, LIMEN_RESTORE_TABLE_REMOTE_DESKTOP, token);
  g_task_return_boolean (task, TRUE);
}

static const LimenStep select_pre[] = { { check_select_devices, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep selected_post[] = { { limen_cast_step_selected }, { NULL } };
static const LimenStep created_post[] = { { limen_cast_step_created }, { on_session_created }, { NULL } };
static const LimenStep start_pre[] = { { limen_cast_step_check_start, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep started_post[] = { { limen_cast_step_started }, { NULL } };

static const LimenDriverMethod methods[] = {
  { .method = "CreateSession", .kind = LIMEN_CALL_CREATE_SESSION, .options = limen_options_screen_cast_create_session,
    .impl_interface = LIMEN_REMOTE_DESKTOP_IMPL, .impl_method = "CreateSession", .post = created_post,
    .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK },
  { .method = "SelectDevices", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_remote_desktop_select_devices,
    .impl_interface = LIMEN_REMOTE_DESKTOP_IMPL, .impl_method = "SelectDevices", .pre = select_pre,
    .post = selected_post, .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK },
  { .method = "Start", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_remote_desktop_start,
    .impl_interface = LIMEN_REMOTE_DESKTOP_IMPL, .impl_method = "Start", .pre = start_pre, .post = started_post },
  { NULL }
};

static const char *
device_name (guint32 device)
{
  switch (device)
    {
    case LIMEN_DEVICE_KEYBOARD: return "keyboard";
    case LIMEN_DEVICE_POINTER: return "pointer";
    default: return "touchscreen";
    }
}

/* The session of an input event, if it may send events of @device now. */
static LimenCast *
input_session (GDBusMethodInvocation *invocation, const char *session_handle, guint32 device,
               LimenSession **session, GError **error)
{
  LimenCast *cast = limen_cast_lookup (invocation, session_handle, session, error);

  if (cast == NULL)
    return NULL;
  if (cast->kind != LIMEN_CAST_REMOTE_DESKTOP || cast->state != LIMEN_CAST_STARTED)
    g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                         "Session is not allowed to call Notify methods: input needs a remote desktop "
                         "session that has started");
  else if ((cast->devices & device) == 0)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                 "Session is not allowed to call Notify methods: the %s was not granted to this session",
                 device_name (device));
  else if (cast->eis_connected)
    g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                         "Session is not allowed to call Notify methods: it sends its input through EIS "
                         "(ConnectToEIS)");
  else
    return cast;
  return NULL;
}

/* An absolute position names one of the session's streams and lies within its size, where
 * the backend gave one (as upstream's frontend checks: the backend places it on that stream). */
static gboolean
check_position (LimenCast *cast, guint32 stream, double x, double y, GError **error)
{
  for (guint i = 0; i < cast->nodes->len; i++)
    if (g_array_index (cast->nodes, guint32, i) == stream)
      {
        LimenCastSize size = g_array_index (cast->sizes, LimenCastSize, i);

        if (size.width == 0 || (x >= 0.0 && x < size.width && y >= 0.0 && y < size.height))
          return TRUE;
        g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                     "Invalid position: (%g, %g) is outside stream %u, which is %dx%d", x, y, stream, size.width,
                     size.height);
        return FALSE;
      }
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
               "Invalid position: %u is not a stream of this session", stream);
  return FALSE;
}

/* Check and forward one input event: @args are the method's arguments after
 * (session_handle, options); @stream and the position (@x, @y) are checked when @stream
 * >= 0. */
static gboolean
notify (GDBusMethodInvocation *invocation, const char *session_handle, GVariant *options,
        const LimenOption *table, guint32 device, const char *method, gint64 stream, double x, double y,
        GVariant *args)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  g_autoptr(GVariant) owned = g_variant_ref_sink (args);
  GVariantBuilder params;
  GVariantIter iter;
  GVariant *child;
  LimenCast *cast;

  if (!limen_options_filter (options, &b, &error, table, NULL) ||
      (cast = input_session (invocation, session_handle, device, &session, &error)) == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (stream >= 0 && !check_position (cast, (guint32) stream, x, y, &error))
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  g_variant_builder_init (&params, G_VARIANT_TYPE_TUPLE);
  g_variant_builder_add (&params, "o", limen_session_get_path (session));
  g_variant_builder_add_value (&params, g_variant_builder_end (&b));
  g_variant_iter_init (&iter, owned);
  while ((child = g_variant_iter_next_value (&iter)))
    {
      g_variant_builder_add_value (&params, child);
      g_variant_unref (child);
    }
  g_dbus_connection_call (g_dbus_method_invocation_get_connection (invocation), cast->backend, LIMEN_PORTAL_PATH,
                          LIMEN_REMOTE_DESKTOP_IMPL, method, g_variant_builder_end (&params), NULL,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, NULL);
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Coordinates and deltas must be numbers; a state or axis one of the two the spec knows. */
static gboolean
refuse (GDBusMethodInvocation *invocation, const char *what)
{
  g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                         "Invalid value for %s", what);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

#define FINITE2(a, b) (isfinite (a) && isfinite (b))

static gboolean
handle_motion (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
               double dx, double dy, gpointer c)
{
  if (!FINITE2 (dx, dy))
    return refuse (inv, "dx/dy: not a finite number");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_POINTER, "NotifyPointerMotion", -1, 0, 0,
                 g_variant_new ("(dd)", dx, dy));
}

static gboolean
handle_motion_absolute (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
                        guint stream, double x, double y, gpointer c)
{
  if (!FINITE2 (x, y))
    return refuse (inv, "x/y: not a finite number");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_POINTER, "NotifyPointerMotionAbsolute", stream, x, y,
                 g_variant_new ("(udd)", stream, x, y));
}

static gboolean
handle_button (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
               gint button, guint state, gpointer c)
{
  if (state > 1)
    return refuse (inv, "state: 0 (released) or 1 (pressed)");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_POINTER, "NotifyPointerButton", -1, 0, 0,
                 g_variant_new ("(iu)", button, state));
}

static gboolean
handle_axis (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
             double dx, double dy, gpointer c)
{
  if (!FINITE2 (dx, dy))
    return refuse (inv, "dx/dy: not a finite number");
  return notify (inv, s, opts, limen_options_remote_desktop_notify_pointer_axis, LIMEN_DEVICE_POINTER, "NotifyPointerAxis", -1, 0, 0,
                 g_variant_new ("(dd)", dx, dy));
}

static gboolean
handle_axis_discrete (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
                      guint axis, gint steps, gpointer c)
{
  if (axis > 1)
    return refuse (inv, "axis: 0 (vertical) or 1 (horizontal)");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_POINTER, "NotifyPointerAxisDiscrete", -1, 0, 0,
                 g_variant_new ("(ui)", axis, steps));
}

static gboolean
handle_keycode (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
                gint keycode, guint state, gpointer c)
{
  if (state > 1)
    return refuse (inv, "state: 0 (released) or 1 (pressed)");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_KEYBOARD, "NotifyKeyboardKeycode", -1, 0, 0,
                 g_variant_new ("(iu)", keycode, state));
}

static gboolean
handle_keysym (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
               gint keysym, guint state, gpointer c)
{
  if (state > 1)
    return refuse (inv, "state: 0 (released) or 1 (pressed)");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_KEYBOARD, "NotifyKeyboardKeysym", -1, 0, 0,
                 g_variant_new ("(iu)", keysym, state));
}

static gboolean
handle_touch_down (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
                   guint stream, guint slot, double x, double y, gpointer c)
{
  if (!FINITE2 (x, y))
    return refuse (inv, "x/y: not a finite number");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_TOUCHSCREEN, "NotifyTouchDown", stream, x, y,
                 g_variant_new ("(uudd)", stream, slot, x, y));
}

static gboolean
handle_touch_motion (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
                     guint stream, guint slot, double x, double y, gpointer c)
{
  if (!FINITE2 (x, y))
    return refuse (inv, "x/y: not a finite number");
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_TOUCHSCREEN, "NotifyTouchMotion", stream, x, y,
                 g_variant_new ("(uudd)", stream, slot, x, y));
}

static gboolean
handle_touch_up (LimenDbusPortalRemoteDesktop *o, GDBusMethodInvocation *inv, const char *s, GVariant *opts,
                 guint slot, gpointer c)
{
  return notify (inv, s, opts, limen_options_remote_desktop_notify, LIMEN_DEVICE_TOUCHSCREEN, "NotifyTouchUp", -1, 0, 0,
                 g_variant_new ("(u)", slot));
}

typedef struct {
  GDBusMethodInvocation *invocation;
  LimenSession          *session;
} EisCall;

static void
on_eis (GObject *source, GAsyncResult *result, gpointer user_data)
{
  EisCall *e = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source), &fds,
                                                                               result, &error);
  LimenCast *cast = limen_session_get_data (e->session);
  gint32 index;

  if (reply == NULL || fds == NULL || g_unix_fd_list_get_length (fds) != 1 || !limen_session_is_open (e->session))
    {
      g_debug ("No EIS for %s: %s", limen_session_get_path (e->session), error ? error->message : "no fd");
      cast->eis_connected = FALSE;
      /* The backend's own words follow ours, as the reference passes them on. */
      if (error)
        g_dbus_error_strip_remote_error (error);
      g_dbus_method_invocation_return_error (e->invocation, G_DBUS_ERROR, G_DBUS_ERROR_NOT_SUPPORTED,
                                             "The desktop offers no EIS input for this session%s%s",
                                             error ? ": " : "", error ? error->message : "");
    }
  else
    {
      g_variant_get (reply, "(h)", &index);
      if (index != 0)
        g_dbus_method_invocation_return_error_literal (e->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                       "The backend answered ConnectToEIS without its fd");
      else
        limen_dbus_portal_remote_desktop_complete_connect_to_eis (skeleton, e->invocation, fds,
                                                                  g_variant_new_handle (0));
    }
  limen_session_unref (e->session);
  g_free (e);
}

static gboolean
handle_connect_to_eis (LimenDbusPortalRemoteDesktop *object, GDBusMethodInvocation *invocation,
                       GUnixFDList *in_fds, const char *session_handle, GVariant *options,
                       LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast;
  EisCall *e;

  if (!limen_options_filter (options, &b, &error, limen_options_remote_desktop_connect_to_eis, NULL) ||
      (cast = limen_cast_lookup (invocation, session_handle, &session, &error)) == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (cast->kind != LIMEN_CAST_REMOTE_DESKTOP || cast->state != LIMEN_CAST_STARTED || cast->eis_connected)
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                                     cast->eis_connected
                                                                       ? "This session is already connected to EIS"
                                                                       : "ConnectToEIS needs a remote desktop session that has started"));
  /* Taken now, so a second call while the first is with the backend is refused too. */
  cast->eis_connected = TRUE;
  e = g_new0 (EisCall, 1);
  e->invocation = invocation;
  e->session = g_steal_pointer (&session);
  g_dbus_connection_call_with_unix_fd_list (g_dbus_method_invocation_get_connection (invocation), cast->backend,
                                            LIMEN_PORTAL_PATH, LIMEN_REMOTE_DESKTOP_IMPL, "ConnectToEIS",
                                            g_variant_new ("(os@a{sv})", limen_session_get_path (e->session),
                                                           limen_app_info_get_id (limen_session_get_app_info (e->session)),
                                                           g_variant_builder_end (&b)),
                                            G_VARIANT_TYPE ("(h)"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                            LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, on_eis, e);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_remote_desktop_new (LimenPortalContext *context)
{
  static const struct { const char *signal; GCallback handler; } handlers[] = {
    { "handle-notify-pointer-motion", G_CALLBACK (handle_motion) },
    { "handle-notify-pointer-motion-absolute", G_CALLBACK (handle_motion_absolute) },
    { "handle-notify-pointer-button", G_CALLBACK (handle_button) },
    { "handle-notify-pointer-axis", G_CALLBACK (handle_axis) },
    { "handle-notify-pointer-axis-discrete", G_CALLBACK (handle_axis_discrete) },
    { "handle-notify-keyboard-keycode", G_CALLBACK (handle_keycode) },
    { "handle-notify-keyboard-keysym", G_CALLBACK (handle_keysym) },
    { "handle-notify-touch-down", G_CALLBACK (handle_touch_down) },
    { "handle-notify-touch-motion", G_CALLBACK (handle_touch_motion) },
    { "handle-notify-touch-up", G_CALLBACK (handle_touch_up) },
    { "handle-connect-to-eis", G_CALLBACK (handle_connect_to_eis) },
  };

  if (!limen_backend_is_configured (context, LIMEN_REMOTE_DESKTOP_IMPL))
    return NULL;
  limen_restore_tokens_init (context->connection);
  limen_cast_watch_store (context->connection);
  skeleton = limen_dbus_portal_remote_desktop_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_remote_desktop_set_version (skeleton, REMOTE_DESKTOP_VERSION);
  limen_driver_export (G_DBUS_INTERFACE_SKELETON (skeleton), context, methods);
  for (guint i = 0; i < G_N_ELEMENTS (handlers); i++)
    g_signal_connect (skeleton, handlers[i].signal, handlers[i].handler, context);
  limen_backend_watch_properties (context, LIMEN_REMOTE_DESKTOP_IMPL, on_backend_properties, NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
