/* Short fuzz run of the launcher an app's desktop entry becomes (launcher-entry.c): byte
 * mutations of seed entries (quoting, escapes, field codes, translations, actions) must be
 * refused with InvalidArgument or give a launcher that holds only allow-listed keys, whose
 * every Exec splits into `flatpak run --command=CMD APP …` (for a Flatpak app), that GLib reads
 * without a warning, and that a later start's recheck leaves exactly as it is. Runs ITERATIONS
 * rounds (argv[1], default 20000) with seed argv[2].
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "errors.h"
#include "launcher-entry.h"

#define APP "org.example.App"
#define ICON_DIR "/d/xdg-desktop-portal/icons"

static const char *const seeds[] = {
  "[Desktop Entry]\nType=Application\nName=x\nExec=\"my tool\" --open ~/x 50%% %U 'a b' \\\\x \"q\\\"\"\n"
  "Comment=c\nComment[de]=d\nKeywords=a;b\\;c;\nCategories=A;B;\nStartupNotify=true\nStartupWMClass=w\n",
  "[Desktop Entry]\nExec=tool %f\nActions=a;b;\n[Desktop Action a]\nName=A\nName[fr]=a\nExec=tool --a %u\n"
  "[Desktop Action b]\nName=B\nExec=sh -c \"echo $HOME `id`\" %%\n",
  "[Desktop Entry]\nExec=x\nExec[de]=y\nPath=/\nTerminal=true\nTerminalOptions=-e sh\nX-KDE-SubstituteUID=true\n"
  "Icon=/etc/x\nName[de]=y\nMimeType=a/b;\n[Desktop Entry]\nExec=z %i %c %k\n",
};

static const char *const allowed_main[] = {
  "Type", "Name", "Icon", "Exec", "Comment", "Keywords", "Categories", "StartupNotify", "StartupWMClass",
  "X-Flatpak", "Actions", NULL
};

static gboolean
key_allowed (const char *key, const char *const *allowed)
{
  g_autofree char *base = g_strndup (key, strcspn (key, "["));

  return g_strv_contains (allowed, base) && (g_str_equal (base, key) || g_str_equal (base, "Comment") ||
                                             g_str_equal (base, "Keywords") || g_str_equal (base, "Name"));
}

static void
check_group (GKeyFile *kf, const char *group, const LimenLauncherTarget *target)
{
  static const char *const allowed_action[] = { "Name", "Exec", NULL };
  gboolean main = g_str_equal (group, G_KEY_FILE_DESKTOP_GROUP);
  g_auto(GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  g_autofree char *exec = g_key_file_get_string (kf, group, "Exec", NULL);
  g_auto(GStrv) argv = NULL;

  if (!main && !g_str_has_prefix (group, "Desktop Action "))
    g_error ("group [%s] came through", group);
  for (char **k = keys; *k; k++)
    if (!key_allowed (*k, main ? allowed_main : allowed_action) || (main && g_str_has_prefix (*k, "Name[")))
      g_error ("key %s came through in [%s]", *k, group);
  if (exec == NULL || !g_shell_parse_argv (exec, NULL, &argv, NULL))
    g_error ("Exec of [%s] unreadable: %s", group, exec);
  if (target->flatpak && (g_strv_length (argv) < 4 || !g_str_equal (argv[0], "flatpak") ||
                          !g_str_equal (argv[1], "run") || !g_str_has_prefix (argv[2], "--command=") ||
                          !g_str_equal (argv[3], APP)))
    g_error ("Exec of [%s] is not the app's own: %s", group, exec);
}

static void
check (const char *in, const LimenLauncherTarget *target)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = limen_launcher_entry_build (in, target, &error);
  g_autofree char *data = NULL;
  g_autofree char *again = NULL;
  g_auto(GStrv) groups = NULL;

  if (kf == NULL)
    {
      g_assert_true (g_error_matches (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT));
      return;
    }
  groups = g_key_file_get_groups (kf, NULL);
  for (char **g = groups; *g; g++)
    check_group (kf, *g, target);
  data = g_key_file_to_data (kf, NULL, NULL);
  again = limen_launcher_entry_recheck (APP ".t.desktop", data, ICON_DIR, &error);
  if (again == NULL || !g_str_equal (again, data))
    g_error ("recheck changed \"%s\" (%s)", data, error ? error->message : again);
}

int
main (int argc, char **argv)
{
  const LimenLauncherTarget targets[] = {
    { APP, TRUE, "N", ICON_DIR "/64x64/" APP ".t.png" },
    { APP, FALSE, "N", ICON_DIR "/64x64/" APP ".t.png" },
  };
  guint rounds = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 20000;
  GRand *rand = g_rand_new_with_seed (argc > 2 ? (guint32) g_ascii_strtoull (argv[2], NULL, 10) : 1);
  static const char inserts[] = "%'\"\\ \n;=[]$`~fuUFick-/.#";

  /* A GLib warning (an error set over an error while reading a value) is a failure too. */
  g_log_set_always_fatal (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL);
  for (guint r = 0; r < rounds; r++)
    {
      g_autoptr(GString) s = g_string_new (seeds[g_rand_int_range (rand, 0, G_N_ELEMENTS (seeds))]);
      guint mutations = g_rand_int_range (rand, 0, 6);

      for (guint m = 0; m < mutations; m++)
        {
          guint at = s->len ? g_rand_int_range (rand, 0, s->len) : 0;
          char c = inserts[g_rand_int_range (rand, 0, sizeof inserts - 1)];

          switch (g_rand_int_range (rand, 0, 3))
            {
            case 0: if (s->len) s->str[at] = c; break;
            case 1: g_string_insert_c (s, at, c); break;
            default: if (s->len) g_string_erase (s, at, 1); break;
            }
        }
      for (guint t = 0; t < G_N_ELEMENTS (targets); t++)
        check (s->str, &targets[t]);
    }
  g_rand_free (rand);
  return 0;
}
