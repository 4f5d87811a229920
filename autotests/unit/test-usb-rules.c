/* SPDX-License-Identifier: LGPL-2.1-or-later
 * The Usb portal's reading of Flatpak's [USB Devices] queries. */
#include "usb.h"

static LimenUsbNumbers
device (guint16 vendor, guint16 product, guint8 cls, guint8 subclass)
{
  return (LimenUsbNumbers) { vendor, product, cls, subclass, TRUE, TRUE, TRUE, TRUE };
}

static gboolean
sees (const char *enumerable, const char *hidden, LimenUsbNumbers n)
{
  g_auto(GStrv) e = enumerable ? g_strsplit (enumerable, ";", -1) : NULL;
  g_auto(GStrv) h = hidden ? g_strsplit (hidden, ";", -1) : NULL;
  g_autoptr(LimenUsbRules) rules = limen_usb_rules_new ((const char * const *) e, (const char * const *) h);

  return limen_usb_rules_match (rules, &n);
}

static void
test_queries (void)
{
  LimenUsbNumbers key = device (0x1050, 0x0407, 0x00, 0x00);
  LimenUsbNumbers hid = device (0x046d, 0xc52b, 0x03, 0x01);

  g_assert_false (sees (NULL, NULL, key));
  g_assert_true (sees ("all", NULL, key));
  g_assert_true (sees ("vnd:1050", NULL, key));
  g_assert_true (sees ("VND:1050;vnd:1050", NULL, key));
  g_assert_true (sees ("vnd:1050+dev:0407", NULL, key));
  g_assert_false (sees ("vnd:1050+dev:0408", NULL, key));
  g_assert_true (sees ("cls:03:*", NULL, hid));
  g_assert_true (sees ("cls:03:01", NULL, hid));
  g_assert_false (sees ("cls:03:02", NULL, hid));
  g_assert_false (sees ("cls:03:*", NULL, key));
  /* Hiding wins, even over "all". */
  g_assert_false (sees ("all", "vnd:1050", key));
  g_assert_true (sees ("all", "vnd:1050", hid));
  g_assert_false (sees ("vnd:1050+dev:0407", "cls:00:*", key));
}

static void
test_malformed_queries_are_left_out (void)
{
  LimenUsbNumbers key = device (0x1050, 0x0407, 0x00, 0x00);
  LimenUsbNumbers partial = { .vendor = 0x1050, .has_vendor = TRUE };
  const char *bad[] = { "dev:0407", "vnd:105", "vnd:10500", "vnd:zzzz", "cls:3:*", "cls:03", "cls:03:1",
                        "cls:03:**", "vnd:1050+", "+vnd:1050", "vnd:1050+dev:0407+x", "", "alll",
                        "vnd:1050+vnd:1050+vnd:1050+vnd:1050+vnd:1050+vnd:1050+vnd:1050+vnd:1050+vnd:1050" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (sees (bad[i], NULL, key));
      /* A bad hidden query hides nothing. */
      g_assert_true (sees ("all", bad[i], key));
    }
  /* The upper-case "VND" above did not count: only "vnd:1050" did. */
  g_assert_false (sees ("VND:1050", NULL, key));
  /* A rule about what a device lacks never matches it. */
  g_assert_false (sees ("cls:00:*", NULL, partial));
  g_assert_false (sees ("vnd:1050+dev:0000", NULL, partial));
  g_assert_true (sees ("vnd:1050", NULL, partial));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/usb-rules/queries", test_queries);
  g_test_add_func ("/usb-rules/malformed", test_malformed_queries_are_left_out);
  return g_test_run ();
}
