/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "app-info.h"
#include "errors.h"

/* Identification of real processes means nothing while the test hook decides. */
static gboolean
hook_in_environment (void)
{
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND") == NULL)
    return FALSE;
  g_test_skip ("test hook set in the environment");
  return TRUE;
}

static void
test_app_id_validity (void)
{
  /* The reference's rules: digits may start an element, '-' only in the last one. */
  const char *good[] = { "org.example.App", "org.kde.konsole", "a.b", "org.example.my-app", "org._1x.App_2",
                         "org.1example.App", "org.test.1.Lookup", "snap.0ad", NULL };
  const char *bad[] = { "", "org", ".org.example", "org..example", "org.example.", "org/example.App",
                        "../../etc", "org.my-example.App", "org.exa mple.App", "org.example.Äpp", "-.a", NULL };
  g_autofree char *long_id = g_strnfill (300, 'a');

  for (guint i = 0; good[i]; i++)
    g_assert_true (limen_app_id_is_valid (good[i]));
  for (guint i = 0; bad[i]; i++)
    g_assert_false (limen_app_id_is_valid (bad[i]));
  long_id[10] = '.';
  g_assert_false (limen_app_id_is_valid (long_id));
  g_assert_false (limen_app_id_is_valid (NULL));
}

static void
test_flatpak_info (void)
{
  const char *ok = "[Application]\nname=org.example.App\nruntime=runtime/x/y/z\n\n"
                   "[Instance]\ninstance-id=42\n\n[Context]\nshared=network;ipc;\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = limen_app_info_new_flatpak_from_data (ok, strlen (ok), 1, &error);
  g_auto(GStrv) shared = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (info);
  g_assert_cmpint (limen_app_info_get_kind (info), ==, LIMEN_APP_KIND_FLATPAK);
  g_assert_false (limen_app_info_is_host (info));
  g_assert_cmpstr (limen_app_info_get_id (info), ==, "org.example.App");
  g_assert_cmpstr (limen_app_info_get_instance (info), ==, "42");
  shared = g_key_file_get_string_list (limen_app_info_get_metadata (info), "Context", "shared", NULL, NULL);
  g_assert_true (g_strv_contains ((const char * const *) shared, "network"));
}

static void
test_flatpak_info_bad (void)
{
  const char *bad[] = {
    "",                                          /* no [Application] */
    "[Runtime]\nname=org.example.Platform\n",    /* a runtime, no app */
    "[Application]\n",                           /* no name */
    "[Application]\nname=\n",                    /* empty */
    "[Application]\nname=../../x\n",             /* path-like */
    "[Application]\nname=org/example\n",
    "not a keyfile at all\n\x01\x02",
    NULL
  };

  for (guint i = 0; bad[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(LimenAppInfo) info = limen_app_info_new_flatpak_from_data (bad[i], strlen (bad[i]), 1, &error);

      g_assert_null (info);
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
    }
}

static void
test_unit_names (void)
{
  struct { const char *unit; const char *id; } cases[] = {
    { "app-org.kde.konsole-1234.scope", "org.kde.konsole" },
    { "app-gnome-org.gnome.Terminal-5678.scope", "org.gnome.Terminal" },
    { "app-KDE-org.kde.dolphin-abc.scope", "org.kde.dolphin" },
    { "app-org.example.App@12345.service", "org.example.App" },
    { "app-dbus\\x2d:1.2-org.example.App@0.service", "org.example.App" },
    { "app-flatpak-org.example.App-999.scope", "org.example.App" },
    { "app-org.example.my\\x2dapp-77.scope", "org.example.my-app" },
    { "app-org.example.App.service", "org.example.App" },
    { "app-konsole-1234.scope", NULL },            /* not reverse-DNS */
    { "session-2.scope", NULL },
    { "app-.scope", NULL },
    { "user@0.service", NULL },
    { "app-org.example.App", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *id = limen_app_id_from_unit_name (cases[i].unit);
      g_assert_cmpstr (id, ==, cases[i].id);
    }
}

static void
test_cgroups (void)
{
  g_autofree char *id = limen_app_id_from_cgroup ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.kde.kate-4242.scope\n");
  g_autofree char *none = limen_app_id_from_cgroup ("0::/user.slice/user-1000.slice/session-2.scope\n");
  g_autofree char *v1 = limen_app_id_from_cgroup ("1:name=systemd:/user.slice/app-org.kde.kate-1.scope\n");

  g_assert_cmpstr (id, ==, "org.kde.kate");
  g_assert_null (none);
  g_assert_null (v1);
  g_assert_true (limen_cgroup_is_snap ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-2f1b.scope\n"));
  g_assert_true (limen_cgroup_is_snap ("12:pids:/user.slice/snap.hello.hook.configure-1.scope\n0::/x\n"));
  g_assert_false (limen_cgroup_is_snap ("0::/user.slice/user-1000.slice/session-2.scope\n"));
  g_assert_false (limen_cgroup_is_snap ("0::/snapshots/app-x.scope\n"));
}

static void
test_self_is_host (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;

  if (hook_in_environment ())
    return;
  info = limen_app_info_get_for_pid (getpid (), &error);
  g_assert_no_error (error);
  g_assert_true (limen_app_info_is_host (info));
  g_assert_cmpint (limen_app_info_get_pid (info), ==, getpid ());
  g_assert_cmpuint (limen_app_info_get_start_time (info), >, 0);
  g_assert_cmpuint (limen_app_info_get_uid (info), ==, getuid ());
}

static void
test_dead_pid (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_pid (G_MAXINT32 - 1, &error);

  g_assert_null (info);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
}

static void
test_pidfd (void)
{
  int pidfd = (int) syscall (SYS_pidfd_open, getpid (), 0);
  int plain = open ("/dev/null", O_RDONLY | O_CLOEXEC);

  g_assert_cmpint (plain, >=, 0);
  g_assert_cmpint (limen_pidfd_get_pid (plain), ==, -1);
  close (plain);
  if (pidfd < 0)
    {
      g_test_skip ("pidfd_open is not available");
      return;
    }
  g_assert_cmpint (limen_pidfd_get_pid (pidfd), ==, getpid ());
  close (pidfd);
}

static void
test_open_root (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) self = NULL;
  g_autoptr(LimenAppInfo) detached = NULL;
  struct stat root_st, st;
  int fd;

  if (hook_in_environment ())
    return;
  self = limen_app_info_get_for_pid (getpid (), &error);
  g_assert_no_error (error);
  fd = limen_app_info_open_root (self, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (stat ("/", &root_st), ==, 0);
  g_assert_true (st.st_dev == root_st.st_dev && st.st_ino == root_st.st_ino);
  close (fd);

  /* An identity parsed from data has no process behind it. */
  detached = limen_app_info_new_flatpak_from_data ("[Application]\nname=org.example.App\n", 35, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (limen_app_info_open_root (detached, &error), ==, -1);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
}

/* ---- bus peers on a private bus ---- */

typedef struct {
  GTestDBus       *dbus;
  GDBusConnection *service;
  GDBusConnection *client;
} BusFixture;

static GDBusConnection *
bus_connect (BusFixture *f)
{
  g_autoptr(GError) error = NULL;
  GDBusConnection *c = g_dbus_connection_new_for_address_sync (g_test_dbus_get_bus_address (f->dbus),
                                                               G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                               G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                               NULL, NULL, &error);
  g_assert_no_error (error);
  return c;
}

static void
bus_setup (BusFixture *f, gconstpointer data)
{
  f->dbus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (f->dbus);
  f->service = bus_connect (f);
  f->client = bus_connect (f);
  /* The tracker warns (fatally, in a test) about a hook set from outside; those tests skip. */
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND") == NULL)
    limen_app_info_tracker_init (f->service, NULL);
}

static void
bus_teardown (BusFixture *f, gconstpointer data)
{
  limen_app_info_tracker_shutdown ();
  g_clear_object (&f->client);
  g_clear_object (&f->service);
  g_test_dbus_down (f->dbus);
  g_object_unref (f->dbus);
}

static void
on_identified (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

/* Run limen_app_info_get_for_sender_async to its end. */
static LimenAppInfo *
identify_async (BusFixture *f, const char *sender, GError **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  limen_app_info_get_for_sender_async (f->service, sender, NULL, on_identified, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return limen_app_info_get_for_sender_finish (result, error);
}

static void
test_sender_async (BusFixture *f, gconstpointer data)
{
  const char *name = g_dbus_connection_get_unique_name (f->client);
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(LimenAppInfo) again = NULL;
  g_autoptr(LimenAppInfo) cached = NULL;
  g_autoptr(LimenAppInfo) gone = NULL;

  if (hook_in_environment ())
    return;
  g_assert_null (limen_app_info_lookup_cached (name));
  info = identify_async (f, name, &error);
  g_assert_no_error (error);
  g_assert_true (limen_app_info_is_host (info));
  g_assert_cmpint (limen_app_info_get_pid (info), ==, getpid ());
  g_assert_cmpuint (limen_app_info_get_start_time (info), >, 0);

  /* Cached while the peer is on the bus: the same object, from any path. */
  cached = limen_app_info_lookup_cached (name);
  g_assert_true (cached == info);
  again = identify_async (f, name, &error);
  g_assert_no_error (error);
  g_assert_true (again == info);

  /* A name nobody owns cannot be identified, and nothing is cached for it. */
  gone = identify_async (f, ":1.99999", &error);
  g_assert_null (gone);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
  g_assert_null (limen_app_info_lookup_cached (":1.99999"));
}

static void
test_sender_leaves (BusFixture *f, gconstpointer data)
{
  g_autofree char *name = g_strdup (g_dbus_connection_get_unique_name (f->client));
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(LimenAppInfo) left = NULL;

  if (hook_in_environment ())
    return;
  info = limen_app_info_get_for_sender (f->service, name, &error);
  g_assert_no_error (error);
  g_assert_nonnull (info);
  g_clear_object (&f->client);
  /* Its departure drops the cache entry once the bus says so. */
  for (int i = 0; i < 500 && (left = limen_app_info_lookup_cached (name)) != NULL; i++)
    {
      g_clear_pointer (&left, limen_app_info_unref);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (10000);
    }
  g_assert_null (left);
}

/* ID.desktop in the test's own (isolated) data home. */
static void
write_desktop_entry (const char *app_id)
{
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "applications", NULL);
  g_autofree char *name = g_strconcat (app_id, ".desktop", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, "[Desktop Entry]\nType=Application\nName=Registered\nExec=true\n",
                                      -1, NULL));
}

static void
test_registry (BusFixture *f, gconstpointer data)
{
  const char *name = g_dbus_connection_get_unique_name (f->client);
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;

  if (hook_in_environment ())
    return;
  g_assert_false (limen_app_info_register_host_id (f->service, name, "not-reverse-dns", &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* An id must name an installed application (its desktop entry), as upstream requires. */
  g_assert_false (limen_app_info_register_host_id (f->service, name, "org.example.Registered", &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED);
  g_clear_error (&error);
  write_desktop_entry ("org.example.Registered");

  g_assert_true (limen_app_info_register_host_id (f->service, name, "org.example.Registered", &error));
  g_assert_no_error (error);
  info = limen_app_info_get_for_sender (f->service, name, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (limen_app_info_get_id (info), ==, "org.example.Registered");

  /* A second Register is refused, with the same id as with another one. */
  g_assert_false (limen_app_info_register_host_id (f->service, name, "org.example.Registered", &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS);
  g_clear_error (&error);
  g_assert_false (limen_app_info_register_host_id (f->service, name, "org.example.Other", &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS);
  g_assert_cmpstr (limen_app_info_get_id (info), ==, "org.example.Registered");
}

#ifdef LIMEN_TEST_HOOKS
static void
test_registry_sandboxed (BusFixture *f, gconstpointer data)
{
  const char *name = g_dbus_connection_get_unique_name (f->client);
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  int fd = g_file_open_tmp ("limen-hook-XXXXXX", &path, &error);

  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, "[Application]\nname=org.example.Boxed\n", -1, NULL));
  g_setenv ("XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA", path, TRUE);
  g_setenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND", "flatpak", TRUE);
  /* A sandboxed app's id comes from its sandbox, never from itself. */
  g_assert_false (limen_app_info_register_host_id (f->service, name, "org.example.Pretend", &error));
  g_unsetenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND");
  g_unsetenv ("XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA");
  g_unlink (path);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
}
#endif

#ifdef LIMEN_TEST_HOOKS
static void
run_hook_case (const char *kind, const char *var, const char *contents, const char *want_id, LimenAppKind want_kind)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;
  int fd = -1;

  if (contents)
    {
      fd = g_file_open_tmp ("limen-hook-XXXXXX", &path, &error);
      g_assert_no_error (error);
      close (fd);
      g_assert_true (g_file_set_contents (path, contents, -1, NULL));
      g_setenv (var, path, TRUE);
    }
  g_setenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND", kind, TRUE);
  info = limen_app_info_get_for_pid (getpid (), &error);
  g_unsetenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND");
  if (var)
    g_unsetenv (var);
  if (path)
    g_unlink (path);
  if (want_id == NULL)
    {
      g_assert_null (info);
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
      return;
    }
  g_assert_no_error (error);
  g_assert_cmpint (limen_app_info_get_kind (info), ==, want_kind);
  g_assert_cmpstr (limen_app_info_get_id (info), ==, want_id);
}

static void
test_hooks (void)
{
  g_setenv ("XDG_DESKTOP_PORTAL_TEST_HOST_APPID", "org.example.Host", TRUE);
  run_hook_case ("host", NULL, NULL, "org.example.Host", LIMEN_APP_KIND_HOST);
  g_unsetenv ("XDG_DESKTOP_PORTAL_TEST_HOST_APPID");
  run_hook_case ("host", NULL, NULL, "", LIMEN_APP_KIND_HOST);
  run_hook_case ("flatpak", "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA",
                 "[Application]\nname=org.example.Hooked\n[Context]\nshared=network;\n",
                 "org.example.Hooked", LIMEN_APP_KIND_FLATPAK);
  run_hook_case ("flatpak", "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA", "[Application]\nname=../x\n",
                 NULL, LIMEN_APP_KIND_FLATPAK);
  run_hook_case ("flatpak", "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA", NULL, NULL, LIMEN_APP_KIND_FLATPAK);
  run_hook_case ("snap", "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA",
                 "[Snap Info]\nInstanceName=hello\nAppName=hello\nCommonID=org.example.Hello\nDesktopFile=hello.desktop\n",
                 "snap.hello", LIMEN_APP_KIND_SNAP);
  run_hook_case ("snap", "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA", "[Snap Info]\nAppName=x\n", NULL, LIMEN_APP_KIND_SNAP);
  run_hook_case ("snap", "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA", "[Snap Info]\nInstanceName=../x\n", NULL,
                 LIMEN_APP_KIND_SNAP);
  run_hook_case ("snap", "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA", "not a keyfile\n", NULL, LIMEN_APP_KIND_SNAP);
  run_hook_case ("bogus", NULL, NULL, NULL, LIMEN_APP_KIND_HOST);
}
#endif

/* Removes the data home main() made: applications/ and the entries the tests wrote. */
static void
remove_data_home (const char *data_home)
{
  g_autofree char *apps = g_build_filename (data_home, "applications", NULL);
  g_autoptr(GDir) dir = g_dir_open (apps, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (apps, name, NULL);

      g_unlink (path);
    }
  g_rmdir (apps);
  g_rmdir (data_home);
}

int
main (int argc, char **argv)
{
  /* A data home of our own (the registry test writes a desktop entry there), set before GLib
   * first reads it: G_TEST_OPTION_ISOLATE_DIRS would make one per test, but GLib 2.74 keeps
   * every earlier test's strings, which LeakSanitizer reports. */
  g_autofree char *data_home = g_dir_make_tmp ("limen-app-info-XXXXXX", NULL);
  int r;

  g_setenv ("XDG_DATA_HOME", data_home, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/app-info/app-id-validity", test_app_id_validity);
  g_test_add_func ("/app-info/flatpak-info", test_flatpak_info);
  g_test_add_func ("/app-info/flatpak-info-bad", test_flatpak_info_bad);
  g_test_add_func ("/app-info/unit-names", test_unit_names);
  g_test_add_func ("/app-info/cgroups", test_cgroups);
  g_test_add_func ("/app-info/self-is-host", test_self_is_host);
  g_test_add_func ("/app-info/dead-pid", test_dead_pid);
  g_test_add_func ("/app-info/pidfd", test_pidfd);
  g_test_add_func ("/app-info/open-root", test_open_root);
  g_test_add ("/app-info/sender-async", BusFixture, NULL, bus_setup, test_sender_async, bus_teardown);
  g_test_add ("/app-info/sender-leaves", BusFixture, NULL, bus_setup, test_sender_leaves, bus_teardown);
  g_test_add ("/app-info/registry", BusFixture, NULL, bus_setup, test_registry, bus_teardown);
#ifdef LIMEN_TEST_HOOKS
  g_test_add_func ("/app-info/test-hooks", test_hooks);
  g_test_add ("/app-info/registry-sandboxed", BusFixture, NULL, bus_setup, test_registry_sandboxed, bus_teardown);
#endif
  r = g_test_run ();
  remove_data_home (data_home);
  return r;
}
