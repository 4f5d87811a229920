/* limen-documents — the Add family answered on GDBus's worker thread.
 *
 * GDBus reads every message on its worker thread and hands a method call to the main
 * thread, whose reply goes back to the worker to be written: three thread wake-ups per
 * call in this process, on top of dbus-daemon's, and on a busy machine each wake-up waits
 * for a CPU. A client exporting files one at a time (flatpak document-export, a frontend
 * exporting a file chooser's selection) waits for all of them, once per file. Here a call
 * of the Add family from a caller identified already is answered by a connection filter,
 * on the worker thread, as soon as it is read.
 *
 * The store's state (documents, rights, the database) is the main thread's. It holds the
 * state lock whenever it runs, and lets go of it only while it waits in poll(), so the
 * worker answers a call only while the main thread has nothing to do, and all the code of
 * the store keeps running one call at a time, as it always did. The worker never waits
 * for the lock: when the main thread is busy, the call goes to the main thread as before.
 * It never overtakes a call handed to the main thread either: each such call counts as
 * queued until the main thread has dispatched it (a marker queued behind GDBus's dispatch
 * of it, see attach_marker), and while any is queued every Add goes the same way, so one
 * client's calls are answered in the order it sent them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-portal-thread.h"

#include <string.h>

#include "app-info.h"
#include "errors.h"

#define DOCS_PATH "/org/freedesktop/portal/documents"
#define DOCS_IFACE "org.freedesktop.portal.Documents"

static GMutex state_lock;        /* held by the main thread except while it polls */
static gint queued;              /* method calls handed to the main thread, not dispatched yet */
static gboolean stopped;         /* under state_lock */
static LimenDocPortal *served;   /* under state_lock */
static GDBusConnection *filtered;
static guint filter_id;
static GPollFunc next_poll;

static gint
poll_unlocked (GPollFD *fds, guint n_fds, gint timeout)
{
  gint r;

  g_mutex_unlock (&state_lock);
  r = next_poll (fds, n_fds, timeout);
  g_mutex_lock (&state_lock);
  return r;
}

/* Runs after the main thread dispatched the call it was queued for (and all before it):
 * GDBus dispatches calls at G_PRIORITY_DEFAULT, and this waits for a turn with none ready. */
static gboolean
on_dispatched (gpointer user_data)
{
  g_atomic_int_dec_and_test (&queued);
  return G_SOURCE_REMOVE;
}

/* On GDBus's worker, once it has finished with the call that was counted: by then GDBus has
 * attached the call's dispatch to the main context, so the marker goes in after it. Attached
 * from the filter itself, the marker would go in first, and a main thread waking in between
 * would run it alone, uncounting a call it had not dispatched yet. */
static gboolean
attach_marker (gpointer user_data)
{
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, G_PRIORITY_DEFAULT + 1);
  g_source_set_callback (source, on_dispatched, NULL, NULL);
  g_source_set_static_name (source, "limen-documents: call dispatched");
  g_source_attach (source, NULL);
  g_source_unref (source);
  return G_SOURCE_REMOVE;
}

static void
count_handed_over (void)
{
  /* GDBus runs its worker with a context of its own pushed as the thread's default. */
  GMainContext *worker = g_main_context_get_thread_default ();
  GSource *source;

  g_atomic_int_inc (&queued);
  if (worker == NULL || worker == g_main_context_default ())
    {
      g_warning ("GDBus filter not on a worker thread of its own: Add calls go to the main thread");
      return;      /* never uncounted: every Add then goes the main thread's way */
    }
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_HIGH);
  g_source_set_callback (source, attach_marker, NULL, NULL);
  g_source_set_static_name (source, "limen-documents: mark dispatch");
  g_source_attach (source, worker);
  g_source_unref (source);
}

/* A call of the Add family with the arguments its method takes (anything else goes to GDBus,
 * which answers it as it answers any malformed call). */
static gboolean
is_add_call (GDBusMessage *message)
{
  static const struct { const char *member, *signature; } calls[] = {
    { "Add", "hbb" }, { "AddNamed", "haybb" }, { "AddFull", "ahusas" }, { "AddNamedFull", "hayusas" },
  };
  const char *member = g_dbus_message_get_member (message);
  const char *signature = g_dbus_message_get_signature (message);

  if (g_strcmp0 (g_dbus_message_get_path (message), DOCS_PATH) != 0 ||
      g_strcmp0 (g_dbus_message_get_interface (message), DOCS_IFACE) != 0 || member == NULL)
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (calls); i++)
    if (strcmp (member, calls[i].member) == 0)
      return g_strcmp0 (signature, calls[i].signature) == 0;
  return FALSE;
}

/* The reply the main thread's handler would give (see limen_invocation_return_gerror). */
static GDBusMessage *
error_reply (GDBusMessage *call, const GError *error)
{
  g_autoptr(GError) failed = NULL;
  g_autofree char *name = NULL;

  if (error->domain != LIMEN_ERROR && error->domain != G_DBUS_ERROR)
    error = failed = g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_FAILED, error->message);
  name = g_dbus_error_encode_gerror (error);
  return g_dbus_message_new_method_error_literal (call, name, error->message);
}

/* Answer @message with the state held; FALSE when the main thread must (it was busy, the
 * caller is not identified yet, or the service is stopping). */
static gboolean
answer (GDBusConnection *connection, GDBusMessage *message)
{
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(GDBusMessage) reply = NULL;
  g_autoptr(GError) error = NULL;
  GVariant *body;

  if (g_atomic_int_get (&queued) > 0 || !g_dbus_message_get_sender (message))
    return FALSE;
  /* Identified by the gate of the main thread (which also keeps the cache current). */
  info = limen_app_info_lookup_cached (g_dbus_message_get_sender (message));
  if (info == NULL || !g_mutex_trylock (&state_lock))
    return FALSE;
  /* Before the first Add the filesystem may not be mounted yet: the main thread mounts it. */
  if (stopped || g_atomic_int_get (&queued) > 0 || !limen_doc_portal_is_mount_settled (served))
    {
      g_mutex_unlock (&state_lock);
      return FALSE;
    }
  body = limen_doc_portal_call_add (served, info, g_dbus_message_get_member (message),
                                    g_dbus_message_get_body (message), g_dbus_message_get_unix_fd_list (message),
                                    &error);
  g_mutex_unlock (&state_lock);
  if (g_dbus_message_get_flags (message) & G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
    {
      if (body)
        g_variant_unref (g_variant_ref_sink (body));
      return TRUE;
    }
  if (body)
    {
      reply = g_dbus_message_new_method_reply (message);
      g_dbus_message_set_body (reply, body);
    }
  else
    reply = error_reply (message, error);
  g_dbus_connection_send_message (connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
  return TRUE;
}

static GDBusMessage *
filter (GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data)
{
  if (!incoming || g_dbus_message_get_message_type (message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL)
    return message;
  if (is_add_call (message) && answer (connection, message))
    {
      g_object_unref (message);
      return NULL;
    }
  /* GDBus answers Peer (Ping, GetMachineId) itself on this thread: nothing is queued. */
  if (g_strcmp0 (g_dbus_message_get_interface (message), "org.freedesktop.DBus.Peer") != 0)
    count_handed_over ();
  return message;
}

void
limen_doc_portal_thread_start (LimenDocPortal *portal, GDBusConnection *connection)
{
  g_return_if_fail (filter_id == 0);
  (void) limen_error_quark ();   /* registered before the worker encodes an error */
  g_mutex_lock (&state_lock);
  served = portal;
  stopped = FALSE;
  next_poll = g_main_context_get_poll_func (NULL);
  g_main_context_set_poll_func (NULL, poll_unlocked);
  filtered = g_object_ref (connection);
  filter_id = g_dbus_connection_add_filter (connection, filter, NULL, NULL);
}

void
limen_doc_portal_thread_stop (void)
{
  if (filter_id == 0)
    return;
  /* The main thread holds the lock here: no answer runs, and none starts after this. */
  stopped = TRUE;
  served = NULL;
  g_dbus_connection_remove_filter (filtered, filter_id);
  g_clear_object (&filtered);
  filter_id = 0;
}
