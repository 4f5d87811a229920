/* SPDX-License-Identifier: LGPL-2.1-or-later
 * The markup-body sanitiser and the Notification option table (notification-options.c). */
#include <string.h>

#include "errors.h"
#include "notification-options.h"
#include "option-tables.h"

static char *
clean (const char *in)
{
  g_autoptr(GError) error = NULL;
  char *out = limen_notification_markup_sanitize (in, &error);

  g_assert_no_error (error);
  g_assert_nonnull (out);
  return out;
}

static gboolean
well_formed (const char *markup)
{
  static const GMarkupParser none = { 0 };
  g_autoptr(GMarkupParseContext) c = g_markup_parse_context_new (&none, 0, NULL, NULL);

  return g_markup_parse_context_parse (c, "<m>", -1, NULL) && g_markup_parse_context_parse (c, markup, -1, NULL) &&
         g_markup_parse_context_parse (c, "</m>", -1, NULL) && g_markup_parse_context_end_parse (c, NULL);
}

static void
test_subset_kept (void)
{
  static const struct { const char *in, *out; } cases[] = {
    { "plain text", "plain text" },
    { "<b>bold</b> and <i>it</i>", "<b>bold</b> and <i>it</i>" },
    { "<B>Upper</B>", "<b>Upper</b>" },
    { "<a href=\"https://example.org/?a=1&amp;b=2\">link</a>",
      "<a href=\"https://example.org/?a=1&amp;b=2\">link</a>" },
    { "<a href='http://x.org' target='_blank'>x</a>", "<a href=\"http://x.org\">x</a>" },
    { "<a href=\"mailto:a@b.org\">mail</a>", "<a href=\"mailto:a@b.org\">mail</a>" },
    { "&amp; &lt; &#233; &#xE9;", "&amp; &lt; &#233; &#xE9;" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = clean (cases[i].in);

      g_assert_cmpstr (out, ==, cases[i].out);
    }
}

static void
test_rest_stripped (void)
{
  static const struct { const char *in, *out; } cases[] = {
    /* Other tags go, their text stays. */
    { "<u>under</u> <span style=\"x\">s</span><br/>", "under s" },
    { "<img src=\"file:///etc/passwd\"/>pic", "pic" },
    { "<script>alert(1)</script>", "alert(1)" },
    /* Links only to the web and mail. */
    { "<a href=\"javascript:alert(1)\">x</a>", "x" },
    { "<a href=\"file:///etc/passwd\">f</a>", "f" },
    { "<a href=\"JaVaScRiPt&#58;alert(1)\">y</a>", "y" },
    { "<a href=\"data:text/html,x\">d</a>", "d" },
    { "<a>no href</a>", "no href" },
    { "<a href=\"https://\">empty</a>", "empty" },
    /* A '>' alone is text. */
    { "c > d", "c &gt; d" },
    /* Comments and processing instructions vanish. */
    { "x<!-- c --><?pi x?>y", "xy" },
    /* A link inside a link is not one. */
    { "<a href=\"https://a.org\"><a href=\"https://b.org\">in</a></a>", "<a href=\"https://a.org\">in</a>" },
    /* Characters XML cannot hold are dropped. */
    { "a\x01" "b\x1f" "c", "abc" },
    /* Whitespace is markup's: a run is one space, none at either end. */
    { " test \n newline \n\n some\tmore \r\n ", "test newline some more" },
    { "test <custom> tag </custom>", "test tag" },
    { "a <b>b</b> <i>c</i>", "a <b>b</b> <i>c</i>" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = clean (cases[i].in);

      g_assert_cmpstr (out, ==, cases[i].out);
      g_assert_true (well_formed (out));
    }
}

/* Not well-formed: refused, naming the key, as the reference refuses it. */
static void
test_malformed_refused (void)
{
  static const char *const cases[] = {
    "a & b", "a < b", "&bogus;", "&#0;", "&#x110000;", "<", "<b", "<a href=\"unterminated>x",
    "<!-- unterminated", "<b><i>x</b>y</i>", "</b>x<b>y", "test <b>notification<b> body",
    "<b>foo<i>bar</b></i>", "test <markup><i>notification</i><markup> body", "<a href=x>y</a>",
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *out = limen_notification_markup_sanitize (cases[i], &error);

      g_assert_null (out);
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "invalid markup-body"));
    }
}

static void
test_hostile (void)
{
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autoptr(GString) amps = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *none = NULL;

  /* Deep nesting is cut at the depth limit; the result stays well-formed. */
  for (guint i = 0; i < 5000; i++)
    g_string_append (deep, i % 2 ? "<i>" : "<b>");
  g_string_append (deep, "deep");
  for (guint i = 5000; i > 0; i--)
    g_string_append (deep, (i - 1) % 2 ? "</i>" : "</b>");
  out = clean (deep->str);
  g_assert_true (well_formed (out));
  g_assert_cmpuint (strlen (out), <, 400);
  /* Escaping may not grow the text without bound. */
  for (guint i = 0; i < LIMEN_NOTIFICATION_MARKUP_OUT_MAX / 4; i++)
    g_string_append (amps, "<a/>&amp;");
  none = limen_notification_markup_sanitize (amps->str, &error);
  g_assert_null (none);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "markup-body"));
  g_clear_error (&error);
  g_assert_null (limen_notification_markup_sanitize ("\xff\xfe", &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
}

/* Random byte soup over the characters that matter: always valid output. */
static void
test_random (void)
{
  static const char alphabet[] = "<>&;#x/=\"' abi!-?[]ahrefhttps:";
  GRand *rand = g_rand_new_with_seed (21);

  for (guint round = 0; round < 3000; round++)
    {
      char in[64];
      g_autofree char *out = NULL;
      guint len = g_rand_int_range (rand, 0, sizeof in);

      for (guint i = 0; i < len; i++)
        in[i] = alphabet[g_rand_int_range (rand, 0, sizeof alphabet - 1)];
      in[len] = '\0';
      /* Accepted only when well-formed; what comes out is well-formed either way. */
      out = limen_notification_markup_sanitize (in, NULL);
      if (out ? !well_formed (out) || !well_formed (in) : well_formed (in))
        g_error ("\"%s\" → \"%s\"", in, out ? out : "(refused)");
    }
  g_rand_free (rand);
}

static void
test_plain (void)
{
  g_autofree char *plain = limen_notification_markup_to_plain ("<b>a</b> &amp; <a href=\"https://x.org\">b</a>");

  g_assert_cmpstr (plain, ==, "a & b");
}

static GVariant *
normalize (const char *text, gboolean v2, GError **error)
{
  g_autoptr(GVariant) in = g_variant_ref_sink (g_variant_parse (G_VARIANT_TYPE_VARDICT, text, NULL, NULL, NULL));
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) filtered = NULL;
  GVariant *out;

  g_assert_nonnull (in);
  if (!limen_options_filter (in, &b, error, limen_options_notification_add_notification, NULL))
    return NULL;
  filtered = g_variant_ref_sink (g_variant_builder_end (&b));
  out = limen_notification_normalize (filtered, v2, error);
  return out ? g_variant_ref_sink (out) : NULL;
}

static void
test_table (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) out = NULL;
  g_autofree char *printed = NULL;
  static const char *const bad[] = {
    "{'category': <'made.up'>}", "{'category': <'x-'>}", "{'category': <1>}",
    "{'display-hint': <'transient'>}", "{'display-hint': <['tray', 'bogus']>}",
    "{'display-hint': <['a','b','c','d','e','f','g','h','i','j','k','l','m','n','o','p','q']>}",
    "{'buttons': <[{'action': <'a'>}]>}", "{'buttons': <[{'purpose': <'im.reply-with-text'>}]>}",
    "{'buttons': <[{'action': <'a'>, 'purpose': <'call.explode'>}]>}",
    "{'buttons': <[{'action': <'a'>, 'label': <5>}]>}",
    "{'markup-body': <5>}",
  };

  out = normalize ("{'markup-body': <'<b>x</b><u>y</u>'>, 'category': <'im.received'>, "
                   "'display-hint': <['tray', 'tray', 'hide-on-lock-screen']>, "
                   "'buttons': <[{'action': <'reply'>, 'purpose': <'im.reply-with-text'>, 'junk': <1>}]>}",
                   TRUE, &error);
  g_assert_no_error (error);
  printed = g_variant_print (out, FALSE);
  g_assert_nonnull (strstr (printed, "'markup-body': <'<b>x</b>y'>"));
  g_assert_nonnull (strstr (printed, "'display-hint': <['tray', 'hide-on-lockscreen']>"));
  g_assert_nonnull (strstr (printed, "'category': <'im.received'>"));
  g_assert_null (strstr (printed, "junk"));
  g_clear_pointer (&out, g_variant_unref);
  g_clear_pointer (&printed, g_free);
  out = normalize ("{'category': <'im.message'>}", TRUE, &error);
  g_assert_no_error (error);
  printed = g_variant_print (out, FALSE);
  g_assert_cmpstr (printed, ==, "{'category': <'im.received'>}");
  g_clear_pointer (&out, g_variant_unref);
  g_clear_pointer (&printed, g_free);
  out = normalize ("{'category': <'x-kde.test'>}", TRUE, &error);
  g_assert_no_error (error);
  printed = g_variant_print (out, FALSE);
  g_assert_cmpstr (printed, ==, "{'category': <'x-kde.test'>}");
  g_clear_pointer (&out, g_variant_unref);
  g_clear_pointer (&printed, g_free);

  /* A version 1 backend: no version 2 keys, the markup's text as the body. */
  out = normalize ("{'markup-body': <'<b>a</b> &amp; b'>, 'category': <'im.received'>, "
                   "'buttons': <[{'label': <'L'>, 'action': <'a'>, 'purpose': <'call.accept'>}]>}", FALSE, &error);
  g_assert_no_error (error);
  printed = g_variant_print (out, FALSE);
  g_assert_cmpstr (printed, ==, "{'buttons': <[{'label': <'L'>, 'action': <'a'>}]>, 'body': <'a & b'>}");
  g_clear_pointer (&out, g_variant_unref);
  g_assert_null (normalize ("{'buttons': <[{'action': <'a'>, 'purpose': <'call.accept'>}]>}", FALSE, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_null (normalize (bad[i], TRUE, &error));
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/notification/markup/subset-kept", test_subset_kept);
  g_test_add_func ("/notification/markup/rest-stripped", test_rest_stripped);
  g_test_add_func ("/notification/markup/malformed-refused", test_malformed_refused);
  g_test_add_func ("/notification/markup/hostile", test_hostile);
  g_test_add_func ("/notification/markup/random", test_random);
  g_test_add_func ("/notification/markup/plain", test_plain);
  g_test_add_func ("/notification/table", test_table);
  return g_test_run ();
}
