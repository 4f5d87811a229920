/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Who is calling. The bus tells us a pid (or a pidfd where dbus-daemon gives one); from
 * there /proc says whether the process is a Flatpak app (a /.flatpak-info in its root),
 * a Snap (its cgroup) or a host app (its systemd unit). Anything claiming to be sandboxed
 * that we cannot parse is refused rather than taken for the host.
 */
#include "app-info.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "errors.h"
#include "pid-map.h"

#define FLATPAK_INFO_MAX (256 * 1024)
#define PROC_FILE_MAX (64 * 1024)

struct _LimenAppInfo {
  gint          ref_count;
  LimenAppKind  kind;
  char         *id;
  char         *instance;
  pid_t         pid;
  guint64       start_time;
  uid_t         uid;
  gid_t         gid;
  GKeyFile     *metadata;
  int           proc_fd;      /* /proc/PID as a directory: goes stale (ESRCH) when the process dies */
  gboolean      registered;   /* host id set through the Registry */
};

/* ---- tracker (main thread only) ----------------------------------------------------- */

typedef struct {
  LimenPeerVanishedFunc func;
  gpointer              user_data;
} VanishedWatch;

static GHashTable *cache;          /* unique name → LimenAppInfo; written on the main thread only */
static GMutex cache_lock;          /* for readers on other threads (limen_app_info_lookup_cached) */
static GHashTable *appeared;       /* unique name → guint64 ticks when it joined the bus */
static GArray *vanished_watches;
static guint name_owner_changed_id;
static GDBusConnection *tracker_connection;
static guint64 tracker_start_ticks;

static guint64
now_in_ticks (void)
{
  struct timespec ts;
  long hz = sysconf (_SC_CLK_TCK);

  /* /proc/PID/stat's start time counts clock ticks since boot, suspend included. */
  clock_gettime (CLOCK_BOOTTIME, &ts);
  return (guint64) ts.tv_sec * hz + (guint64) ts.tv_nsec / (1000000000 / hz);
}

static void mark_pending_vanished (const char *name);
static void drain_pending (void);

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
  if (*new_owner != '\0' && *old_owner == '\0')
    {
      g_hash_table_insert (appeared, g_strdup (name), g_memdup2 (&(guint64) { now_in_ticks () }, sizeof (guint64)));
      return;
    }
  if (*new_owner == '\0')
    {
      g_mutex_lock (&cache_lock);
      g_hash_table_remove (cache, name);
      g_mutex_unlock (&cache_lock);
      g_hash_table_remove (appeared, name);
      mark_pending_vanished (name);
      for (guint i = 0; i < vanished_watches->len; i++)
        {
          VanishedWatch *w = &g_array_index (vanished_watches, VanishedWatch, i);
          w->func (name, w->user_data);
        }
    }
}

/* Peers connected before us joined the bus no later than now. */
static void
record_present_names (GDBusConnection *connection)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariantIter) iter = NULL;
  const char *name;

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "ListNames", NULL, G_VARIANT_TYPE ("(as)"),
                                       G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL);
  if (reply == NULL)
    return;
  g_variant_get (reply, "(as)", &iter);
  while (g_variant_iter_next (iter, "&s", &name))
    if (name[0] == ':' && !g_hash_table_contains (appeared, name))
      g_hash_table_insert (appeared, g_strdup (name), g_memdup2 (&tracker_start_ticks, sizeof (guint64)));
}

void
limen_app_info_tracker_init (GDBusConnection *connection)
{
  if (cache != NULL)
    return;
  cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) limen_app_info_unref);
  appeared = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  vanished_watches = g_array_new (FALSE, FALSE, sizeof (VanishedWatch));
  tracker_connection = g_object_ref (connection);
  tracker_start_ticks = now_in_ticks ();
  name_owner_changed_id =
    g_dbus_connection_signal_subscribe (connection, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                        "NameOwnerChanged", "/org/freedesktop/DBus", NULL,
                                        G_DBUS_SIGNAL_FLAGS_NONE, on_name_owner_changed, NULL, NULL);
  record_present_names (connection);
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
  drain_pending ();
  g_dbus_connection_signal_unsubscribe (tracker_connection, name_owner_changed_id);
  g_mutex_lock (&cache_lock);
  g_clear_pointer (&cache, g_hash_table_unref);
  g_mutex_unlock (&cache_lock);
  g_clear_pointer (&appeared, g_hash_table_unref);
  g_clear_pointer (&vanished_watches, g_array_unref);
  g_clear_object (&tracker_connection);
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

static LimenAppInfo *
app_info_new (LimenAppKind kind, pid_t pid)
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

/* ---- parsing ------------------------------------------------------------------------ */

gboolean
limen_app_id_is_valid (const char *app_id)
{
  gsize len;
  guint elements = 1;
  gboolean element_start = TRUE;

  if (app_id == NULL)
    return FALSE;
  len = strlen (app_id);
  if (len == 0 || len > 255)
    return FALSE;
  for (const char *p = app_id; *p; p++)
    {
      if (*p == '.')
        {
          if (element_start)
            return FALSE;       /* empty element, leading dot, ".." */
          elements++;
          element_start = TRUE;
          continue;
        }
      if (!(g_ascii_isalnum (*p) || *p == '_' || *p == '-'))
        return FALSE;
      if (element_start && g_ascii_isdigit (*p))
        return FALSE;
      element_start = FALSE;
    }
  return !element_start && elements >= 2;
}

static gboolean
parse_flatpak_keyfile (LimenAppInfo *info, const char *data, gsize len, GError **error)
{
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *name = NULL;

  if (!g_key_file_load_from_data (keyfile, data, len, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Unparsable Flatpak metadata: %s", local_error->message);
      return FALSE;
    }
  name = g_key_file_get_string (keyfile, "Application", "name", NULL);
  if (name == NULL)
    {
      /* Runtimes run sandboxed too; [Runtime] without [Application] is no app we can name. */
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Flatpak metadata has no [Application] name");
      return FALSE;
    }
  if (!limen_app_id_is_valid (name))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Flatpak metadata names an invalid application id");
      return FALSE;
    }
  info->id = g_steal_pointer (&name);
  info->instance = g_key_file_get_string (keyfile, "Instance", "instance-id", NULL);
  info->metadata = g_steal_pointer (&keyfile);
  return TRUE;
}

LimenAppInfo *
limen_app_info_new_flatpak_from_data (const char *data, gsize len, pid_t pid, GError **error)
{
  g_autoptr(LimenAppInfo) info = app_info_new (LIMEN_APP_KIND_FLATPAK, pid);

  if (!parse_flatpak_keyfile (info, data, len, error))
    return NULL;
  return g_steal_pointer (&info);
}

static gboolean
parse_snap_keyfile (LimenAppInfo *info, const char *data, gsize len, GError **error)
{
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *instance = NULL;
  g_autofree char *id = NULL;

  if (!g_key_file_load_from_data (keyfile, data, len, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Unparsable Snap metadata: %s", local_error->message);
      return FALSE;
    }
  instance = g_key_file_get_string (keyfile, "Snap Info", "InstanceName", NULL);
  if (instance == NULL || *instance == '\0')
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Snap metadata has no [Snap Info] InstanceName");
      return FALSE;
    }
  id = g_strconcat ("snap.", instance, NULL);
  if (!limen_app_id_is_valid (id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Snap metadata names an invalid instance");
      return FALSE;
    }
  info->id = g_steal_pointer (&id);
  info->metadata = g_steal_pointer (&keyfile);
  return TRUE;
}

/* systemd unit-name escaping: "\x2d" and friends. */
static char *
unescape_unit_part (const char *s, gsize len)
{
  GString *out = g_string_sized_new (len);

  for (gsize i = 0; i < len; i++)
    {
      if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' &&
          g_ascii_isxdigit (s[i + 2]) && g_ascii_isxdigit (s[i + 3]))
        {
          g_string_append_c (out, (char) (g_ascii_xdigit_value (s[i + 2]) * 16 + g_ascii_xdigit_value (s[i + 3])));
          i += 3;
        }
      else
        g_string_append_c (out, s[i]);
    }
  return g_string_free (out, FALSE);
}

char *
limen_app_id_from_unit_name (const char *unit)
{
  g_autofree char *body = NULL;
  g_auto(GStrv) parts = NULL;
  guint n;
  const char *id_part;
  char *id;

  if (!g_str_has_prefix (unit, "app-"))
    return NULL;
  if (g_str_has_suffix (unit, ".scope"))
    {
      /* app[-<launcher>]-<ApplicationID>-<RANDOM>.scope */
      body = g_strndup (unit + 4, strlen (unit) - 4 - strlen (".scope"));
      parts = g_strsplit (body, "-", -1);
      n = g_strv_length (parts);
      if (n < 2)
        return NULL;
      id_part = parts[n - 2];
    }
  else if (g_str_has_suffix (unit, ".service"))
    {
      /* app[-<launcher>]-<ApplicationID>[@<RANDOM>].service */
      char *at;

      body = g_strndup (unit + 4, strlen (unit) - 4 - strlen (".service"));
      at = strchr (body, '@');
      if (at)
        *at = '\0';
      parts = g_strsplit (body, "-", -1);
      n = g_strv_length (parts);
      if (n < 1)
        return NULL;
      id_part = parts[n - 1];
    }
  else
    return NULL;

  if (*id_part == '\0')
    return NULL;
  id = unescape_unit_part (id_part, strlen (id_part));
  /* Unit names of apps started without an id ("app-org.kde.konsole-1234.scope" → fine;
   * "app-glib-foo-1234.scope" → "foo", not a reverse-DNS id) name nothing we can use. */
  if (!limen_app_id_is_valid (id))
    {
      g_free (id);
      return NULL;
    }
  return id;
}

/* The systemd unit a process lives in, from the unified (0::) line of /proc/PID/cgroup. */
static char *
cgroup_leaf (const char *cgroup_contents)
{
  g_auto(GStrv) lines = g_strsplit (cgroup_contents, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      const char *path;
      const char *slash;

      if (!g_str_has_prefix (lines[i], "0::"))
        continue;
      path = lines[i] + 3;
      slash = strrchr (path, '/');
      return g_strdup (slash ? slash + 1 : path);
    }
  return NULL;
}

char *
limen_app_id_from_cgroup (const char *cgroup_contents)
{
  g_autofree char *leaf = cgroup_leaf (cgroup_contents);

  return leaf ? limen_app_id_from_unit_name (leaf) : NULL;
}

gboolean
limen_cgroup_is_snap (const char *cgroup_contents)
{
  g_auto(GStrv) lines = g_strsplit (cgroup_contents, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      const char *path = strchr (lines[i], ':');

      path = path ? strchr (path + 1, ':') : NULL;
      if (path == NULL)
        continue;
      /* snap.NAME.APP-UUID.scope / snap.NAME.hook.X-UUID.scope anywhere in the path. */
      for (const char *p = strstr (path, "/snap."); p; p = strstr (p + 1, "/snap."))
        if (strstr (p, ".scope") || strstr (p, ".service"))
          return TRUE;
    }
  return FALSE;
}

/* ---- /proc -------------------------------------------------------------------------- */

static char *
read_fd (int fd, const char *name, gsize max, gsize *len_out, GError **error)
{
  g_autoptr(GString) buf = g_string_sized_new (4096);

  for (;;)
    {
      char chunk[4096];
      ssize_t r = read (fd, chunk, sizeof chunk);

      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s: %s", name, g_strerror (errsv));
          return NULL;
        }
      if (r == 0)
        break;
      if (buf->len + (gsize) r > max)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: too large", name);
          return NULL;
        }
      g_string_append_len (buf, chunk, r);
    }
  if (len_out)
    *len_out = buf->len;
  return g_string_free (g_steal_pointer (&buf), FALSE);
}

static char *
read_at (int dirfd, const char *name, gsize max, gsize *len_out, GError **error)
{
  g_autofd int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s: %s", name, g_strerror (errsv));
      return NULL;
    }
  return read_fd (fd, name, max, len_out, error);
}

/* Field 22 of /proc/PID/stat; the comm field may hold spaces and parentheses. */
static gboolean
read_start_time (int proc_fd, guint64 *start_time, GError **error)
{
  g_autofree char *stat = read_at (proc_fd, "stat", PROC_FILE_MAX, NULL, error);
  const char *p;
  g_auto(GStrv) fields = NULL;

  if (stat == NULL)
    return FALSE;
  p = strrchr (stat, ')');
  if (p == NULL)
    goto bad;
  fields = g_strsplit (p + 2, " ", 0);
  /* After ")": field 3 is state, so field 22 is index 19. */
  if (g_strv_length (fields) < 20)
    goto bad;
  *start_time = g_ascii_strtoull (fields[19], NULL, 10);
  return TRUE;

bad:
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "unparsable /proc stat");
  return FALSE;
}

static void
read_ids (LimenAppInfo *info)
{
  g_autofree char *status = read_at (info->proc_fd, "status", PROC_FILE_MAX, NULL, NULL);
  g_auto(GStrv) lines = NULL;

  if (status == NULL)
    return;
  lines = g_strsplit (status, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      if (g_str_has_prefix (lines[i], "Uid:"))
        info->uid = (uid_t) g_ascii_strtoull (lines[i] + 4, NULL, 10);
      else if (g_str_has_prefix (lines[i], "Gid:"))
        info->gid = (gid_t) g_ascii_strtoull (lines[i] + 4, NULL, 10);
    }
}

int
limen_app_info_open_root (LimenAppInfo *info, GError **error)
{
  int fd;
  guint64 start_time;

  if (info->proc_fd < 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller has no process to inspect");
      return -1;
    }
  fd = openat (info->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller's root is not accessible: %s",
                   g_strerror (errno));
      return -1;
    }
  /* /proc/PID of a dead process answers ESRCH; a live one must still be the same process. */
  if (!read_start_time (info->proc_fd, &start_time, NULL) || start_time != info->start_time)
    {
      close (fd);
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller's process is gone");
      return -1;
    }
  return fd;
}

static gboolean
identify_snap (LimenAppInfo *info, GError **error)
{
  g_autofree char *snap = g_find_program_in_path ("snap");
  g_autofree char *pid = g_strdup_printf ("%d", info->pid);
  g_autofree char *out = NULL;
  g_autoptr(GError) local_error = NULL;
  int status;
  const char *argv[] = { NULL, "routine", "portal-info", pid, NULL };

  if (snap == NULL)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Caller runs in a Snap, but there is no snap command to describe it");
      return FALSE;
    }
  argv[0] = snap;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &out, NULL, &status, &local_error) ||
      !g_spawn_check_wait_status (status, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "snap routine portal-info failed: %s",
                   local_error->message);
      return FALSE;
    }
  info->kind = LIMEN_APP_KIND_SNAP;
  return parse_snap_keyfile (info, out, strlen (out), error);
}

/* Identify a live process through its /proc directory. */
static LimenAppInfo *
identify_process (int proc_fd_in, pid_t pid, guint64 not_after, GError **error)
{
  g_autoptr(LimenAppInfo) info = app_info_new (LIMEN_APP_KIND_HOST, pid);
  g_autoptr(GError) local_error = NULL;
  g_autofd int root_fd = -1;
  g_autofree char *cgroup = NULL;
  struct stat st;
  guint64 again;

  info->proc_fd = proc_fd_in;
  if (!read_start_time (info->proc_fd, &info->start_time, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot inspect caller process %d: %s",
                   pid, local_error->message);
      return NULL;
    }
  if (not_after && info->start_time > not_after)
    {
      /* The pid now belongs to a process younger than the connection: the process that
       * connected is gone and its pid was reused. Never mistake the newcomer for the caller. */
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Caller process %d started after its connection appeared (pid reused)", pid);
      return NULL;
    }
  read_ids (info);

  root_fd = openat (info->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot open root of caller process %d: %s",
                   pid, g_strerror (errno));
      return NULL;
    }

  if (fstatat (root_fd, ".flatpak-info", &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      g_autofd int fd = -1;
      g_autofree char *data = NULL;
      gsize len;

      /* Any /.flatpak-info is a claim to be sandboxed: it must be a regular file we can parse. */
      info->kind = LIMEN_APP_KIND_FLATPAK;
      if (!S_ISREG (st.st_mode))
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                               "Caller's /.flatpak-info is not a regular file");
          return NULL;
        }
      fd = openat (root_fd, ".flatpak-info", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
      if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                               "Caller's /.flatpak-info cannot be read");
          return NULL;
        }
      data = read_fd (fd, ".flatpak-info", FLATPAK_INFO_MAX, &len, &local_error);
      if (data == NULL)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                       "Caller's /.flatpak-info cannot be read: %s", local_error->message);
          return NULL;
        }
      if (!parse_flatpak_keyfile (info, data, len, error))
        return NULL;
    }
  else if (errno != ENOENT)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Cannot inspect the caller's /.flatpak-info: %s", g_strerror (errno));
      return NULL;
    }
  else
    {
      cgroup = read_at (info->proc_fd, "cgroup", PROC_FILE_MAX, NULL, NULL);
      if (cgroup && limen_cgroup_is_snap (cgroup))
        {
          if (!identify_snap (info, error))
            return NULL;
        }
      else if (cgroup)
        info->id = limen_app_id_from_cgroup (cgroup);
    }

  /* The metadata must describe the process we started with, not a successor. */
  if (!read_start_time (info->proc_fd, &again, NULL) || again != info->start_time)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller process %d went away", pid);
      return NULL;
    }
  return g_steal_pointer (&info);
}

#ifdef LIMEN_TEST_HOOKS
/* XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND in the daemon's own environment decides. */
static LimenAppInfo *
identify_from_test_hook (const char *kind, int proc_fd, pid_t pid, GError **error)
{
  g_autoptr(LimenAppInfo) info = app_info_new (LIMEN_APP_KIND_HOST, pid);
  g_autoptr(GError) local_error = NULL;
  const char *var = NULL;
  g_autofree char *data = NULL;
  gsize len;

  info->proc_fd = proc_fd;
  if (proc_fd >= 0)
    {
      read_start_time (proc_fd, &info->start_time, NULL);
      read_ids (info);
    }
  if (g_str_equal (kind, "host"))
    {
      const char *id = g_getenv ("XDG_DESKTOP_PORTAL_TEST_HOST_APPID");

      info->id = g_strdup (id ? id : "");
      return g_steal_pointer (&info);
    }
  if (g_str_equal (kind, "flatpak"))
    var = "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA";
  else if (g_str_equal (kind, "snap"))
    var = "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA";
  else
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Unknown XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND '%s'", kind);
      return NULL;
    }
  if (g_getenv (var) == NULL ||
      !g_file_get_contents (g_getenv (var), &data, &len, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s unreadable: %s", var,
                   local_error ? local_error->message : "not set");
      return NULL;
    }
  if (g_str_equal (kind, "flatpak"))
    {
      info->kind = LIMEN_APP_KIND_FLATPAK;
      if (!parse_flatpak_keyfile (info, data, len, error))
        return NULL;
    }
  else
    {
      info->kind = LIMEN_APP_KIND_SNAP;
      if (!parse_snap_keyfile (info, data, len, error))
        return NULL;
    }
  return g_steal_pointer (&info);
}
#endif

static int
open_proc_dir (pid_t pid, GError **error)
{
  char path[64];
  int fd;

  g_snprintf (path, sizeof path, "/proc/%d", pid);
  fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller process %d is gone", pid);
  return fd;
}

static LimenAppInfo *
identify (pid_t pid, int proc_fd, guint64 not_after, GError **error)
{
#ifdef LIMEN_TEST_HOOKS
  const char *kind = g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND");

  if (kind != NULL)
    return identify_from_test_hook (kind, proc_fd, pid, error);
#endif
  return identify_process (proc_fd, pid, not_after, error);
}

LimenAppInfo *
limen_app_info_get_for_pid (pid_t pid, GError **error)
{
  int proc_fd = open_proc_dir (pid, error);
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

/* The rest of identifying @sender once the bus answered GetConnectionCredentials: the
 * process (by its pidfd where the bus gives one), its /proc entry, its sandbox metadata.
 * @joined_by: a time the name was surely on the bus, for a name whose NameOwnerChanged we
 * have not seen yet (0: now). Caches the result while the peer is on the bus. */
static LimenAppInfo *
identify_from_credentials (const char *sender, GVariant *reply, GUnixFDList *fds, guint64 joined_by,
                           GError **error)
{
  g_autoptr(GVariant) creds = NULL;
  g_autoptr(GError) local_error = NULL;
  LimenAppInfo *info;
  guint32 pid32 = 0;
  gint32 pidfd_index = -1;
  g_autofd int pidfd = -1;
  int proc_fd;
  pid_t pid;
  guint64 not_after = 0;
  guint64 *appeared_at;

  creds = g_variant_get_child_value (reply, 0);
  g_variant_lookup (creds, "ProcessID", "u", &pid32);
  if (g_variant_lookup (creds, "ProcessFD", "h", &pidfd_index) && fds &&
      pidfd_index >= 0 && pidfd_index < g_unix_fd_list_get_length (fds))
    pidfd = g_unix_fd_list_get (fds, pidfd_index, NULL);

  if (pidfd >= 0)
    {
      pid = limen_pidfd_get_pid (pidfd);
      if (pid <= 0)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Caller %s has exited", sender);
          return NULL;
        }
    }
  else
    {
      pid = (pid_t) pid32;
      if (pid <= 0)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The bus gives no process for %s", sender);
          return NULL;
        }
      appeared_at = appeared ? g_hash_table_lookup (appeared, sender) : NULL;
      /* Names on the bus before we started were recorded then; a name we have not seen
       * appear yet (its NameOwnerChanged still queued) joined before it called us. */
      not_after = appeared_at ? *appeared_at : (joined_by ? joined_by : now_in_ticks ());
    }

  proc_fd = open_proc_dir (pid, error);
  if (proc_fd < 0)
    return NULL;
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
      g_warning ("Refusing caller %s (pid %d): %s", sender, pid, local_error->message);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  g_debug ("Caller %s is %s app '%s' (pid %d)", sender,
           info->kind == LIMEN_APP_KIND_FLATPAK ? "a Flatpak" : info->kind == LIMEN_APP_KIND_SNAP ? "a Snap" : "a host",
           limen_app_info_get_id (info), pid);
  /* Only cache while the peer is known to be on the bus; its departure drops the entry. */
  if (cache)
    {
      g_mutex_lock (&cache_lock);
      g_hash_table_insert (cache, g_strdup (sender), limen_app_info_ref (info));
      g_mutex_unlock (&cache_lock);
    }
  return info;
}

static GVariant *
credentials_call_params (const char *sender)
{
  return g_variant_new ("(s)", sender);
}

LimenAppInfo *
limen_app_info_get_for_sender (GDBusConnection *connection, const char *sender, GError **error)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) local_error = NULL;
  LimenAppInfo *info;

  if (cache && (info = g_hash_table_lookup (cache, sender)))
    return limen_app_info_ref (info);

#ifdef LIMEN_TEST_HOOKS
  /* The same slow bus as start_lookup's, for callers that are not gated. */
  if (g_getenv ("LIMEN_TEST_IDENTIFY_DELAY_MS"))
    g_usleep (1000 * g_ascii_strtoull (g_getenv ("LIMEN_TEST_IDENTIFY_DELAY_MS"), NULL, 10));
#endif
  reply = g_dbus_connection_call_with_unix_fd_list_sync (connection, "org.freedesktop.DBus",
                                                         "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                         "GetConnectionCredentials",
                                                         credentials_call_params (sender),
                                                         G_VARIANT_TYPE ("(a{sv})"),
                                                         G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &fds,
                                                         limen_daemon_get_quit_cancellable (), &local_error);
  if (reply == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot identify caller %s: %s",
                   sender, local_error->message);
      return NULL;
    }
  return identify_from_credentials (sender, reply, fds, 0, error);
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
  guint64    started;    /* ticks: the name was on the bus by then */
  GPtrArray *held;       /* GDBusMethodInvocation*, each with its skeleton as qdata */
  gboolean   orphaned;   /* the tracker shut down first: only free this */
  gboolean   vanished;   /* the peer left before the answer came: do not cache it */
} PendingLookup;

static GHashTable *pending;   /* sender → PendingLookup; main thread only */

static void
mark_pending_vanished (const char *name)
{
  PendingLookup *p = pending ? g_hash_table_lookup (pending, name) : NULL;

  if (p)
    p->vanished = TRUE;
}

static void on_credentials (GObject *source, GAsyncResult *result, gpointer user_data);

static gboolean
send_credentials_call (gpointer user_data)
{
  PendingLookup *p = user_data;

  g_dbus_connection_call_with_unix_fd_list (tracker_connection, "org.freedesktop.DBus",
                                            "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "GetConnectionCredentials", credentials_call_params (p->sender),
                                            G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL,
                                            limen_daemon_get_quit_cancellable (), on_credentials, p);
  return G_SOURCE_REMOVE;
}

/* Ask the bus who @p's sender is. LIMEN_TEST_HOOKS builds honour
 * LIMEN_TEST_IDENTIFY_DELAY_MS, so tests can hold a first call while others are served. */
static void
start_lookup (PendingLookup *p)
{
#ifdef LIMEN_TEST_HOOKS
  const char *delay = g_getenv ("LIMEN_TEST_IDENTIFY_DELAY_MS");

  if (delay && *delay && tracker_connection)
    {
      g_timeout_add ((guint) g_ascii_strtoull (delay, NULL, 10), send_credentials_call, p);
      return;
    }
#endif
  send_credentials_call (p);
}

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
on_credentials (GObject *source, GAsyncResult *result, gpointer user_data)
{
  PendingLookup *p = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;

  reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source), &fds, result, &error);
  if (p->orphaned)
    {
      pending_lookup_free (p);
      return;
    }
  g_hash_table_steal (pending, p->sender);
  if (reply)
    {
      info = identify_from_credentials (p->sender, reply, fds, p->started, &error);
      if (info && p->vanished && cache)
        {
          /* Its departure was seen already; nothing else would drop the entry. */
          g_mutex_lock (&cache_lock);
          g_hash_table_remove (cache, p->sender);
          g_mutex_unlock (&cache_lock);
        }
    }
  else
    {
      g_autoptr(GError) bus_error = g_steal_pointer (&error);

      g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Cannot identify caller %s: %s",
                   p->sender, bus_error->message);
    }
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
    return FALSE;                       /* dispatched again by on_credentials */
  p = pending ? g_hash_table_lookup (pending, sender) : NULL;
  if (p == NULL && g_hash_table_contains (cache, sender))
    return FALSE;
  if (p == NULL)
    {
      if (pending == NULL)
        pending = g_hash_table_new (g_str_hash, g_str_equal);
      p = g_new0 (PendingLookup, 1);
      p->sender = g_strdup (sender);
      p->started = now_in_ticks ();
      p->held = g_ptr_array_new ();
      g_hash_table_insert (pending, p->sender, p);
      start_lookup (p);
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
          closure = g_closure_new_simple (sizeof (GClosure), NULL);
          g_closure_set_marshal (closure, gate_marshal);
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

gboolean
limen_app_info_register_host_id (GDBusConnection *connection, const char *sender,
                                 const char *app_id, GError **error)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_sender (connection, sender, error);

  if (info == NULL)
    return FALSE;
  if (!limen_app_info_is_host (info))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Only host applications can register an application id");
      return FALSE;
    }
  if (!limen_app_id_is_valid (app_id))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid application id '%s'", app_id);
      return FALSE;
    }
  if (info->registered)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS,
                           "This connection already registered an application id");
      return FALSE;
    }
  g_free (info->id);
  info->id = g_strdup (app_id);
  info->registered = TRUE;
  return TRUE;
}
