/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Who is calling. The bus tells us a pid (or a pidfd where dbus-daemon gives one); from
 * there /proc says whether the process is a Flatpak app (a /.flatpak-info in its root),
 * a Snap (its cgroup) or a host app (its systemd unit). Anything claiming to be sandboxed
 * that we cannot parse is refused rather than taken for the host.
 *
 * This file holds what every kind shares: the object, the per-peer cache and the tracking
 * of peers on the bus, the gate that holds a new peer's calls until it is identified, and
 * the dispatch from bus credentials (or a test hook) to the process inspection of
 * app-info-process.c, which hands over to app-info-flatpak.c, app-info-snap.c and
 * app-info-host.c. Where the bus gives a pid but no pidfd, app-info-pin.c shows that the
 * process found is the caller's and not one that got its pid after it exited. The
 * Registry's self-naming of host apps is app-info-registry.c.
 */
#include "app-info-private.h"

#include <gio/gdesktopappinfo.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "proc-stat.h"

/* ---- tracker (main thread only) ----------------------------------------------------- */

typedef struct {
  LimenPeerVanishedFunc func;
  gpointer              user_data;
} VanishedWatch;

static GHashTable *cache;          /* unique name → LimenAppInfo; written on the main thread only */
static GMutex cache_lock;          /* for readers on other threads (limen_app_info_lookup_cached) */
static GArray *vanished_watches;
static guint name_owner_changed_id;
static GDBusConnection *tracker_connection;
static GCancellable *tracker_cancellable;   /* ends bus round trips when the daemon leaves */
static guint tracker_generation;   /* bumped by each shutdown: lookups started before are void */

static void mark_lookups_vanished (const char *name);
static void drain_pending (void);

static void
cache_remove (const char *name)
{
  g_mutex_lock (&cache_lock);
  if (cache)
    g_hash_table_remove (cache, name);
  g_mutex_unlock (&cache_lock);
}

static void
on_name_owner_changed (GDBusConnection *connection,
                       const char      *sender_name,
                       const char      *object_path,
                       const char      *interface_name,
                       const char      *signal_name,
                       GVariant        *parameters,
                       gpointer         user_data)
{
  const char *name, *old_owner, *new_owner;

  g_variant_get (parameters, "(&s&s&s)", &name, &old_owner, &new_owner);
  if (name[0] != ':')
    return;
  /* Arrivals are stamped by app-info-pin.c's filter, earlier than this runs. */
  if (*new_owner == '\0')
    {
      cache_remove (name);
      mark_lookups_vanished (name);
      for (guint i = 0; i < vanished_watches->len; i++)
        {
          VanishedWatch *w = &g_array_index (vanished_watches, VanishedWatch, i);
          w->func (name, w->user_data);
        }
    }
}

void
limen_app_info_tracker_ready (void)
{
  limen_app_info_pin_ready ();
}

void
limen_app_info_tracker_init (GDBusConnection *connection, GCancellable *cancellable)
{
  if (cache != NULL)
    return;
  cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) limen_app_info_unref);
  vanished_watches = g_array_new (FALSE, FALSE, sizeof (VanishedWatch));
  tracker_connection = g_object_ref (connection);
  tracker_cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  name_owner_changed_id =
    g_dbus_connection_signal_subscribe (connection, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                        "NameOwnerChanged", "/org/freedesktop/DBus", NULL,
                                        G_DBUS_SIGNAL_FLAGS_NONE, on_name_owner_changed, NULL, NULL);
  limen_app_info_pin_start (connection, tracker_cancellable);
#ifdef LIMEN_TEST_HOOKS
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND"))
    g_warning ("Test hook active: every caller is identified from XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND=%s",
               g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND"));
#endif
}

void
limen_app_info_tracker_shutdown (void)
{
  if (cache == NULL)
    return;
  limen_app_info_tracker_ready ();
  drain_pending ();
  tracker_generation++;
  g_dbus_connection_signal_unsubscribe (tracker_connection, name_owner_changed_id);
  g_mutex_lock (&cache_lock);
  g_clear_pointer (&cache, g_hash_table_unref);
  g_mutex_unlock (&cache_lock);
  limen_app_info_pin_stop ();
  g_clear_pointer (&vanished_watches, g_array_unref);
  g_clear_object (&tracker_connection);
  g_clear_object (&tracker_cancellable);
}

void
limen_app_info_add_vanished_watch (LimenPeerVanishedFunc func, gpointer user_data)
{
  VanishedWatch w = { func, user_data };

  g_return_if_fail (vanished_watches != NULL);
  for (guint i = 0; i < vanished_watches->len; i++)
    {
      VanishedWatch *have = &g_array_index (vanished_watches, VanishedWatch, i);

      if (have->func == func && have->user_data == user_data)
        return;
    }
  g_array_append_val (vanished_watches, w);
}

/* ---- LimenAppInfo ------------------------------------------------------------------- */

LimenAppInfo *
limen_app_info_alloc (LimenAppKind kind, pid_t pid)
{
  LimenAppInfo *info = g_new0 (LimenAppInfo, 1);

  info->ref_count = 1;
  info->kind = kind;
  info->pid = pid;
  info->proc_fd = -1;
  info->uid = (uid_t) -1;
  info->gid = (gid_t) -1;
  return info;
}

LimenAppInfo *
limen_app_info_ref (LimenAppInfo *info)
{
  g_atomic_int_inc (&info->ref_count);
  return info;
}

void
limen_app_info_unref (LimenAppInfo *info)
{
  if (!g_atomic_int_dec_and_test (&info->ref_count))
    return;
  g_free (info->id);
  g_free (info->instance);
  g_clear_pointer (&info->metadata, g_key_file_unref);
  if (info->proc_fd >= 0)
    close (info->proc_fd);
  g_free (info);
}

LimenAppKind limen_app_info_get_kind (LimenAppInfo *info) { return info->kind; }
gboolean limen_app_info_is_host (LimenAppInfo *info) { return info->kind == LIMEN_APP_KIND_HOST; }
const char *limen_app_info_get_id (LimenAppInfo *info) { return info->id ? info->id : ""; }
const char *limen_app_info_get_instance (LimenAppInfo *info) { return info->instance; }
pid_t limen_app_info_get_pid (LimenAppInfo *info) { return info->pid; }
guint64 limen_app_info_get_start_time (LimenAppInfo *info) { return info->start_time; }
GKeyFile *limen_app_info_get_metadata (LimenAppInfo *info) { return info->metadata; }
uid_t limen_app_info_get_uid (LimenAppInfo *info) { return info->uid; }
gid_t limen_app_info_get_gid (LimenAppInfo *info) { return info->gid; }

gboolean
limen_app_info_test_hooks_compiled (void)
{
#ifdef LIMEN_TEST_HOOKS
  return TRUE;
#else
  return FALSE;
#endif
}

gboolean
limen_app_id_is_valid (const char *app_id)
{
  const char *last_dot;
  gsize len;

  if (app_id == NULL)
    return FALSE;
  len = strlen (app_id);
  last_dot = strrchr (app_id, '.');
  if (len == 0 || len > 255 || last_dot == NULL)
    return FALSE;
  for (const char *p = app_id; *p; p++)
    {
      if (*p == '.')
        {
          if (p == app_id || p[1] == '\0' || p[1] == '.')
            return FALSE;       /* empty element, leading or trailing dot, ".." */
          continue;
        }
      if (!(g_ascii_isalnum (*p) || *p == '_' || (*p == '-' && p > last_dot)))
        return FALSE;
    }
  return TRUE;
}

char *
limen_app_id_dup_display_name (const char *app_id)
{
  g_autofree char *desktop_id = NULL;
  g_autoptr(GDesktopAppInfo) desktop = NULL;
  const char *name;

  if (!limen_app_id_is_valid (app_id))
    return NULL;
  desktop_id = g_strconcat (app_id, ".desktop", NULL);
  desktop = g_desktop_app_info_new (desktop_id);
  name = desktop ? g_app_info_get_name (G_APP_INFO (desktop)) : NULL;
  return name && *name ? g_strdup (name) : NULL;
}

GKeyFile *
limen_app_info_load_metadata (const char *what, const char *data, gsize len, GError **error)
{
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;

  if (!g_key_file_load_from_data (keyfile, data, len, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Unparsable %s metadata: %s", what, local_error->message);
      return NULL;
    }
  return g_steal_pointer (&keyfile);
}

/* ---- dispatch ----------------------------------------------------------------------- */

#ifdef LIMEN_TEST_HOOKS
/* The sandbox metadata a test hook names, parsed as the kind it names into @info. */
static gboolean
parse_test_hook_metadata (LimenAppInfo *info, const char *kind, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  const char *var = NULL;
  g_autofree char *data = NULL;
  gsize len;

  if (g_str_equal (kind, "flatpak"))
    var = "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA";
  else if (g_str_equal (kind, "snap"))
    var = "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA";
  else
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Unknown XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND '%s'", kind);
      return FALSE;
    }
  if (g_getenv (var) == NULL ||
      !g_file_get_contents (g_getenv (var), &data, &len, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s unreadable: %s", var,
                   local_error ? local_error->message : "not set");
      return FALSE;
    }
  if (g_str_equal (kind, "flatpak"))
    {
      info->kind = LIMEN_APP_KIND_FLATPAK;
      return limen_app_info_flatpak_parse (info, data, len, error);
    }
  info->kind = LIMEN_APP_KIND_SNAP;
  return limen_app_info_snap_parse (info, data, len, error);
}

/* XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND in the daemon's own environment decides. */
static LimenAppInfo *
identify_from_test_hook (const char *kind, int proc_fd, pid_t pid, GError **error)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_alloc (LIMEN_APP_KIND_HOST, pid);

  if (proc_fd >= 0)
    {
      info->proc_fd = proc_fd;
      limen_proc_stat_read_start_time_at (proc_fd, &info->start_time, NULL);
      limen_app_info_read_ids (info);
    }
  if (g_str_equal (kind, "host"))
    {
      const char *id = g_getenv ("XDG_DESKTOP_PORTAL_TEST_HOST_APPID");

      info->id = g_strdup (id ? id : "");
      return g_steal_pointer (&info);
    }
  if (!parse_test_hook_metadata (info, kind, error))
    {
      info->proc_fd = -1;       /* the caller keeps its fd on failure */
      return NULL;
    }
  return g_steal_pointer (&info);
}
#endif

/* Identify the process behind @proc_fd, which is taken over on success only. */
static LimenAppInfo *
identify (pid_t pid, int proc_fd, guint64 not_after, GError **error)
{
#ifdef LIMEN_TEST_HOOKS
  const char *kind = g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND");

  if (kind != NULL)
    return identify_from_test_hook (kind, proc_fd, pid, error);
#endif
  return limen_app_info_identify_process (proc_fd, pid, not_after, error);
}

LimenAppInfo *
limen_app_info_get_for_pid (pid_t pid, GError **error)
{
  int proc_fd = limen_app_info_open_proc_dir (pid, error);
  LimenAppInfo *info;

  if (proc_fd < 0)
    return NULL;
  info = identify (pid, proc_fd, 0, error);
  if (info == NULL)
    close (proc_fd);
  return info;
}

static gboolean
pidfd_alive (int pidfd)
{
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

  /* A pidfd becomes readable when its process exits. */
  return poll (&pfd, 1, 0) == 0;
}

/* The process the bus credentials name: by the pidfd where the bus gives one (*@pidfd
 * takes it), else the pid, with the latest start time its process may have in
 * *@not_after: when the name's arrival was read (app-info-pin.c). */
static pid_t
credentials_pid (const char *sender, GVariant *reply, GUnixFDList *fds, int *pidfd, guint64 *not_after,
                 GError **error)
{
  g_autoptr(GVariant) creds = g_variant_get_child_value (reply, 0);
  guint32 pid32 = 0;
  gint32 pidfd_index = -1;
  pid_t pid;

  g_variant_lookup (creds, "ProcessID", "u", &pid32);
  if (g_variant_lookup (creds, "ProcessFD", "h", &pidfd_index) && fds &&
      pidfd_index >= 0 && pidfd_index < g_unix_fd_list_get_length (fds))
    *pidfd = g_unix_fd_list_get (fds, pidfd_index, NULL);

  if (*pidfd >= 0)
    {
      pid = limen_pidfd_get_pid (*pidfd);
      if (pid <= 0)
        g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller %s has exited", sender);
      return pid;
    }
  pid = (pid_t) pid32;
  if (pid <= 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The bus gives no process for %s", sender);
      return pid;
    }
  /* Never "now" for a name whose arrival we did not see: a process that took the pid of
   * an exited caller meanwhile would pass for it. On the tracker's connection, the arrival
   * of a name that is still there was read before this answer (the bus sends in order, and
   * ListNames covers the names older than us): without it, the caller has left. */
  if (!limen_app_info_pin_arrival (sender, not_after))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Caller %s (pid %d) cannot be pinned: it left the bus, or its arrival was not seen",
                   sender, pid);
      return -1;
    }
  return pid;
}

/* Refuse @sender for @error (kept in @error), saying so in the log. */
static void
log_refusal (const char *sender, pid_t pid, const GError *error)
{
  if (pid > 0)
    g_warning ("Refusing caller %s (pid %d): %s", sender, pid, error->message);
  else
    g_warning ("Refusing caller %s: %s", sender, error->message);
}

/* The first half of identifying @sender once the bus answered GetConnectionCredentials:
 * the process (by its pidfd where the bus gives one), its /proc entry, its sandbox
 * metadata. *@pinned: whether the process is shown to be the caller's already (a live
 * pidfd); if not, limen_app_info_pin_check_answer() must be satisfied before use. */
static LimenAppInfo *
identify_from_credentials (const char *sender, GVariant *reply, GUnixFDList *fds, gboolean *pinned,
                           GError **error)
{
  g_autoptr(GError) local_error = NULL;
  LimenAppInfo *info;
  g_autofd int pidfd = -1;
  int proc_fd;
  pid_t pid;
  guint64 not_after = 0;

  pid = credentials_pid (sender, reply, fds, &pidfd, &not_after, &local_error);
  if (pid <= 0)
    {
      log_refusal (sender, pid, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  proc_fd = limen_app_info_open_proc_dir (pid, error);
  if (proc_fd < 0)
    return NULL;
  /* A pidfd alive after the open shows that /proc/PID is its process's: no other could
   * have had the pid meanwhile. */
  *pinned = pidfd >= 0;
  if (pidfd >= 0 && !pidfd_alive (pidfd))
    {
      close (proc_fd);
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller %s has exited", sender);
      return NULL;
    }

  info = identify (pid, proc_fd, not_after, &local_error);
  if (info == NULL)
    {
      close (proc_fd);
      log_refusal (sender, pid, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return info;
}

/* @info (taken) is @sender's, pinned: say so and cache it while the peer is on the bus
 * (its departure drops the entry). */
static LimenAppInfo *
identified (const char *sender, LimenAppInfo *info)
{
  g_debug ("Caller %s is %s app '%s' (pid %d)", sender,
           info->kind == LIMEN_APP_KIND_FLATPAK ? "a Flatpak" : info->kind == LIMEN_APP_KIND_SNAP ? "a Snap" : "a host",
           limen_app_info_get_id (info), info->pid);
  if (cache)
    {
      g_mutex_lock (&cache_lock);
      g_hash_table_insert (cache, g_strdup (sender), limen_app_info_ref (info));
      g_mutex_unlock (&cache_lock);
    }
  return info;
}

/* Ask the bus (again) for @sender's pid: the question of app-info-pin.c's second proof. */
static void
ask_pid (GDBusConnection *connection, const char *sender, GCancellable *cancellable,
         GAsyncReadyCallback callback, gpointer user_data)
{
  g_dbus_connection_call (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "GetConnectionUnixProcessID", g_variant_new ("(s)", sender), G_VARIANT_TYPE ("(u)"),
                          G_DBUS_CALL_FLAGS_NONE, 5000, cancellable, callback, user_data);
}

/* limen_app_info_get_for_sender's pinning: the bus asked LIMEN_APP_INFO_PIN_QUESTIONS
 * times in a row after /proc/PID was opened. Takes @info; NULL when it cannot be pinned. */
static LimenAppInfo *
pin_sync (GDBusConnection *connection, const char *sender, LimenAppInfo *info, GError **error)
{
  g_autoptr(LimenAppInfo) owned = info;
  g_autoptr(GError) local_error = NULL;

  for (guint i = 0; i < LIMEN_APP_INFO_PIN_QUESTIONS; i++)
    {
      g_autoptr(GError) bus_error = NULL;
      g_autoptr(GVariant) answer =
        g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                     g_variant_new ("(s)", sender), G_VARIANT_TYPE ("(u)"),
                                     G_DBUS_CALL_FLAGS_NONE, 5000, tracker_cancellable, &bus_error);

      if (!limen_app_info_pin_check_answer (owned, sender, answer, bus_error, &local_error))
        {
          log_refusal (sender, owned->pid, local_error);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
    }
  return identified (sender, g_steal_pointer (&owned));
}

static void
set_bus_error (GError **error, const char *sender, const GError *bus_error)
{
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot identify caller %s: %s",
               sender, bus_error->message);
}

/* The same slow bus as the asynchronous lookup's, for callers that are not gated. */
static void
test_identify_delay (void)
{
#ifdef LIMEN_TEST_HOOKS
  if (g_getenv ("LIMEN_TEST_IDENTIFY_DELAY_MS"))
    g_usleep (1000 * g_ascii_strtoull (g_getenv ("LIMEN_TEST_IDENTIFY_DELAY_MS"), NULL, 10));
#endif
}

LimenAppInfo *
limen_app_info_get_for_sender (GDBusConnection *connection, const char *sender, GError **error)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) local_error = NULL;
  LimenAppInfo *info;
  gboolean pinned = FALSE;

  if (cache && (info = g_hash_table_lookup (cache, sender)))
    return limen_app_info_ref (info);

  test_identify_delay ();
  reply = g_dbus_connection_call_with_unix_fd_list_sync (connection, "org.freedesktop.DBus",
                                                         "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                         "GetConnectionCredentials",
                                                         g_variant_new ("(s)", sender),
                                                         G_VARIANT_TYPE ("(a{sv})"),
                                                         G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &fds,
                                                         tracker_cancellable, &local_error);
  if (reply == NULL)
    {
      set_bus_error (error, sender, local_error);
      return NULL;
    }
  info = identify_from_credentials (sender, reply, fds, &pinned, error);
  if (info == NULL)
    return NULL;
  return pinned ? identified (sender, info) : pin_sync (connection, sender, info, error);
}

/* ---- identifying asynchronously -------------------------------------------------------
 *
 * The bus is asked for the peer's credentials without blocking; the /proc inspection that
 * follows is local and quick; without a pidfd, the bus is then asked for the peer's pid
 * again (app-info-pin.c), each question once the previous answer is in. A peer that leaves
 * the bus before the answer comes is not cached (nothing else would drop the entry). */

typedef struct {
  GDBusConnection *connection;
  char            *sender;
  LimenAppInfo    *info;        /* identified, while its pinning questions are out */
  guint            questions;   /* pinning questions answered so far */
  guint            generation;  /* tracker_generation when it started */
  gboolean         vanished;    /* the peer left before the answer came */
} Lookup;

static GList *lookups;          /* Lookup* in flight; main thread only */

static void
lookup_free (Lookup *lookup)
{
  lookups = g_list_remove (lookups, lookup);
  g_object_unref (lookup->connection);
  g_free (lookup->sender);
  g_clear_pointer (&lookup->info, limen_app_info_unref);
  g_free (lookup);
}

static void
mark_lookups_vanished (const char *name)
{
  for (GList *l = lookups; l; l = l->next)
    {
      Lookup *lookup = l->data;

      if (g_str_equal (lookup->sender, name))
        lookup->vanished = TRUE;
    }
}

/* The end of an asynchronous lookup: @info (taken) is the answer, or @error. */
static void
lookup_return (GTask *task, LimenAppInfo *info, GError *error)
{
  Lookup *lookup = g_task_get_task_data (task);

  if (info == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  identified (lookup->sender, info);
  if (lookup->vanished)
    cache_remove (lookup->sender);      /* its departure was seen already */
  g_task_return_pointer (task, info, (GDestroyNotify) limen_app_info_unref);
}

static void
on_pin_answer (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  Lookup *lookup = g_task_get_task_data (task);
  g_autoptr(GVariant) answer = NULL;
  g_autoptr(GError) bus_error = NULL;
  GError *error = NULL;

  answer = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &bus_error);
  if (lookup->generation != tracker_generation || g_error_matches (bus_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The service is shutting down");
      return;
    }
  if (!limen_app_info_pin_check_answer (lookup->info, lookup->sender, answer, bus_error, &error))
    {
      log_refusal (lookup->sender, lookup->info->pid, error);
      lookup_return (task, NULL, error);
      return;
    }
  /* Each question is asked once the previous answer is in (app-info-pin.c says why). */
  if (++lookup->questions < LIMEN_APP_INFO_PIN_QUESTIONS)
    {
      GCancellable *cancellable = g_task_get_cancellable (task);

      ask_pid (lookup->connection, lookup->sender, cancellable, on_pin_answer, g_steal_pointer (&task));
      return;
    }
  lookup_return (task, g_steal_pointer (&lookup->info), NULL);
}

static void
on_credentials (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  Lookup *lookup = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) bus_error = NULL;
  GError *error = NULL;
  LimenAppInfo *info;
  GCancellable *cancellable;
  gboolean pinned = FALSE;

  reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source), &fds, result, &bus_error);
  if (lookup->generation != tracker_generation)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The service is shutting down");
      return;
    }
  if (reply == NULL)
    {
      set_bus_error (&error, lookup->sender, bus_error);
      g_task_return_error (task, error);
      return;
    }
  info = identify_from_credentials (lookup->sender, reply, fds, &pinned, &error);
  if (info == NULL || pinned)
    {
      lookup_return (task, info, error);
      return;
    }
  lookup->info = info;
  cancellable = g_task_get_cancellable (task);
  ask_pid (lookup->connection, lookup->sender, cancellable, on_pin_answer, g_steal_pointer (&task));
}

static gboolean
send_credentials_call (gpointer user_data)
{
  GTask *task = user_data;
  Lookup *lookup = g_task_get_task_data (task);

  g_dbus_connection_call_with_unix_fd_list (lookup->connection, "org.freedesktop.DBus",
                                            "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "GetConnectionCredentials", g_variant_new ("(s)", lookup->sender),
                                            G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL,
                                            g_task_get_cancellable (task), on_credentials, task);
  return G_SOURCE_REMOVE;
}

void
limen_app_info_get_for_sender_async (GDBusConnection     *connection,
                                     const char          *sender,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  LimenAppInfo *info;
  Lookup *lookup;

  g_task_set_source_tag (task, limen_app_info_get_for_sender_async);
  /* Whatever the lookup found (or why it failed) is the answer, also during shutdown. */
  g_task_set_check_cancellable (task, FALSE);
  if (cache && (info = g_hash_table_lookup (cache, sender)))
    {
      g_task_return_pointer (task, limen_app_info_ref (info), (GDestroyNotify) limen_app_info_unref);
      g_object_unref (task);
      return;
    }
  lookup = g_new0 (Lookup, 1);
  lookup->connection = g_object_ref (connection);
  lookup->sender = g_strdup (sender);
  lookup->generation = tracker_generation;
  lookups = g_list_prepend (lookups, lookup);
  g_task_set_task_data (task, lookup, (GDestroyNotify) lookup_free);
#ifdef LIMEN_TEST_HOOKS
  /* LIMEN_TEST_IDENTIFY_DELAY_MS: tests hold a first call while others are served. */
  {
    const char *delay = g_getenv ("LIMEN_TEST_IDENTIFY_DELAY_MS");

    if (delay && *delay)
      {
        g_timeout_add ((guint) g_ascii_strtoull (delay, NULL, 10), send_credentials_call, task);
        return;
      }
  }
#endif
  send_credentials_call (task);
}

LimenAppInfo *
limen_app_info_get_for_sender_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == limen_app_info_get_for_sender_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- identifying before dispatch ------------------------------------------------------
 *
 * A method call from a peer not identified yet is held back, not answered on the spot: the
 * bus is asked for its credentials asynchronously, and meanwhile the main thread serves
 * everyone else. (dbus-daemon drops its own replies to a connection whose queue there holds
 * more than 64 fds, which one app flooding us with fd-carrying calls reaches; a synchronous
 * lookup then stalled every caller for the 5 s timeout.) The held calls of one peer are
 * dispatched again in the order they came, once the answer is in, with the identity (or the
 * reason there is none) attached to the invocation for limen_app_info_get_for_invocation. */

typedef struct {
  char      *sender;
  GPtrArray *held;       /* GDBusMethodInvocation*, each with its skeleton as qdata */
  gboolean   orphaned;   /* the tracker shut down first: only free this */
} PendingLookup;

static GHashTable *pending;   /* sender → PendingLookup; main thread only */

static GQuark
identity_quark (void)
{
  return g_quark_from_static_string ("limen-app-info-identity");
}

static GQuark
identity_error_quark (void)
{
  return g_quark_from_static_string ("limen-app-info-identity-error");
}

/* Set on the first call the gate held for a peer: the call that identified it. */
static GQuark
first_call_quark (void)
{
  return g_quark_from_static_string ("limen-app-info-first-call");
}

static GQuark
skeleton_quark (void)
{
  return g_quark_from_static_string ("limen-app-info-held-by");
}

static void
redispatch (GDBusMethodInvocation *invocation)
{
  GDBusInterfaceSkeleton *skeleton = g_object_steal_qdata (G_OBJECT (invocation), skeleton_quark ());
  GDBusInterfaceVTable *vtable = g_dbus_interface_skeleton_get_vtable (skeleton);

  /* Through the skeleton's own table, past the gate: the method's handlers run as if the
   * call had just arrived; they own the invocation from here. */
  vtable->method_call (g_dbus_method_invocation_get_connection (invocation),
                       g_dbus_method_invocation_get_sender (invocation),
                       g_dbus_method_invocation_get_object_path (invocation),
                       g_dbus_method_invocation_get_interface_name (invocation),
                       g_dbus_method_invocation_get_method_name (invocation),
                       g_dbus_method_invocation_get_parameters (invocation),
                       invocation, skeleton);
  g_object_unref (skeleton);
}

static void
pending_lookup_free (PendingLookup *p)
{
  g_free (p->sender);
  g_clear_pointer (&p->held, g_ptr_array_unref);
  g_free (p);
}

static void
on_gate_identified (GObject *source, GAsyncResult *result, gpointer user_data)
{
  PendingLookup *p = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_sender_finish (result, &error);

  if (p->orphaned)
    {
      pending_lookup_free (p);
      return;
    }
  g_hash_table_steal (pending, p->sender);
  for (guint i = 0; i < p->held->len; i++)
    {
      GDBusMethodInvocation *invocation = g_ptr_array_index (p->held, i);

      if (i == 0)
        g_object_set_qdata (G_OBJECT (invocation), first_call_quark (), GINT_TO_POINTER (1));
      if (info)
        g_object_set_qdata_full (G_OBJECT (invocation), identity_quark (), limen_app_info_ref (info),
                                 (GDestroyNotify) limen_app_info_unref);
      else
        g_object_set_qdata_full (G_OBJECT (invocation), identity_error_quark (), g_error_copy (error),
                                 (GDestroyNotify) g_error_free);
      redispatch (invocation);
    }
  g_ptr_array_set_size (p->held, 0);
  pending_lookup_free (p);
}

/* The first handler of every handle-* signal of a gated skeleton: TRUE (the call is held)
 * for a peer that has no identity yet. */
static gboolean
gate (GDBusInterfaceSkeleton *skeleton, GDBusMethodInvocation *invocation)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  PendingLookup *p;

  if (sender == NULL || cache == NULL || tracker_connection == NULL ||
      g_dbus_method_invocation_get_connection (invocation) != tracker_connection)
    return FALSE;
  if (g_object_get_qdata (G_OBJECT (invocation), identity_quark ()) ||
      g_object_get_qdata (G_OBJECT (invocation), identity_error_quark ()))
    return FALSE;                       /* dispatched again by on_gate_identified */
  p = pending ? g_hash_table_lookup (pending, sender) : NULL;
  if (p == NULL && g_hash_table_contains (cache, sender))
    return FALSE;
  if (p == NULL)
    {
      if (pending == NULL)
        pending = g_hash_table_new (g_str_hash, g_str_equal);
      p = g_new0 (PendingLookup, 1);
      p->sender = g_strdup (sender);
      p->held = g_ptr_array_new ();
      g_hash_table_insert (pending, p->sender, p);
      limen_app_info_get_for_sender_async (tracker_connection, sender, tracker_cancellable,
                                           on_gate_identified, p);
    }
  /* The handler's share of the invocation is ours now; the skeleton stays alive with it. */
  g_object_set_qdata (G_OBJECT (invocation), skeleton_quark (), g_object_ref (skeleton));
  g_ptr_array_add (p->held, invocation);
  return TRUE;
}

static void
gate_marshal (GClosure *closure, GValue *return_value, guint n_param_values, const GValue *param_values,
              gpointer invocation_hint, gpointer marshal_data)
{
  (void) closure;
  (void) invocation_hint;
  (void) marshal_data;
  g_return_if_fail (n_param_values >= 2);
  g_value_set_boolean (return_value, gate (G_DBUS_INTERFACE_SKELETON (g_value_get_object (&param_values[0])),
                                           G_DBUS_METHOD_INVOCATION (g_value_get_object (&param_values[1]))));
}

void
limen_app_info_gate_skeleton (GDBusInterfaceSkeleton *skeleton)
{
  limen_skeleton_connect_calls (skeleton, gate_marshal, NULL);
}

void
limen_skeleton_connect_calls (GDBusInterfaceSkeleton *skeleton, GClosureMarshal marshal, gpointer data)
{
  guint n_ifaces = 0;
  g_autofree GType *ifaces = g_type_interfaces (G_OBJECT_TYPE (skeleton), &n_ifaces);

  for (guint i = 0; i < n_ifaces; i++)
    {
      guint n_ids = 0;
      g_autofree guint *ids = NULL;

      if (ifaces[i] == G_TYPE_DBUS_INTERFACE)
        continue;
      ids = g_signal_list_ids (ifaces[i], &n_ids);
      for (guint j = 0; j < n_ids; j++)
        {
          GSignalQuery q;
          GClosure *closure;

          g_signal_query (ids[j], &q);
          if (!g_str_has_prefix (q.signal_name, "handle-") || q.return_type != G_TYPE_BOOLEAN ||
              q.n_params < 1 || q.param_types[0] != G_TYPE_DBUS_METHOD_INVOCATION)
            continue;
          closure = g_closure_new_simple (sizeof (GClosure), data);
          g_closure_set_marshal (closure, marshal);
          g_signal_connect_closure_by_id (skeleton, ids[j], 0, closure, FALSE);
        }
    }
}

static void
drain_pending (void)
{
  GHashTableIter iter;
  PendingLookup *p;

  if (pending == NULL)
    return;
  /* No main-loop iteration here: the daemon's own state is gone by now, and an iteration
   * would dispatch calls (held ones or new ones) into it. Lookups still out are orphaned. */
  g_hash_table_iter_init (&iter, pending);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &p))
    {
      for (guint i = 0; i < p->held->len; i++)
        {
          GDBusMethodInvocation *invocation = g_ptr_array_index (p->held, i);
          GDBusInterfaceSkeleton *skeleton = g_object_steal_qdata (G_OBJECT (invocation), skeleton_quark ());

          g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                         "The service is shutting down");
          g_clear_object (&skeleton);
        }
      g_ptr_array_set_size (p->held, 0);
      p->orphaned = TRUE;             /* its callback, if it ever runs, frees it */
    }
  g_clear_pointer (&pending, g_hash_table_unref);
}

LimenAppInfo *
limen_app_info_lookup_cached (const char *sender)
{
  LimenAppInfo *info = NULL;

  g_mutex_lock (&cache_lock);
  if (cache && (info = g_hash_table_lookup (cache, sender)))
    limen_app_info_ref (info);
  g_mutex_unlock (&cache_lock);
  return info;
}

LimenAppInfo *
limen_app_info_get_for_invocation (GDBusMethodInvocation *invocation)
{
  g_autoptr(GError) error = NULL;
  LimenAppInfo *info;
  const GError *held_error;

  /* Identified (or refused) while the call was held at the gate. */
  info = g_object_get_qdata (G_OBJECT (invocation), identity_quark ());
  if (info)
    return limen_app_info_ref (info);
  held_error = g_object_get_qdata (G_OBJECT (invocation), identity_error_quark ());
  if (held_error)
    {
      limen_invocation_return_gerror (invocation, held_error);
      return NULL;
    }
  info = limen_app_info_get_for_sender (g_dbus_method_invocation_get_connection (invocation),
                                        g_dbus_method_invocation_get_sender (invocation), &error);
  if (info == NULL)
    limen_invocation_return_gerror (invocation, error);
  return info;
}

gboolean
limen_app_info_invocation_is_first (GDBusMethodInvocation *invocation)
{
  return g_object_get_qdata (G_OBJECT (invocation), first_call_quark ()) != NULL;
}
