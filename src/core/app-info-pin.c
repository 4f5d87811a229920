/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pinning a bus peer to its process when the bus gives no pidfd. dbus-daemon 1.14 gives
 * only ProcessID: the pid that called connect(). That pid passes to another process once
 * the peer's process has exited and been reaped, possibly before we read /proc, so the
 * process found at the pid must show that it is the peer's, by two pieces of evidence:
 *
 * 1. It is not younger than the peer's connection. The arrival of every unique name is
 *    stamped on GDBus's worker thread, by a filter, as its NameOwnerChanged is read off
 *    the socket: before any message of that peer can reach us (the bus sends in order).
 *    Names already there when we started are stamped when ListNames answers. The stamp
 *    is later than the connect(), so a process that started after it (in clock ticks,
 *    /proc/PID/stat's 10 ms unit) is a successor. A name with no stamp (its arrival not
 *    seen, or it left) is not pinned. A successor that took the pid before the stamp was
 *    read (a lag of ours) or within the same tick passes this test, hence:
 *
 * 2. The peer is still on the bus, with the same pid, after /proc/PID was opened. A
 *    successor can get the pid only after the peer's process was reaped, and a process's
 *    files (its bus socket among them) are closed at its exit, before that. So when the
 *    directory we hold belongs to a successor, the peer's socket was closed before the
 *    questions below were sent. dbus-daemon's loop polls, reads what is ready, then
 *    dispatches, and drops a connection whose socket it found closed in that dispatch.
 *    Each question is sent once the previous answer is in: the first may be read by a
 *    poll older than the close (our socket had data waiting), its answer is written after
 *    the close, so the second is read no earlier than the next poll, which reports the
 *    close, and may still be dispatched before it; the third is read after that whole
 *    dispatch. Three answers that still name the peer show it was alive after the open,
 *    and its pid not free. (dbus-daemon takes at most 64 ready sockets per poll: a flood of
 *    more can stretch its notice of a close over several polls. This is as far as the
 *    bus's pid can be taken.)
 *
 * What neither shows: a peer that handed its socket to another process (a fork) before it
 * exited, whose pid went to a successor before the stamp was read, for instance before
 * this daemon started: the connection lives on, and the successor is no younger than the
 * stamp. Only a pidfd from the bus closes that (ProcessFD: dbus-daemon 1.15.8 and later on
 * kernels with SO_PEERPIDFD, dbus-broker); with one, app-info.c checks the pidfd instead
 * and none of this is needed.
 */
#include "app-info-private.h"

#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "proc-stat.h"

/* unique name → guint64 ticks when its arrival was read; the filter writes it on GDBus's
 * worker thread, identification reads it on the main thread. */
static GHashTable *arrivals;
static GMutex arrivals_lock;
static guint filter_id;
static GDBusConnection *filter_connection;

/* ListNames at start, asked without waiting on a context of its own so that
 * limen_app_info_pin_ready() can take the answer in before anything else runs. */
static GMainContext *present_names_context;
static gboolean present_names_pending;

guint64
limen_app_info_now_in_ticks (void)
{
  struct timespec ts;
  long hz = sysconf (_SC_CLK_TCK);

  /* /proc/PID/stat's start time counts clock ticks since boot, suspend included. */
  clock_gettime (CLOCK_BOOTTIME, &ts);
  return (guint64) ts.tv_sec * hz + (guint64) ts.tv_nsec / (1000000000 / hz);
}

static gboolean
is_name_owner_changed (GDBusMessage *message)
{
  /* Only the bus itself can send as org.freedesktop.DBus: a peer cannot forge this. */
  return g_dbus_message_get_message_type (message) == G_DBUS_MESSAGE_TYPE_SIGNAL &&
         g_strcmp0 (g_dbus_message_get_sender (message), "org.freedesktop.DBus") == 0 &&
         g_strcmp0 (g_dbus_message_get_path (message), "/org/freedesktop/DBus") == 0 &&
         g_strcmp0 (g_dbus_message_get_interface (message), "org.freedesktop.DBus") == 0 &&
         g_strcmp0 (g_dbus_message_get_member (message), "NameOwnerChanged") == 0;
}

/* GDBus's worker thread, for every message as it is read: stamp arrivals, drop departures. */
static GDBusMessage *
arrival_filter (GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data)
{
  GVariant *body;
  const char *name, *old_owner, *new_owner;

  if (!incoming || !is_name_owner_changed (message))
    return message;
  body = g_dbus_message_get_body (message);
  if (body == NULL || !g_variant_is_of_type (body, G_VARIANT_TYPE ("(sss)")))
    return message;
  g_variant_get (body, "(&s&s&s)", &name, &old_owner, &new_owner);
  if (name[0] != ':')
    return message;
  g_mutex_lock (&arrivals_lock);
  if (arrivals && *old_owner == '\0' && *new_owner != '\0')
    g_hash_table_insert (arrivals, g_strdup (name),
                         g_memdup2 (&(guint64) { limen_app_info_now_in_ticks () }, sizeof (guint64)));
  else if (arrivals && *new_owner == '\0')
    g_hash_table_remove (arrivals, name);
  g_mutex_unlock (&arrivals_lock);
  return message;
}

static void
on_present_names (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariantIter) iter = NULL;
  guint64 now = limen_app_info_now_in_ticks ();
  const char *name;

  present_names_pending = FALSE;
  if (reply == NULL)
    return;
  /* Each was on the bus when the answer was written, so before now. (A name that arrived
   * after our AddMatch has a stamp of its own already, taken earlier.) */
  g_variant_get (reply, "(as)", &iter);
  g_mutex_lock (&arrivals_lock);
  while (arrivals && g_variant_iter_next (iter, "&s", &name))
    if (name[0] == ':' && !g_hash_table_contains (arrivals, name))
      g_hash_table_insert (arrivals, g_strdup (name), g_memdup2 (&now, sizeof (guint64)));
  g_mutex_unlock (&arrivals_lock);
}

void
limen_app_info_pin_start (GDBusConnection *connection, GCancellable *cancellable)
{
  g_mutex_lock (&arrivals_lock);
  arrivals = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_mutex_unlock (&arrivals_lock);
  filter_connection = g_object_ref (connection);
  filter_id = g_dbus_connection_add_filter (connection, arrival_filter, NULL, NULL);

  present_names_context = g_main_context_new ();
  present_names_pending = TRUE;
  g_main_context_push_thread_default (present_names_context);
  g_dbus_connection_call (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "ListNames", NULL, G_VARIANT_TYPE ("(as)"),
                          G_DBUS_CALL_FLAGS_NONE, 5000, cancellable, on_present_names, NULL);
  g_main_context_pop_thread_default (present_names_context);
}

void
limen_app_info_pin_ready (void)
{
  while (present_names_pending)
    g_main_context_iteration (present_names_context, TRUE);
  g_clear_pointer (&present_names_context, g_main_context_unref);
}

void
limen_app_info_pin_stop (void)
{
  limen_app_info_pin_ready ();
  if (filter_connection)
    g_dbus_connection_remove_filter (filter_connection, filter_id);
  g_clear_object (&filter_connection);
  /* The filter may still be running on the worker thread: it checks under the lock. */
  g_mutex_lock (&arrivals_lock);
  g_clear_pointer (&arrivals, g_hash_table_unref);
  g_mutex_unlock (&arrivals_lock);
}

gboolean
limen_app_info_pin_arrival (const char *sender, guint64 *ticks)
{
  guint64 *stamp;
  gboolean found = FALSE;

  limen_app_info_pin_ready ();
  g_mutex_lock (&arrivals_lock);
  stamp = arrivals ? g_hash_table_lookup (arrivals, sender) : NULL;
  if (stamp)
    {
      *ticks = *stamp;
      found = TRUE;
    }
  g_mutex_unlock (&arrivals_lock);
  return found;
}

gboolean
limen_app_info_pin_check_answer (LimenAppInfo *info, const char *sender, GVariant *reply,
                                 const GError *bus_error, GError **error)
{
  guint32 pid = 0;
  guint64 again;

  if (reply)
    g_variant_get (reply, "(u)", &pid);
  if (reply == NULL || (pid_t) pid != info->pid)
    {
      /* Gone from the bus (or behind another pid) after /proc/PID was opened: the process
       * there may be a successor that got the pid of an exited caller. */
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Caller %s left the bus before its process %d could be pinned%s%s", sender, info->pid,
                   bus_error ? ": " : "", bus_error ? bus_error->message : "");
      return FALSE;
    }
  /* The directory we hold must still be a live process, the one we identified. */
  if (!limen_proc_stat_read_start_time_at (info->proc_fd, &again, NULL) || again != info->start_time)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller process %d went away", info->pid);
      return FALSE;
    }
  return TRUE;
}
