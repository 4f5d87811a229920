/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib/gstdio.h>

#include "portal-config.h"

typedef struct {
  char *root;
  char *portals;
  char *conf1;
  char *conf2;
} Fixture;

static void
write_file (const char *dir, const char *name, const char *contents)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->root = g_dir_make_tmp ("limen-config-XXXXXX", NULL);
  f->portals = g_build_filename (f->root, "portals", NULL);
  f->conf1 = g_build_filename (f->root, "conf1", NULL);
  f->conf2 = g_build_filename (f->root, "conf2", NULL);
  g_mkdir (f->portals, 0755);
  g_mkdir (f->conf1, 0755);
  g_mkdir (f->conf2, 0755);
  write_file (f->portals, "kde.portal",
              "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.kde\n"
              "Interfaces=org.freedesktop.impl.portal.FileChooser;org.freedesktop.impl.portal.Settings;\nUseIn=KDE\n");
  write_file (f->portals, "gtk.portal",
              "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.gtk\n"
              "Interfaces=org.freedesktop.impl.portal.FileChooser;org.freedesktop.impl.portal.Settings;"
              "org.freedesktop.impl.portal.Print;\nUseIn=gnome\n");
  write_file (f->portals, "limen.portal",
              "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.limen\n"
              "Interfaces=org.freedesktop.impl.portal.Settings;org.freedesktop.impl.portal.Access;\nUseIn=KDE\n");
  write_file (f->portals, "broken.portal", "[portal]\nInterfaces=org.freedesktop.impl.portal.Access;\n");
  write_file (f->portals, "notaportal.txt", "[portal]\nDBusName=x.y\nInterfaces=org.freedesktop.impl.portal.Access;\n");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);

  g_assert_cmpint (system (cmd), ==, 0);
  g_free (f->root);
  g_free (f->portals);
  g_free (f->conf1);
  g_free (f->conf2);
}

static LimenPortalConfig *
load (Fixture *f, const char *desktops_colon)
{
  const char *portal_dirs[] = { f->portals, NULL };
  const char *conf_dirs[] = { f->conf1, f->conf2, NULL };
  g_auto(GStrv) desktops = g_strsplit (desktops_colon, ":", -1);

  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "Ignoring *broken.portal*");
  return limen_portal_config_load_from (portal_dirs, conf_dirs, (const char * const *) desktops);
}

static const char *
find (LimenPortalConfig *c, const char *iface)
{
  const LimenPortalImpl *impl = limen_portal_config_find (c, iface);

  return impl ? impl->source : NULL;
}

static void
test_use_in (Fixture *f, gconstpointer data)
{
  g_autoptr(LimenPortalConfig) c = load (f, "KDE");
  g_autoptr(GPtrArray) settings = NULL;

  g_assert_cmpuint (limen_portal_config_get_impls (c)->len, ==, 3);   /* broken one skipped */
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.FileChooser"), ==, "kde");
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.Access"), ==, "limen");
  /* Nothing KDE offers Print: fall back to any backend that does. */
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.Print"), ==, "gtk");
  g_assert_null (find (c, "org.freedesktop.impl.portal.Wallpaper"));
  settings = limen_portal_config_find_all (c, "org.freedesktop.impl.portal.Settings");
  g_assert_cmpuint (settings->len, ==, 2);
  g_assert_null (limen_portal_config_get_conf_path (c));
}

/* Settings, with no conf file: only the backends meant for this desktop, never a stray one. */
static void
test_settings_for_desktop (Fixture *f, gconstpointer data)
{
  g_autoptr(LimenPortalConfig) kde = load (f, "KDE");
  g_autoptr(LimenPortalConfig) xfce = load (f, "XFCE");
  g_autoptr(GPtrArray) kde_settings = limen_portal_config_find_all_for_desktop (kde, "org.freedesktop.impl.portal.Settings");
  g_autoptr(GPtrArray) xfce_settings = limen_portal_config_find_all_for_desktop (xfce, "org.freedesktop.impl.portal.Settings");
  g_autoptr(GPtrArray) xfce_any = limen_portal_config_find_all (xfce, "org.freedesktop.impl.portal.Settings");

  g_assert_cmpuint (kde_settings->len, ==, 2);
  g_assert_cmpuint (xfce_settings->len, ==, 0);
  g_assert_cmpuint (xfce_any->len, ==, 3);   /* other interfaces keep the last resort */
}

static void
test_portals_conf (Fixture *f, gconstpointer data)
{
  g_autoptr(LimenPortalConfig) c = NULL;
  g_autoptr(GPtrArray) settings = NULL;

  write_file (f->conf2, "portals.conf",
              "[preferred]\ndefault=gtk;kde\norg.freedesktop.impl.portal.FileChooser=kde\n"
              "org.freedesktop.impl.portal.Print=none\norg.freedesktop.impl.portal.Settings=*\n");
  c = load (f, "KDE");
  g_assert_nonnull (limen_portal_config_get_conf_path (c));
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.FileChooser"), ==, "kde");
  g_assert_null (find (c, "org.freedesktop.impl.portal.Print"));
  /* default= lists only gtk and kde: limen's Access is not chosen. */
  g_assert_null (find (c, "org.freedesktop.impl.portal.Access"));
  settings = limen_portal_config_find_all (c, "org.freedesktop.impl.portal.Settings");
  g_assert_cmpuint (settings->len, ==, 3);
}

static void
test_desktop_conf_wins (Fixture *f, gconstpointer data)
{
  g_autoptr(LimenPortalConfig) c = NULL;

  write_file (f->conf1, "portals.conf", "[preferred]\ndefault=gtk\n");
  write_file (f->conf2, "kde-portals.conf", "[preferred]\ndefault=limen;kde\n");
  c = load (f, "foo:KDE");
  g_assert_true (g_str_has_suffix (limen_portal_config_get_conf_path (c), "conf2/kde-portals.conf"));
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.Settings"), ==, "limen");
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.FileChooser"), ==, "kde");
}

static void
test_first_dir_wins (Fixture *f, gconstpointer data)
{
  g_autoptr(LimenPortalConfig) c = NULL;

  write_file (f->conf1, "test-portals.conf", "[preferred]\ndefault=kde\n");
  write_file (f->conf2, "test-portals.conf", "[preferred]\ndefault=gtk\n");
  c = load (f, "test");
  g_assert_cmpstr (find (c, "org.freedesktop.impl.portal.FileChooser"), ==, "kde");
}

#define DEBIAN_KDE_PORTAL "/usr/share/xdg-desktop-portal/portals/kde.portal"

static char **
interfaces_of (const char *portal_file)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  char **ifaces;

  g_assert_true (g_key_file_load_from_file (kf, portal_file, G_KEY_FILE_NONE, NULL));
  ifaces = g_key_file_get_string_list (kf, "portal", "Interfaces", NULL, NULL);
  g_assert_nonnull (ifaces);
  return ifaces;
}

static void
copy_file (const char *from, const char *dir, const char *name)
{
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (from, &text, NULL, NULL));
  write_file (dir, name, text);
}

/* The part run in a child process, where GLib reads the XDG variables afresh. */
static void
check_shipped_choice (const char *limen_portal)
{
  g_auto(GStrv) limen_ifaces = interfaces_of (limen_portal);
  g_auto(GStrv) kde_ifaces = interfaces_of (DEBIAN_KDE_PORTAL);
  g_autoptr(LimenPortalConfig) c = limen_portal_config_load ();
  g_autoptr(GPtrArray) settings = NULL;

  g_assert_true (g_str_has_suffix (limen_portal_config_get_conf_path (c), "/share/xdg-desktop-portal/kde-portals.conf"));
  /* Settings are merged from every backend chosen: limen's alone, so kde's is not started. */
  settings = limen_portal_config_find_all_for_desktop (c, "org.freedesktop.impl.portal.Settings");
  g_assert_cmpuint (settings->len, ==, 1);
  g_assert_cmpstr (((const LimenPortalImpl *) g_ptr_array_index (settings, 0))->source, ==, "limen");
  for (guint i = 0; limen_ifaces[i]; i++)
    if (*limen_ifaces[i])
      g_assert_cmpstr (find (c, limen_ifaces[i]), ==, "limen");
  for (guint i = 0; kde_ifaces[i]; i++)
    if (*kde_ifaces[i] && !g_strv_contains ((const char * const *) limen_ifaces, kde_ifaces[i]))
      g_assert_cmpstr (find (c, kde_ifaces[i]), ==, "kde");
}

/* The files a package ships, laid out as installed in a data dir before the system's, with
 * Debian's kde.portal there too (both say UseIn=KDE, and kde sorts first): in a KDE session
 * the shipped kde-portals.conf makes limen serve every interface limen.portal lists, and kde
 * only what limen lacks. The search paths are limen-portal's own (limen_portal_config_load). */
static void
test_shipped_kde_portals_conf (Fixture *f, gconstpointer data)
{
  const char *source = g_getenv ("LIMEN_SOURCE_DIR");
  g_autofree char *limen_portal = NULL;

  if (!g_file_test (DEBIAN_KDE_PORTAL, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("xdg-desktop-portal-kde is not installed");
      return;
    }
  g_assert_nonnull (source);
  limen_portal = g_build_filename (source, "kde-backend", "data", "limen.portal", NULL);
  if (g_test_subprocess ())
    {
      check_shipped_choice (limen_portal);
      return;
    }
  {
    g_autofree char *data_dir = g_build_filename (f->root, "share", NULL);
    g_autofree char *portals = g_build_filename (data_dir, "xdg-desktop-portal", "portals", NULL);
    g_autofree char *conf_dir = g_build_filename (data_dir, "xdg-desktop-portal", NULL);
    g_autofree char *conf = g_build_filename (source, "kde-backend", "data", "kde-portals.conf", NULL);
    g_autofree char *data_dirs = g_strconcat (data_dir, ":/usr/share", NULL);

    g_assert_cmpint (g_mkdir_with_parents (portals, 0755), ==, 0);
    copy_file (limen_portal, portals, "limen.portal");
    copy_file (conf, conf_dir, "kde-portals.conf");
    /* Nothing of the machine's or the user's own configuration: only the two data dirs. */
    g_setenv ("XDG_DATA_DIRS", data_dirs, TRUE);
    g_setenv ("XDG_DATA_HOME", f->conf1, TRUE);
    g_setenv ("XDG_CONFIG_HOME", f->conf1, TRUE);
    g_setenv ("XDG_CONFIG_DIRS", f->conf2, TRUE);
    g_setenv ("XDG_CURRENT_DESKTOP", "KDE", TRUE);
    g_unsetenv ("XDG_DESKTOP_PORTAL_DIR");
    g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed ();
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/portal-config/use-in", Fixture, NULL, fixture_setup, test_use_in, fixture_teardown);
  g_test_add ("/portal-config/portals-conf", Fixture, NULL, fixture_setup, test_portals_conf, fixture_teardown);
  g_test_add ("/portal-config/settings-for-desktop", Fixture, NULL, fixture_setup, test_settings_for_desktop,
              fixture_teardown);
  g_test_add ("/portal-config/desktop-conf-wins", Fixture, NULL, fixture_setup, test_desktop_conf_wins, fixture_teardown);
  g_test_add ("/portal-config/first-dir-wins", Fixture, NULL, fixture_setup, test_first_dir_wins, fixture_teardown);
  g_test_add ("/portal-config/shipped-kde-portals-conf", Fixture, NULL, fixture_setup, test_shipped_kde_portals_conf,
              fixture_teardown);
  return g_test_run ();
}
