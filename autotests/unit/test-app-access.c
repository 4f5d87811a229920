/* The as-needed-by-app model (document-fuse/app-access.c) on synthetic installations:
 * the cases the flatpak-backed integration test cannot set up (both installations,
 * broken files, resets, keys this model does not follow). Agreement with flatpak itself is
 * checked by autotests/integration/test_documents_as_needed.py.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib/gstdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "app-access.h"

#define APP "org.example.Unit"

static char *root, *home, *user_dir, *system_dir;

static void
put (const char *path, const char *contents)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}

static char *
in_home (const char *rel)
{
  return g_build_filename (home, rel, NULL);
}

/* Installs APP (and its files) in the user (or system) installation with @filesystems. */
static void
install (gboolean system, const char *filesystems)
{
  g_autofree char *meta = g_build_filename (system ? system_dir : user_dir, "app", APP, "current", "active",
                                            "metadata", NULL);
  g_autofree char *text = g_strdup_printf ("[Application]\nname=" APP "\n\n[Context]\nfilesystems=%s\n",
                                           filesystems);

  put (meta, text);
}

static void
override (gboolean system, const char *name, const char *filesystems)
{
  g_autofree char *file = g_build_filename (system ? system_dir : user_dir, "overrides", name, NULL);
  g_autofree char *text = filesystems ? g_strdup_printf ("[Context]\nfilesystems=%s\n", filesystems) : NULL;

  if (text)
    put (file, text);
  else
    g_unlink (file);
}

static void
reset (void)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s' '%s'", user_dir, system_dir);

  g_assert_cmpint (system (cmd), ==, 0);
}

static LimenAppAccess
access_of (const char *path)
{
  g_autoptr(LimenAppAccessRules) rules = limen_app_access_rules_load (APP);

  return limen_app_access_rules_check (rules, path);
}

static LimenAppAccess
home_access (const char *rel)
{
  g_autofree char *p = in_home (rel);

  return access_of (p);
}

static void
test_not_installed (void)
{
  reset ();
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_NONE);
  override (FALSE, APP, "home;");   /* overrides alone install nothing */
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_NONE);
}

static void
test_deepest_location_decides (void)
{
  reset ();
  install (FALSE, "home;~/Projects:ro;");
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_WRITE);
  g_assert_cmpint (home_access ("Projects/sub/y"), ==, LIMEN_APP_ACCESS_READ);
  g_assert_cmpint (home_access ("Projectsx/y"), ==, LIMEN_APP_ACCESS_WRITE);   /* not below ~/Projects */
  g_assert_cmpint (access_of ("/srv/x"), ==, LIMEN_APP_ACCESS_NONE);
  override (FALSE, APP, "!~/Projects;");
  g_assert_cmpint (home_access ("Projects/sub/y"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_WRITE);
  override (FALSE, APP, "!home;");
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (home_access ("Projects/sub/y"), ==, LIMEN_APP_ACCESS_READ);
}

static void
test_symlinks (void)
{
  g_autofree char *link = in_home ("plink");
  g_autofree char *target = in_home ("Projects");

  reset ();
  g_unlink (link);
  g_assert_cmpint (symlink (target, link), ==, 0);
  /* A shared symlink shares where it points... */
  install (FALSE, "~/plink;");
  g_assert_cmpint (home_access ("Projects/sub/y"), ==, LIMEN_APP_ACCESS_WRITE);
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_NONE);
  /* ... and a hidden one hides it. */
  install (FALSE, "home;!~/plink;");
  g_assert_cmpint (home_access ("Projects/sub/y"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_WRITE);
}

static void
test_runtime_dir_is_not_resolved (void)
{
  g_autofree char *key = g_strdup_printf ("home;%s/doc;", g_get_user_runtime_dir ());
  g_autofree char *doc = g_build_filename (g_get_user_runtime_dir (), "doc", "x", NULL);

  reset ();
  /* A real directory: resolving it would have granted it. */
  g_assert_cmpint (g_mkdir_with_parents (doc, 0700), ==, 0);
  install (FALSE, key);
  g_assert_cmpint (access_of (doc), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_WRITE);
}

static void
test_same_location_twice_gives_the_lesser (void)
{
  reset ();
  install (FALSE, "xdg-documents:ro;~/Documents;");
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_READ);
}

static void
test_reset_and_global_overrides (void)
{
  reset ();
  install (FALSE, "home;");
  override (FALSE, "global", "!host:reset;xdg-documents;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_WRITE);
  /* The app's own override comes after the global one. */
  override (FALSE, APP, "!xdg-documents;");
  g_assert_cmpint (home_access ("Documents/a"), ==, LIMEN_APP_ACCESS_NONE);
}

static void
test_unfollowed_keys (void)
{
  reset ();
  /* host-os and xdg-config grant nothing at the host's own paths... */
  install (FALSE, "host-os;xdg-config/foo;");
  g_assert_cmpint (home_access (".config/foo/x"), ==, LIMEN_APP_ACCESS_NONE);
  /* ... but their negation still hides what they name. */
  install (FALSE, "home;!xdg-config/foo;");
  g_assert_cmpint (home_access (".config/foo/x"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (home_access (".config/bar"), ==, LIMEN_APP_ACCESS_WRITE);
  /* A negation of something unknown: nothing is reached. */
  install (FALSE, "home;!future-thing;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_NONE);
  /* An unknown key grants nothing, the rest stands. */
  install (FALSE, "home;future-thing;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_WRITE);
  /* An unknown mode, or a file that does not parse: nothing. */
  install (FALSE, "home:sometimes;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_NONE);
  install (FALSE, "home;");
  {
    g_autofree char *file = g_build_filename (user_dir, "overrides", APP, NULL);

    put (file, "[Context\nfilesystems=home;\n");
  }
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_NONE);
}

static void
test_app_data_and_reserved (void)
{
  reset ();
  install (FALSE, "home;/usr;/etc;");
  g_assert_cmpint (home_access (".var/app/" APP "/data/x"), ==, LIMEN_APP_ACCESS_WRITE);
  g_assert_cmpint (home_access (".var/app/org.example.Other/data/x"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("/usr/bin/true"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("/etc/passwd"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("/"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("relative/path"), ==, LIMEN_APP_ACCESS_NONE);
}

static void
test_host (void)
{
  reset ();
  install (FALSE, "host;");
  g_assert_cmpint (access_of ("/home/someone/file"), ==, LIMEN_APP_ACCESS_WRITE);
  g_assert_cmpint (access_of ("/mnt/disk/f"), ==, LIMEN_APP_ACCESS_WRITE);
  g_assert_cmpint (access_of ("/run/media/u/stick/f"), ==, LIMEN_APP_ACCESS_WRITE);
  g_assert_cmpint (access_of ("/run/user/0/f"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("/var/lib/x"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("/tmp/x"), ==, LIMEN_APP_ACCESS_NONE);
  g_assert_cmpint (access_of ("/usr/share/x"), ==, LIMEN_APP_ACCESS_NONE);
  install (FALSE, "host:ro;");
  g_assert_cmpint (access_of ("/home/someone/file"), ==, LIMEN_APP_ACCESS_READ);
}

static void
test_both_installations (void)
{
  reset ();
  install (FALSE, "home;");
  install (TRUE, "home:ro;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_READ);   /* the lesser */
  /* A system override reaches the system-installed copy only. */
  reset ();
  install (FALSE, "");
  override (TRUE, APP, "home;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_NONE);
  reset ();
  install (TRUE, "");
  override (TRUE, APP, "home;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_WRITE);
  /* ... and the user's overrides reach it too. */
  override (FALSE, APP, "!home;");
  g_assert_cmpint (home_access ("other"), ==, LIMEN_APP_ACCESS_NONE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  root = g_dir_make_tmp ("limen-app-access-XXXXXX", NULL);
  g_assert_nonnull (root);
  home = g_build_filename (root, "home", NULL);
  user_dir = g_build_filename (root, "user-flatpak", NULL);
  system_dir = g_build_filename (root, "system-flatpak", NULL);
  g_setenv ("HOME", home, TRUE);
  g_autofree char *config = g_build_filename (home, ".config", NULL);
  g_autofree char *user_dirs = g_build_filename (config, "user-dirs.dirs", NULL);

  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("FLATPAK_USER_DIR", user_dir, TRUE);
  g_setenv ("FLATPAK_SYSTEM_DIR", system_dir, TRUE);
  g_autofree char *runtime = g_build_filename (root, "runtime", NULL);

  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  g_assert_cmpint (g_mkdir_with_parents (runtime, 0700), ==, 0);
  put (user_dirs, "XDG_DOCUMENTS_DIR=\"$HOME/Documents\"\n");
  /* Locations must exist to be shared (they are resolved to their real paths). */
  for (const char *d = "Documents\0Projects/sub\0Projectsx\0.config/foo\0.config/bar\0.var/app/" APP "/data\0"
                       ".var/app/org.example.Other/data\0";
       *d; d += strlen (d) + 1)
    {
      g_autofree char *p = in_home (d);

      g_assert_cmpint (g_mkdir_with_parents (p, 0700), ==, 0);
    }

  g_test_add_func ("/app-access/not-installed", test_not_installed);
  g_test_add_func ("/app-access/deepest-location-decides", test_deepest_location_decides);
  g_test_add_func ("/app-access/symlinks", test_symlinks);
  g_test_add_func ("/app-access/runtime-dir-is-not-resolved", test_runtime_dir_is_not_resolved);
  g_test_add_func ("/app-access/same-location-twice", test_same_location_twice_gives_the_lesser);
  g_test_add_func ("/app-access/reset-and-global-overrides", test_reset_and_global_overrides);
  g_test_add_func ("/app-access/unfollowed-keys", test_unfollowed_keys);
  g_test_add_func ("/app-access/app-data-and-reserved", test_app_data_and_reserved);
  g_test_add_func ("/app-access/host", test_host);
  g_test_add_func ("/app-access/both-installations", test_both_installations);
  {
    int r = g_test_run ();
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", root);

    g_assert_cmpint (system (cmd), ==, 0);
    return r;
  }
}
