/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Test helper: what can be seen through a PipeWire remote fd (the one OpenPipeWireRemote
 * hands out). Usage: limen-pw-probe FD [WAIT_GONE_ID [SECONDS]]
 * Prints one line per visible global, "ID TYPE media.class node.name", then "synced".
 * With WAIT_GONE_ID it keeps listening and prints "gone ID" when that global disappears
 * from this remote (exit 0), or exits 3 when it is still there after SECONDS.
 *
 * limen-pw-probe --frames FD TARGET [COUNT [SECONDS]] is a video consumer as a browser
 * would be: it connects a stream to TARGET through the remote FD (a node id, or
 * "serial:N" for the node whose object.serial is N: WirePlumber reads a numeric
 * target.object as a serial, never as an id) and prints "format W H" once negotiated, then
 * "frame SEC.NSEC W H B G R" (CLOCK_MONOTONIC, the stream's size, the centre pixel) for
 * every buffer that carries data, and "state NAME SEC.NSEC" as the stream's state
 * changes. It exits 0 after COUNT frames (COUNT 0: when SECONDS are over, saying
 * "frames N"), 3 when SECONDS pass first. */
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct pw_main_loop *loop;
static uint32_t wait_gone = SPA_ID_INVALID;
static int sync_seq;
static int status = 2;

static void
on_global (void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
           const struct spa_dict *props)
{
  const char *cls = props ? spa_dict_lookup (props, PW_KEY_MEDIA_CLASS) : NULL;
  const char *name = props ? spa_dict_lookup (props, PW_KEY_NODE_NAME) : NULL;

  printf ("%u %s %s %s\n", id, type, cls ? cls : "-", name ? name : "-");
  fflush (stdout);
}

static void
on_global_remove (void *data, uint32_t id)
{
  printf ("removed %u\n", id);
  fflush (stdout);
  if (id == wait_gone)
    {
      printf ("gone %u\n", id);
      status = 0;
      pw_main_loop_quit (loop);
    }
}

static const struct pw_registry_events registry_events = {
  PW_VERSION_REGISTRY_EVENTS,
  .global = on_global,
  .global_remove = on_global_remove,
};

static void
on_done (void *data, uint32_t id, int seq)
{
  if (id != PW_ID_CORE || seq != sync_seq)
    return;
  printf ("synced\n");
  fflush (stdout);
  if (wait_gone == SPA_ID_INVALID)
    {
      status = 0;
      pw_main_loop_quit (loop);
    }
}

static void
on_error (void *data, uint32_t id, int seq, int res, const char *message)
{
  fprintf (stderr, "error on %u: %s\n", id, message);
  if (id == PW_ID_CORE)
    pw_main_loop_quit (loop);
}

static const struct pw_core_events core_events = {
  PW_VERSION_CORE_EVENTS,
  .done = on_done,
  .error = on_error,
};

static void
on_timeout (void *data, uint64_t expirations)
{
  status = 3;
  pw_main_loop_quit (loop);
}

static struct pw_stream *stream;
static struct spa_video_info_raw video;
static long frames_wanted, frames_seen;

static void
on_param_changed (void *data, uint32_t id, const struct spa_pod *param)
{
  if (param == NULL || id != SPA_PARAM_Format)
    return;
  if (spa_format_video_raw_parse (param, &video) < 0)
    return;
  printf ("format %u %u\n", video.size.width, video.size.height);
  fflush (stdout);
}

/* The centre pixel of a 4-byte-per-pixel frame (BGRx/BGRA as KWin sends), or zeros. */
static void
centre_pixel (const struct spa_data *d, unsigned char bgr[3])
{
  uint32_t stride = d->chunk->stride > 0 ? (uint32_t) d->chunk->stride : video.size.width * 4;
  uint64_t at = (uint64_t) d->chunk->offset + (uint64_t) (video.size.height / 2) * stride + (video.size.width / 2) * 4;

  memset (bgr, 0, 3);
  if (d->data != NULL && at + 3 <= d->maxsize)
    memcpy (bgr, (const unsigned char *) d->data + at, 3);
}

static void
on_process (void *data)
{
  struct pw_buffer *b = pw_stream_dequeue_buffer (stream);
  struct timespec now;
  unsigned char bgr[3];

  if (b == NULL)
    return;
  /* A buffer with no data (a cursor-only update) is not a frame. */
  if (b->buffer->n_datas > 0 && b->buffer->datas[0].chunk->size > 0)
    {
      clock_gettime (CLOCK_MONOTONIC, &now);
      centre_pixel (&b->buffer->datas[0], bgr);
      printf ("frame %lld.%09ld %u %u %u %u %u\n", (long long) now.tv_sec, now.tv_nsec, video.size.width,
              video.size.height, bgr[0], bgr[1], bgr[2]);
      fflush (stdout);
      frames_seen++;
    }
  pw_stream_queue_buffer (stream, b);
  if (frames_wanted > 0 && frames_seen >= frames_wanted)
    {
      status = 0;
      pw_main_loop_quit (loop);
    }
}

static void
on_state_changed (void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  printf ("state %s %lld.%09ld\n", pw_stream_state_as_string (state), (long long) now.tv_sec, now.tv_nsec);
  fflush (stdout);
}

static const struct pw_stream_events stream_events = {
  PW_VERSION_STREAM_EVENTS,
  .state_changed = on_state_changed,
  .param_changed = on_param_changed,
  .process = on_process,
};

static void
on_frames_timeout (void *data, uint64_t expirations)
{
  if (frames_wanted == 0)
    {
      printf ("frames %ld\n", frames_seen);
      status = 0;
    }
  else
    status = 3;
  pw_main_loop_quit (loop);
}

/* --frames FD TARGET [COUNT [SECONDS]] */
static int
consume (int argc, char **argv)
{
  struct pw_context *context;
  struct pw_core *core;
  struct spa_source *timer;
  struct timespec value = { 0 };
  uint8_t buffer[1024];
  struct spa_pod_builder builder = SPA_POD_BUILDER_INIT (buffer, sizeof buffer);
  const struct spa_pod *params[1];
  struct spa_rectangle min_size = SPA_RECTANGLE (1, 1), max_size = SPA_RECTANGLE (16384, 16384),
                       def_size = SPA_RECTANGLE (1280, 800);
  struct spa_fraction min_rate = SPA_FRACTION (0, 1), max_rate = SPA_FRACTION (1000, 1),
                      def_rate = SPA_FRACTION (60, 1);

  const char *serial = strncmp (argv[3], "serial:", 7) == 0 ? argv[3] + 7 : NULL;
  uint32_t target_id = serial ? PW_ID_ANY : (uint32_t) strtoul (argv[3], NULL, 10);

  frames_wanted = argc > 4 ? atol (argv[4]) : 1;
  value.tv_sec = argc > 5 ? atoi (argv[5]) : 10;
  loop = pw_main_loop_new (NULL);
  context = pw_context_new (pw_main_loop_get_loop (loop), NULL, 0);
  core = pw_context_connect_fd (context, atoi (argv[2]), NULL, 0);
  if (core == NULL)
    {
      perror ("connect");
      return 1;
    }
  stream = pw_stream_new (core, "limen-pw-probe",
                          pw_properties_new (PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture",
                                             PW_KEY_MEDIA_ROLE, "Screen", serial ? PW_KEY_TARGET_OBJECT : NULL,
                                             serial, NULL));
  static struct spa_hook stream_listener;
  pw_stream_add_listener (stream, &stream_listener, &stream_events, NULL);
  params[0] = spa_pod_builder_add_object (
    &builder, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
    SPA_FORMAT_mediaType, SPA_POD_Id (SPA_MEDIA_TYPE_video),
    SPA_FORMAT_mediaSubtype, SPA_POD_Id (SPA_MEDIA_SUBTYPE_raw),
    SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id (5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx,
                                                     SPA_VIDEO_FORMAT_BGRA, SPA_VIDEO_FORMAT_RGBx,
                                                     SPA_VIDEO_FORMAT_RGBA),
    SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle (&def_size, &min_size, &max_size),
    SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction (&def_rate, &min_rate, &max_rate));
  /* A node id goes the old way (node.target), which WirePlumber matches against ids. */
  if (pw_stream_connect (stream, PW_DIRECTION_INPUT, target_id,
                         PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS, params, 1) < 0)
    {
      fprintf (stderr, "cannot connect the stream\n");
      return 1;
    }
  timer = pw_loop_add_timer (pw_main_loop_get_loop (loop), on_frames_timeout, NULL);
  pw_loop_update_timer (pw_main_loop_get_loop (loop), timer, &value, NULL, false);
  pw_main_loop_run (loop);
  pw_stream_destroy (stream);
  return status;
}

int
main (int argc, char **argv)
{
  struct pw_context *context;
  struct pw_core *core;
  struct pw_registry *registry;
  struct spa_hook core_listener, registry_listener;
  struct spa_source *timer;
  struct timespec value = { 0 };

  if (argc < 2 || (strcmp (argv[1], "--frames") == 0 && argc < 4))
    {
      fprintf (stderr, "usage: %s FD [WAIT_GONE_ID [SECONDS]] | --frames FD TARGET [COUNT [SECONDS]]\n", argv[0]);
      return 1;
    }
  pw_init (&argc, &argv);
  if (strcmp (argv[1], "--frames") == 0)
    return consume (argc, argv);
  if (argc > 2)
    wait_gone = (uint32_t) strtoul (argv[2], NULL, 10);
  value.tv_sec = argc > 3 ? atoi (argv[3]) : 10;
  loop = pw_main_loop_new (NULL);
  context = pw_context_new (pw_main_loop_get_loop (loop), NULL, 0);
  core = pw_context_connect_fd (context, atoi (argv[1]), NULL, 0);
  if (core == NULL)
    {
      perror ("connect");
      return 1;
    }
  pw_core_add_listener (core, &core_listener, &core_events, NULL);
  registry = pw_core_get_registry (core, PW_VERSION_REGISTRY, 0);
  pw_registry_add_listener (registry, &registry_listener, &registry_events, NULL);
  sync_seq = pw_core_sync (core, PW_ID_CORE, 0);
  timer = pw_loop_add_timer (pw_main_loop_get_loop (loop), on_timeout, NULL);
  pw_loop_update_timer (pw_main_loop_get_loop (loop), timer, &value, NULL, false);
  pw_main_loop_run (loop);
  return status;
}
