/* Fuzz target for the launcher an app's desktop entry becomes (launcher-entry.c): any entry
 * must be refused with InvalidArgument or give a launcher that holds only allow-listed keys,
 * whose every Exec splits into `flatpak run --command=CMD APP …` (for a Flatpak app), that
 * GLib reads without a warning, and that a later start's recheck leaves exactly as it is.
 * Seeds: entries with quoting, escapes, field codes, translations, actions. See fuzz.h.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "errors.h"
#include "fuzz.h"
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
  /* The start-up recheck takes any mention of X-Flatpak for a Flatpak app's mark and
   * disables a launcher whose commands are then not `flatpak run` (it errs on the safe
   * side): a host app's launcher whose command mentions it is refused, never changed. */
  if (!target->flatpak && again == NULL && strstr (data, "X-Flatpak") != NULL)
    return;
  if (again == NULL || !g_str_equal (again, data))
    g_error ("recheck changed \"%s\" (%s)", data, error ? error->message : again);
}

const char *const limen_fuzz_tokens[] = {
  "%", "'", "\"", "\\", " ", "\n", ";", "=", "[", "]", "$", "`", "~", "%f", "%u", "%U", "%F", "%i", "%c",
  "%k", "%%", "-", "/", ".", "#", "[Desktop Action ", "Actions=", "Exec=", "Exec[de]=", "Name[de]=", NULL
};

void
limen_fuzz_seeds (GPtrArray *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    g_ptr_array_add (out, g_bytes_new_static (seeds[i], strlen (seeds[i])));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const LimenLauncherTarget targets[] = {
    { APP, TRUE, "N", ICON_DIR "/64x64/" APP ".t.png" },
    { APP, FALSE, "N", ICON_DIR "/64x64/" APP ".t.png" },
  };
  g_autofree char *in = g_malloc (size + 1);

  memcpy (in, data, size);
  in[size] = '\0';
  /* A D-Bus string is UTF-8 without NUL: anything else never reaches the builder. */
  if (strlen (in) != size || !g_utf8_validate (in, -1, NULL))
    return 0;
  /* A GLib warning (an error set over an error while reading a value) is a failure too. */
  g_log_set_always_fatal (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL);
  for (guint t = 0; t < G_N_ELEMENTS (targets); t++)
    check (in, &targets[t]);
  return 0;
}
