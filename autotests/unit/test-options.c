/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "errors.h"
#include "document-path.h"
#include "option-tables.h"
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

/* From a backend, a bad key costs only itself: the others still travel. */
static void
test_lenient_leaves_out_bad_keys (void)
{
  g_autoptr(GVariant) in = g_variant_ref_sink (parse ("{'modal': <'yes'>, 'title': <'fine'>, 'count': <uint32 99>, "
                                                      "'list': <['a']>, 'nonsense': <1>}"));
  g_autoptr(GVariant) out = NULL;
  GVariantBuilder b;
  const char *title;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "*test signal*option left out*modal*");
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "*test signal*option left out*count*");
  limen_options_filter_lenient (in, &b, "test signal", table);
  g_test_assert_expected_messages ();
  out = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_cmpuint (g_variant_n_children (out), ==, 2);
  g_assert_true (g_variant_lookup (out, "title", "&s", &title));
  g_assert_cmpstr (title, ==, "fine");
  g_assert_true (g_variant_lookup (out, "list", "^a&s", NULL));
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
  g_assert_false (dialog_ok ("{'choices': <[('c', 'l', @a(ss) [], 'maybe')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', 'l', [('a', 'A')], 'b')]>}"));
  g_assert_false (dialog_ok ("{'choices': <[('c', 'l', @a(ss) [], ''), ('c', 'again', @a(ss) [], '')]>}"));
  g_assert_true (dialog_ok ("{'files': <[b'a.txt', b'b.txt']>}"));
  g_assert_false (dialog_ok ("{'files': <[b'dir/a.txt']>}"));
  g_assert_false (dialog_ok ("{'files': <[b'..']>}"));
  g_assert_false (dialog_ok ("{'files': <[b'']>}"));
}

static gboolean
table_ok (const LimenOption *table, const char *text)
{
  g_autoptr(GVariant) in = g_variant_ref_sink (parse (text));
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  gboolean ok = limen_options_filter (in, &b, &error, table, NULL);

  g_assert_true (ok == (error == NULL));
  return ok;
}

/* Accepted, with every key left out. */
static gboolean
table_drops (const LimenOption *table, const char *text)
{
  g_autoptr(GVariant) in = g_variant_ref_sink (parse (text));
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) out = NULL;

  g_assert_true (limen_options_filter (in, &b, NULL, table, NULL));
  out = g_variant_ref_sink (g_variant_builder_end (&b));
  return g_variant_n_children (out) == 0;
}

/* One limit per option: what the frontend lets through, the backend accepts too. */
static void
test_shared_tables (void)
{
  g_autofree char *x256 = g_strnfill (256, 'x');
  g_autofree char *x257 = g_strnfill (257, 'x');
  g_autofree char *label_256 = g_strdup_printf ("{'accept_label': <'%s'>}", x256);
  g_autofree char *label_257 = g_strdup_printf ("{'accept_label': <'%s'>}", x257);

  g_assert_true (table_ok (limen_options_file_chooser_open_file, label_256));
  g_assert_false (table_ok (limen_options_file_chooser_open_file, label_257));
  g_assert_false (table_ok (limen_options_print_prepare_print, label_257));
  /* Left out, not refused: a name with a directory, a relative folder. */
  g_assert_true (table_drops (limen_options_file_chooser_save_file, "{'current_name': <'a/b'>}"));
  g_assert_true (table_drops (limen_options_file_chooser_open_file, "{'current_folder': <b'relative'>}"));
  g_assert_false (table_drops (limen_options_file_chooser_open_file, "{'current_folder': <b'/tmp'>}"));
  g_assert_true (table_ok (limen_options_wallpaper, "{'set-on': <'both'>}"));
  g_assert_false (table_ok (limen_options_wallpaper, "{'set-on': <'ceiling'>}"));
  g_assert_true (table_ok (limen_options_email_compose, "{'addresses': <['a@b.example']>}"));
  g_assert_false (table_ok (limen_options_email_compose, "{'address': <'a b@c'>}"));
  g_assert_false (table_ok (limen_options_email_compose, "{'subject': <'one\\ntwo'>}"));
  {
    /* A subject's 200 are characters, as the reference counts them. */
    g_autofree char *text = NULL;
    GString *s = g_string_new (NULL);

    for (int i = 0; i < 200; i++)
      g_string_append (s, "\u0436");
    text = g_strdup_printf ("{'subject': <'%s'>}", s->str);
    g_assert_true (table_ok (limen_options_email_compose, text));
    g_free (text);
    g_string_append (s, "\u0436");
    text = g_strdup_printf ("{'subject': <'%s'>}", s->str);
    g_assert_false (table_ok (limen_options_email_compose, text));
    g_string_free (s, TRUE);
  }
  /* Keys only a frontend adds are not accepted from an app... */
  {
    g_autoptr(GVariant) in = g_variant_ref_sink (parse ("{'attachments': <['/etc/passwd']>}"));
    g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
    g_autoptr(GVariant) out = NULL;

    g_assert_true (limen_options_filter (in, &b, NULL, limen_options_email_compose, NULL));
    out = g_variant_ref_sink (g_variant_builder_end (&b));
    g_assert_cmpuint (g_variant_n_children (out), ==, 0);
  }
  /* ...but checked in the impl table. */
  g_assert_true (table_ok (limen_options_impl_email_compose, "{'attachments': <['/tmp/a']>}"));
  g_assert_false (table_ok (limen_options_impl_email_compose, "{'attachments': <['relative']>}"));
  g_assert_true (table_ok (limen_options_impl_screenshot_screenshot, "{'permission_store_checked': <true>}"));
}

/* The one parent_window check both daemons use: what limen-kde refused (an X11 id that is
 * not 32 bits of hex) is refused by the frontend too, and the reverse. */
static void
test_parent_window (void)
{
  g_autofree char *h248 = g_strnfill (248, 'h');
  g_autofree char *wayland_256 = g_strconcat ("wayland:", h248, NULL);
  g_autofree char *wayland_257 = g_strconcat ("wayland:h", h248, NULL);
  /* "x11:0x…" is what Chromium sends ("x11:%#x"). */
  const char *good[] = { "", "x11:1a", "x11:FFFFFFFF", "x11:0x1e00004", "x11:0X1A", "wayland:abc", wayland_256 };
  const char *bad[] = { "x11:", "x11:zz", "x11:123456789ab", "x11:-1", "x11: 1a", "x11:0x", "x11:0x0x1",
                        "x11:0x123456789", "mir:1", "wayland", wayland_257, "wayland:\xff" };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    g_assert_true (limen_check_parent_window (good[i], NULL));
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (limen_check_parent_window (bad[i], &error));
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "parent_window"));
    }
}

/* ScreenCast and RemoteDesktop in limen-kde check what a frontend sends with the impl tables:
 * the cursor mode is exactly one mode (0 was let through by the backend's own table), the
 * restore data's vendor and size are bounded. */
static void
test_cast_tables (void)
{
  g_autofree char *v65 = g_strnfill (65, 'v');
  g_autofree char *vendor_65 = g_strdup_printf ("{'restore_data': <('%s', uint32 1, <@a{sv} {}>)>}", v65);

  g_assert_true (table_ok (limen_options_impl_screen_cast_select_sources, "{'cursor_mode': <uint32 2>}"));
  g_assert_false (table_ok (limen_options_impl_screen_cast_select_sources, "{'cursor_mode': <uint32 0>}"));
  g_assert_false (table_ok (limen_options_impl_screen_cast_select_sources, "{'cursor_mode': <uint32 8>}"));
  /* One mode: the frontend and the backend each re-checked this in code of their own. */
  g_assert_false (table_ok (limen_options_impl_screen_cast_select_sources, "{'cursor_mode': <uint32 3>}"));
  g_assert_false (table_ok (limen_options_screen_cast_select_sources, "{'cursor_mode': <uint32 3>}"));
  g_assert_false (table_ok (limen_options_impl_screen_cast_select_sources, "{'persist_mode': <uint32 3>}"));
  g_assert_true (table_ok (limen_options_impl_screen_cast_select_sources,
                           "{'restore_data': <('KDE', uint32 1, <@a{sv} {}>)>}"));
  g_assert_false (table_ok (limen_options_impl_screen_cast_select_sources, vendor_65));
  g_assert_false (table_ok (limen_options_impl_remote_desktop_select_devices, vendor_65));
  g_assert_false (table_ok (limen_options_impl_remote_desktop_select_devices, "{'types': <uint32 8>}"));
}

static void
test_document_paths (void)
{
  g_autofree char *id = NULL;
  g_autofree char *rest = NULL;
  g_autofree char *host = NULL;

  g_assert_true (limen_document_path_parse ("/run/user/1000/doc/abc123/notes.txt", 1000, &id, &rest));
  g_assert_cmpstr (id, ==, "abc123");
  g_assert_cmpstr (rest, ==, "notes.txt");
  g_clear_pointer (&id, g_free);
  g_clear_pointer (&rest, g_free);
  g_assert_true (limen_document_path_parse ("/run/flatpak/doc/abc123/dir/notes.txt", 1000, &id, &rest));
  g_assert_cmpstr (id, ==, "abc123");
  g_assert_cmpstr (rest, ==, "dir/notes.txt");
  host = limen_document_path_to_host ("/home/u/Documents/dir", rest);
  g_assert_cmpstr (host, ==, "/home/u/Documents/dir/notes.txt");
  g_clear_pointer (&id, g_free);
  g_clear_pointer (&rest, g_free);
  /* Another user's store, no file below the document, or a way out of it: not a document path. */
  g_assert_false (limen_document_path_parse ("/run/user/1001/doc/abc123/notes.txt", 1000, &id, &rest));
  g_assert_false (limen_document_path_parse ("/run/user/1000/doc/abc123", 1000, &id, &rest));
  g_assert_false (limen_document_path_parse ("/run/flatpak/doc/abc123/../../etc/passwd", 1000, &id, &rest));
  g_assert_false (limen_document_path_parse ("/run/flatpak/doc/../x", 1000, &id, &rest));
  g_assert_false (limen_document_path_parse ("/home/u/notes.txt", 1000, &id, &rest));
  g_assert_null (id);
  g_assert_null (rest);
  /* The host's view of the store: the document itself or an app's view of it. */
  g_assert_true (limen_document_store_path_parse ("/tmp/rt/doc/abc123/dir/notes.txt", "/tmp/rt/doc", &id, &rest));
  g_assert_cmpstr (id, ==, "abc123");
  g_assert_cmpstr (rest, ==, "dir/notes.txt");
  g_clear_pointer (&id, g_free);
  g_clear_pointer (&rest, g_free);
  g_assert_true (limen_document_store_path_parse ("/tmp/rt/doc/by-app/org.example.App/abc123/notes.txt", "/tmp/rt/doc",
                                                  &id, &rest));
  g_assert_cmpstr (id, ==, "abc123");
  g_assert_cmpstr (rest, ==, "notes.txt");
  g_clear_pointer (&id, g_free);
  g_clear_pointer (&rest, g_free);
  g_assert_false (limen_document_store_path_parse ("/tmp/rt/doc/by-app/org.example.App", "/tmp/rt/doc", &id, &rest));
  g_assert_false (limen_document_store_path_parse ("/tmp/rt/doc/by-app/org.example.App/abc", "/tmp/rt/doc", &id, &rest));
  g_assert_false (limen_document_store_path_parse ("/tmp/rt/doc/abc/../../x", "/tmp/rt/doc", &id, &rest));
  g_assert_false (limen_document_store_path_parse ("/tmp/rt/docs/abc/x", "/tmp/rt/doc", &id, &rest));
  g_assert_false (limen_document_store_path_parse ("/tmp/rt/doc/by-app/x/by-app/y", "/tmp/rt/doc", &id, &rest));
  g_assert_null (id);
  g_assert_null (rest);
}

/* Where each kind of app sees the store: Flatpak's own mount inside the sandbox, the host's
 * mount point for a Snap (its confinement shows it there) and for the host. */
static void
test_document_app_mount (void)
{
  g_assert_cmpstr (limen_document_path_app_mount (LIMEN_APP_KIND_FLATPAK, "/tmp/rt/doc"), ==, "/run/flatpak/doc");
  g_assert_cmpstr (limen_document_path_app_mount (LIMEN_APP_KIND_SNAP, "/tmp/rt/doc"), ==, "/tmp/rt/doc");
  g_assert_cmpstr (limen_document_path_app_mount (LIMEN_APP_KIND_HOST, "/tmp/rt/doc"), ==, "/tmp/rt/doc");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/options/accepts-and-drops-unknown", test_accepts_and_drops_unknown);
  g_test_add_func ("/options/rejects", test_rejects);
  g_test_add_func ("/options/lenient", test_lenient_leaves_out_bad_keys);
  g_test_add_func ("/options/byte-path", test_invalid_utf8);
  g_test_add_func ("/options/tokens-and-paths", test_tokens_and_paths);
  g_test_add_func ("/options/dialog-validators", test_dialog_validators);
  g_test_add_func ("/options/shared-tables", test_shared_tables);
  g_test_add_func ("/options/document-paths", test_document_paths);
  g_test_add_func ("/options/parent-window", test_parent_window);
  g_test_add_func ("/options/cast-tables", test_cast_tables);
  g_test_add_func ("/options/document-app-mount", test_document_app_mount);
  return g_test_run ();
}
