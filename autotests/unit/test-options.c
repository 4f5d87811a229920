/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "errors.h"
#include "options.h"
#include "request.h"

static const LimenOption table[] = {
  { "handle_token", "s", limen_validate_token },
  { "modal", "b", limen_validate_bool },
  { "title", "s", limen_validate_string_length, 16 },
  { "count", "u", limen_validate_uint_max, 10 },
  { "list", "as", limen_validate_strv_length, 2 },
  { "fd", "h", limen_validate_fd_index },
  { "path", "ay", limen_validate_byte_path },
  { NULL }
};

static const LimenOption extra[] = {
  { "extra", "i", NULL },
  { NULL }
};

static GVariant *
parse (const char *text)
{
  g_autoptr(GError) error = NULL;
  GVariant *v = g_variant_parse (G_VARIANT_TYPE_VARDICT, text, NULL, NULL, &error);

  g_assert_no_error (error);
  return v;
}

static gboolean
filter (const char *text, GVariant **out, GError **error)
{
  g_autoptr(GVariant) in = g_variant_ref_sink (parse (text));
  GVariantBuilder b;
  gboolean ok;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  ok = limen_options_filter (in, &b, error, table, extra, NULL);
  if (ok && out)
    *out = g_variant_ref_sink (g_variant_builder_end (&b));
  else
    g_variant_builder_clear (&b);
  return ok;
}

static void
test_accepts_and_drops_unknown (void)
{
  g_autoptr(GVariant) out = NULL;
  g_autoptr(GError) error = NULL;
  gboolean modal;
  gint32 extra_v;

  g_assert_true (filter ("{'modal': <true>, 'nonsense': <'x'>, 'extra': <int32 5>}", &out, &error));
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (out, "modal", "b", &modal));
  g_assert_true (modal);
  g_assert_true (g_variant_lookup (out, "extra", "i", &extra_v));
  g_assert_cmpint (extra_v, ==, 5);
  g_assert_false (g_variant_lookup (out, "nonsense", "s", NULL));
}

static void
expect_invalid (const char *text, const char *key)
{
  g_autoptr(GError) error = NULL;

  g_test_message ("expecting %s to be refused", text);
  g_assert_false (filter (text, NULL, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, key));
}

static void
test_rejects (void)
{
  expect_invalid ("{'modal': <'yes'>}", "modal");
  expect_invalid ("{'title': <'this is longer than sixteen'>}", "title");
  expect_invalid ("{'count': <uint32 11>}", "count");
  expect_invalid ("{'list': <['a', 'b', 'c']>}", "list");
  expect_invalid ("{'fd': <handle -1>}", "fd");
  expect_invalid ("{'path': <[byte 0x61, 0x62]>}", "path");
  expect_invalid ("{'path': <[byte 0x61, 0x00, 0x62, 0x00]>}", "path");
  expect_invalid ("{'handle_token': <'a-b.c'>}", "handle_token");
  expect_invalid ("{'handle_token': <''>}", "handle_token");
  expect_invalid ("{'handle_token': <'..'>}", "handle_token");
  expect_invalid ("{'handle_token': <'tökén'>}", "handle_token");
  expect_invalid ("{'extra': <uint32 1>}", "extra");
}

static void
test_invalid_utf8 (void)
{
  g_autoptr(GVariant) in = NULL;
  g_autoptr(GError) error = NULL;
  GVariantBuilder b;
  GVariantDict d;

  /* GVariant refuses invalid UTF-8 in 's', so this is the ay path. */
  g_variant_dict_init (&d, NULL);
  g_variant_dict_insert (&d, "path", "^ay", "/tmp/ok");
  in = g_variant_ref_sink (g_variant_dict_end (&d));
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_assert_true (limen_options_filter (in, &b, &error, table, NULL));
  g_variant_builder_clear (&b);
}

static void
test_tokens_and_paths (void)
{
  g_autofree char *p = limen_request_path_for ("request", ":1.42", "abc_1");

  g_assert_cmpstr (p, ==, "/org/freedesktop/portal/desktop/request/1_42/abc_1");
  g_assert_null (limen_request_path_for ("request", ":1.42", "a/b"));
  g_assert_null (limen_request_path_for ("request", ":1.42", ""));
  g_assert_null (limen_request_path_for ("request", "org.example.NotUnique", "ok"));
  g_assert_true (limen_token_is_valid ("x"));
  g_assert_true (limen_token_is_valid ("0123456789012345678901234567890123456789012345678901234567890123"));
  g_assert_false (limen_token_is_valid ("01234567890123456789012345678901234567890123456789012345678901234"));
  g_assert_false (limen_token_is_valid (NULL));
}

static const LimenOption dialog_table[] = {
  { "filters", "a(sa(us))", limen_validate_file_filters },
  { "current_filter", "(sa(us))", limen_validate_file_filter },
  { "choices", "a(ssa(ss)s)", limen_validate_choices },
  { "files", "aay", limen_validate_file_names },
  { NULL }
};

static gboolean
dialog_ok (const char *text)
{
  g_autoptr(GVariant) in = g_variant_ref_sink (parse (text));
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  gboolean ok = limen_options_filter (in, &b, &error, dialog_table, NULL);

  if (!ok)
    {
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "Invalid value"));
    }
  return ok;
}

/* The validators the frontend and limen-kde share: what one accepts the other must. */
static void
test_dialog_validators (void)
{
  g_assert_true (dialog_ok ("{'filters': <[('Images', [(uint32 0, '*.png'), (uint32 1, 'image/jpeg')])]>}"));
  g_assert_true (dialog_ok ("{'current_filter': <('Text', [(uint32 1, 'text/plain')])>}"));
  g_assert_false (dialog_ok ("{'filters': <[('Bad', [(uint32 2, '*.png')])]>}"));
  g_assert_false (dialog_ok ("{'current_filter': <('Empty', [(uint32 0, '')])>}"));
  g_assert_true (dialog_ok ("{'choices': <[('enc', 'Encoding', [('utf8', 'UTF-8'), ('latin1', 'Latin-1')], 'utf8'),"
                            " ('bom', 'Write BOM', @a(ss) [], 'true')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('', 'No id', @a(ss) [], '')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', '', @a(ss) [], 'true')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', 'Colour', [('r', 'Red'), ('g', '')], 'r')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', 'l', @a(ss) [], 'maybe')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', 'l', [('a', 'A')], 'b')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', 'l', @a(ss) [], ''), ('c', 'again', @a(ss) [], '')]>}"));
  g_assert_true (dialog_ok ("{'files': <[b'a.txt', b'b.txt']>}"));
  g_assert_false (dialog_ok ("{'files': <[b'dir/a.txt']>}"));
  g_assert_false (dialog_ok ("{'files': <[b'..']>}"));
  g_assert_false (dialog_ok ("{'files': <[b'']>}"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/options/accepts-and-drops-unknown", test_accepts_and_drops_unknown);
  g_test_add_func ("/options/rejects", test_rejects);
  g_test_add_func ("/options/byte-path", test_invalid_utf8);
  g_test_add_func ("/options/tokens-and-paths", test_tokens_and_paths);
  g_test_add_func ("/options/dialog-validators", test_dialog_validators);
  return g_test_run ();
}
