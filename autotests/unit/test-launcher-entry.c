/* SPDX-License-Identifier: LGPL-2.1-or-later
 * The desktop entry DynamicLauncher.Install writes from an app's untrusted one. */
#include <string.h>

#include "errors.h"
#include "launcher-entry.h"

#define APP "org.example.App"
#define ICON "/home/u/.local/share/xdg-desktop-portal/icons/64x64/org.example.App.t.png"

static const LimenLauncherTarget flatpak = { APP, TRUE, "Approved", ICON };
static const LimenLauncherTarget host = { APP, FALSE, "Approved", ICON };

static GKeyFile *
build (const LimenLauncherTarget *target, const char *entry, GError **error)
{
  return limen_launcher_entry_build (entry, target, error);
}

/* The installed Exec of [Desktop Entry] for @exec, split as GIO splits it. */
static GStrv
installed_argv (const LimenLauncherTarget *target, const char *exec)
{
  g_autofree char *entry = g_strdup_printf ("[Desktop Entry]\nExec=%s\n", exec);
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = build (target, entry, &error);
  g_autofree char *line = NULL;
  char **argv = NULL;

  g_assert_no_error (error);
  line = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, "Exec", NULL);
  g_assert_true (g_shell_parse_argv (line, NULL, &argv, NULL));
  return argv;
}

static void
assert_value (GKeyFile *kf, const char *group, const char *key, const char *expected)
{
  g_autofree char *value = g_key_file_get_value (kf, group, key, NULL);

  g_assert_cmpstr (value, ==, expected);
}

static void
assert_argv (GStrv argv, const char *const *expected)
{
  g_assert_cmpstrv (argv, expected);
  g_strfreev (argv);
}

static void
test_exec_rewrite (void)
{
  assert_argv (installed_argv (&flatpak, "mytool --open %u"),
               (const char *const[]) { "flatpak", "run", "--command=mytool", APP, "--open", "%u", NULL });
  /* Quoting as the specification writes it, and as GLib reads it, keeps each argument whole. */
  assert_argv (installed_argv (&flatpak, "\"my tool\" \"a \\\"b\\\"\" 'c d' e;f $HOME `x` ~/y 50%%"),
               (const char *const[]) { "flatpak", "run", "--command=my tool", APP, "a \"b\"", "c d", "e;f",
                                       "$HOME", "`x`", "~/y", "50%%", NULL });
  assert_argv (installed_argv (&host, "/usr/bin/touch /tmp/x %F %i"),
               (const char *const[]) { "/usr/bin/touch", "/tmp/x", "%F", "%i", NULL });
}

static void
test_exec_quoted_for_every_reader (void)
{
  g_autoptr(GKeyFile) kf = build (&flatpak, "[Desktop Entry]\nExec=tool ~/a 'b c' %f\n", NULL);
  g_autofree char *line = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, "Exec", NULL);

  /* Nothing a shell, KShell's tilde expansion or GIO's field codes could take as syntax is
   * left unquoted; the field code stands alone. */
  g_assert_cmpstr (line, ==, "flatpak run --command=tool " APP " '~/a' 'b c' %f");
}

static void
test_allow_list (void)
{
  const char *entry =
    "[Desktop Entry]\nType=Application\nName=Evil\nName[de]=Firefox\nGenericName=Web Browser\n"
    "Icon=/etc/shadow\nIcon[de]=/root/x.png\nExec=mytool\nExec[de]=/bin/sh -c evil\nTryExec=/bin/true\n"
    "Path=/\nPath[de]=/\nTerminal=true\nTerminalOptions=-e /bin/sh\nX-KDE-SubstituteUID=true\n"
    "X-KDE-Username=root\nX-KDE-ServiceTypes=KonqPopupMenu/Plugin\nX-KDE-Protocols=http\nMimeType=text/html;\n"
    "X-DBUS-ServiceName=org.kde.kded5\nX-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2\n"
    "X-KDE-Wayland-Interfaces=zkde_screencast_unstable_v1\nDBusActivatable=true\nImplements=org.x.Y\n"
    "Hidden=true\nNoDisplay=true\nOnlyShowIn=KDE;\nX-GNOME-Autostart-enabled=true\nX-KDE-autostart-after=panel\n"
    "X-Flatpak=org.other.App\nX-Flatpak-RenamedFrom=x\nComment=A tool\nComment[de]=Ein Werkzeug\n"
    "Keywords=a;b;\nKeywords[fr]=c;\nCategories=Utility;GTK;\nStartupNotify=true\nStartupWMClass=mytool\n"
    "Actions=new;\n\n[Desktop Action new]\nName=New\nName[de]=Neu\nIcon=/etc/passwd\nExec=mytool --new\n"
    "Path=/\nTerminal=true\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = build (&flatpak, entry, &error);
  g_auto(GStrv) groups = NULL;
  g_auto(GStrv) keys = NULL;
  g_auto(GStrv) action_keys = NULL;

  g_assert_no_error (error);
  groups = g_key_file_get_groups (kf, NULL);
  g_assert_cmpstrv (groups, ((const char *const[]) { "Desktop Entry", "Desktop Action new", NULL }));
  keys = g_key_file_get_keys (kf, "Desktop Entry", NULL, NULL);
  g_assert_cmpstrv (keys, ((const char *const[]) { "Type", "Name", "Icon", "Exec", "Comment", "Comment[de]",
                                                    "Keywords", "Keywords[fr]", "Categories", "StartupWMClass",
                                                    "StartupNotify", "X-Flatpak", "Actions", NULL }));
  assert_value (kf, "Desktop Entry", "Name", "Approved");
  assert_value (kf, "Desktop Entry", "Icon", ICON);
  assert_value (kf, "Desktop Entry", "X-Flatpak", APP);
  assert_value (kf, "Desktop Entry", "Exec", "flatpak run --command=mytool " APP);
  action_keys = g_key_file_get_keys (kf, "Desktop Action new", NULL, NULL);
  g_assert_cmpstrv (action_keys, ((const char *const[]) { "Name", "Name[de]", "Exec", NULL }));
  assert_value (kf, "Desktop Action new", "Exec", "flatpak run --command=mytool " APP " --new");
}

static void
test_host_actions_kept_whole (void)
{
  g_autoptr(GKeyFile) kf = build (&host, "[Desktop Entry]\nExec=tool\nPath=/\nActions=a;\n"
                                         "[Desktop Action a]\nName=A\nExec=tool --a\n", NULL);

  g_assert_nonnull (kf);
  g_assert_false (g_key_file_has_key (kf, "Desktop Entry", "X-Flatpak", NULL));
  g_assert_false (g_key_file_has_key (kf, "Desktop Entry", "Path", NULL));
  assert_value (kf, "Desktop Action a", "Exec", "tool --a");
}

static const struct {
  const char *entry;
  const char *needle;
} refused[] = {
  { "[Desktop Entry]\nType=Link\nURL=file:///bin/sh\nExec=x\n", "Type" },
  { "[Desktop Entry]\nType=Directory\nExec=x\n", "Type" },
  { "[Desktop Entry]\nName=x\n", "Exec" },
  { "[Desktop Entry]\nExec=\n", "Exec" },
  { "[Desktop Entry]\nExec=\"%f\"\n", "Exec" },
  { "[Desktop Entry]\nExec=%u\n", "Exec" },
  { "[Desktop Entry]\nExec=tool \"--x=%f\"\n", "Exec" },
  { "[Desktop Entry]\nExec=tool --x=%f\n", "Exec" },
  { "[Desktop Entry]\nExec=tool %f %u\n", "Exec" },
  { "[Desktop Entry]\nExec=tool %d\n", "Exec" },
  { "[Desktop Entry]\nExec=tool 5%\n", "Exec" },
  { "[Desktop Entry]\nExec=tool \"a\\nb\"\n", "Exec" },
  { "[Desktop Entry]\nExec=tool\\n/bin/sh\n", "Exec" },
  { "[Desktop Entry]\nExec=tool 'a\n", "Exec" },
  { "[Desktop Entry]\nExec=x\n[X-Evil]\nExec=/bin/sh\n", "only [Desktop Entry]" },
  { "[Desktop Entry]\nExec=x\n[Desktop Action evil]\nName=E\nExec=/bin/sh\n", "only [Desktop Entry]" },
  { "[Desktop Entry]\nExec=x\nActions=a;\n", "Actions" },
  { "[Desktop Entry]\nExec=x\nActions=a b;\n[Desktop Action a b]\nName=E\nExec=y\n", "Actions" },
  { "[Desktop Entry]\nExec=x\nActions=a;\n[Desktop Action a]\nName=E\n", "Exec of a [Desktop Action]" },
  { "[Desktop Entry]\nExec=x\nActions=a;\n[Desktop Action a]\nExec=y\n", "Name" },
  { "[Desktop Entry]\nExec=x\nActions=a;\n[Desktop Action a]\nName=E\nExec=\"%u\"\n", "Exec of a" },
  { "[Desktop Entry]\nExec=x\nComment[$e]=$(id)\n", "desktop_entry" },
  { "[Desktop Entry]\nExec=x\nComment[abcdefgh]=a\n", "Comment" },
  { "[Desktop Entry]\nExec=x\nComment=a\\nb\n", "Comment" },
  { "[Desktop Entry]\nExec=x\nCategories=A B;\n", "Categories" },
  { "[Desktop Entry]\nExec=x\nStartupNotify=maybe\n", "StartupNotify" },
  { "[Desktop Entry]\nExec=x\nName=a\nName=b\n\n[Desktop Entry\n", "not a desktop entry" },
  { "[Other]\nExec=x\n", "not a desktop entry" },
  { "[Desktop Entry]\nExec=x\nComment=a\\x\n", "escape" },
  { "[Desktop Entry]\nExec=x \\\n", "escape" },
  { "[Desktop Entry]\nExec=x\nX-Dropped=\\x\\\n", "escape" },
};

static void
test_refused (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GKeyFile) kf = build (&flatpak, refused[i].entry, &error);

      if (kf != NULL)
        g_error ("accepted: %s", refused[i].entry);
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
      if (strstr (error->message, refused[i].needle) == NULL)
        g_error ("'%s' for: %s", error->message, refused[i].entry);
    }
}

static void
test_many_actions (void)
{
  g_autoptr(GString) entry = g_string_new ("[Desktop Entry]\nExec=x\nActions=");
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = NULL;

  for (guint i = 0; i <= LIMEN_LAUNCHER_ACTIONS_MAX; i++)
    g_string_append_printf (entry, "a%u;", i);
  g_string_append_c (entry, '\n');
  for (guint i = 0; i <= LIMEN_LAUNCHER_ACTIONS_MAX; i++)
    g_string_append_printf (entry, "[Desktop Action a%u]\nName=A\nExec=x\n", i);
  kf = build (&flatpak, entry->str, &error);
  g_assert_null (kf);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
}

#define ICON_DIR "/home/u/.local/share/xdg-desktop-portal/icons"

static char *
recheck (const char *id, const char *data)
{
  return limen_launcher_entry_recheck (id, data, ICON_DIR, NULL);
}

/* What today's Install writes is left exactly as it is. */
static void
test_recheck_keeps_what_install_writes (void)
{
  const char *entry = "[Desktop Entry]\nExec=\"my tool\" --open ~/x 50%% %U\nComment=c\nActions=a;b;\n"
                      "[Desktop Action a]\nName=A\nExec=tool --a %f\n[Desktop Action b]\nName=B\nExec=tool 'b c'\n";
  const LimenLauncherTarget *targets[] = { &flatpak, &host };

  for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
    {
      g_autoptr(GKeyFile) kf = build (targets[i], entry, NULL);
      g_autofree char *data = g_key_file_to_data (kf, NULL, NULL);
      g_autofree char *again = recheck (APP ".t.desktop", data);

      g_assert_cmpstr (again, ==, data);
    }
}

/* A launcher the reference (or an earlier Limen) wrote for a Flatpak app loses what could
 * run anything but the app in its sandbox. */
static void
test_recheck_repairs (void)
{
  g_autofree char *out = recheck (APP ".t.desktop",
    "[Desktop Entry]\nType=Application\nName=Tool\nIcon=" ICON "\n"
    "Exec=flatpak run --command=mytool " APP " --open %u\nExec[de]=/bin/sh -c evil\nTryExec=/x/" APP "\n"
    "Path=/\nTerminal=true\nTerminalOptions=-e /bin/sh\nX-Flatpak=" APP "\nComment=c\n");

  g_assert_cmpstr (out, ==, "[Desktop Entry]\nType=Application\nName=Tool\nIcon=" ICON "\n"
                            "Exec=flatpak run --command=mytool " APP " --open %u\nComment=c\nX-Flatpak=" APP "\n");
}

/* A host app's launcher crossed no boundary: it stays as its app wrote it. */
static void
test_recheck_leaves_host_launchers (void)
{
  const char *data = "[Desktop Entry]\nName=T\nExec=sh -c \"tool %u\"\nTerminal=true\nPath=/srv\n";
  g_autofree char *out = recheck ("org.example.Host.t.desktop", data);

  g_assert_cmpstr (out, ==, data);
}

static const char *const unkeepable[][2] = {
  /* An action planted before Install rewrote actions. */
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON "\nExec=flatpak run --command=x " APP "\n"
                      "X-Flatpak=" APP "\nActions=evil;\n[Desktop Action evil]\nName=E\nExec=/bin/sh -c evil\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON "\nExec=/bin/sh\nX-Flatpak=" APP "\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON "\nExec=flatpak run --command=x org.other.App\n"
                      "X-Flatpak=" APP "\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON "\nExec=flatpak run --command=x org.other.App\n"
                      "X-Flatpak=org.other.App\n" },
  { "snap.tool.t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON_DIR "/64x64/snap.tool.t.png\nExec=/bin/sh\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=/etc/x.png\nExec=flatpak run --command=x " APP "\n"
                      "X-Flatpak=" APP "\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON_DIR "/../../x.png\nExec=flatpak run --command=x " APP "\n"
                      "X-Flatpak=" APP "\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON "\nExec=/bin/sh\nX-Flatpak[de]=" APP "\n" },
  { APP ".t.desktop", "[Desktop Entry]\nName=T\nIcon=" ICON "\nExec=flatpak run --command=x " APP " \\x\n"
                      "X-Flatpak=" APP "\n" },
};

static void
test_recheck_refuses (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (unkeepable); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *out = limen_launcher_entry_recheck (unkeepable[i][0], unkeepable[i][1], ICON_DIR, &error);

      if (out != NULL)
        g_error ("kept: %s", unkeepable[i][1]);
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/launcher-entry/exec-rewrite", test_exec_rewrite);
  g_test_add_func ("/launcher-entry/exec-quoted-for-every-reader", test_exec_quoted_for_every_reader);
  g_test_add_func ("/launcher-entry/allow-list", test_allow_list);
  g_test_add_func ("/launcher-entry/host-actions-kept-whole", test_host_actions_kept_whole);
  g_test_add_func ("/launcher-entry/refused", test_refused);
  g_test_add_func ("/launcher-entry/many-actions", test_many_actions);
  g_test_add_func ("/launcher-entry/recheck-keeps-what-install-writes", test_recheck_keeps_what_install_writes);
  g_test_add_func ("/launcher-entry/recheck-repairs", test_recheck_repairs);
  g_test_add_func ("/launcher-entry/recheck-refuses", test_recheck_refuses);
  g_test_add_func ("/launcher-entry/recheck-leaves-host-launchers", test_recheck_leaves_host_launchers);
  return g_test_run ();
}
