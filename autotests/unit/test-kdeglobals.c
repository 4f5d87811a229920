/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * limen-kde's kdeglobals reader: the cascade and its [$i] locks, the entry syntax, and the
 * appearance derived from it. */
#include <locale.h>
#include <string.h>
#include <glib/gstdio.h>

#include "kdeglobals.h"

typedef struct {
  char *root;
  char *sys_high;     /* the more important system directory (first in XDG_CONFIG_DIRS) */
  char *sys_low;
  char *home;         /* XDG_CONFIG_HOME */
  char *data;         /* XDG_DATA_HOME */
} Fixture;

static char *
make_dir (const char *root, const char *name)
{
  char *dir = g_build_filename (root, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  return dir;
}

static void
write_file (const char *dir, const char *name, const char *contents)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}

static void
setup (Fixture *f, gconstpointer data)
{
  g_autofree char *dirs = NULL;

  f->root = g_dir_make_tmp ("limen-kdeglobals-XXXXXX", NULL);
  g_assert_nonnull (f->root);
  f->sys_high = make_dir (f->root, "xdg-high");
  f->sys_low = make_dir (f->root, "xdg-low");
  f->home = make_dir (f->root, "config");
  f->data = make_dir (f->root, "data");
  g_free (make_dir (f->data, "color-schemes"));
  dirs = g_strdup_printf ("%s:%s", f->sys_high, f->sys_low);
  g_setenv ("XDG_CONFIG_DIRS", dirs, TRUE);
  g_setenv ("XDG_CONFIG_HOME", f->home, TRUE);
  g_setenv ("XDG_DATA_HOME", f->data, TRUE);
  g_setenv ("XDG_DATA_DIRS", "/nonexistent", TRUE);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);

  g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL));
  g_free (f->root);
  g_free (f->sys_high);
  g_free (f->sys_low);
  g_free (f->home);
  g_free (f->data);
}

static void
collect (const char *group, const char *key, const char *value, gpointer user_data)
{
  g_string_append_printf (user_data, "[%s] %s=%s\n", group, key, value);
}

static char *
read_all (void)
{
  GString *out = g_string_new (NULL);

  limen_kdeglobals_foreach (collect, out);
  return g_string_free (out, FALSE);
}

static void
test_paths (Fixture *f, gconstpointer data)
{
  g_auto(GStrv) paths = limen_kdeglobals_get_paths ();
  g_autofree char *low = g_build_filename (f->sys_low, "kdeglobals", NULL);
  g_autofree char *high = g_build_filename (f->sys_high, "kdeglobals", NULL);
  g_autofree char *home = g_build_filename (f->home, "kdeglobals", NULL);

  /* Least important first. */
  g_assert_cmpuint (g_strv_length (paths), ==, 3);
  g_assert_cmpstr (paths[0], ==, low);
  g_assert_cmpstr (paths[1], ==, high);
  g_assert_cmpstr (paths[2], ==, home);
}

static void
test_cascade (Fixture *f, gconstpointer data)
{
  g_autofree char *all = NULL;

  write_file (f->sys_low, "kdeglobals", "[Open]\nk=low\nonly_low=1\n");
  write_file (f->sys_high, "kdeglobals", "[Locked][$i]\nk=high\n[Open]\nk=high\n");
  write_file (f->home, "kdeglobals", "[Locked]\nk=home\nnew=home\n[Open]\nk=home\n");
  all = read_all ();
  /* A later file wins, except in a group an earlier file locked. */
  g_assert_cmpstr (all, ==, "[Locked] k=high\n[Open] k=home\n[Open] only_low=1\n");
}

static void
test_file_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *all = NULL;

  write_file (f->sys_low, "kdeglobals", "[$i]\n[General]\nk=low\n");
  write_file (f->sys_high, "kdeglobals", "[General]\nk=high\nother=high\n");
  write_file (f->home, "kdeglobals", "[General]\nk=home\n");
  all = read_all ();
  /* A locked file ends the cascade: nothing more important is read. */
  g_assert_cmpstr (all, ==, "[General] k=low\n");
}

static void
test_syntax (Fixture *f, gconstpointer data)
{
  g_autofree char *all = NULL;
  g_autofree char *want = NULL;

  g_setenv ("LIMEN_TEST_VAR", "value", TRUE);
  write_file (f->home, "kdeglobals",
              "# comment\n"
              "  [A][B]  \n"
              "b=2\n"
              "B=1\n"
              "Name[de]=localized\n"
              "Esc=a\\sb\\tc\\nd\\\\e\\x41\\xZZ\\;\n"
              "Path[$e]=$LIMEN_TEST_VAR/${LIMEN_TEST_VAR}x${NOPE\n"
              "Plain=$LIMEN_TEST_VAR\n"
              " spaced  =  trimmed  \r\n"
              "=nokey\n"
              "noequals\n"
              "[]\n"
              "orphan=1\n");
  all = read_all ();
  want = g_strdup ("[A.B] B=1\n"
                   "[A.B] Esc=a b\tc\nd\\eA\\xZZ\\;\n"
                   "[A.B] Path=value/valuex${NOPE\n"
                   "[A.B] Plain=$LIMEN_TEST_VAR\n"
                   "[A.B] b=2\n"
                   "[A.B] spaced=trimmed\n");
  g_assert_cmpstr (all, ==, want);
}

static void
test_appearance_colors (Fixture *f, gconstpointer data)
{
  LimenAppearance a;

  write_file (f->home, "kdeglobals",
              "[Colors:Window]\nBackgroundNormal=32,35,38\nForegroundNormal=252,252,252\n"
              "[General]\nAccentColor=61,174,233\n[KDE]\nAnimationDurationFactor=0\n");
  limen_kdeglobals_read_appearance (&a);
  g_assert_cmpint (a.color_scheme, ==, LIMEN_COLOR_SCHEME_DARK);
  g_assert_true (a.has_accent);
  g_assert_cmpfloat_with_epsilon (a.accent_r, 61 / 255.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (a.accent_b, 233 / 255.0, 1e-9);
  g_assert_false (a.high_contrast);
  g_assert_true (a.reduced_motion);

  write_file (f->home, "kdeglobals",
              "[Colors:View]\nBackgroundNormal=255,255,255\nForegroundNormal=0,0,0\n"
              "[Colors:Window]\nBackgroundNormal=239,240,241\n[General]\nAccentColor=bad\n");
  limen_kdeglobals_read_appearance (&a);
  g_assert_cmpint (a.color_scheme, ==, LIMEN_COLOR_SCHEME_LIGHT);
  g_assert_false (a.has_accent);
  g_assert_true (a.high_contrast);
  g_assert_false (a.reduced_motion);
}

static void
test_appearance_scheme (Fixture *f, gconstpointer data)
{
  g_autofree char *schemes = g_build_filename (f->data, "color-schemes", NULL);
  LimenAppearance a;

  /* Colours from the named scheme's file when kdeglobals has none. */
  write_file (schemes, "Mine.colors", "[Colors:Window]\nBackgroundNormal=20,20,20\n"
                                      "[Colors:Selection]\nBackgroundNormal=1,2,3\n");
  write_file (f->home, "kdeglobals", "[General]\nColorScheme=Mine\n");
  limen_kdeglobals_read_appearance (&a);
  g_assert_cmpint (a.color_scheme, ==, LIMEN_COLOR_SCHEME_DARK);
  g_assert_true (a.has_accent);
  g_assert_cmpfloat_with_epsilon (a.accent_g, 2 / 255.0, 1e-9);

  /* Neither colours nor a file: the name decides; a path is no scheme name. */
  write_file (f->home, "kdeglobals", "[General]\nColorScheme=BreezeHighContrastDark\n");
  limen_kdeglobals_read_appearance (&a);
  g_assert_cmpint (a.color_scheme, ==, LIMEN_COLOR_SCHEME_DARK);
  g_assert_true (a.high_contrast);
  write_file (f->home, "kdeglobals", "[General]\nColorScheme=../color-schemes/Mine\n");
  limen_kdeglobals_read_appearance (&a);
  g_assert_cmpint (a.color_scheme, ==, LIMEN_COLOR_SCHEME_LIGHT);
  g_assert_false (a.has_accent);

  write_file (f->home, "kdeglobals", "[KDE]\nSingleClick=true\n");
  limen_kdeglobals_read_appearance (&a);
  g_assert_cmpint (a.color_scheme, ==, LIMEN_COLOR_SCHEME_DEFAULT);
}

/* KConfig writes numbers in the C locale: a German locale's decimal comma must not turn
 * "0.5" into 0 ("animations off"). */
static void
test_reduced_motion_locale (Fixture *f, gconstpointer data)
{
  g_autofree char *locales = g_build_filename (f->root, "locales", NULL);
  g_autofree char *target = g_build_filename (locales, "de_DE.UTF-8", NULL);
  g_autofree char *cmd = g_strdup_printf ("localedef -i de_DE -f UTF-8 '%s'", target);
  g_autofree char *old = g_strdup (setlocale (LC_NUMERIC, NULL));
  int status = -1;
  LimenAppearance a;

  g_mkdir_with_parents (locales, 0700);
  if (!g_spawn_command_line_sync (cmd, NULL, NULL, &status, NULL) || status != 0)
    {
      g_test_skip ("cannot compile the de_DE locale (package locales)");
      return;
    }
  g_setenv ("LOCPATH", locales, TRUE);
  if (setlocale (LC_NUMERIC, "de_DE.UTF-8") == NULL)
    {
      g_test_skip ("the de_DE locale does not load");
      return;
    }
  write_file (f->home, "kdeglobals", "[KDE]\nAnimationDurationFactor=0.5\n");
  limen_kdeglobals_read_appearance (&a);
  setlocale (LC_NUMERIC, old);
  g_unsetenv ("LOCPATH");
  g_assert_false (a.reduced_motion);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/kdeglobals/paths", Fixture, NULL, setup, test_paths, teardown);
  g_test_add ("/kdeglobals/cascade", Fixture, NULL, setup, test_cascade, teardown);
  g_test_add ("/kdeglobals/file-lock", Fixture, NULL, setup, test_file_lock, teardown);
  g_test_add ("/kdeglobals/syntax", Fixture, NULL, setup, test_syntax, teardown);
  g_test_add ("/kdeglobals/appearance-colors", Fixture, NULL, setup, test_appearance_colors, teardown);
  g_test_add ("/kdeglobals/appearance-scheme", Fixture, NULL, setup, test_appearance_scheme, teardown);
  g_test_add ("/kdeglobals/reduced-motion-locale", Fixture, NULL, setup, test_reduced_motion_locale, teardown);
  return g_test_run ();
}
