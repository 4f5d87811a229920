/* Limen — org.freedesktop.impl.portal.ScreenCast on KWin's screencast protocol.
 *
 * The session (screencast.h) keeps what SelectSources and SelectDevices asked; Start
 * asks the person in the shim's picker — or takes the sources of valid restore data —
 * then asks KWin for one stream per source and answers with the PipeWire node ids KWin
 * made. While streams run, a notification with a Stop button says so; Stop closes the
 * session. On X11 there is no screencast protocol: AvailableSourceTypes is 0 and Start
 * answers Error.Failed saying so.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <glib/gi18n.h>
#include <string.h>

#include "errors.h"
#include "option-tables.h"

#define RESTORE_VENDOR "KDE"
#define RESTORE_VERSION 1
#define MAX_RESTORE_SOURCES 16
/* KWin answers a stream request within milliseconds; one that never comes (a KWin that
 * composites without OpenGL, e.g. nested without a render node) must not leave Start open. */
#define STREAM_TIMEOUT_S 10
/* The notification that sharing runs comes this long after Start: bringing up Qt (and its
 * Wayland connection) at the moment KWin starts the streams delayed their first frame by
 * ~50 ms (bench-screencast); half a second later it costs the streams nothing. */
#define INDICATOR_DELAY_MS 500

GVariant *
limen_cast_restore_payload (GVariant *restore_data)
{
  const char *vendor;
  guint32 version;
  g_autoptr(GVariant) payload = NULL;

  if (!restore_data || !g_variant_is_of_type (restore_data, G_VARIANT_TYPE ("(suv)")))
    return NULL;
  g_variant_get (restore_data, "(&suv)", &vendor, &version, &payload);
  if (!g_str_equal (vendor, RESTORE_VENDOR) || version != RESTORE_VERSION)
    return NULL;
  if (!g_variant_is_of_type (payload, G_VARIANT_TYPE_VARDICT))
    return NULL;
  return g_steal_pointer (&payload);
}

/* Monitors, and virtual screens where KWin's protocol has them; windows once KWin lets
 * us list them (LIMEN_WL_HAS_WINDOWS). 0 on X11. */
static guint
available_source_types (void)
{
  guint f = limen_kde_wayland_features ();

  if (!(f & LIMEN_WL_HAS_SCREENCAST))
    return 0;
  return LIMEN_CAST_MONITOR | ((f & LIMEN_WL_HAS_WINDOWS) ? LIMEN_CAST_WINDOW : 0) |
         ((f & LIMEN_WL_HAS_VIRTUAL_OUTPUT) ? LIMEN_CAST_VIRTUAL : 0);
}

/* ---- sessions ---- */

static void
cast_stream_free (gpointer data)
{
  LimenCastStream *s = data;
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);

  if (s->stream && w)
    w->limen_wl_stream_close (s->stream);
  g_free (s->id);
  g_free (s);
}

static void start_abort (LimenCastStart *start);

static GHashTable *casts;   /* LimenKdeSession → LimenCast, ours only */

static void
on_session_closed (LimenKdeSession *session, gpointer user_data)
{
  LimenCast *cast = user_data;
  const LimenKdeShim *shim = limen_kde_shim_get (NULL);

  g_debug ("ScreenCast: session of %s closed", cast->app_id);
  if (cast->start)
    start_abort (cast->start);
  if (cast->indicator_source)
    g_source_remove (cast->indicator_source);
  if (cast->indicator && shim)
    shim->limen_qt_cast_indicator_close (g_steal_pointer (&cast->indicator));
  limen_cast_dnd_end (cast);
  limen_kde_clipboard_session_closed (cast);
  g_hash_table_remove (casts, session);
  g_ptr_array_unref (cast->streams);
  g_strfreev (cast->restore_ids);
  g_free (cast->app_id);
  g_free (cast->handle);
  g_free (cast);
}

LimenCast *
limen_cast_new (GDBusMethodInvocation *invocation, const char *session_handle, const char *app_id,
                gboolean remote, GError **error)
{
  LimenCast *cast = g_new0 (LimenCast, 1);

  cast->session = limen_kde_session_new (invocation, session_handle, on_session_closed, cast, error);
  if (!cast->session)
    {
      g_free (cast);
      return NULL;
    }
  if (!casts)
    casts = g_hash_table_new (NULL, NULL);
  g_hash_table_insert (casts, cast->session, cast);
  cast->app_id = g_strdup (app_id);
  cast->handle = g_strdup (session_handle);
  cast->remote = remote;
  cast->types = LIMEN_CAST_MONITOR;
  cast->cursor_mode = LIMEN_CURSOR_HIDDEN;
  cast->streams = g_ptr_array_new_with_free_func (cast_stream_free);
  return cast;
}

LimenCast *
limen_cast_lookup (GDBusMethodInvocation *invocation, const char *session_handle, GError **error)
{
  LimenKdeSession *session = limen_kde_session_lookup (g_dbus_method_invocation_get_sender (invocation),
                                                      session_handle);
  LimenCast *cast = session && casts ? g_hash_table_lookup (casts, session) : NULL;

  /* Sessions of other portals (Inhibit monitors) share the handle space. */
  if (!cast)
    g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No screen-sharing session with this handle");
  return cast;
}

/* ---- CreateSession, SelectSources ---- */

static gboolean
on_create_session (LimenDbusImplPortalScreenCast *skeleton, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, const char *app_id, GVariant *options,
                   gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) results = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  LimenCast *cast;

  if (!limen_kde_check_request_args (handle, app_id, "", &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_screen_cast_create_session, NULL) ||
      !(cast = limen_cast_new (invocation, session_handle, app_id, FALSE, &error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_variant_builder_add (&results, "{sv}", "session_id", g_variant_new_string (session_handle));
  limen_kde_reply_response (invocation, 0, g_variant_builder_end (&results));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The source ids of a restore payload, if every one of them still exists. */
static char **
restorable_sources (GVariant *payload, guint types)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  g_autoptr(GVariant) list = g_variant_lookup_value (payload, "sources", G_VARIANT_TYPE_STRING_ARRAY);
  g_autofree const char **ids = list ? g_variant_get_strv (list, NULL) : NULL;
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  gsize n_outputs = 0;
  const LimenWlOutput *outputs;

  if (!w || !ids || !ids[0] ||
      g_strv_length ((char **) ids) > MAX_RESTORE_SOURCES)
    return NULL;
  outputs = w->limen_wl_outputs (w->wl, &n_outputs);
  for (gsize i = 0; ids[i]; i++)
    {
      gboolean found = FALSE;
      char *window = NULL;

      if (g_str_has_prefix (ids[i], "screen:") && (types & LIMEN_CAST_MONITOR))
        for (gsize j = 0; j < n_outputs; j++)
          found = found || g_str_equal (outputs[j].name, ids[i] + 7);
      else if (g_str_equal (ids[i], "virtual") && (types & LIMEN_CAST_VIRTUAL))
        found = TRUE;
      else if (g_str_equal (ids[i], LIMEN_CAST_ALL_SCREENS) && (types & LIMEN_CAST_MONITOR))
        found = limen_cast_all_screens_area (NULL, NULL, NULL, NULL, NULL, NULL);
      else if (g_str_has_prefix (ids[i], LIMEN_CAST_REGION ":") && (types & LIMEN_CAST_MONITOR))
        found = limen_cast_region_valid (ids[i]);
      /* The same window, or its app's new one (screencast-restore.c). */
      else if (g_str_has_prefix (ids[i], "window:") && (types & LIMEN_CAST_WINDOW) && strlen (ids[i]) < 128)
        found = (window = limen_cast_restore_window (payload, ids[i])) != NULL;
      if (!found || (window && g_ptr_array_find_with_equal_func (out, window, g_str_equal, NULL)))
        {
          g_free (window);
          return NULL;
        }
      g_ptr_array_add (out, window ? window : g_strdup (ids[i]));
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

static gboolean
on_select_sources (LimenDbusImplPortalScreenCast *skeleton, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, const char *app_id, GVariant *options,
                   gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GVariant) restore = NULL;
  g_autoptr(GVariant) restore_data = NULL;
  guint available = available_source_types ();
  guint types = 0, cursor_mode = LIMEN_CURSOR_HIDDEN, persist_mode = 0;
  gboolean multiple = FALSE;
  LimenCast *cast;

  if (!limen_kde_check_request_args (handle, app_id, "", &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_impl_screen_cast_select_sources, NULL) ||
      !(cast = limen_cast_lookup (invocation, session_handle, &error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (cast->state != LIMEN_CAST_NEW)
    {
      g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The session was already started");
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  /* Read into locals: a refused call leaves the session as it was. */
  g_variant_lookup (opts, "types", "u", &types);
  g_variant_lookup (opts, "multiple", "b", &multiple);
  g_variant_lookup (opts, "cursor_mode", "u", &cursor_mode);
  g_variant_lookup (opts, "persist_mode", "u", &persist_mode);
  if (types == 0)
    types = LIMEN_CAST_MONITOR;
  if (available == 0)
    {
      /* X11, or no compositor: say why, not just "no types". Otherwise the live connection
       * is the better judge than an earlier look. */
      if (!limen_kde_wayland_get (&error))
        {
          limen_invocation_return_gerror (invocation, error);
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
      available = available_source_types ();
    }
  if ((types & available) == 0)
    {
      g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for option types: none of them can be shared here");
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  cast->types = types;
  cast->multiple = multiple;
  cast->cursor_mode = cursor_mode;
  cast->persist_mode = persist_mode;
  cast->types &= available;
  g_clear_pointer (&cast->restore_ids, g_strfreev);
  restore_data = g_variant_lookup_value (opts, "restore_data", NULL);
  restore = limen_cast_restore_payload (restore_data);
  if (restore)
    cast->restore_ids = restorable_sources (restore, cast->types);
  g_debug ("ScreenCast: %s selects types %u, multiple %d, cursor %u, persist %u%s", cast->app_id, cast->types,
           cast->multiple, cast->cursor_mode, cast->persist_mode, cast->restore_ids ? ", restorable" : "");
  cast->sources_selected = TRUE;
  limen_kde_reply_response (invocation, 0, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- Start ---- */

struct _LimenCastStart {
  LimenCast             *cast;
  GDBusMethodInvocation *invocation;
  LimenKdeRequest       *request;
  LimenQtDialog         *dialog;
  LimenCastPreview      *preview;       /* while the picker shows */
  guint                  pending;       /* streams waiting for their node */
  guint                  timeout_id;    /* while pending: KWin's answer is overdue */
  gboolean               allow_restore; /* persist: the person allowed it, or it was a restore */
  char                  *error;         /* the first stream that failed */
};

static void
start_free (LimenCastStart *start)
{
  limen_cast_preview_end (g_steal_pointer (&start->preview));
  if (start->request)
    limen_kde_request_finish (start->request);
  if (start->timeout_id)
    g_source_remove (start->timeout_id);
  start->cast->start = NULL;
  g_free (start->error);
  g_free (start);
}

/* Request.Close, the frontend leaving, or the session closing while we ask. */
static void
start_abort (LimenCastStart *start)
{
  const LimenKdeShim *shim = limen_kde_shim_get (NULL);

  limen_cast_preview_end (g_steal_pointer (&start->preview));
  if (start->dialog && shim)
    shim->limen_qt_close (start->dialog);
  start->cast->state = LIMEN_CAST_NEW;
  g_ptr_array_set_size (start->cast->streams, 0);
  limen_kde_reply_response (start->invocation, 2, NULL);
  start_free (start);
}

static void
on_start_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  LimenCastStart *start = user_data;

  start->request = NULL;    /* being freed by request.c */
  g_debug ("ScreenCast: Start closed by the frontend");
  start_abort (start);
}

static GVariant *
streams_variant (LimenCast *cast)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ua{sv})"));
  for (guint i = 0; i < cast->streams->len; i++)
    {
      LimenCastStream *s = g_ptr_array_index (cast->streams, i);
      GVariantBuilder props;

      g_variant_builder_init (&props, G_VARIANT_TYPE_VARDICT);
      if (s->source_type == LIMEN_CAST_MONITOR)
        g_variant_builder_add (&props, "{sv}", "position", g_variant_new ("(ii)", s->x, s->y));
      if (s->width > 0)
        g_variant_builder_add (&props, "{sv}", "size", g_variant_new ("(ii)", s->width, s->height));
      g_variant_builder_add (&props, "{sv}", "source_type", g_variant_new_uint32 (s->source_type));
      g_variant_builder_add (&props, "{sv}", "mapping_id", g_variant_new_string (s->id));
      g_variant_builder_add (&b, "(u@a{sv})", s->node, g_variant_builder_end (&props));
    }
  return g_variant_builder_end (&b);
}

static GVariant *
restore_variant (LimenCast *cast)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new ();
  GVariantBuilder payload;

  for (guint i = 0; i < cast->streams->len; i++)
    g_ptr_array_add (ids, ((LimenCastStream *) g_ptr_array_index (cast->streams, i))->id);
  g_ptr_array_add (ids, NULL);
  g_variant_builder_init (&payload, G_VARIANT_TYPE_VARDICT);
  if (cast->streams->len)
    g_variant_builder_add (&payload, "{sv}", "sources", g_variant_new_strv ((const char *const *) ids->pdata, -1));
  limen_cast_restore_describe_windows (cast, &payload);
  if (cast->remote)
    g_variant_builder_add (&payload, "{sv}", "devices", g_variant_new_uint32 (cast->devices));
  return g_variant_new ("(suv)", RESTORE_VENDOR, RESTORE_VERSION, g_variant_builder_end (&payload));
}

static void
on_indicator_stop (LimenQtCastIndicator *indicator, void *user_data)
{
  LimenCast *cast = user_data;

  g_debug ("ScreenCast: the person stopped sharing for %s", cast->app_id);
  /* Closing the session withdraws the indicator. */
  limen_kde_session_close (cast->session);
}

static gboolean
show_indicator (gpointer user_data)
{
  LimenCast *cast = user_data;
  const LimenKdeShim *shim = limen_kde_shim_get (NULL);

  cast->indicator_source = 0;
  if (!shim || limen_kde_shim_get_for_dialog (NULL) == NULL)
    return G_SOURCE_REMOVE;
  cast->indicator = shim->limen_qt_cast_indicator_show (cast->app_id, cast->streams->len > 0, cast->devices,
                                                        on_indicator_stop, cast);
  return G_SOURCE_REMOVE;
}

static void
start_answer (LimenCastStart *start)
{
  LimenCast *cast = start->cast;
  GVariantBuilder results;
  guint asked = MAX (cast->persist_mode, cast->rd_persist_mode);
  /* Mode 1 lasts only while the app runs (its frontend keeps the token per connection):
   * given without a question, as the person just chose these sources for this app; browsers
   * open a second session for the same choice right after the first and would otherwise ask
   * twice. Mode 2 outlives the app: only with "Allow restoring" left ticked (or on a
   * restore). */
  guint persist = start->allow_restore || asked == 1 ? asked : 0;

  if (start->error)
    {
      g_warning ("ScreenCast: %s", start->error);
      g_ptr_array_set_size (cast->streams, 0);
      cast->state = LIMEN_CAST_NEW;
      limen_kde_reply_response (start->invocation, 2, NULL);
      start_free (start);
      return;
    }
  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (cast->sources_selected)
    g_variant_builder_add (&results, "{sv}", "streams", streams_variant (cast));
  if (cast->remote)
    {
      g_variant_builder_add (&results, "{sv}", "devices", g_variant_new_uint32 (cast->devices));
      g_variant_builder_add (&results, "{sv}", "clipboard_enabled", g_variant_new_boolean (cast->clipboard_enabled));
    }
  g_variant_builder_add (&results, "{sv}", "persist_mode", g_variant_new_uint32 (persist));
  if (persist > 0)
    g_variant_builder_add (&results, "{sv}", "restore_data", restore_variant (cast));
  cast->state = LIMEN_CAST_STARTED;
  g_debug ("ScreenCast: %s started with %u stream(s), devices %u", cast->app_id, cast->streams->len, cast->devices);
  limen_cast_dnd_begin (cast, g_dbus_method_invocation_get_connection (start->invocation));
  limen_kde_reply_response (start->invocation, 0, g_variant_builder_end (&results));
  start_free (start);
  if (cast->clipboard_enabled)
    limen_kde_clipboard_session_started (cast);
  cast->indicator_source = g_timeout_add (INDICATOR_DELAY_MS, show_indicator, cast);
}

static void
on_stream_ready (LimenWlStream *stream, guint32 node, const char *error, gpointer user_data)
{
  LimenCast *cast = user_data;
  LimenCastStart *start = cast->start;

  for (guint i = 0; i < cast->streams->len; i++)
    {
      LimenCastStream *s = g_ptr_array_index (cast->streams, i);

      if (s->stream == stream)
        s->node = node;
    }
  if (!start)
    return;
  if (error && !start->error)
    start->error = g_strdup (error);
  if (--start->pending == 0)
    start_answer (start);
}

static void
on_stream_closed (LimenWlStream *stream, gpointer user_data)
{
  LimenCast *cast = user_data;

  /* A shared screen or window went away: the session ends, as the app expects. */
  g_debug ("ScreenCast: KWin ended a stream of %s; closing the session", cast->app_id);
  if (cast->state == LIMEN_CAST_STARTED)
    limen_kde_session_close (cast->session);
}

static gboolean
on_streams_overdue (gpointer user_data)
{
  LimenCastStart *start = user_data;

  start->timeout_id = 0;
  if (!start->error)
    start->error = g_strdup_printf ("The compositor did not make the stream within %d s", STREAM_TIMEOUT_S);
  start->pending = 0;
  /* The error drops the streams: each is closed, so KWin's late answers go nowhere. */
  start_answer (start);
  return G_SOURCE_REMOVE;
}

/* Ask KWin for one stream per chosen source; the answer waits for their nodes. */
static void
start_streams (LimenCastStart *start, const char *const *ids)
{
  LimenCast *cast = start->cast;
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  gsize n_outputs = 0;
  const LimenWlOutput *outputs = w ? w->limen_wl_outputs (w->wl, &n_outputs) : NULL;

  for (gsize i = 0; w && ids && ids[i]; i++)
    {
      LimenCastStream *s = g_new0 (LimenCastStream, 1);

      s->id = g_strdup (ids[i]);
      if (g_str_has_prefix (ids[i], "screen:"))
        {
          s->source_type = LIMEN_CAST_MONITOR;
          for (gsize j = 0; j < n_outputs; j++)
            if (g_str_equal (outputs[j].name, ids[i] + 7))
              {
                s->x = outputs[j].x, s->y = outputs[j].y;
                s->width = outputs[j].width, s->height = outputs[j].height;
              }
          s->stream = w->limen_wl_stream_output (w->wl, ids[i] + 7, cast->cursor_mode, on_stream_ready,
                                                 on_stream_closed, cast);
        }
      else if (g_str_has_prefix (ids[i], "window:"))
        {
          s->source_type = LIMEN_CAST_WINDOW;
          s->stream = w->limen_wl_stream_window (w->wl, ids[i] + 7, cast->cursor_mode, on_stream_ready,
                                                 on_stream_closed, cast);
        }
      else if (g_str_equal (ids[i], LIMEN_CAST_ALL_SCREENS))
        s->stream = limen_cast_stream_all_screens (cast, s, on_stream_ready, on_stream_closed);
      else if (g_str_has_prefix (ids[i], LIMEN_CAST_REGION ":"))
        s->stream = limen_cast_stream_region (cast, s, ids[i], on_stream_ready, on_stream_closed);
      else if (g_str_equal (ids[i], "virtual"))
        {
          s->source_type = LIMEN_CAST_VIRTUAL;
          s->width = 1920, s->height = 1080;
          s->stream = w->limen_wl_stream_virtual (w->wl, "Limen", s->width, s->height, cast->cursor_mode,
                                                  on_stream_ready, on_stream_closed, cast);
        }
      g_ptr_array_add (cast->streams, s);
      if (!s->stream)
        {
          if (!start->error)
            start->error = g_strdup_printf ("The source %s is not available", ids[i]);
          continue;
        }
      start->pending++;
    }
  if (start->pending == 0)
    start_answer (start);
  else
    start->timeout_id = g_timeout_add_seconds (STREAM_TIMEOUT_S, on_streams_overdue, start);
}

static void
on_picker_done (LimenQtDialog *dialog, int response, size_t n_chosen, const char *const *chosen,
                int allow_restore, void *user_data)
{
  LimenCastStart *start = user_data;
  LimenCast *cast = start->cast;

  start->dialog = NULL;
  limen_cast_preview_end (g_steal_pointer (&start->preview));
  g_debug ("ScreenCast: the picker answered %d with %zu source(s)", response, n_chosen);
  if (response != LIMEN_QT_RESPONSE_OK || (cast->sources_selected && n_chosen == 0))
    {
      cast->state = LIMEN_CAST_NEW;
      limen_kde_reply_response (start->invocation, response == LIMEN_QT_RESPONSE_OK ? 1 : response, NULL);
      start_free (start);
      return;
    }
  start->allow_restore = allow_restore;
  if (cast->remote)
    {
      cast->devices = cast->device_types;
      cast->clipboard_enabled = cast->clipboard_requested &&
                                (limen_kde_wayland_features () & LIMEN_WL_HAS_DATA_CONTROL);
    }
  start_streams (start, chosen);
}

static gboolean
open_picker (LimenCastStart *start, const char *parent_window, GError **error)
{
  LimenCast *cast = start->cast;
  const LimenKdeShim *shim = limen_kde_shim_get_for_dialog (error);
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  g_autoptr(GArray) screens = g_array_new (FALSE, TRUE, sizeof (LimenQtCastSource));
  g_autoptr(GArray) windows = g_array_new (FALSE, TRUE, sizeof (LimenQtCastSource));
  gsize n_windows = 0;
  const LimenWlWindow *wins;
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  LimenQtScreenCastSpec spec = { 0 };
  gsize n_outputs = 0;
  const LimenWlOutput *outputs;

  if (!shim)
    return FALSE;
  outputs = w && cast->sources_selected && (cast->types & LIMEN_CAST_MONITOR) ?
            w->limen_wl_outputs (w->wl, &n_outputs) : NULL;
  for (gsize i = 0; i < n_outputs; i++)
    {
      LimenQtCastSource src = { 0 };
      char *id = g_strconcat ("screen:", outputs[i].name, NULL);

      g_ptr_array_add (ids, id);
      src.id = id;
      src.name = outputs[i].name;
      src.description = outputs[i].description;
      src.width = outputs[i].pixel_width;
      src.height = outputs[i].pixel_height;
      g_array_append_val (screens, src);
    }
  if (n_outputs > 1)
    limen_cast_offer_all_screens (screens);
  if (n_outputs > 0)
    limen_cast_offer_region (screens);
  wins = w && cast->sources_selected && (cast->types & LIMEN_CAST_WINDOW) ? w->limen_wl_windows (w->wl, &n_windows)
                                                                         : NULL;
  for (gsize i = 0; i < n_windows; i++)
    {
      LimenQtCastSource src = { 0 };
      char *id = g_strconcat ("window:", wins[i].uuid, NULL);

      g_ptr_array_add (ids, id);
      src.id = id;
      src.name = wins[i].title;
      src.description = wins[i].app_id;
      src.icon = wins[i].icon;
      g_array_append_val (windows, src);
    }
  spec.window.parent_window = parent_window;
  spec.window.app_id = cast->app_id;
  spec.window.modal = TRUE;
  spec.app_id = cast->app_id;
  spec.n_windows = windows->len;
  spec.windows = (const LimenQtCastSource *) windows->data;
  spec.types = cast->sources_selected ? cast->types : 0;
  spec.multiple = cast->multiple;
  spec.offer_restore = MAX (cast->persist_mode, cast->rd_persist_mode) == 2;
  spec.n_screens = screens->len;
  spec.screens = (const LimenQtCastSource *) screens->data;
  spec.devices = cast->remote ? cast->device_types : 0;
  spec.clipboard = cast->remote && cast->clipboard_requested;
  start->dialog = shim->limen_qt_screencast_open (&spec, on_picker_done, start);
  if (!start->dialog)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The screen-sharing dialog could not be opened");
      return FALSE;
    }
  g_ptr_array_add (ids, NULL);
  start->preview = limen_cast_preview_begin (start->dialog, (const char *const *) ids->pdata);
  return TRUE;
}

void
limen_cast_start (LimenCast *cast, GDBusMethodInvocation *invocation, const char *handle, const char *parent_window)
{
  g_autoptr(GError) error = NULL;
  LimenCastStart *start;
  gboolean restoring;

  if (cast->state != LIMEN_CAST_NEW)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                         cast->state == LIMEN_CAST_STARTED ? "The session was already started"
                                                           : "The session is starting");
  else if (!limen_kde_wayland_get (&error))
    {
    }
  else if (!cast->remote && !cast->sources_selected)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "SelectSources was not called on this session");
  if (error)
    {
      limen_invocation_return_gerror (invocation, error);
      return;
    }
  start = g_new0 (LimenCastStart, 1);
  start->cast = cast;
  start->invocation = invocation;
  start->request = limen_kde_request_new (invocation, handle, on_start_request_closed, start, &error);
  if (!start->request)
    {
      g_free (start);
      limen_invocation_return_gerror (invocation, error);
      return;
    }
  cast->start = start;
  cast->state = LIMEN_CAST_STARTING;
  /* Valid restore data for everything asked: no question. */
  restoring = (!cast->sources_selected || cast->restore_ids) && (!cast->remote || cast->rd_restore) &&
              (cast->restore_ids || cast->rd_restore);
  if (restoring)
    {
      g_debug ("ScreenCast: restoring the sources of %s without asking", cast->app_id);
      start->allow_restore = TRUE;
      if (cast->remote)
        {
          cast->devices = cast->device_types;
          cast->clipboard_enabled = cast->clipboard_requested &&
                                    (limen_kde_wayland_features () & LIMEN_WL_HAS_DATA_CONTROL);
        }
      start_streams (start, (const char *const *) cast->restore_ids);
      return;
    }
  if (!open_picker (start, parent_window, &error))
    {
      cast->state = LIMEN_CAST_NEW;
      start->request = (limen_kde_request_finish (start->request), NULL);
      cast->start = NULL;
      g_free (start);
      limen_invocation_return_gerror (invocation, error);
    }
}

static gboolean
on_start (LimenDbusImplPortalScreenCast *skeleton, GDBusMethodInvocation *invocation, const char *handle,
          const char *session_handle, const char *app_id, const char *parent_window, GVariant *options,
          gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  LimenCast *cast;

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_screen_cast_start, NULL) ||
      !(cast = limen_cast_lookup (invocation, session_handle, &error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (cast->remote)
    {
      g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                           "A remote-desktop session is started through RemoteDesktop.Start");
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_cast_start (cast, invocation, handle, parent_window);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- the interface, with its properties computed when read ---- */

typedef LimenDbusImplPortalScreenCastSkeleton LimenKdeScreenCast;
typedef LimenDbusImplPortalScreenCastSkeletonClass LimenKdeScreenCastClass;
G_DEFINE_TYPE (LimenKdeScreenCast, limen_kde_screen_cast, LIMEN_DBUS_TYPE_IMPL_PORTAL_SCREEN_CAST_SKELETON)

/* Reading AvailableSourceTypes connects to the compositor (loading the Wayland module):
 * nothing of it is loaded before someone asks about screen sharing. */
static void
limen_kde_screen_cast_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == 1000)
    {
      g_value_set_uint (value, available_source_types ());
      return;
    }
  G_OBJECT_CLASS (limen_kde_screen_cast_parent_class)->get_property (object, prop_id, value, pspec);
}

/* The computed property is never stored; everything else is the skeleton's. */
static void
limen_kde_screen_cast_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id != 1000)
    G_OBJECT_CLASS (limen_kde_screen_cast_parent_class)->set_property (object, prop_id, value, pspec);
}

static void
limen_kde_screen_cast_class_init (LimenKdeScreenCastClass *klass)
{
  G_OBJECT_CLASS (klass)->get_property = limen_kde_screen_cast_get_property;
  G_OBJECT_CLASS (klass)->set_property = limen_kde_screen_cast_set_property;
  /* GObject asks the class that installed a property: install it here again. */
  g_object_class_override_property (G_OBJECT_CLASS (klass), 1000, "available-source-types");
}

static void
limen_kde_screen_cast_init (LimenKdeScreenCast *self)
{
}

GDBusInterfaceSkeleton *
limen_kde_screencast_new (void)
{
  LimenDbusImplPortalScreenCast *skeleton = g_object_new (limen_kde_screen_cast_get_type (), NULL);

  limen_dbus_impl_portal_screen_cast_set_version (skeleton, 5);
  limen_dbus_impl_portal_screen_cast_set_available_cursor_modes (skeleton, LIMEN_CURSOR_HIDDEN | LIMEN_CURSOR_EMBEDDED |
                                                                           LIMEN_CURSOR_METADATA);
  g_signal_connect (skeleton, "handle-create-session", G_CALLBACK (on_create_session), NULL);
  g_signal_connect (skeleton, "handle-select-sources", G_CALLBACK (on_select_sources), NULL);
  g_signal_connect (skeleton, "handle-start", G_CALLBACK (on_start), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
