/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every request portal talks to its backend the same way: the impl method is called with
 * the Request's own path as handle and answers (response, results) when the user is done.
 * A dialog may legitimately stay open for hours, so the call has no practical timeout;
 * what must end it at once is the backend leaving the bus, which we watch for
 * explicitly rather than trusting the bus to turn it into an error reply. */
#include "backend.h"

#define DBUS_NAME "org.freedesktop.DBus"
#define DBUS_PATH "/org/freedesktop/DBus"

typedef struct _BackendWatch BackendWatch;

/* One impl call in flight: the GTask's data. */
typedef struct {
  LimenRequest *request;
  char         *backend;
  BackendWatch *watch;
  GTask        *task;   /* not owned; NULL once the outcome was delivered */
} BackendCall;

/* One NameOwnerChanged match per backend name, kept for the daemon's life: adding and
 * removing a match rule for every request would cost the bus two more messages each. */
struct _BackendWatch {
  char  *name;
  guint  subscription;
  GList *calls;   /* BackendCall, not owned */
};


static void
call_free (BackendCall *call)
{
  limen_request_unref (call->request);
  g_free (call->backend);
  g_free (call);
}

static void
call_unwatch (BackendCall *call)
{
  if (call->watch)
    {
      call->watch->calls = g_list_remove (call->watch->calls, call);
      call->watch = NULL;
    }
}

/* Deliver the outcome once; later outcomes (a reply after the name vanished) are dropped. */
static void
call_deliver (BackendCall *call, GVariant *reply, GUnixFDList *fd_list, GError *error)
{
  GTask *task = g_steal_pointer (&call->task);

  call_unwatch (call);
  if (task == NULL)
    {
      g_clear_error (&error);
      return;
    }
  if (reply)
    {
      if (fd_list)
        g_object_set_data_full (G_OBJECT (task), "fd-list", g_object_ref (fd_list), g_object_unref);
      g_task_return_pointer (task, g_variant_ref (reply), (GDestroyNotify) g_variant_unref);
    }
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

static void
on_owner_changed (GDBusConnection *connection, const char *sender, const char *path,
                  const char *iface, const char *signal, GVariant *parameters, gpointer user_data)
{
  BackendWatch *watch = user_data;
  const char *name, *old_owner, *new_owner;
  GList *calls;

  g_variant_get (parameters, "(&s&s&s)", &name, &old_owner, &new_owner);
  if (*new_owner != '\0' || *old_owner == '\0' || !g_str_equal (name, watch->name))
    return;
  /* Each finished call leaves the list; take it whole first. */
  calls = g_steal_pointer (&watch->calls);
  for (GList *l = calls; l; l = l->next)
    {
      BackendCall *call = l->data;

      call->watch = NULL;
      g_message ("Backend %s left the bus during request %s", name, limen_request_get_path (call->request));
      call_deliver (call, NULL, NULL, g_error_new (LIMEN_ERROR, LIMEN_ERROR_FAILED, "Backend %s went away", name));
    }
  g_list_free (calls);
}

static BackendWatch *
watch_for (LimenPortalContext *context, const char *name)
{
  BackendWatch *watch;

  if (context->backend_watches == NULL)
    context->backend_watches = g_hash_table_new (g_str_hash, g_str_equal);
  watch = g_hash_table_lookup (context->backend_watches, name);
  if (watch == NULL)
    {
      watch = g_new0 (BackendWatch, 1);
      watch->name = g_strdup (name);
      watch->subscription = g_dbus_connection_signal_subscribe (context->connection, DBUS_NAME, DBUS_NAME,
                                                                "NameOwnerChanged", DBUS_PATH, name,
                                                                G_DBUS_SIGNAL_FLAGS_NONE, on_owner_changed,
                                                                watch, NULL);
      g_hash_table_insert (context->backend_watches, watch->name, watch);
    }
  return watch;
}

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  BackendCall *call = user_data;
  GError *error = NULL;
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source),
                                                                               &fd_list, result, &error);

  if (reply == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_debug ("Backend %s failed for %s: %s", call->backend, limen_request_get_path (call->request),
             error->message);
  call_deliver (call, reply, fd_list, error);
  call_free (call);
}

void
limen_backend_call_async (LimenPortalContext *context, LimenRequest *request, const char *backend,
                          const char *interface, const char *method, GVariant *parameters,
                          GUnixFDList *fd_list, int timeout_ms, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  BackendCall *call = g_new0 (BackendCall, 1);
  GCancellable *cancellable = limen_request_get_cancellable (request);

  call->request = limen_request_ref (request);
  call->backend = g_strdup (backend);
  call->task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (call->task, limen_backend_call_async);
  /* The task ends with the outcome, so a closed request reports CANCELLED at once. */
  g_task_set_check_cancellable (call->task, TRUE);
  limen_request_set_backend (request, backend);
  /* Watched before the call goes out, so even a backend activated by the call and dying
   * right away is seen. */
  call->watch = watch_for (context, backend);
  call->watch->calls = g_list_prepend (call->watch->calls, call);
  g_dbus_connection_call_with_unix_fd_list (context->connection, backend, LIMEN_PORTAL_PATH,
                                            interface, method, parameters, NULL, G_DBUS_CALL_FLAGS_NONE,
                                            timeout_ms, fd_list, cancellable, on_reply, call);
}

GVariant *
limen_backend_call_finish (GAsyncResult *result, GUnixFDList **fd_list, GError **error)
{
  GVariant *reply = g_task_propagate_pointer (G_TASK (result), error);

  if (fd_list)
    {
      GUnixFDList *fds = reply ? g_object_get_data (G_OBJECT (result), "fd-list") : NULL;

      *fd_list = fds ? g_object_ref (fds) : NULL;
    }
  return reply;
}

const char *
limen_backend_find (LimenPortalContext *context, const char *interface, GError **error)
{
  const LimenPortalImpl *impl = limen_portal_config_find (context->config, interface);

  if (impl == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "No backend implements %s", interface);
      return NULL;
    }
  return impl->dbus_name;
}

gboolean
limen_backend_is_configured (LimenPortalContext *context, const char *interface)
{
  return limen_portal_config_find (context->config, interface) != NULL;
}

typedef struct {
  char                      *interface;
  LimenBackendPropertiesFunc func;
  gpointer                   user_data;
} PropertiesWatch;

static void
properties_watch_free (gpointer data)
{
  PropertiesWatch *watch = data;

  g_free (watch->interface);
  g_free (watch);
}

static void
on_properties (GObject *source, GAsyncResult *result, gpointer user_data)
{
  PropertiesWatch *read = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) props = NULL;

  if (reply)
    g_variant_get (reply, "(@a{sv})", &props);
  else
    {
      g_debug ("No properties of %s from its backend: %s", read->interface, error->message);
      props = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
    }
  read->func (props, read->user_data);
  properties_watch_free (read);
}

void
limen_backend_read_properties (GDBusConnection *connection, const char *backend, const char *interface,
                               LimenBackendPropertiesFunc func, gpointer user_data)
{
  PropertiesWatch *read = g_new0 (PropertiesWatch, 1);

  read->interface = g_strdup (interface);
  read->func = func;
  read->user_data = user_data;
  g_dbus_connection_call (connection, backend, LIMEN_PORTAL_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                          g_variant_new ("(s)", interface), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL,
                          on_properties, read);
}

static void
on_backend_appeared (GDBusConnection *connection, const char *name, const char *owner, gpointer user_data)
{
  PropertiesWatch *watch = user_data;

  limen_backend_read_properties (connection, name, watch->interface, watch->func, watch->user_data);
}

void
limen_backend_watch_properties (LimenPortalContext *context, const char *interface,
                                LimenBackendPropertiesFunc func, gpointer user_data)
{
  const char *backend = limen_backend_find (context, interface, NULL);
  PropertiesWatch *watch;

  if (backend == NULL)
    return;
  watch = g_new0 (PropertiesWatch, 1);
  watch->interface = g_strdup (interface);
  watch->func = func;
  watch->user_data = user_data;
  g_bus_watch_name_on_connection (context->connection, backend, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                  on_backend_appeared, NULL, watch, properties_watch_free);
}

/* ---- relaying backends' signals to the owners of the sessions they name ---- */

/* One relayed (interface, backend name), and who owns the name now. */
typedef struct {
  const LimenBackendRelay *relay;
  char                    *name;
  char                    *owner;   /* NULL while nobody owns the name */
  guint                    subscription;
  guint                    watch;
} RelayedBackend;

static GHashTable *relayed;   /* "impl_interface backend" → RelayedBackend, for the daemon's life */

static void
on_relayed_signal (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                   const char *signal, GVariant *parameters, gpointer user_data)
{
  RelayedBackend *rb = user_data;
  g_autoptr(GVariant) out = NULL;
  g_autoptr(GError) error = NULL;
  const char *destination = NULL;

  /* Only the name's owner speaks for the backend (a unicast signal names any sender). */
  if (g_strcmp0 (sender, rb->owner) != 0)
    return;
  out = rb->relay->signal (rb->name, signal, parameters, &destination);
  if (out == NULL)
    return;
  g_variant_ref_sink (out);
  g_return_if_fail (destination != NULL);
  if (!g_dbus_connection_emit_signal (connection, destination, LIMEN_PORTAL_PATH,
                                      rb->relay->portal_interface, signal, out, &error))
    g_debug ("%s not delivered: %s", signal, error->message);
}

static void
on_relayed_appeared (GDBusConnection *connection, const char *name, const char *owner, gpointer user_data)
{
  RelayedBackend *rb = user_data;

  g_free (rb->owner);
  rb->owner = g_strdup (owner);
}

static void
on_relayed_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  RelayedBackend *rb = user_data;
  gboolean was_there = rb->owner != NULL;

  g_clear_pointer (&rb->owner, g_free);
  /* The watch also reports a name nobody owns yet: a backend that the session's first call
   * is starting by D-Bus activation has not left. */
  if (was_there && rb->relay->vanished)
    rb->relay->vanished (rb->name);
}

void
limen_backend_relay (GDBusConnection *connection, const LimenBackendRelay *relay, const char *backend)
{
  g_autofree char *key = g_strconcat (relay->impl_interface, " ", backend, NULL);
  RelayedBackend *rb;

  if (relayed == NULL)
    relayed = g_hash_table_new (g_str_hash, g_str_equal);
  if (g_hash_table_contains (relayed, key))
    return;
  rb = g_new0 (RelayedBackend, 1);
  rb->relay = relay;
  rb->name = g_strdup (backend);
  rb->subscription = g_dbus_connection_signal_subscribe (connection, backend, relay->impl_interface, NULL,
                                                         LIMEN_PORTAL_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                         on_relayed_signal, rb, NULL);
  rb->watch = g_bus_watch_name_on_connection (connection, backend, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                              on_relayed_appeared, on_relayed_vanished, rb, NULL);
  g_hash_table_insert (relayed, g_steal_pointer (&key), rb);
}
