/* Limen — screen-cast streams through KWin's zkde_screencast_unstable_v1: KWin makes a
 * PipeWire node per stream and tells us its id.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "wl-private.h"

struct _LimenWlStream {
  LimenWl                             *wl;
  struct zkde_screencast_stream_unstable_v1 *proxy;
  LimenWlStreamReady                   ready;
  LimenWlStreamClosed                  closed;
  gpointer                             user_data;
  gboolean                             answered;
};

static void
stream_closed (void *data, struct zkde_screencast_stream_unstable_v1 *proxy)
{
  LimenWlStream *stream = data;

  g_debug ("Wayland: KWin ended a stream");
  if (!stream->answered)
    {
      stream->answered = TRUE;
      stream->ready (stream, 0, "The compositor ended the stream before it started", stream->user_data);
    }
  else if (stream->closed)
    stream->closed (stream, stream->user_data);
}

static void
stream_created (void *data, struct zkde_screencast_stream_unstable_v1 *proxy, uint32_t node)
{
  LimenWlStream *stream = data;

  g_debug ("Wayland: KWin made PipeWire node %u", node);
  if (stream->answered)
    return;
  stream->answered = TRUE;
  stream->ready (stream, node, NULL, stream->user_data);
}

static void
stream_failed (void *data, struct zkde_screencast_stream_unstable_v1 *proxy, const char *error)
{
  LimenWlStream *stream = data;
  g_autofree char *message = g_strdup_printf ("The compositor could not start the stream: %s",
                                              error && *error ? error : "no reason given");

  g_debug ("Wayland: %s", message);
  if (stream->answered)
    {
      if (stream->closed)
        stream->closed (stream, stream->user_data);
      return;
    }
  stream->answered = TRUE;
  stream->ready (stream, 0, message, stream->user_data);
}

static const struct zkde_screencast_stream_unstable_v1_listener stream_listener = {
  stream_closed, stream_created, stream_failed
};

static LimenWlStream *
stream_new (LimenWl *wl, struct zkde_screencast_stream_unstable_v1 *proxy, LimenWlStreamReady ready,
            LimenWlStreamClosed closed, gpointer user_data)
{
  LimenWlStream *stream = g_new0 (LimenWlStream, 1);

  stream->wl = wl;
  stream->proxy = proxy;
  stream->ready = ready;
  stream->closed = closed;
  stream->user_data = user_data;
  zkde_screencast_stream_unstable_v1_add_listener (proxy, &stream_listener, stream);
  limen_wl_flush (wl);
  return stream;
}

LimenWlStream *
limen_wl_stream_output (LimenWl *wl, const char *output_name, guint cursor_mode, LimenWlStreamReady ready,
                        LimenWlStreamClosed closed, gpointer user_data)
{
  struct wl_output *output = limen_wl_find_output (wl, output_name);

  if (!wl->screencast || !output || wl->broken)
    return NULL;
  return stream_new (wl, zkde_screencast_unstable_v1_stream_output (wl->screencast, output, cursor_mode),
                     ready, closed, user_data);
}

LimenWlStream *
limen_wl_stream_window (LimenWl *wl, const char *uuid, guint cursor_mode, LimenWlStreamReady ready,
                        LimenWlStreamClosed closed, gpointer user_data)
{
  if (!wl->screencast || wl->broken || !uuid || !*uuid)
    return NULL;
  return stream_new (wl, zkde_screencast_unstable_v1_stream_window (wl->screencast, uuid, cursor_mode),
                     ready, closed, user_data);
}

LimenWlStream *
limen_wl_stream_virtual (LimenWl *wl, const char *name, int width, int height, guint cursor_mode,
                         LimenWlStreamReady ready, LimenWlStreamClosed closed, gpointer user_data)
{
  if (!wl->screencast || wl->screencast_version < 2 || wl->broken || width <= 0 || height <= 0)
    return NULL;
  return stream_new (wl, zkde_screencast_unstable_v1_stream_virtual_output (wl->screencast, name, width, height,
                                                                          wl_fixed_from_int (1), cursor_mode),
                     ready, closed, user_data);
}

LimenWlStream *
limen_wl_stream_region (LimenWl *wl, int x, int y, int width, int height, guint cursor_mode,
                        LimenWlStreamReady ready, LimenWlStreamClosed closed, gpointer user_data)
{
  if (!wl->screencast || wl->screencast_version < 3 || wl->broken || width <= 0 || height <= 0)
    return NULL;
  return stream_new (wl, zkde_screencast_unstable_v1_stream_region (wl->screencast, x, y, width, height,
                                                                   wl_fixed_from_int (1), cursor_mode),
                     ready, closed, user_data);
}

void
limen_wl_stream_close (LimenWlStream *stream)
{
  if (!stream)
    return;
  zkde_screencast_stream_unstable_v1_close (stream->proxy);
  limen_wl_flush (stream->wl);
  g_free (stream);
}
