/* Limen — org.freedesktop.background.Monitor.
 *
 * Which sandboxed instances run: those under $XDG_RUNTIME_DIR/.flatpak (Flatpak keeps one
 * folder per running instance: "info" names the app, ".ref" stays read-locked while it
 * runs, "bwrapinfo.json" gives its pid), and those that set a status through the portal,
 * for as long as they stay on the bus. Which of them have no window: the Background
 * backend's GetAppState, where an app left out has none. The listing is refreshed when
 * either side may have changed: the runtime folder (a file monitor), the backend's
 * RunningApplicationsChanged or its arrival, a caller leaving the bus, a SetStatus.
 *
 * A refresh never starts the backend: only SetStatus, an app using the portal, may.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "background-monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

#define MONITOR_NAME "org.freedesktop.background.Monitor"
#define MONITOR_PATH "/org/freedesktop/background/monitor"
#define MAX_INSTANCES 1024
#define RESCAN_DELAY_MS 300

typedef struct {
  char       *app_id;
  char       *message;         /* NULL: none set */
  guint       state;           /* GetAppState's: 0 no window, 1 windows, 2 active */
  gboolean    state_known;
  gboolean    in_runtime_dir;  /* found running at the last scan */
  GHashTable *peers;           /* unique names that set its status, while on the bus */
} Instance;

typedef struct {
  GDBusMethodInvocation *invocation;
  char                  *instance;
} Waiter;

static struct {
  LimenPortalContext         *context;
  const char                 *impl_interface;
  LimenDbusBackgroundMonitor *skeleton;
  GHashTable                 *instances;   /* instance id → Instance */
  GFileMonitor               *dir_monitor;
  guint                       rescan_id;
  gboolean                    in_flight, flight_autostart, again, again_autostart;
  GPtrArray                  *waiters;     /* SetStatus calls that the next GetAppState answers */
} mon;

static void refresh (gboolean autostart);

static void
instance_free (gpointer data)
{
  Instance *inst = data;

  g_free (inst->app_id);
  g_free (inst->message);
  g_hash_table_unref (inst->peers);
  g_free (inst);
}

static Instance *
instance_new (const char *id, const char *app_id)
{
  Instance *inst = g_new0 (Instance, 1);

  inst->app_id = g_strdup (app_id);
  inst->peers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_insert (mon.instances, g_strdup (id), inst);
  return inst;
}

static void
waiter_free (gpointer data)
{
  Waiter *w = data;

  g_free (w->instance);
  g_free (w);
}

/* Flatpak's instance ids are decimal; anything else is not a folder of ours to read. */
static gboolean
instance_id_is_valid (const char *id)
{
  gsize len = id ? strlen (id) : 0;

  return len > 0 && len <= 64 && strspn (id, "0123456789") == len;
}

/* The pid in bwrapinfo.json ({"child-pid": N, ...}), or 0. */
static pid_t
read_child_pid (int dirfd)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d/bwrapinfo.json", dirfd);
  g_autofree char *json = NULL;
  const char *p;
  long pid;

  if (!g_file_get_contents (path, &json, NULL, NULL) || !(p = strstr (json, "\"child-pid\"")))
    return 0;
  p += strlen ("\"child-pid\"");
  p += strspn (p, " \t\n:");
  pid = strtol (p, NULL, 10);
  return pid > 0 && pid < G_MAXINT ? (pid_t) pid : 0;
}

/* Flatpak read-locks .ref for as long as the instance runs: a write-lock query sees that.
 * Without a .ref (older Flatpak), the sandbox's pid decides. */
static gboolean
instance_dir_running (int dirfd)
{
  g_autofd int fd = openat (dirfd, ".ref", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  pid_t pid;

  if (fd >= 0)
    {
      struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

      return fcntl (fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    }
  pid = read_child_pid (dirfd);
  return pid > 0 && (kill (pid, 0) == 0 || errno == EPERM);
}

/* The app of a running instance folder, or NULL. */
static char *
read_instance_dir (const char *base, const char *name)
{
  g_autofree char *dir = g_build_filename (base, name, NULL);
  g_autofree char *info = g_build_filename (dir, "info", NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *app_id = NULL;
  g_autofd int dirfd = -1;

  if (!g_key_file_load_from_file (kf, info, G_KEY_FILE_NONE, NULL))
    return NULL;
  app_id = g_key_file_get_string (kf, "Application", "name", NULL);
  if (app_id == NULL || !limen_app_id_is_valid (app_id))
    return NULL;
  dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dirfd < 0 || !instance_dir_running (dirfd))
    return NULL;
  return g_steal_pointer (&app_id);
}

static gboolean
instance_is_gone (gpointer key, gpointer value, gpointer user_data)
{
  Instance *inst = value;

  return !inst->in_runtime_dir && g_hash_table_size (inst->peers) == 0;
}

/* Take the running instances from $XDG_RUNTIME_DIR/.flatpak; drop those that ended. */
static void
scan_runtime_dir (void)
{
  g_autofree char *base = g_build_filename (g_get_user_runtime_dir (), ".flatpak", NULL);
  g_autoptr(GDir) dir = g_dir_open (base, 0, NULL);
  GHashTableIter iter;
  Instance *inst;
  const char *name;

  g_hash_table_iter_init (&iter, mon.instances);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &inst))
    inst->in_runtime_dir = FALSE;
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *app_id = NULL;

      if (!instance_id_is_valid (name) || !(app_id = read_instance_dir (base, name)))
        continue;
      inst = g_hash_table_lookup (mon.instances, name);
      if (inst == NULL && g_hash_table_size (mon.instances) >= MAX_INSTANCES)
        break;
      if (inst == NULL)
        inst = instance_new (name, app_id);
      /* The folder is Flatpak's own: it names the app, whatever a caller said. */
      if (g_strcmp0 (inst->app_id, app_id) != 0)
        {
          g_free (inst->app_id);
          inst->app_id = g_steal_pointer (&app_id);
          inst->state_known = FALSE;
        }
      inst->in_runtime_dir = TRUE;
    }
  g_hash_table_foreach_remove (mon.instances, instance_is_gone, NULL);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Set BackgroundApps from the table (PropertiesChanged only when it changed). */
static void
publish (void)
{
  g_autofree gpointer *ids = (gpointer *) g_hash_table_get_keys_as_array (mon.instances, NULL);
  guint n = g_hash_table_size (mon.instances);
  GVariantBuilder apps;
  g_autoptr(GVariant) value = NULL;
  GVariant *old;

  qsort (ids, n, sizeof (gpointer), compare_strings);
  g_variant_builder_init (&apps, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < n; i++)
    {
      Instance *inst = g_hash_table_lookup (mon.instances, ids[i]);

      if (!inst->state_known || inst->state != 0)
        continue;
      g_variant_builder_open (&apps, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&apps, "{sv}", "app_id", g_variant_new_string (inst->app_id));
      g_variant_builder_add (&apps, "{sv}", "instance", g_variant_new_string (ids[i]));
      if (inst->message)
        g_variant_builder_add (&apps, "{sv}", "message", g_variant_new_string (inst->message));
      g_variant_builder_close (&apps);
    }
  value = g_variant_ref_sink (g_variant_builder_end (&apps));
  old = limen_dbus_background_monitor_get_background_apps (mon.skeleton);
  if (old == NULL || !g_variant_equal (old, value))
    limen_dbus_background_monitor_set_background_apps (mon.skeleton, value);
}

/* Answer the SetStatus calls waiting for a GetAppState; on @error their new instances go. */
static void
answer_waiters (const GError *error)
{
  g_autoptr(GPtrArray) waiters = g_steal_pointer (&mon.waiters);

  mon.waiters = g_ptr_array_new_with_free_func (waiter_free);
  for (guint i = 0; i < waiters->len; i++)
    {
      Waiter *w = g_ptr_array_index (waiters, i);
      Instance *inst = g_hash_table_lookup (mon.instances, w->instance);

      if (error == NULL)
        {
          g_dbus_method_invocation_return_value (w->invocation, NULL);
          continue;
        }
      if (inst && !inst->state_known && !inst->in_runtime_dir)
        g_hash_table_remove (mon.instances, w->instance);
      g_dbus_method_invocation_return_error (w->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                             "Could not learn from the Background backend whether "
                                             "the app has windows: %s", error->message);
    }
}

static void
apply_states (GVariant *apps)
{
  GHashTableIter iter;
  Instance *inst;

  g_hash_table_iter_init (&iter, mon.instances);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &inst))
    {
      g_autoptr(GVariant) state = g_variant_lookup_value (apps, inst->app_id, NULL);

      /* A value of another type counts as a window: never list an app by mistake. */
      if (state == NULL)
        inst->state = 0;
      else
        inst->state = g_variant_is_of_type (state, G_VARIANT_TYPE_UINT32) ? g_variant_get_uint32 (state) : 1;
      inst->state_known = TRUE;
    }
}

static void
on_app_state (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  gboolean again, again_autostart;

  mon.in_flight = FALSE;
  if (reply)
    {
      g_autoptr(GVariant) apps = g_variant_get_child_value (reply, 0);

      apply_states (apps);
      answer_waiters (NULL);
    }
  else if (!mon.flight_autostart && mon.waiters->len > 0)
    {
      /* A SetStatus came while a refresh that may not start the backend was on its way. */
      mon.again = mon.again_autostart = TRUE;
    }
  else
    {
      g_debug ("GetAppState failed: %s", error->message);
      answer_waiters (error);
    }
  publish ();
  again = mon.again;
  again_autostart = mon.again_autostart;
  mon.again = mon.again_autostart = FALSE;
  if (again)
    refresh (again_autostart);
}

/* Rescan, then ask the backend which apps have windows (one call at a time; calls asked for
 * meanwhile make one more). @autostart: the backend may be started for it. */
static void
refresh (gboolean autostart)
{
  g_autoptr(GError) error = NULL;
  const char *backend;

  if (mon.in_flight)
    {
      mon.again = TRUE;
      mon.again_autostart |= autostart;
      return;
    }
  scan_runtime_dir ();
  backend = g_hash_table_size (mon.instances) ? limen_backend_find (mon.context, mon.impl_interface, &error) : NULL;
  if (backend == NULL)
    {
      answer_waiters (error);
      publish ();
      return;
    }
  mon.in_flight = TRUE;
  mon.flight_autostart = autostart;
  g_dbus_connection_call (mon.context->connection, backend, LIMEN_PORTAL_PATH, mon.impl_interface,
                          "GetAppState", NULL, G_VARIANT_TYPE ("(a{sv})"),
                          autostart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START,
                          LIMEN_BACKEND_TIMEOUT_QUICK, NULL, on_app_state, NULL);
}

static gboolean
on_rescan (gpointer user_data)
{
  mon.rescan_id = 0;
  refresh (FALSE);
  return G_SOURCE_REMOVE;
}

/* Changes come in bursts (Flatpak writes an instance's files one after another, an app maps
 * several windows): one refresh a little after the first of them. */
static void
schedule_refresh (void)
{
  if (mon.rescan_id == 0)
    mon.rescan_id = g_timeout_add (RESCAN_DELAY_MS, on_rescan, NULL);
}

static void
on_running_changed (GDBusConnection *connection, const char *sender, const char *path,
                    const char *interface, const char *signal, GVariant *parameters, gpointer user_data)
{
  /* Whoever sent it, a refresh is all it causes, and refreshes do not pile up. */
  schedule_refresh ();
}

static void
on_backend_seen (GVariant *properties, gpointer user_data)
{
  schedule_refresh ();
}

static void
on_dir_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event, gpointer user_data)
{
  schedule_refresh ();
}

static void
on_peer_vanished (const char *unique_name, gpointer user_data)
{
  GHashTableIter iter;
  Instance *inst;
  gboolean changed = FALSE;

  g_hash_table_iter_init (&iter, mon.instances);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &inst))
    if (g_hash_table_remove (inst->peers, unique_name))
      {
        changed = TRUE;
        if (instance_is_gone (NULL, inst, NULL))
          g_hash_table_iter_remove (&iter);
      }
  if (changed)
    publish ();
}

static void
on_name_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  g_debug ("Owned %s", name);
}

static void
on_name_lost (GDBusConnection *connection, const char *name, gpointer user_data)
{
  /* Another portal serves it (the listing stays ours at our own unique name). */
  if (connection)
    g_message ("%s is owned by another process; waiting for it", name);
}

void
limen_background_monitor_start (LimenPortalContext *context, const char *impl_interface)
{
  g_autofree char *base = g_build_filename (g_get_user_runtime_dir (), ".flatpak", NULL);
  g_autoptr(GFile) dir = g_file_new_for_path (base);
  g_autoptr(GError) error = NULL;

  if (mon.skeleton)
    return;
  mon.context = context;
  mon.impl_interface = impl_interface;
  mon.instances = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, instance_free);
  mon.waiters = g_ptr_array_new_with_free_func (waiter_free);
  mon.skeleton = limen_dbus_background_monitor_skeleton_new ();
  limen_dbus_background_monitor_set_version (mon.skeleton, 1);
  publish ();
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (mon.skeleton), context->connection,
                                         MONITOR_PATH, &error))
    {
      g_warning ("The background monitor is not offered: %s", error->message);
      return;
    }
  /* Queued behind a portal that will not hand it over; ours once that one leaves. */
  g_bus_own_name_on_connection (context->connection, MONITOR_NAME,
                                G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT | G_BUS_NAME_OWNER_FLAGS_REPLACE,
                                on_name_acquired, on_name_lost, NULL, NULL);
  g_dbus_connection_signal_subscribe (context->connection, NULL, impl_interface, "RunningApplicationsChanged",
                                      LIMEN_PORTAL_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                      on_running_changed, NULL, NULL);
  limen_backend_watch_properties (context, impl_interface, on_backend_seen, NULL);
  limen_app_info_add_vanished_watch (on_peer_vanished, NULL);
  mon.dir_monitor = g_file_monitor_directory (dir, G_FILE_MONITOR_NONE, NULL, &error);
  if (mon.dir_monitor)
    g_signal_connect (mon.dir_monitor, "changed", G_CALLBACK (on_dir_changed), NULL);
  else
    g_debug ("Not watching %s: %s", base, error->message);
  refresh (FALSE);
}

void
limen_background_monitor_set_status (LimenAppInfo *info, const char *message, GDBusMethodInvocation *invocation)
{
  const char *id = limen_app_info_get_instance (info);
  const char *app_id = limen_app_info_get_id (info);
  Instance *inst;
  Waiter *w;

  inst = instance_id_is_valid (id) ? g_hash_table_lookup (mon.instances, id) : NULL;
  if (!instance_id_is_valid (id) || (inst && g_strcmp0 (inst->app_id, app_id) != 0))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "No sandboxed instance of the application found");
      return;
    }
  if (inst == NULL && g_hash_table_size (mon.instances) >= MAX_INSTANCES)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "Too many apps in the background");
      return;
    }
  if (inst == NULL)
    inst = instance_new (id, app_id);
  g_hash_table_add (inst->peers, g_strdup (g_dbus_method_invocation_get_sender (invocation)));
  g_free (inst->message);
  inst->message = g_strdup (message);
  if (inst->state_known)
    {
      publish ();
      g_dbus_method_invocation_return_value (invocation, NULL);
      return;
    }
  w = g_new0 (Waiter, 1);
  w->invocation = invocation;
  w->instance = g_strdup (id);
  g_ptr_array_add (mon.waiters, w);
  refresh (TRUE);
}
