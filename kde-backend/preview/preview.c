/* Limen — the picker's live previews: PipeWire streams consumed on the GLib main loop.
 *
 * Each stream asks for raw video in a 4-byte RGB format in shared memory (never DMA-BUF:
 * a preview needs a few thousand pixels, read on the CPU), and keeps no copy of a frame:
 * when a picture is due, the buffer is sampled straight into a small picture handed to the
 * caller, and given back to PipeWire. Frames in between are given back untouched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-preview.h"

#include <errno.h>
#include <glib-unix.h>
#include <string.h>

#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>

/* The most pictures a second a producer need record for a preview. */
#define PREVIEW_MAX_FPS 10

struct _LimenPreview {
  struct pw_loop    *loop;
  struct pw_context *context;
  struct pw_core    *core;
  struct spa_hook    core_listener;
  guint              source_id;   /* the loop's fd in the GLib main context */
};

struct _LimenPreviewStream {
  struct pw_stream           *stream;
  struct spa_hook             listener;
  struct spa_video_info_raw   format;
  gboolean                    have_format;
  int                         max_width, max_height;
  gint64                      interval_us, last_us;
  LimenPreviewFrame           frame;
  gpointer                    user_data;
  guint8                     *picture;   /* max_width × max_height × 4, reused */
};

static gboolean
on_loop_ready (int fd, GIOCondition condition, gpointer user_data)
{
  LimenPreview *preview = user_data;

  pw_loop_iterate (preview->loop, 0);
  return G_SOURCE_CONTINUE;
}

static void
on_core_error (void *data, uint32_t id, int seq, int res, const char *message)
{
  /* A stream KWin or WirePlumber refuses: that preview keeps its still. */
  g_debug ("PipeWire (previews): error on object %u: %s", id, message);
}

static const struct pw_core_events core_events = {
  PW_VERSION_CORE_EVENTS,
  .error = on_core_error,
};

LimenPreview *
limen_preview_connect (char **error_message)
{
  static gsize initialised;
  LimenPreview *preview;

  if (g_once_init_enter (&initialised))
    {
      pw_init (NULL, NULL);
      g_once_init_leave (&initialised, 1);
    }
  preview = g_new0 (LimenPreview, 1);
  preview->loop = pw_loop_new (NULL);
  if (preview->loop)
    preview->context = pw_context_new (preview->loop, NULL, 0);
  if (preview->context)
    preview->core = pw_context_connect (preview->context, NULL, 0);
  if (!preview->core)
    {
      *error_message = g_strdup_printf ("No PipeWire to preview with: %s", g_strerror (errno));
      limen_preview_disconnect (preview);
      return NULL;
    }
  pw_core_add_listener (preview->core, &preview->core_listener, &core_events, preview);
  pw_loop_enter (preview->loop);
  preview->source_id = g_unix_fd_add (pw_loop_get_fd (preview->loop), G_IO_IN, on_loop_ready, preview);
  return preview;
}

void
limen_preview_disconnect (LimenPreview *preview)
{
  if (!preview)
    return;
  if (preview->source_id)
    {
      g_source_remove (preview->source_id);
      pw_loop_leave (preview->loop);
    }
  if (preview->core)
    {
      spa_hook_remove (&preview->core_listener);
      pw_core_disconnect (preview->core);
    }
  if (preview->context)
    pw_context_destroy (preview->context);
  if (preview->loop)
    pw_loop_destroy (preview->loop);
  g_free (preview);
}

static void
on_param_changed (void *data, uint32_t id, const struct spa_pod *param)
{
  LimenPreviewStream *s = data;
  uint8_t buffer[256];
  struct spa_pod_builder builder = SPA_POD_BUILDER_INIT (buffer, sizeof buffer);
  const struct spa_pod *params[1];

  if (param == NULL || id != SPA_PARAM_Format)
    return;
  s->have_format = spa_format_video_raw_parse (param, &s->format) >= 0 && s->format.size.width > 0 &&
                   s->format.size.height > 0;
  g_debug ("PipeWire (previews): format %u, %u × %u, at most %u/%u a second", s->format.format,
           s->format.size.width, s->format.size.height, s->format.max_framerate.num, s->format.max_framerate.denom);
  /* Memory we can map, whatever else the producer could do; and few buffers: each is a
   * whole frame (4 MiB for a 1280 × 800 screen), mapped into limen-kde while the picker
   * shows, where a preview needs one at a time. */
  params[0] = spa_pod_builder_add_object (
    &builder, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
    SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int (2, 2, 3),
    SPA_PARAM_BUFFERS_dataType, SPA_POD_Int ((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
  pw_stream_update_params (s->stream, params, 1);
}

/* Sample @d into @s->picture, scaled to fit (nearest of four points per pixel, averaged:
 * enough for a thumbnail, and a plain colour stays exactly that colour). */
static gboolean
sample (LimenPreviewStream *s, const struct spa_data *d, int *out_width, int *out_height)
{
  const int w = s->format.size.width, h = s->format.size.height;
  const gboolean rgb = s->format.format == SPA_VIDEO_FORMAT_RGBx || s->format.format == SPA_VIDEO_FORMAT_RGBA;
  const guint32 stride = d->chunk->stride > 0 ? (guint32) d->chunk->stride : (guint32) w * 4;
  const guint8 *base = (const guint8 *) d->data + d->chunk->offset;
  double scale = MIN (1.0, MIN ((double) s->max_width / w, (double) s->max_height / h));
  int tw = MAX (1, (int) (w * scale)), th = MAX (1, (int) (h * scale));

  if (d->data == NULL || (guint64) d->chunk->offset + (guint64) stride * (h - 1) + (guint64) w * 4 > d->maxsize)
    return FALSE;
  for (int y = 0; y < th; y++)
    for (int x = 0; x < tw; x++)
      {
        guint sum[3] = { 0, 0, 0 };
        guint8 *out = s->picture + ((gsize) y * tw + x) * 4;

        for (int k = 0; k < 4; k++)
          {
            int sx = MIN (w - 1, (int) ((x + 0.25 + 0.5 * (k & 1)) * w / tw));
            int sy = MIN (h - 1, (int) ((y + 0.25 + 0.5 * (k >> 1)) * h / th));
            const guint8 *p = base + (gsize) sy * stride + (gsize) sx * 4;

            sum[0] += rgb ? p[2] : p[0];
            sum[1] += p[1];
            sum[2] += rgb ? p[0] : p[2];
          }
        out[0] = (sum[0] + 2) / 4, out[1] = (sum[1] + 2) / 4, out[2] = (sum[2] + 2) / 4, out[3] = 0xff;
      }
  *out_width = tw, *out_height = th;
  return TRUE;
}

static void
on_process (void *data)
{
  LimenPreviewStream *s = data;
  struct pw_buffer *b = pw_stream_dequeue_buffer (s->stream);
  gint64 now = g_get_monotonic_time ();
  int width, height;

  if (b == NULL)
    return;
  /* A buffer with no data (a cursor-only update) is not a picture. */
  if (s->have_format && now - s->last_us >= s->interval_us && b->buffer->n_datas > 0 &&
      b->buffer->datas[0].chunk->size > 0 && sample (s, &b->buffer->datas[0], &width, &height))
    {
      s->last_us = now;
      pw_stream_queue_buffer (s->stream, b);
      s->frame (width, height, width * 4, s->picture, s->user_data);
      return;
    }
  pw_stream_queue_buffer (s->stream, b);
}

static void
on_state_changed (void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
  if (state == PW_STREAM_STATE_ERROR)
    g_debug ("PipeWire (previews): a stream failed: %s", error ? error : "?");
}

static const struct pw_stream_events stream_events = {
  PW_VERSION_STREAM_EVENTS,
  .state_changed = on_state_changed,
  .param_changed = on_param_changed,
  .process = on_process,
};

LimenPreviewStream *
limen_preview_stream_new (LimenPreview *preview, guint32 node, int max_width, int max_height, guint interval_ms,
                          LimenPreviewFrame frame, gpointer user_data)
{
  LimenPreviewStream *s;
  uint8_t buffer[1024];
  struct spa_pod_builder builder = SPA_POD_BUILDER_INIT (buffer, sizeof buffer);
  const struct spa_pod *params[1];
  struct spa_rectangle min_size = SPA_RECTANGLE (1, 1), max_size = SPA_RECTANGLE (16384, 16384),
                       def_size = SPA_RECTANGLE (1280, 800);
  struct spa_fraction min_rate = SPA_FRACTION (0, 1), max_rate = SPA_FRACTION (1000, 1),
                      def_rate = SPA_FRACTION (10, 1), most = SPA_FRACTION (PREVIEW_MAX_FPS, 1),
                      least = SPA_FRACTION (1, 1);

  g_return_val_if_fail (max_width > 0 && max_height > 0, NULL);
  s = g_new0 (LimenPreviewStream, 1);
  s->max_width = max_width, s->max_height = max_height;
  s->interval_us = (gint64) interval_ms * 1000;
  s->last_us = G_MININT64 / 2;
  s->frame = frame, s->user_data = user_data;
  s->picture = g_malloc ((gsize) max_width * max_height * 4);
  /* Named (media.name) so that a look at the graph (pw-dump) tells the picker's streams apart. */
  s->stream = pw_stream_new (preview->core, "limen-picker-preview",
                             pw_properties_new (PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture",
                                                PW_KEY_MEDIA_ROLE, "Screen", NULL));
  if (!s->stream)
    {
      g_free (s->picture);
      g_free (s);
      return NULL;
    }
  pw_stream_add_listener (s->stream, &s->listener, &stream_events, s);
  params[0] = spa_pod_builder_add_object (
    &builder, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
    SPA_FORMAT_mediaType, SPA_POD_Id (SPA_MEDIA_TYPE_video),
    SPA_FORMAT_mediaSubtype, SPA_POD_Id (SPA_MEDIA_SUBTYPE_raw),
    SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id (5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx,
                                                     SPA_VIDEO_FORMAT_BGRA, SPA_VIDEO_FORMAT_RGBx,
                                                     SPA_VIDEO_FORMAT_RGBA),
    SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle (&def_size, &min_size, &max_size),
    SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction (&def_rate, &min_rate, &max_rate),
    /* A producer that honours it (KWin does) records no more than a preview shows. */
    SPA_FORMAT_VIDEO_maxFramerate, SPA_POD_CHOICE_RANGE_Fraction (&most, &least, &most));
  /* The node id as target: KWin's node is linked to us whatever WirePlumber's policy says. */
  if (pw_stream_connect (s->stream, PW_DIRECTION_INPUT, node, PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS,
                         params, 1) < 0)
    {
      limen_preview_stream_free (s);
      return NULL;
    }
  return s;
}

void
limen_preview_stream_free (LimenPreviewStream *s)
{
  if (!s)
    return;
  spa_hook_remove (&s->listener);
  pw_stream_destroy (s->stream);
  g_free (s->picture);
  g_free (s);
}
