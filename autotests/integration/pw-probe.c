/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Test helper: what can be seen through a PipeWire remote fd (the one OpenPipeWireRemote
 * hands out). Usage: limen-pw-probe FD [WAIT_GONE_ID [SECONDS]]
 * Prints one line per visible global, "ID TYPE media.class node.name", then "synced".
 * With WAIT_GONE_ID it keeps listening and prints "gone ID" when that global disappears
 * from this remote (exit 0), or exits 3 when it is still there after SECONDS. */
#include <pipewire/pipewire.h>
#include <stdio.h>
#include <stdlib.h>

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

int
main (int argc, char **argv)
{
  struct pw_context *context;
  struct pw_core *core;
  struct pw_registry *registry;
  struct spa_hook core_listener, registry_listener;
  struct spa_source *timer;
  struct timespec value = { 0 };

  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FD [WAIT_GONE_ID [SECONDS]]\n", argv[0]);
      return 1;
    }
  pw_init (&argc, &argv);
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
