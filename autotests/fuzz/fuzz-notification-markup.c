/* Short fuzz run of the markup-body sanitiser (notification-options.c): byte mutations of
 * seed markup (tags, attributes, entities, comments, deep nesting, multi-byte UTF-8) must
 * come out as well-formed XML content holding only <b>, <i> and <a href> with a web or mail
 * link, never crash or read out of bounds (run under ASan in CI), or be refused with
 * InvalidArgument. Runs ITERATIONS rounds (argv[1], default 20000) with seed argv[2].
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "errors.h"
#include "notification-options.h"

static const char *const seeds[] = {
  "<b>bold</b> <i>it</i> <a href=\"https://kde.org/?a=1&amp;b=2\">link</a>",
  "<a href='mailto:x@y.org' title=\"t\">m</a><a href=javascript:x>j</a>",
  "&amp;&lt;&gt;&quot;&apos;&#233;&#x1F600;&bogus;&#0;& <",
  "<!-- c --><?pi?><![CDATA[<b>]]><!DOCTYPE x><u>u</u><br/><img src=x>",
  "<b><i><b><i><a href=\"http://a\"><a href=\"http://b\">x</a></i></b></a>",
  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 <B>UP</B></b></i></a>",
};

/* Elements and attributes of the output: only the subset, links only to allowed schemes. */
static void
start_element (GMarkupParseContext *context, const char *name, const char **names, const char **values,
               gpointer user_data, GError **error)
{
  if (g_str_equal (name, "m"))
    return;
  if (!g_str_equal (name, "b") && !g_str_equal (name, "i") && !g_str_equal (name, "a"))
    g_error ("element <%s> came through", name);
  if (g_str_equal (name, "a"))
    {
      if (!names[0] || !g_str_equal (names[0], "href") || names[1])
        g_error ("<a> with attributes other than one href");
      if (g_ascii_strncasecmp (values[0], "http://", 7) != 0 && g_ascii_strncasecmp (values[0], "https://", 8) != 0 &&
          g_ascii_strncasecmp (values[0], "mailto:", 7) != 0)
        g_error ("link to %s came through", values[0]);
    }
  else if (names[0])
    g_error ("<%s> with attributes", name);
}

static void
check (const char *in)
{
  static const GMarkupParser parser = { .start_element = start_element };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = limen_notification_markup_sanitize (in, &error);
  g_autoptr(GMarkupParseContext) c = NULL;

  if (out == NULL)
    {
      g_assert_true (g_error_matches (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT));
      return;
    }
  g_assert_cmpuint (strlen (out), <=, LIMEN_NOTIFICATION_MARKUP_OUT_MAX);
  c = g_markup_parse_context_new (&parser, 0, NULL, NULL);
  if (!g_markup_parse_context_parse (c, "<m>", -1, NULL) || !g_markup_parse_context_parse (c, out, -1, &error) ||
      !g_markup_parse_context_parse (c, "</m>", -1, &error) || !g_markup_parse_context_end_parse (c, &error))
    g_error ("not well-formed: \"%s\" → \"%s\": %s", in, out, error ? error->message : "");
}

int
main (int argc, char **argv)
{
  guint rounds = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 20000;
  GRand *rand = g_rand_new_with_seed (argc > 2 ? (guint32) g_ascii_strtoull (argv[2], NULL, 10) : 1);
  static const char inserts[] = "<>&;#/=\"' !-?[]abiAhrefx:";
  guint checked = 0;

  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    check (seeds[i]);
  for (guint r = 0; r < rounds; r++)
    {
      g_autoptr(GString) s = g_string_new (seeds[g_rand_int_range (rand, 0, G_N_ELEMENTS (seeds))]);
      guint mutations = g_rand_int_range (rand, 1, 12);

      for (guint m = 0; m < mutations; m++)
        {
          guint at = s->len ? g_rand_int_range (rand, 0, s->len) : 0;

          switch (g_rand_int_range (rand, 0, 4))
            {
            case 0: g_string_insert_c (s, at, inserts[g_rand_int_range (rand, 0, sizeof inserts - 1)]); break;
            case 1: if (s->len) g_string_erase (s, at, 1); break;
            case 2: if (s->len) s->str[at] = (char) g_rand_int_range (rand, 1, 256); break;
            default: g_string_insert (s, at, seeds[g_rand_int_range (rand, 0, G_N_ELEMENTS (seeds))]); break;
            }
        }
      /* A D-Bus string is UTF-8: what is not is refused before the sanitiser runs. */
      if (g_utf8_validate (s->str, -1, NULL))
        {
          check (s->str);
          checked++;
        }
    }
  g_rand_free (rand);
  g_print ("%u of %u mutated inputs were UTF-8 and checked\n", checked, rounds);
  return 0;
}
