/* Limen — org.freedesktop.impl.portal.RemoteDesktop through KWin's fake input.
 *
 * A remote-desktop session is a LimenCast (screencast.h) made by this CreateSession: it
 * may also select screen-cast sources and ask for the clipboard; RemoteDesktop.Start
 * asks the person once for all of it. The Notify* methods reach KWin only for a started
 * session and a device type the person granted.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <math.h>

#include "errors.h"
#include "option-tables.h"

/* Keyboard and pointer where KWin has fake input; touch from its version 2. */
static guint
available_device_types (void)
{
  guint f = limen_kde_wayland_features ();
  guint types = 0;

  if (f & LIMEN_WL_HAS_FAKE_INPUT)
    types |= LIMEN_DEVICE_POINTER;
  if (f & LIMEN_WL_HAS_FAKE_KEYBOARD)
    types |= LIMEN_DEVICE_KEYBOARD;
  if (f & LIMEN_WL_HAS_FAKE_TOUCH)
    types |= LIMEN_DEVICE_TOUCHSCREEN;
  return types;
}

static gboolean
on_create_session (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, const char *app_id, GVariant *options,
                   gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) results = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  if (!limen_kde_check_request_args (handle, app_id, "", &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_screen_cast_create_session, NULL) ||
      !limen_cast_new (invocation, session_handle, app_id, TRUE, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_variant_builder_add (&results, "{sv}", "session_id", g_variant_new_string (session_handle));
  limen_kde_reply_response (invocation, 0, g_variant_builder_end (&results));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_select_devices (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, const char *app_id, GVariant *options,
                   gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GVariant) restore_data = NULL;
  g_autoptr(GVariant) payload = NULL;
  guint available = available_device_types ();
  guint types = available, restored, persist_mode = 0;
  LimenCast *cast = NULL;

  if (!limen_kde_check_request_args (handle, app_id, "", &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_impl_remote_desktop_select_devices, NULL) ||
      !(cast = limen_cast_lookup (invocation, session_handle, &error)))
    {
    }
  else if (!cast->remote)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "This is not a remote-desktop session");
  else if (cast->state != LIMEN_CAST_NEW)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The session was already started");
  if (error)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "types", "u", &types);
  g_variant_lookup (opts, "persist_mode", "u", &persist_mode);
  if (types == 0)
    types = available;
  if ((types & available) == 0)
    {
      g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for option types: none of these devices can be controlled here");
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  cast->device_types = types & available;
  cast->rd_persist_mode = persist_mode;
  restore_data = g_variant_lookup_value (opts, "restore_data", NULL);
  payload = limen_cast_restore_payload (restore_data);
  /* Restore only what was granted before: never more devices than the data names. */
  cast->rd_restore = payload && g_variant_lookup (payload, "devices", "u", &restored) &&
                     (cast->device_types & ~restored) == 0;
  cast->devices_selected = TRUE;
  g_debug ("RemoteDesktop: %s selects devices %u%s", cast->app_id, cast->device_types,
           cast->rd_restore ? ", restorable" : "");
  limen_kde_reply_response (invocation, 0, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_start (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation, const char *handle,
          const char *session_handle, const char *app_id, const char *parent_window, GVariant *options,
          gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  LimenCast *cast = NULL;

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_remote_desktop_start, NULL) ||
      !(cast = limen_cast_lookup (invocation, session_handle, &error)))
    {
    }
  else if (!cast->remote)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "This is not a remote-desktop session");
  else if (!cast->devices_selected && cast->state == LIMEN_CAST_NEW)
    {
      /* As the specification says: no SelectDevices means every available device. */
      cast->device_types = available_device_types ();
      cast->devices_selected = TRUE;
    }
  if (error)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_cast_start (cast, invocation, handle, parent_window);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- Notify*: a started session, a granted device, finite numbers ---- */

static const LimenKdeWayland *
notify_begin (GDBusMethodInvocation *invocation, const char *session_handle, GVariant *options,
              const LimenOption *table, guint device,
              LimenCast **cast_out)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  const LimenKdeWayland *w = NULL;
  LimenCast *cast = NULL;

  if (!limen_options_filter (options, &filtered, &error, table, NULL) ||
      !(cast = limen_cast_lookup (invocation, session_handle, &error)))
    {
    }
  else if (!cast->remote || cast->state != LIMEN_CAST_STARTED)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The remote-desktop session is not started");
  else if (!(cast->devices & device))
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                         device == LIMEN_DEVICE_KEYBOARD ? "Keyboard access was not granted" :
                         device == LIMEN_DEVICE_POINTER ? "Pointer access was not granted" :
                                                          "Touchscreen access was not granted");
  else
    w = limen_kde_wayland_get (&error);
  if (!w)
    {
      limen_invocation_return_gerror (invocation, error);
      return NULL;
    }
  if (cast_out)
    *cast_out = cast;
  return w;
}

static gboolean
check_finite (GDBusMethodInvocation *invocation, double a, double b)
{
  if (isfinite (a) && isfinite (b) && fabs (a) < 1e6 && fabs (b) < 1e6)
    return TRUE;
  g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                              "Coordinates must be finite and within the workspace");
  return FALSE;
}

static void
notify_done (GDBusMethodInvocation *invocation, gboolean sent)
{
  if (sent)
    g_dbus_method_invocation_return_value (invocation, NULL);
  else
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.NotSupported",
                                                "The compositor cannot send this kind of input");
}

/* The stream @node of @cast, or NULL (InvalidArgument answered). */
static LimenCastStream *
find_stream (GDBusMethodInvocation *invocation, LimenCast *cast, guint32 node)
{
  for (guint i = 0; i < cast->streams->len; i++)
    {
      LimenCastStream *s = g_ptr_array_index (cast->streams, i);

      if (s->node == node)
        return s;
    }
  g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                              "No stream of this session has that node id");
  return NULL;
}

/* Stream coordinates to the workspace's, checked to lie inside the stream. */
static gboolean
to_workspace (GDBusMethodInvocation *invocation, LimenCastStream *s, double *x, double *y)
{
  if (!check_finite (invocation, *x, *y))
    return FALSE;
  if (s->source_type != LIMEN_CAST_MONITOR || *x < 0 || *y < 0 || *x > s->width || *y > s->height)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                  s->source_type != LIMEN_CAST_MONITOR ?
                                                  "Absolute positions are only known on screen streams" :
                                                  "The position lies outside the stream");
      return FALSE;
    }
  *x += s->x;
  *y += s->y;
  return TRUE;
}

static gboolean
on_pointer_motion (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                   const char *session_handle, GVariant *options, double dx, double dy, gpointer user_data)
{
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_POINTER, NULL);

  if (w && check_finite (invocation, dx, dy))
    notify_done (invocation, w->limen_wl_input_motion (w->wl, dx, dy));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_pointer_motion_absolute (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                            const char *session_handle, GVariant *options, guint stream, double x, double y,
                            gpointer user_data)
{
  LimenCast *cast = NULL;
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_POINTER, &cast);
  LimenCastStream *s;

  if (w && (s = find_stream (invocation, cast, stream)) && to_workspace (invocation, s, &x, &y))
    notify_done (invocation, w->limen_wl_input_motion_absolute (w->wl, x, y));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_pointer_button (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                   const char *session_handle, GVariant *options, gint button, guint state, gpointer user_data)
{
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_POINTER, NULL);

  if (!w)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  /* evdev buttons are BTN_MISC..BTN_TASK (0x100..0x117); states 0 and 1. */
  if (button < 0x100 || button > 0x117 || state > 1)
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                "Not a pointer button or state");
  else
    notify_done (invocation, w->limen_wl_input_button (w->wl, (guint32) button, state));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_pointer_axis (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                 const char *session_handle, GVariant *options, double dx, double dy, gpointer user_data)
{
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify_pointer_axis,
                                           LIMEN_DEVICE_POINTER, NULL);
  gboolean sent = TRUE;

  if (!w || !check_finite (invocation, dx, dy))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  /* fake input's axis 0 is vertical, 1 horizontal */
  if (dy != 0)
    sent = w->limen_wl_input_axis (w->wl, 0, dy);
  if (dx != 0 && sent)
    sent = w->limen_wl_input_axis (w->wl, 1, dx);
  notify_done (invocation, sent);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_pointer_axis_discrete (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                          const char *session_handle, GVariant *options, guint axis, gint steps, gpointer user_data)
{
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_POINTER, NULL);

  if (!w)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (axis > 1 || steps < -1000 || steps > 1000)
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                "Not an axis, or too many steps");
  else  /* one wheel click scrolls 15 units, as libinput reports it */
    notify_done (invocation, w->limen_wl_input_axis (w->wl, axis, steps * 15.0));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_keyboard_keycode (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                     const char *session_handle, GVariant *options, gint keycode, guint state, gpointer user_data)
{
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_KEYBOARD, NULL);

  if (!w)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (keycode <= 0 || keycode > 0x2ff || state > 1)
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                "Not an evdev key code or state");
  else
    notify_done (invocation, w->limen_wl_input_key (w->wl, (guint32) keycode, state));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_keyboard_keysym (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                    const char *session_handle, GVariant *options, gint keysym, guint state, gpointer user_data)
{
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_KEYBOARD, NULL);

  if (!w)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (keysym <= 0 || keysym > 0x1ffffff || state > 1)
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                "Not a keysym or state");
  else if (!w->limen_wl_input_keysym (w->wl, (guint32) keysym, state))
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                "No key of the keyboard layout types this keysym");
  else
    g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
touch (GDBusMethodInvocation *invocation, const char *session_handle, GVariant *options, int kind, guint stream,
       guint slot, double x, double y)
{
  LimenCast *cast = NULL;
  const LimenKdeWayland *w = notify_begin (invocation, session_handle, options, limen_options_remote_desktop_notify,
                                           LIMEN_DEVICE_TOUCHSCREEN, &cast);
  LimenCastStream *s;

  if (!w)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (slot > 64)
    g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                "Touch slot out of range");
  else if (kind == LIMEN_WL_TOUCH_UP)
    notify_done (invocation, w->limen_wl_input_touch (w->wl, kind, slot, 0, 0));
  else if ((s = find_stream (invocation, cast, stream)) && to_workspace (invocation, s, &x, &y))
    notify_done (invocation, w->limen_wl_input_touch (w->wl, kind, slot, x, y));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_touch_down (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
               const char *session_handle, GVariant *options, guint stream, guint slot, double x, double y,
               gpointer user_data)
{
  return touch (invocation, session_handle, options, LIMEN_WL_TOUCH_DOWN, stream, slot, x, y);
}

static gboolean
on_touch_motion (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                 const char *session_handle, GVariant *options, guint stream, guint slot, double x, double y,
                 gpointer user_data)
{
  return touch (invocation, session_handle, options, LIMEN_WL_TOUCH_MOTION, stream, slot, x, y);
}

static gboolean
on_touch_up (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
             const char *session_handle, GVariant *options, guint slot, gpointer user_data)
{
  return touch (invocation, session_handle, options, LIMEN_WL_TOUCH_UP, 0, slot, 0, 0);
}

static gboolean
on_connect_to_eis (LimenDbusImplPortalRemoteDesktop *skeleton, GDBusMethodInvocation *invocation,
                   GUnixFDList *fds, const char *session_handle, const char *app_id, GVariant *options,
                   gpointer user_data)
{
  g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.NotSupported",
                                              "KWin 5.27 has no EIS server: use the Notify methods");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

typedef LimenDbusImplPortalRemoteDesktopSkeleton LimenKdeRemoteDesktop;
typedef LimenDbusImplPortalRemoteDesktopSkeletonClass LimenKdeRemoteDesktopClass;
G_DEFINE_TYPE (LimenKdeRemoteDesktop, limen_kde_remote_desktop, LIMEN_DBUS_TYPE_IMPL_PORTAL_REMOTE_DESKTOP_SKELETON)

/* As for ScreenCast: the Wayland module is loaded when someone reads this. */
static void
limen_kde_remote_desktop_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == 1000)
    g_value_set_uint (value, available_device_types ());
  else
    G_OBJECT_CLASS (limen_kde_remote_desktop_parent_class)->get_property (object, prop_id, value, pspec);
}

/* The computed property is never stored; everything else is the skeleton's. */
static void
limen_kde_remote_desktop_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id != 1000)
    G_OBJECT_CLASS (limen_kde_remote_desktop_parent_class)->set_property (object, prop_id, value, pspec);
}

static void
limen_kde_remote_desktop_class_init (LimenKdeRemoteDesktopClass *klass)
{
  G_OBJECT_CLASS (klass)->get_property = limen_kde_remote_desktop_get_property;
  G_OBJECT_CLASS (klass)->set_property = limen_kde_remote_desktop_set_property;
  /* GObject asks the class that installed a property: install it here again. */
  g_object_class_override_property (G_OBJECT_CLASS (klass), 1000, "available-device-types");
}

static void
limen_kde_remote_desktop_init (LimenKdeRemoteDesktop *self)
{
}

GDBusInterfaceSkeleton *
limen_kde_remote_desktop_new (void)
{
  LimenDbusImplPortalRemoteDesktop *skeleton = g_object_new (limen_kde_remote_desktop_get_type (), NULL);
  static const struct { const char *signal; GCallback handler; } handlers[] = {
    { "handle-create-session", G_CALLBACK (on_create_session) },
    { "handle-select-devices", G_CALLBACK (on_select_devices) },
    { "handle-start", G_CALLBACK (on_start) },
    { "handle-notify-pointer-motion", G_CALLBACK (on_pointer_motion) },
    { "handle-notify-pointer-motion-absolute", G_CALLBACK (on_pointer_motion_absolute) },
    { "handle-notify-pointer-button", G_CALLBACK (on_pointer_button) },
    { "handle-notify-pointer-axis", G_CALLBACK (on_pointer_axis) },
    { "handle-notify-pointer-axis-discrete", G_CALLBACK (on_pointer_axis_discrete) },
    { "handle-notify-keyboard-keycode", G_CALLBACK (on_keyboard_keycode) },
    { "handle-notify-keyboard-keysym", G_CALLBACK (on_keyboard_keysym) },
    { "handle-notify-touch-down", G_CALLBACK (on_touch_down) },
    { "handle-notify-touch-motion", G_CALLBACK (on_touch_motion) },
    { "handle-notify-touch-up", G_CALLBACK (on_touch_up) },
    { "handle-connect-to-eis", G_CALLBACK (on_connect_to_eis) },
  };

  limen_dbus_impl_portal_remote_desktop_set_version (skeleton, 2);
  for (gsize i = 0; i < G_N_ELEMENTS (handlers); i++)
    g_signal_connect (skeleton, handlers[i].signal, handlers[i].handler, NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
