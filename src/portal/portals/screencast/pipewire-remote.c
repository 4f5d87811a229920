/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A caller of ScreenCast.OpenPipeWireRemote gets the socket of a PipeWire connection that
 * we opened ourselves and then lowered: PipeWire lets a client reduce its own permissions
 * but never raise them again, so once the default (PW_ID_ANY) is 0 and only the session's
 * nodes are readable, whoever holds the socket can see nothing else, now or later.
 *
 * Every operation is a short exchange on a connection of its own, run in a GTask worker
 * thread and bounded by a deadline: nothing stays connected between calls, so there is no
 * PipeWire event source in the GLib main loop, and a stuck PipeWire daemon never stalls
 * the portal. The bookkeeping of handed-out remotes stays on the main thread.
 *
 * PipeWire reuses global ids: the id of a caller's client that went away is soon the id of
 * the next remote handed out, maybe to another session. So a remote is known by its client's
 * object.serial, which is never reused, and a revoke looks for the client with that serial
 * among this process's own (pipewire.sec.pid is set by the daemon; no client can change it). */
#include "pipewire-remote.h"

#include <errno.h>
#include <unistd.h>
#include <pipewire/pipewire.h>

#include "errors.h"

#define REMOTE_TIMEOUT_MS 3000

typedef struct {
  struct pw_loop     *loop;
  struct pw_context  *context;
  struct pw_core     *core;
  struct pw_registry *registry;
  struct spa_hook     core_listener;
  struct spa_hook     client_listener;
  struct spa_hook     registry_listener;
  int                 sync_seq;
  gboolean            synced;
  int                 error;
  char               *error_message;
  guint32             client_id;       /* own client global, from its info event */
  guint32             client_node_factory;  /* what a consumer's stream is made with */
  GArray             *own_clients;     /* OwnClient: the clients of this process the registry shows */
  const guint32      *want_nodes;      /* serials: the nodes looked up */
  guint               n_want_nodes;
  guint64            *serials;         /* serials: their object.serial, 0 while unseen */
} Conn;

typedef struct {
  guint32 id;
  guint64 serial;
} OwnClient;

static void
ensure_init (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      pw_init (NULL, NULL);
      g_once_init_leave (&once, 1);
    }
}

static void
on_core_done (void *data, uint32_t id, int seq)
{
  Conn *c = data;

  if (id == PW_ID_CORE && seq == c->sync_seq)
    c->synced = TRUE;
}

static void
on_core_error (void *data, uint32_t id, int seq, int res, const char *message)
{
  Conn *c = data;

  /* Only errors on the core itself end the exchange; a refused bind shows up as the
   * client not being found. */
  if (id != PW_ID_CORE)
    return;
  c->error = res;
  g_free (c->error_message);
  c->error_message = g_strdup (message);
}

static const struct pw_core_events core_events = {
  PW_VERSION_CORE_EVENTS,
  .done = on_core_done,
  .error = on_core_error,
};

static void
on_client_info (void *data, const struct pw_client_info *info)
{
  Conn *c = data;

  c->client_id = info->id;
}

static const struct pw_client_events client_events = {
  PW_VERSION_CLIENT_EVENTS,
  .info = on_client_info,
};

static void
on_registry_global (void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                    const struct spa_dict *props)
{
  Conn *c = data;
  const char *pid, *serial;

  if (g_strcmp0 (type, PW_TYPE_INTERFACE_Factory) == 0 && props != NULL &&
      g_strcmp0 (spa_dict_lookup (props, PW_KEY_FACTORY_NAME), "client-node") == 0)
    c->client_node_factory = id;
  if (c->serials != NULL && g_strcmp0 (type, PW_TYPE_INTERFACE_Node) == 0 && props != NULL)
    for (guint i = 0; i < c->n_want_nodes; i++)
      {
        const char *serial = spa_dict_lookup (props, PW_KEY_OBJECT_SERIAL);

        if (c->want_nodes[i] == id && serial != NULL)
          c->serials[i] = g_ascii_strtoull (serial, NULL, 10);
      }
  if (c->own_clients == NULL || g_strcmp0 (type, PW_TYPE_INTERFACE_Client) != 0 || props == NULL)
    return;
  pid = spa_dict_lookup (props, PW_KEY_SEC_PID);
  serial = spa_dict_lookup (props, PW_KEY_OBJECT_SERIAL);
  if (pid != NULL && g_ascii_strtoll (pid, NULL, 10) == (gint64) getpid () && serial != NULL)
    {
      OwnClient own = { id, g_ascii_strtoull (serial, NULL, 10) };

      g_array_append_val (c->own_clients, own);
    }
}

static const struct pw_registry_events registry_events = {
  PW_VERSION_REGISTRY_EVENTS,
  .global = on_registry_global,
};

static void
conn_close (Conn *c)
{
  if (c->registry)
    {
      spa_hook_remove (&c->registry_listener);
      pw_proxy_destroy ((struct pw_proxy *) c->registry);
    }
  if (c->core)
    {
      spa_hook_remove (&c->client_listener);
      spa_hook_remove (&c->core_listener);
      pw_core_disconnect (c->core);
    }
  if (c->context)
    pw_context_destroy (c->context);
  if (c->loop)
    pw_loop_destroy (c->loop);
  if (c->own_clients)
    g_array_unref (c->own_clients);
  g_free (c->error_message);
  memset (c, 0, sizeof *c);
}

/* Connect with @props (consumed); FALSE + NotFound when no daemon listens. */
static gboolean
conn_open (Conn *c, struct pw_properties *props, GError **error)
{
  ensure_init ();
  memset (c, 0, sizeof *c);
  c->loop = pw_loop_new (NULL);
  c->context = c->loop ? pw_context_new (c->loop, NULL, 0) : NULL;
  if (c->context == NULL)
    {
      pw_properties_free (props);
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "PipeWire: cannot set up a context: %s",
                   g_strerror (errno));
      return FALSE;
    }
  c->core = pw_context_connect (c->context, props, 0);
  if (c->core == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "PipeWire is not running: %s", g_strerror (errno));
      return FALSE;
    }
  pw_core_add_listener (c->core, &c->core_listener, &core_events, c);
  pw_client_add_listener (pw_core_get_client (c->core), &c->client_listener, &client_events, c);
  return TRUE;
}

/* Send a sync and dispatch until the daemon answers it: everything sent before has been
 * handled by then. FALSE + error on a core error, a lost connection or the deadline. */
static gboolean
conn_roundtrip (Conn *c, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + REMOTE_TIMEOUT_MS * 1000;

  c->synced = FALSE;
  c->sync_seq = pw_core_sync (c->core, PW_ID_CORE, 0);
  pw_loop_enter (c->loop);
  while (!c->synced && c->error == 0)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      int res;

      if (left <= 0)
        break;
      res = pw_loop_iterate (c->loop, (int) MIN (left, 200));
      if (res < 0 && res != -EINTR)
        {
          c->error = res;
          break;
        }
    }
  pw_loop_leave (c->loop);
  if (c->synced && c->error == 0)
    return TRUE;
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "PipeWire did not answer: %s",
               c->error_message ? c->error_message
                                : c->error ? g_strerror (-c->error) : "timed out");
  return FALSE;
}

/* Client serials of the remotes handed out and not yet revoked (guint64 keys). */
static GHashTable *handed_out;

/* The serial of this process's client @id among those the registry showed; 0 if none. */
static guint64
own_client_serial (Conn *c, guint32 id)
{
  for (guint i = 0; i < c->own_clients->len; i++)
    if (g_array_index (c->own_clients, OwnClient, i).id == id)
      return g_array_index (c->own_clients, OwnClient, i).serial;
  return 0;
}

/* The id of this process's client with @serial, now; SPA_ID_INVALID when it is gone. */
static guint32
own_client_id (Conn *c, guint64 serial)
{
  for (guint i = 0; i < c->own_clients->len; i++)
    if (g_array_index (c->own_clients, OwnClient, i).serial == serial)
      return g_array_index (c->own_clients, OwnClient, i).id;
  return SPA_ID_INVALID;
}

/* Lower @c's own permissions to the core, itself, the client-node factory and @nodes;
 * *@serial: its client's object.serial. */
static gboolean
restrict_to (Conn *c, const guint32 *nodes, guint n_nodes, guint64 *serial, GError **error)
{
  g_autofree struct pw_permission *perms = g_new0 (struct pw_permission, n_nodes + 4);
  guint n = 0;

  /* First learn our own client's id and the factory consumers make their streams with: the
   * connection must keep seeing itself and the core, or the daemon stops answering it, and
   * without the factory a consumer cannot connect a stream to the session's nodes. */
  c->client_node_factory = SPA_ID_INVALID;
  c->own_clients = g_array_new (FALSE, FALSE, sizeof (OwnClient));
  c->registry = pw_core_get_registry (c->core, PW_VERSION_REGISTRY, 0);
  pw_registry_add_listener (c->registry, &c->registry_listener, &registry_events, c);
  if (!conn_roundtrip (c, error))
    return FALSE;
  if (c->client_id == 0 || c->client_id == SPA_ID_INVALID || c->client_node_factory == SPA_ID_INVALID ||
      (*serial = own_client_serial (c, c->client_id)) == 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                           "PipeWire did not show the remote's client, its serial or the client-node factory");
      return FALSE;
    }
  /* Then everything hidden, present or future, except those and the session's nodes. The
   * default comes last: the daemon resolves each id as the connection sees it so far. */
  perms[n++] = PW_PERMISSION_INIT (PW_ID_CORE, PW_PERM_R | PW_PERM_X);
  perms[n++] = PW_PERMISSION_INIT (c->client_id, PW_PERM_R | PW_PERM_X);
  perms[n++] = PW_PERMISSION_INIT (c->client_node_factory, PW_PERM_R | PW_PERM_X);
  for (guint i = 0; i < n_nodes; i++)
    if (nodes[i] != PW_ID_ANY)
      perms[n++] = PW_PERMISSION_INIT (nodes[i], PW_PERM_R | PW_PERM_X);
  perms[n++] = PW_PERMISSION_INIT (PW_ID_ANY, 0);
  pw_client_update_permissions (pw_core_get_client (c->core), n, perms);
  if (!conn_roundtrip (c, error))
    return FALSE;
  /* The registry is ours, not the caller's: gone from the daemon before the socket changes
   * hands, so that no event for it reaches the caller's PipeWire (which knows no such
   * object, and logs it). */
  spa_hook_remove (&c->registry_listener);
  pw_proxy_destroy ((struct pw_proxy *) c->registry);
  c->registry = NULL;
  return conn_roundtrip (c, error);
}

typedef struct {
  guint32 *nodes;
  guint    n_nodes;
  guint64 *serials;    /* serials lookups: the answer */
  guint64  client;     /* the remote's client serial */
  gboolean end;        /* revoke: disconnect the client rather than hide nodes from it */
  char    *app_id;     /* NULL, or the portal app id WirePlumber's access script reads */
  char    *media_roles;
} Job;

static void
job_free (Job *job)
{
  g_free (job->nodes);
  g_free (job->serials);
  g_free (job->app_id);
  g_free (job->media_roles);
  g_free (job);
}

static Job *
job_new (const guint32 *nodes, guint n_nodes, guint64 client)
{
  Job *job = g_new0 (Job, 1);

  job->nodes = g_memdup2 (nodes, sizeof (guint32) * n_nodes);
  job->n_nodes = n_nodes;
  job->client = client;
  return job;
}

/* Worker thread: each job has a loop and context of its own, nothing is shared. */
static void
open_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  struct pw_properties *props = pw_properties_new (PW_KEY_APP_NAME, "limen-portal remote", NULL);
  Conn c;
  int fd;

  /* Tagged for WirePlumber's portal access script, it also follows the permission store for
   * nodes of these roles that appear later, and hides them again when the answer changes. */
  if (job->app_id)
    pw_properties_setf (props, "pipewire.access.portal.app_id", "%s", job->app_id);
  if (job->media_roles)
    pw_properties_setf (props, "pipewire.access.portal.media_roles", "%s", job->media_roles);
  if (!conn_open (&c, props, &error) ||
      !restrict_to (&c, job->nodes, job->n_nodes, &job->client, &error))
    {
      conn_close (&c);
      g_task_return_error (task, error);
      return;
    }
  fd = pw_core_steal_fd (c.core);
  g_debug ("PipeWire remote: client %u, serial %" G_GUINT64_FORMAT, c.client_id, job->client);
  conn_close (&c);
  if (fd < 0)
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "PipeWire remote has no socket: %s",
                             g_strerror (-fd));
  else
    g_task_return_int (task, fd);
}

void
limen_pipewire_remote_open_for_app_async (const guint32 *nodes, guint n_nodes, const char *app_id,
                                          const char *media_roles, GAsyncReadyCallback callback,
                                          gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);
  Job *job = job_new (nodes, n_nodes, 0);

  ensure_init ();
  job->app_id = g_strdup (app_id);
  job->media_roles = g_strdup (media_roles);
  g_task_set_source_tag (task, limen_pipewire_remote_open_async);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, open_in_thread);
}

void
limen_pipewire_remote_open_async (const guint32 *nodes, guint n_nodes, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  limen_pipewire_remote_open_for_app_async (nodes, n_nodes, NULL, NULL, callback, user_data);
}

int
limen_pipewire_remote_open_finish (GAsyncResult *result, guint64 *client, GError **error)
{
  Job *job = g_task_get_task_data (G_TASK (result));
  int fd = (int) g_task_propagate_int (G_TASK (result), error);

  if (fd < 0)
    return -1;
  *client = job->client;
  if (handed_out == NULL)
    handed_out = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_hash_table_add (handed_out, g_memdup2 (&job->client, sizeof job->client));
  g_debug ("PipeWire remote %" G_GUINT64_FORMAT ": %u node(s) visible", job->client, job->n_nodes);
  return fd;
}

typedef enum {
  REVOKE_FAILED,
  REVOKE_GONE,   /* the remote's client has gone: nothing left to hide */
  REVOKE_DONE,
} RevokeResult;

/* On the manager connection @c: lower the permissions of the client with @serial (one of this
 * process's) on @nodes to nothing. */
static RevokeResult
revoke_on (Conn *c, guint64 serial, gboolean end, const guint32 *nodes, guint n_nodes, GError **error)
{
  g_autofree struct pw_permission *perms = g_new0 (struct pw_permission, n_nodes);
  struct pw_client *client;
  guint32 id;
  gboolean ok;

  c->own_clients = g_array_new (FALSE, FALSE, sizeof (OwnClient));
  c->registry = pw_core_get_registry (c->core, PW_VERSION_REGISTRY, 0);
  pw_registry_add_listener (c->registry, &c->registry_listener, &registry_events, c);
  if (!conn_roundtrip (c, error))
    return REVOKE_FAILED;
  id = own_client_id (c, serial);
  if (id == SPA_ID_INVALID)
    return REVOKE_GONE;
  if (end)
    {
      /* A client of this process: the daemon lets its creator destroy it. */
      pw_registry_destroy (c->registry, id);
      return conn_roundtrip (c, error) ? REVOKE_DONE : REVOKE_FAILED;
    }
  client = pw_registry_bind (c->registry, id, PW_TYPE_INTERFACE_Client, PW_VERSION_CLIENT, 0);
  if (client == NULL)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "cannot bind the remote's client");
      return REVOKE_FAILED;
    }
  for (guint i = 0; i < n_nodes; i++)
    perms[i] = PW_PERMISSION_INIT (nodes[i], 0);
  pw_client_update_permissions (client, n_nodes, perms);
  ok = conn_roundtrip (c, error);
  pw_proxy_destroy ((struct pw_proxy *) client);
  return ok ? REVOKE_DONE : REVOKE_FAILED;
}

static void
revoke_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  g_autoptr(GError) error = NULL;
  Conn c;

  if (!conn_open (&c, pw_properties_new (PW_KEY_APP_NAME, "limen-portal", NULL), &error))
    {
      g_message ("Could not hide ended streams from PipeWire remote %" G_GUINT64_FORMAT ": %s", job->client,
                 error->message);
      conn_close (&c);
      return;
    }
  switch (revoke_on (&c, job->client, job->end, job->nodes, job->n_nodes, &error))
    {
    case REVOKE_FAILED:
      g_message ("Could not hide ended streams from PipeWire remote %" G_GUINT64_FORMAT ": %s", job->client,
                 error->message);
      break;
    case REVOKE_GONE:
      g_debug ("PipeWire remote %" G_GUINT64_FORMAT " is gone: nothing to hide", job->client);
      break;
    case REVOKE_DONE:
      g_debug ("PipeWire remote %" G_GUINT64_FORMAT " no longer sees %u node(s)", job->client, job->n_nodes);
      break;
    }
  conn_close (&c);
}

void
limen_pipewire_remote_revoke (guint64 client, const guint32 *nodes, guint n_nodes)
{
  g_autoptr(GTask) task = NULL;

  if (handed_out == NULL || !g_hash_table_remove (handed_out, &client) || n_nodes == 0)
    return;
  task = g_task_new (NULL, NULL, NULL, NULL);
  g_task_set_task_data (task, job_new (nodes, n_nodes, client), (GDestroyNotify) job_free);
  g_task_run_in_thread (task, revoke_in_thread);
}

void
limen_pipewire_remote_end (guint64 client)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  if (handed_out == NULL || !g_hash_table_remove (handed_out, &client))
    return;
  job = job_new (NULL, 0, client);
  job->end = TRUE;
  task = g_task_new (NULL, NULL, NULL, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, revoke_in_thread);
}

/* Worker thread: one look at the registry, as the daemon shows it to a client of ours. */
static void
serials_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  Conn c;

  if (!conn_open (&c, pw_properties_new (PW_KEY_APP_NAME, "limen-portal", NULL), &error))
    {
      conn_close (&c);
      g_task_return_error (task, error);
      return;
    }
  job->serials = g_new0 (guint64, job->n_nodes);
  c.want_nodes = job->nodes;
  c.n_want_nodes = job->n_nodes;
  c.serials = job->serials;
  c.registry = pw_core_get_registry (c.core, PW_VERSION_REGISTRY, 0);
  pw_registry_add_listener (c.registry, &c.registry_listener, &registry_events, &c);
  if (!conn_roundtrip (&c, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
  conn_close (&c);
}

void
limen_pipewire_node_serials_async (const guint32 *nodes, guint n_nodes, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, limen_pipewire_node_serials_async);
  g_task_set_task_data (task, job_new (nodes, n_nodes, 0), (GDestroyNotify) job_free);
  g_task_run_in_thread (task, serials_in_thread);
}

guint64 *
limen_pipewire_node_serials_finish (GAsyncResult *result, GError **error)
{
  Job *job = g_task_get_task_data (G_TASK (result));

  if (!g_task_propagate_boolean (G_TASK (result), error))
    return NULL;
  return g_steal_pointer (&job->serials);
}
