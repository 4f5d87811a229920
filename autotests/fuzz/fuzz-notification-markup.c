/* Fuzz target for the markup-body sanitiser (notification-options.c): any bytes an app
 * sends that are UTF-8 (what D-Bus lets through) must come out as well-formed XML content
 * holding only <b>, <i> and <a href> with a web or mail link, or be refused with
 * InvalidArgument; never crash or read out of bounds. See fuzz.h for how it runs.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "errors.h"
#include "fuzz.h"
#include "notification-options.h"

static const char *const seeds[] = {
  "<b>bold</b> <i>it</i> <a href=\"https://kde.org/?a=1&amp;b=2\">link</a>",
  "<a href='mailto:x@y.org' title=\"t\">m</a><a href=javascript:x>j</a>",
  "&amp;&lt;&gt;&quot;&apos;&#233;&#x1F600;&bogus;&#0;& <",
  "<!-- c --><?pi?><![CDATA[<b>]]><!DOCTYPE x><u>u</u><br/><img src=x>",
  "<b><i><b><i><a href=\"http://a\"><a href=\"http://b\">x</a></i></b></a>",
  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 <B>UP</B></b></i></a>",
};

const char *const limen_fuzz_tokens[] = {
  "<", ">", "&", ";", "#", "/", "=", "\"", "'", " ", "!", "-", "?", "[", "]", "<b>", "</b>", "<i>",
  "</i>", "<a href=\"", "</a>", "http://", "https://", "mailto:", "javascript:", "&amp;", "&#x", "<!--",
  "-->", "<![CDATA[", "]]>", NULL
};

void
limen_fuzz_seeds (GPtrArray *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    g_ptr_array_add (out, g_bytes_new_static (seeds[i], strlen (seeds[i])));
}

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
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *in = g_malloc (size + 1);

  memcpy (in, data, size);
  in[size] = '\0';

  /* A D-Bus string is UTF-8 without NUL: anything else is refused before the sanitiser. */
  if (strlen (in) == size && g_utf8_validate (in, -1, NULL))
    check (in);
  return 0;
}
