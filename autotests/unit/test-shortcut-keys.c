/* Limen — shortcut triggers: the shortcuts specification's strings, Qt key codes, text.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <libintl.h>
#include <locale.h>
#include <glib.h>

#include "shortcut-keys.h"

#define CTRL  0x04000000
#define ALT   0x08000000
#define SHIFT 0x02000000
#define META  0x10000000
#define KEYPAD 0x20000000

static void
test_parse (void)
{
  static const struct { const char *trigger; int key; } ok[] = {
    { "CTRL+ALT+p", CTRL | ALT | 'P' },
    { "ctrl+alt+P", CTRL | ALT | 'P' },
    { "LOGO+Return", META | 0x01000004 },
    { "SHIFT+F12", SHIFT | 0x0100003b },
    { "F35", 0x01000052 },
    { "CTRL+space", CTRL | ' ' },
    { "ALT+plus", ALT | '+' },
    { "NUM+KP_5", KEYPAD | '5' },
    { "XF86AudioPlay", 0x01000080 },
    { "CTRL+adiaeresis", CTRL | 0xc4 },
    { "SUPER+Prior", META | 0x01000016 },
  };
  static const char *bad[] = {
    "", "CTRL+", "CTRL++", "HYPER+a", "CTRL+nokey", "CTRL+ALT", "+a", "CTRL+a+b", "Shift_L",
  };
  g_autofree char *huge = g_strnfill (LIMEN_KDE_TRIGGER_MAX + 1, 'a');

  for (gsize i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      int key = 0;

      g_assert_true (limen_kde_shortcut_parse (ok[i].trigger, &key));
      g_assert_cmphex (key, ==, ok[i].key);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      int key = 0;

      g_assert_false (limen_kde_shortcut_parse (bad[i], &key));
    }
  g_assert_false (limen_kde_shortcut_parse (huge, &(int) { 0 }));
  g_assert_false (limen_kde_shortcut_parse (NULL, &(int) { 0 }));
}

static void
test_round_trip (void)
{
  static const char *triggers[] = { "CTRL+ALT+t", "LOGO+F5", "SHIFT+Return", "CTRL+SHIFT+LOGO+Escape", "NUM+KP_7",
                                    "XF86AudioMicMute" };

  for (gsize i = 0; i < G_N_ELEMENTS (triggers); i++)
    {
      int key = 0, again = 0;
      g_autofree char *back = NULL;

      g_assert_true (limen_kde_shortcut_parse (triggers[i], &key));
      back = limen_kde_shortcut_to_trigger (key);
      g_assert_nonnull (back);
      g_assert_true (limen_kde_shortcut_parse (back, &again));
      g_assert_cmphex (again, ==, key);
    }
  g_assert_null (limen_kde_shortcut_to_trigger (0x01ffffff));
}

static void
test_describe (void)
{
  int keys[] = { CTRL | ALT | 'T', 0, META | 0x01000034, SHIFT | ' ', CTRL | 0x01000017, 0x01000080 };
  g_autofree char *text = limen_kde_shortcut_describe (keys, G_N_ELEMENTS (keys));
  g_autofree char *none = limen_kde_shortcut_describe (NULL, 0);

  g_assert_cmpstr (text, ==, "Ctrl+Alt+T, Meta+F5, Shift+Space, Ctrl+PgDown, Media Play");
  g_assert_cmpstr (none, ==, "");
}

/* The store keeps Qt's portable text whatever the daemon's language: the permissions page
 * names the keys in the reader's. */
static void
test_describe_portable (void)
{
  int keys[] = { CTRL | ALT | 'T', META | 0x01000034, SHIFT | ' ', CTRL | 0x01000017 };
  g_autofree char *german = NULL;
  g_autofree char *portable = NULL;

  g_setenv ("LANGUAGE", "de", TRUE);
  setlocale (LC_ALL, "C.UTF-8");
  bindtextdomain ("limen", LIMEN_TEST_LOCALEDIR);
  bind_textdomain_codeset ("limen", "UTF-8");
  textdomain ("limen");
  german = limen_kde_shortcut_describe (keys, G_N_ELEMENTS (keys));
  portable = limen_kde_shortcut_describe_portable (keys, G_N_ELEMENTS (keys));
  g_assert_cmpstr (german, ==, "Strg+Alt+T, Meta+F5, Umschalt+Leertaste, Strg+Bild ab");
  g_assert_cmpstr (portable, ==, "Ctrl+Alt+T, Meta+F5, Shift+Space, Ctrl+PgDown");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/shortcut-keys/parse", test_parse);
  g_test_add_func ("/shortcut-keys/round-trip", test_round_trip);
  g_test_add_func ("/shortcut-keys/describe", test_describe);
  g_test_add_func ("/shortcut-keys/describe-portable", test_describe_portable);
  return g_test_run ();
}
