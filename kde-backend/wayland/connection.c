/* Limen — the Wayland connection of limen-kde: globals, screens, and dispatching from
 * the GLib main loop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "wl-private.h"

/* ---- the GLib source: the usual prepare_read / read_events / dispatch cycle ---- */

typedef struct {
  GSource            base;
  struct wl_display *display;
  gboolean          *broken;   /* the connection's flag, set here on failure */
  gpointer           fd_tag;
  gboolean           reading;
} WlSource;

static gboolean
wl_source_prepare (GSource *base, gint *timeout)
{
  WlSource *s = (WlSource *) base;
  struct wl_display *display = s->display;

  *timeout = -1;
  if (s->reading || *s->broken)
    return FALSE;
  while (wl_display_prepare_read (display) != 0)
    if (wl_display_dispatch_pending (display) < 0)
      {
        *s->broken = TRUE;
        return FALSE;
      }
  s->reading = TRUE;
  wl_display_flush (display);
  return FALSE;
}

static gboolean
wl_source_check (GSource *base)
{
  WlSource *s = (WlSource *) base;
  GIOCondition revents = g_source_query_unix_fd (base, s->fd_tag);

  if (!s->reading)
    return FALSE;
  s->reading = FALSE;
  if (revents & (G_IO_ERR | G_IO_HUP))
    {
      wl_display_cancel_read (s->display);
      if (!*s->broken)
        g_warning ("The Wayland compositor closed limen-kde's connection");
      *s->broken = TRUE;
      return FALSE;
    }
  if (revents & G_IO_IN)
    {
      if (wl_display_read_events (s->display) < 0)
        *s->broken = TRUE;
      return TRUE;
    }
  wl_display_cancel_read (s->display);
  return FALSE;
}

static gboolean
wl_source_dispatch (GSource *base, GSourceFunc callback, gpointer user_data)
{
  WlSource *s = (WlSource *) base;

  if (wl_display_dispatch_pending (s->display) < 0 && !*s->broken)
    {
      g_warning ("Wayland protocol error on limen-kde's connection: %s", g_strerror (wl_display_get_error (s->display)));
      *s->broken = TRUE;
    }
  return G_SOURCE_CONTINUE;
}

static void
wl_source_finalize (GSource *base)
{
  WlSource *s = (WlSource *) base;

  if (s->reading)
    wl_display_cancel_read (s->display);
}

static GSourceFuncs wl_source_funcs = {
  wl_source_prepare, wl_source_check, wl_source_dispatch, wl_source_finalize, NULL, NULL
};

GSource *
limen_wl_source_attach (struct wl_display *display, gboolean *broken)
{
  WlSource *source = (WlSource *) g_source_new (&wl_source_funcs, sizeof (WlSource));

  source->display = display;
  source->broken = broken;
  source->fd_tag = g_source_add_unix_fd (&source->base, wl_display_get_fd (display), G_IO_IN | G_IO_ERR | G_IO_HUP);
  g_source_set_name (&source->base, "limen-wayland");
  g_source_attach (&source->base, NULL);
  return &source->base;
}

void
limen_wl_flush (LimenWl *wl)
{
  if (!wl->broken)
    wl_display_flush (wl->display);
}

/* ---- screens ---- */

static void
output_geometry (void *data, struct wl_output *o, int32_t x, int32_t y, int32_t pw, int32_t ph,
                 int32_t subpixel, const char *make, const char *model, int32_t transform)
{
  LimenWlOutputState *out = data;

  out->x = x;
  out->y = y;
  if (!out->description || !*out->description)
    {
      g_free (out->description);
      out->description = g_strstrip (g_strdup_printf ("%s %s", make ? make : "", model ? model : ""));
    }
}

static void
output_mode (void *data, struct wl_output *o, uint32_t flags, int32_t width, int32_t height, int32_t refresh)
{
  LimenWlOutputState *out = data;

  if (flags & WL_OUTPUT_MODE_CURRENT)
    {
      out->pixel_width = width;
      out->pixel_height = height;
    }
}

static void
output_done (void *data, struct wl_output *o)
{
}

static void
output_scale (void *data, struct wl_output *o, int32_t factor)
{
  ((LimenWlOutputState *) data)->scale = factor > 0 ? factor : 1;
}

static void
output_name (void *data, struct wl_output *o, const char *name)
{
  LimenWlOutputState *out = data;

  g_free (out->name);
  out->name = g_strdup (name);
}

static void
output_description (void *data, struct wl_output *o, const char *description)
{
  LimenWlOutputState *out = data;

  g_free (out->description);
  /* KWin sends " " for a screen without make and model. */
  out->description = g_strstrip (g_strdup (description ? description : ""));
}

static const struct wl_output_listener output_listener = {
  output_geometry, output_mode, output_done, output_scale, output_name, output_description
};

static void
output_state_free (gpointer data)
{
  LimenWlOutputState *out = data;

  if (out->output)
    {
      if (wl_output_get_version (out->output) >= 3)
        wl_output_release (out->output);
      else
        wl_output_destroy (out->output);
    }
  g_free (out->name);
  g_free (out->description);
  g_free (out);
}

/* ---- globals ---- */

static void
registry_global (void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                 uint32_t version)
{
  LimenWl *wl = data;

  if (strcmp (interface, wl_output_interface.name) == 0)
    {
      LimenWlOutputState *out = g_new0 (LimenWlOutputState, 1);

      out->global = name;
      out->scale = 1;
      out->output = wl_registry_bind (registry, name, &wl_output_interface, MIN (version, 4));
      wl_output_add_listener (out->output, &output_listener, out);
      g_ptr_array_add (wl->outputs, out);
    }
  else if (strcmp (interface, wl_seat_interface.name) == 0 && !wl->seat)
    wl->seat = wl_registry_bind (registry, name, &wl_seat_interface, 1);
  else if (strcmp (interface, zkde_screencast_unstable_v1_interface.name) == 0)
    {
      wl->screencast_version = MIN (version, 3);
      wl->screencast = wl_registry_bind (registry, name, &zkde_screencast_unstable_v1_interface,
                                         wl->screencast_version);
    }
  else if (strcmp (interface, org_kde_kwin_fake_input_interface.name) == 0)
    {
      wl->fake_input_version = MIN (version, 4);
      wl->fake_input = wl_registry_bind (registry, name, &org_kde_kwin_fake_input_interface,
                                         wl->fake_input_version);
      /* KWin grants fake input once the client says who it is. */
      org_kde_kwin_fake_input_authenticate (wl->fake_input, "Limen", "Remote control requested through the desktop portal");
    }
  else if (strcmp (interface, "org_kde_plasma_window_management") == 0)
    limen_wl_windows_bind (wl, registry, name, version);
  else if (strcmp (interface, zwlr_data_control_manager_v1_interface.name) == 0)
    wl->data_control = wl_registry_bind (registry, name, &zwlr_data_control_manager_v1_interface, 1);
}

static void
registry_global_remove (void *data, struct wl_registry *registry, uint32_t name)
{
  LimenWl *wl = data;

  for (guint i = 0; i < wl->outputs->len; i++)
    if (((LimenWlOutputState *) g_ptr_array_index (wl->outputs, i))->global == name)
      {
        g_ptr_array_remove_index (wl->outputs, i);
        return;
      }
}

static const struct wl_registry_listener registry_listener = { registry_global, registry_global_remove };

static void
sync_done (void *data, struct wl_callback *callback, uint32_t serial)
{
  *(gboolean *) data = TRUE;
}

static const struct wl_callback_listener sync_listener = { sync_done };

/* wl_display_roundtrip() without waiting forever on a compositor that does not answer. */
static gboolean
roundtrip_with_timeout (struct wl_display *display, int timeout_ms)
{
  gboolean done = FALSE;
  struct wl_callback *callback = wl_display_sync (display);
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gboolean ok = TRUE;

  wl_callback_add_listener (callback, &sync_listener, &done);
  while (ok && !done)
    {
      struct pollfd pfd = { wl_display_get_fd (display), POLLIN, 0 };
      gint64 left = deadline - g_get_monotonic_time ();

      if (wl_display_prepare_read (display) != 0)
        {
          ok = wl_display_dispatch_pending (display) >= 0;
          continue;
        }
      wl_display_flush (display);
      if (left <= 0 || poll (&pfd, 1, (int) (left / 1000) + 1) <= 0)
        {
          wl_display_cancel_read (display);
          ok = FALSE;
          break;
        }
      ok = wl_display_read_events (display) >= 0 && wl_display_dispatch_pending (display) >= 0;
    }
  wl_callback_destroy (callback);
  return ok && done;
}

gboolean
limen_wl_windows_settle (LimenWl *wl, int timeout_ms)
{
  /* The first round trip brings windows announced since, the second their titles, app ids
   * and states (windows.c asks for them when a window is announced). */
  if (wl->broken || !wl->window_management)
    return FALSE;
  /* Called from a nested main loop while the source waits to read, a second reader would
   * wait for the first one for ever. */
  if (wl->source && ((WlSource *) wl->source)->reading)
    return FALSE;
  if (!roundtrip_with_timeout (wl->display, timeout_ms) || !roundtrip_with_timeout (wl->display, timeout_ms))
    {
      g_debug ("Wayland: the compositor did not answer a round trip within %d ms", timeout_ms);
      return FALSE;
    }
  return TRUE;
}

LimenWl *
limen_wl_connect (int timeout_ms, char **error_message)
{
  const char *name = g_getenv ("WAYLAND_DISPLAY");
  LimenWl *wl;

  if (!name || !*name)
    {
      *error_message = g_strdup ("This is not a Wayland session (no WAYLAND_DISPLAY)");
      return NULL;
    }
  wl = g_new0 (LimenWl, 1);
  wl->display = wl_display_connect (NULL);
  if (!wl->display)
    {
      *error_message = g_strdup_printf ("Cannot connect to the Wayland display %s: %s", name, g_strerror (errno));
      g_free (wl);
      return NULL;
    }
  wl->outputs = g_ptr_array_new_with_free_func (output_state_free);
  wl->output_view = g_array_new (FALSE, TRUE, sizeof (LimenWlOutput));
  wl->registry = wl_display_get_registry (wl->display);
  wl_registry_add_listener (wl->registry, &registry_listener, wl);
  /* Three round trips: the globals, then the screens' names and modes and the windows,
   * then the windows' titles. */
  if (!roundtrip_with_timeout (wl->display, timeout_ms) || !roundtrip_with_timeout (wl->display, timeout_ms) ||
      !roundtrip_with_timeout (wl->display, timeout_ms))
    {
      *error_message = g_strdup_printf ("The Wayland compositor did not answer within %d ms", timeout_ms);
      /* The connection is kept, unused: tearing down half-bound proxies buys nothing. */
      return NULL;
    }
  if (wl->seat && wl->data_control)
    limen_wl_data_control_start (wl);
  if (wl->seat && wl->fake_input)
    limen_wl_keymap_start (wl);
  wl->source = limen_wl_source_attach (wl->display, &wl->broken);
  g_debug ("Wayland: screencast v%u, fake input v%u, data control %s, %u screen(s)",
           wl->screencast_version, wl->fake_input_version, wl->data_control ? "yes" : "no", wl->outputs->len);
  return wl;
}

/* The LIMEN_WL_HAS_* bits of what the compositor offers. */
static guint
features_of (guint32 screencast_version, guint32 fake_input_version, gboolean data_control, gboolean windows)
{
  guint f = 0;

  if (screencast_version >= 1)
    f |= LIMEN_WL_HAS_SCREENCAST;
  if (screencast_version >= 2)
    f |= LIMEN_WL_HAS_VIRTUAL_OUTPUT;
  if (screencast_version >= 3)
    f |= LIMEN_WL_HAS_REGION;
  if (fake_input_version >= 1)
    f |= LIMEN_WL_HAS_FAKE_INPUT;
  if (fake_input_version >= 2)
    f |= LIMEN_WL_HAS_FAKE_TOUCH;
  if (fake_input_version >= 3)
    f |= LIMEN_WL_HAS_FAKE_ABSOLUTE;
  if (fake_input_version >= 4)
    f |= LIMEN_WL_HAS_FAKE_KEYBOARD;
  if (data_control)
    f |= LIMEN_WL_HAS_DATA_CONTROL;
  if (windows)
    f |= LIMEN_WL_HAS_WINDOWS;
  return f;
}

guint
limen_wl_features (LimenWl *wl)
{
  if (wl->broken)
    return 0;
  return features_of (wl->screencast ? wl->screencast_version : 0, wl->fake_input ? wl->fake_input_version : 0,
                      wl->data_device != NULL, wl->window_management != NULL);
}

/* ---- a look at the globals, binding nothing ---- */

typedef struct {
  guint32  screencast_version, fake_input_version;
  gboolean seat, data_control, windows;
} Offered;

static void
offered_global (void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version)
{
  Offered *o = data;

  if (strcmp (interface, zkde_screencast_unstable_v1_interface.name) == 0)
    o->screencast_version = MIN (version, 3);
  else if (strcmp (interface, org_kde_kwin_fake_input_interface.name) == 0)
    o->fake_input_version = MIN (version, 4);
  else if (strcmp (interface, wl_seat_interface.name) == 0)
    o->seat = TRUE;
  else if (strcmp (interface, zwlr_data_control_manager_v1_interface.name) == 0)
    o->data_control = TRUE;
  /* As limen_wl_windows_bind(): windows have uuids from version 13 on. */
  else if (strcmp (interface, "org_kde_plasma_window_management") == 0 && version >= 13)
    o->windows = TRUE;
}

static void
offered_global_remove (void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener offered_listener = { offered_global, offered_global_remove };

guint
limen_wl_probe_features (int timeout_ms, char **error_message)
{
  Offered offered = { 0 };
  struct wl_display *display;
  struct wl_registry *registry;
  gboolean answered;

  if (!g_getenv ("WAYLAND_DISPLAY") || !*g_getenv ("WAYLAND_DISPLAY"))
    {
      *error_message = g_strdup ("This is not a Wayland session (no WAYLAND_DISPLAY)");
      return 0;
    }
  display = wl_display_connect (NULL);
  if (!display)
    {
      *error_message = g_strdup_printf ("Cannot connect to the Wayland display: %s", g_strerror (errno));
      return 0;
    }
  registry = wl_display_get_registry (display);
  wl_registry_add_listener (registry, &offered_listener, &offered);
  answered = roundtrip_with_timeout (display, timeout_ms);
  wl_registry_destroy (registry);
  wl_display_disconnect (display);
  if (!answered)
    {
      *error_message = g_strdup_printf ("The Wayland compositor did not answer within %d ms", timeout_ms);
      return 0;
    }
  return features_of (offered.screencast_version, offered.fake_input_version, offered.seat && offered.data_control,
                      offered.windows);
}

const LimenWlOutput *
limen_wl_outputs (LimenWl *wl, gsize *n_out)
{
  g_array_set_size (wl->output_view, 0);
  for (guint i = 0; i < wl->outputs->len; i++)
    {
      LimenWlOutputState *s = g_ptr_array_index (wl->outputs, i);
      LimenWlOutput o = { 0 };

      if (!s->name || s->pixel_width <= 0)
        continue;
      o.name = s->name;
      o.description = s->description ? s->description : "";
      o.x = s->x;
      o.y = s->y;
      o.pixel_width = s->pixel_width;
      o.pixel_height = s->pixel_height;
      o.scale = s->scale;
      o.width = s->pixel_width / s->scale;
      o.height = s->pixel_height / s->scale;
      g_array_append_val (wl->output_view, o);
    }
  *n_out = wl->output_view->len;
  return (const LimenWlOutput *) wl->output_view->data;
}

struct wl_output *
limen_wl_find_output (LimenWl *wl, const char *name)
{
  for (guint i = 0; i < wl->outputs->len; i++)
    {
      LimenWlOutputState *s = g_ptr_array_index (wl->outputs, i);

      if (g_strcmp0 (s->name, name) == 0)
        return s->output;
    }
  return NULL;
}
