/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The camera watch is the one PipeWire connection limen-portal keeps open. It lives on a
 * pw_thread_loop of its own, so neither connecting nor a slow or vanished daemon can ever
 * hold up the GLib main loop: the thread only sends finished snapshots of the camera set to
 * the main thread, which owns everything the portal reads.
 *
 * Reconnecting is driven by one timer on the PipeWire loop: a lost connection is torn down
 * there (never inside the core's own error callback) and tried again every few seconds. */
#include "camera-monitor.h"

#include <errno.h>
#include <pipewire/pipewire.h>

#define RETRY_SECONDS 2

typedef struct {
  struct pw_thread_loop *thread_loop;
  struct pw_context     *context;
  struct pw_core        *core;
  struct pw_registry    *registry;
  struct spa_hook        core_listener;
  struct spa_hook        registry_listener;
  struct spa_source     *timer;
  GArray                *cameras;       /* loop thread: guint32 node ids */
  gboolean               lost;          /* the core failed: reconnect on the timer */
  gboolean               told_absent;   /* "no PipeWire" logged since the last connection */
} Watch;

static Watch watch;
static GArray *main_nodes;              /* main thread: the last snapshot */
static LimenCameraMonitorFunc main_func;
static gpointer main_data;

static gboolean
deliver_snapshot (gpointer data)
{
  GArray *nodes = data;

  g_array_unref (main_nodes);
  main_nodes = g_array_ref (nodes);
  if (main_func)
    main_func ((const guint32 *) (gpointer) nodes->data, nodes->len, main_data);
  return G_SOURCE_REMOVE;
}

/* Loop thread: hand a copy of the camera set to the main thread. */
static void
post_snapshot (void)
{
  GArray *copy = g_array_sized_new (FALSE, FALSE, sizeof (guint32), watch.cameras->len);

  g_array_append_vals (copy, watch.cameras->data, watch.cameras->len);
  g_idle_add_full (G_PRIORITY_DEFAULT, deliver_snapshot, copy, (GDestroyNotify) g_array_unref);
}

static gboolean
is_camera (const char *type, const struct spa_dict *props)
{
  return g_strcmp0 (type, PW_TYPE_INTERFACE_Node) == 0 && props != NULL &&
         g_strcmp0 (spa_dict_lookup (props, PW_KEY_MEDIA_CLASS), "Video/Source") == 0 &&
         g_strcmp0 (spa_dict_lookup (props, PW_KEY_MEDIA_ROLE), "Camera") == 0;
}

static void
on_global (void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
           const struct spa_dict *props)
{
  if (!is_camera (type, props))
    return;
  g_debug ("PipeWire camera node %u (%s) appeared", id, spa_dict_lookup (props, PW_KEY_NODE_NAME));
  g_array_append_val (watch.cameras, id);
  post_snapshot ();
}

static void
on_global_remove (void *data, uint32_t id)
{
  for (guint i = 0; i < watch.cameras->len; i++)
    if (g_array_index (watch.cameras, guint32, i) == id)
      {
        g_debug ("PipeWire camera node %u went away", id);
        g_array_remove_index (watch.cameras, i);
        post_snapshot ();
        return;
      }
}

static const struct pw_registry_events registry_events = {
  PW_VERSION_REGISTRY_EVENTS,
  .global = on_global,
  .global_remove = on_global_remove,
};

static void
arm_timer (int seconds)
{
  struct timespec value = { seconds, seconds ? 0 : 1 };   /* {0, 0} would disarm it */
  struct timespec interval = { 0, 0 };

  pw_loop_update_timer (pw_thread_loop_get_loop (watch.thread_loop), watch.timer, &value, &interval, false);
}

static void
on_core_error (void *data, uint32_t id, int seq, int res, const char *message)
{
  if (id != PW_ID_CORE || watch.lost)
    return;
  g_message ("Lost the PipeWire connection watching for cameras (%s): retrying", message);
  watch.lost = TRUE;
  arm_timer (0);
}

/* The registry's first listing is complete: the main thread hears the camera set even when
 * it is empty, so a reader waiting for the first answer gets one. */
static void
on_core_done (void *data, uint32_t id, int seq)
{
  if (id == PW_ID_CORE)
    post_snapshot ();
}

static const struct pw_core_events core_events = {
  PW_VERSION_CORE_EVENTS,
  .done = on_core_done,
  .error = on_core_error,
};

static void
disconnect (void)
{
  if (watch.registry)
    {
      spa_hook_remove (&watch.registry_listener);
      pw_proxy_destroy ((struct pw_proxy *) watch.registry);
      watch.registry = NULL;
    }
  if (watch.core)
    {
      spa_hook_remove (&watch.core_listener);
      pw_core_disconnect (watch.core);
      watch.core = NULL;
    }
  if (watch.cameras->len > 0)
    {
      g_array_set_size (watch.cameras, 0);
      post_snapshot ();
    }
}

/* Loop thread, on the timer: (re)connect; on failure try again later. */
static void
on_timer (void *data, uint64_t expirations)
{
  struct pw_properties *props;

  if (watch.core && !watch.lost)
    return;
  disconnect ();
  watch.lost = FALSE;
  /* The portal's own connection: WirePlumber's portal access script leaves it alone. */
  props = pw_properties_new (PW_KEY_APP_NAME, "limen-portal camera monitor",
                             "pipewire.access.portal.is_portal", "yes", NULL);
  watch.core = pw_context_connect (watch.context, props, 0);
  if (watch.core == NULL)
    {
      if (!watch.told_absent)
        g_message ("PipeWire is not running (%s): no camera until it starts", g_strerror (errno));
      watch.told_absent = TRUE;
      post_snapshot ();
      arm_timer (RETRY_SECONDS);
      return;
    }
  if (watch.told_absent)
    g_message ("PipeWire is running: watching it for cameras");
  watch.told_absent = FALSE;
  pw_core_add_listener (watch.core, &watch.core_listener, &core_events, NULL);
  watch.registry = pw_core_get_registry (watch.core, PW_VERSION_REGISTRY, 0);
  pw_registry_add_listener (watch.registry, &watch.registry_listener, &registry_events, NULL);
  pw_core_sync (watch.core, PW_ID_CORE, 0);
}

void
limen_camera_monitor_start (LimenCameraMonitorFunc func, gpointer user_data)
{
  g_return_if_fail (watch.thread_loop == NULL);

  main_nodes = g_array_new (FALSE, FALSE, sizeof (guint32));
  main_func = func;
  main_data = user_data;
  pw_init (NULL, NULL);
  watch.cameras = g_array_new (FALSE, FALSE, sizeof (guint32));
  watch.thread_loop = pw_thread_loop_new ("limen-camera", NULL);
  watch.context = watch.thread_loop ? pw_context_new (pw_thread_loop_get_loop (watch.thread_loop), NULL, 0) : NULL;
  if (watch.context == NULL)
    {
      g_warning ("Cannot set up PipeWire to watch for cameras: %s", g_strerror (errno));
      return;
    }
  watch.timer = pw_loop_add_timer (pw_thread_loop_get_loop (watch.thread_loop), on_timer, NULL);
  if (pw_thread_loop_start (watch.thread_loop) < 0)
    {
      g_warning ("Cannot start the PipeWire camera watch thread");
      return;
    }
  pw_thread_loop_lock (watch.thread_loop);
  arm_timer (0);
  pw_thread_loop_unlock (watch.thread_loop);
}

const guint32 *
limen_camera_monitor_get_nodes (guint *n_nodes)
{
  *n_nodes = main_nodes ? main_nodes->len : 0;
  return main_nodes ? (const guint32 *) (gpointer) main_nodes->data : NULL;
}
