/* Unit tests of the import of the reference's state: the reader of document entries in
 * every layout (old, upstream 1.21.2's with a file handle, longer ones, broken ones), and
 * the upgrade from the import that recorded no entries.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "db.h"
#include "doc-model.h"
#include "import-private.h"
#include "import.h"
#include "perm-store.h"

static GVariant *
entry (GVariant *data, const char *perms)
{
  return g_variant_ref_sink (g_variant_new ("(v@a{sas})", data, g_variant_new_parsed (perms)));
}

static LimenImportOutcome
parse (GVariant *value, LimenRefDoc *doc, char **why)
{
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) owned = value;

  return limen_import_parse_document (value, doc, &perms, why);
}

static void
test_parse_layouts (void)
{
  const guint8 fid[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  g_autofree char *why = NULL;
  g_auto(LimenRefDoc) old = { 0 };
  g_auto(LimenRefDoc) upstream = { 0 };
  g_auto(LimenRefDoc) longer = { 0 };
  g_auto(LimenRefDoc) wide = { 0 };
  g_auto(LimenRefDoc) no_handle = { 0 };

  g_assert_cmpint (parse (entry (g_variant_new_parsed ("(b'/home/u/a.txt', @t 5, @t 6, @u 1)"), "{'org.a.App': ['read']}"),
                          &old, &why), ==, LIMEN_IMPORT_IMPORTED);
  g_assert_cmpstr (old.path, ==, "/home/u/a.txt");
  g_assert_cmpuint (old.dev, ==, 5);
  g_assert_cmpuint (old.ino, ==, 6);
  g_assert_cmpuint (old.flags, ==, LIMEN_REF_DOC_UNIQUE);
  g_assert_null (old.fid);
  g_assert_cmpuint (old.n_unknown, ==, 0);

  /* (ayttu@ay): the folder's identifier, kept as it is. */
  g_assert_cmpint (parse (entry (g_variant_new ("(^ayttu@ay)", "/home/u/b.txt", (guint64) 7, (guint64) 8, 0,
                                                g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, fid, 8, 1)),
                                 "@a{sas} {}"), &upstream, &why), ==, LIMEN_IMPORT_IMPORTED);
  g_assert_cmpstr (upstream.path, ==, "/home/u/b.txt");
  g_assert_nonnull (upstream.fid);
  g_assert_cmpmem (g_bytes_get_data (upstream.fid, NULL), g_bytes_get_size (upstream.fid), fid, 8);
  g_assert_cmpuint (upstream.n_unknown, ==, 0);

  /* Members and flags of a later version are left out, never a reason to refuse. */
  g_assert_cmpint (parse (entry (g_variant_new_parsed ("(b'/d', @t 1, @t 2, @u 12, @ay [1, 2], ['x'], @u 3)"), "@a{sas} {}"),
                          &longer, &why), ==, LIMEN_IMPORT_IMPORTED);
  g_assert_cmpuint (longer.flags & LIMEN_REF_DOC_DIRECTORY, !=, 0);
  g_assert_cmpuint (longer.n_unknown, ==, 3);   /* two members, flag 8 */
  g_assert_cmpuint (g_bytes_get_size (longer.fid), ==, 2);
  g_assert_cmpint (parse (g_variant_ref_sink (g_variant_new_parsed ("(<(b'/w', @t 1, @t 2, @u 0, 'not ay')>, @a{sas} {}, 5)")),
                          &wide, &why), ==, LIMEN_IMPORT_IMPORTED);
  g_assert_cmpuint (wide.n_unknown, ==, 2);     /* one outer member, a fifth of another type */
  g_assert_null (wide.fid);
  /* An empty handle is no handle. */
  g_assert_cmpint (parse (entry (g_variant_new_parsed ("(b'/e', @t 1, @t 2, @u 0, @ay [])"), "@a{sas} {}"),
                          &no_handle, &why), ==, LIMEN_IMPORT_IMPORTED);
  g_assert_null (no_handle.fid);
  g_assert_cmpuint (no_handle.n_unknown, ==, 0);
}

static void
test_parse_refusals (void)
{
  const struct { const char *value; LimenImportOutcome outcome; const char *why; } cases[] = {
    /* Layouts this version does not know: not read, never called damaged. */
    { "(<{'path': <'/x'>}>, @a{sas} {})", LIMEN_IMPORT_UNKNOWN_LAYOUT, "document data of type a{sv}" },
    { "(<('/x', @t 1, @t 2, @u 0)>, @a{sas} {})", LIMEN_IMPORT_UNKNOWN_LAYOUT, "document data of type (sttu)" },
    { "(<(b'/x', @t 1, @t 2)>, @a{sas} {})", LIMEN_IMPORT_UNKNOWN_LAYOUT, "document data of type (aytt)" },
    { "(['a'],)", LIMEN_IMPORT_UNKNOWN_LAYOUT, "an entry of type (as)" },
    { "@u 3", LIMEN_IMPORT_UNKNOWN_LAYOUT, "an entry of type u" },
    /* Impossible paths in a known layout. */
    { "(<(b'relative', @t 1, @t 2, @u 0)>, @a{sas} {})", LIMEN_IMPORT_MALFORMED, "its path" },
    { "(<(@ay [0x2f, 0x61], @t 1, @t 2, @u 0)>, @a{sas} {})", LIMEN_IMPORT_MALFORMED, "its path" },
    { "(<(@ay [0x2f, 0x00, 0x61, 0x00], @t 1, @t 2, @u 0)>, @a{sas} {})", LIMEN_IMPORT_MALFORMED, "its path" },
    { "(<(b'/dir/', @t 1, @t 2, @u 0)>, @a{sas} {})", LIMEN_IMPORT_MALFORMED, "its path" },
    { "(<(b'', @t 1, @t 2, @u 4)>, @a{sas} {})", LIMEN_IMPORT_MALFORMED, "its path" },
  };
  g_autofree char *why = NULL;
  g_auto(LimenRefDoc) none = { 0 };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(LimenRefDoc) doc = { 0 };
      g_autofree char *reason = NULL;

      g_test_message ("%s", cases[i].value);
      g_assert_cmpint (parse (g_variant_ref_sink (g_variant_new_parsed (cases[i].value)), &doc, &reason), ==,
                       cases[i].outcome);
      g_assert_nonnull (strstr (reason, cases[i].why));
    }
  /* An item the GVDB reader could not read at all. */
  g_assert_cmpint (limen_import_parse_document (NULL, &none, NULL, &why), ==, LIMEN_IMPORT_MALFORMED);
  g_assert_cmpstr (why, ==, "its value cannot be read");
}

/* ---- a table file with several entries -------------------------------------------- */

static guint32
gvdb_hash (const char *key)
{
  guint32 h = 5381;

  for (; *key; key++)
    h = h * 33 + *(const signed char *) key;
  return h;
}

static void
put_u32 (GByteArray *b, gsize at, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (b->data + at, &v, 4);
}

/* Write an item at @at: key @key (at @key_start), type @type, value in [start, end). */
static void
put_item (GByteArray *b, gsize at, const char *key, guint32 key_start, char type, guint32 start, guint32 end)
{
  guint16 key_size = GUINT16_TO_LE (strlen (key));

  put_u32 (b, at, gvdb_hash (key));
  put_u32 (b, at + 4, 0xffffffff);
  put_u32 (b, at + 8, key_start);
  memcpy (b->data + at + 12, &key_size, 2);
  b->data[at + 14] = type;
  put_u32 (b, at + 16, start);
  put_u32 (b, at + 20, end);
}

/* {"main": H {ids[i]: values[i]}} at @path: one bucket per table, keys and values after. */
static void
write_table (const char *path, const char * const *ids, GVariant * const *values, guint n)
{
  g_autoptr(GByteArray) b = g_byte_array_new ();
  guint32 root = 24, main_t = root + 12 + 24, items = main_t + 12, tail = items + 24 * n;
  guint32 zero = 0;

  g_byte_array_set_size (b, tail);
  memset (b->data, 0, tail);
  put_u32 (b, 0, 0x72615647);
  put_u32 (b, 4, 0x746e6169);
  put_u32 (b, 16, root);
  put_u32 (b, 20, main_t);
  put_u32 (b, root + 4, 1);
  put_u32 (b, main_t + 4, 1);
  g_byte_array_append (b, (const guint8 *) "main", 4);
  put_item (b, root + 12, "main", tail, 'H', main_t, items + 24 * n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GVariant) boxed = g_variant_ref_sink (g_variant_new_variant (values[i]));
      guint32 key_start = b->len, start;

      g_byte_array_append (b, (const guint8 *) ids[i], strlen (ids[i]));
      while (b->len % 8)
        g_byte_array_append (b, (const guint8 *) &zero, 1);
      start = b->len;
      g_byte_array_append (b, g_variant_get_data (boxed), g_variant_get_size (boxed));
      put_item (b, items + 24 * i, ids[i], key_start, 'v', start, b->len);
    }
  g_assert_true (g_file_set_contents (path, (const char *) b->data, b->len, NULL));
}

static GVariant *
doc_value (const char *path, const char *layout)
{
  GVariant *data = strcmp (layout, "old") == 0
    ? g_variant_new ("(^ayttu)", path, (guint64) 1, (guint64) 2, 0)
    : g_variant_new ("(^ayttu@ay)", path, (guint64) 1, (guint64) 2, 0, g_variant_new_bytestring ("fid"));

  return entry (data, "{'org.a.App': ['read']}");
}

static void
keep_log (const char *domain, GLogLevelFlags level, const char *message, gpointer user_data)
{
  g_string_append_printf (user_data, "%s %s\n", (level & G_LOG_LEVEL_WARNING) ? "WARNING" : "INFO", message);
}

static char *
meta (LimenDb *db, const char *key)
{
  return limen_db_get_meta (db, key);
}

/* A database the import before per-entry records had done: what that pass read counts as
 * read (a document deleted since stays deleted), the documents it refused come in now. */
static void
test_upgrade_from_the_unrecorded_import (void)
{
  g_autofree char *flatpak_db = g_build_filename (g_get_user_data_dir (), "flatpak", "db", NULL);
  g_autofree char *docs_file = g_build_filename (flatpak_db, "documents", NULL);
  g_autofree char *devices_file = g_build_filename (flatpak_db, "devices", NULL);
  g_autofree char *db_path = g_build_filename (g_get_user_data_dir (), "documents.sqlite", NULL);
  const char *doc_ids[] = { "kept", "deleted", "refused", "unknown" };
  GVariant *doc_values[] = { doc_value ("/h/kept.txt", "old"), doc_value ("/h/deleted.txt", "old"),
                             doc_value ("/h/refused.txt", "new"),
                             entry (g_variant_new_parsed ("('/h/u', @t 1, @t 2, @u 0)"), "@a{sas} {}") };
  const char *dev_ids[] = { "camera", "speakers", "later" };
  GVariant *dev_values[] = { entry (g_variant_new_string ("ref"), "{'org.a.App': ['yes']}"),
                             entry (g_variant_new_string ("ref"), "{'org.a.App': ['yes']}"),
                             g_variant_ref_sink (g_variant_new_parsed ("(<'ref'>, {'org.a.App': ['no']}, 1)")) };
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenDb) db = NULL;
  LimenPermStore *perms;
  LimenDocModel *model;
  g_autoptr(LimenDoc) kept = NULL;
  g_autoptr(LimenDoc) refused = NULL;
  g_autoptr(LimenDoc) deleted = NULL;
  g_autoptr(LimenDoc) unknown = NULL;
  g_autoptr(GVariant) empty = g_variant_ref_sink (g_variant_new_parsed ("@a{sas} {}"));
  g_autoptr(GVariant) here = g_variant_ref_sink (g_variant_new_string ("here"));
  g_autofree char *kept_path = NULL;
  g_autoptr(GString) logged = g_string_new (NULL);

  /* What the import logs, kept to be checked (its warnings are not failures here). */
  g_log_set_always_fatal (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL);
  g_log_set_default_handler (keep_log, logged);
  g_assert_cmpint (g_mkdir_with_parents (flatpak_db, 0700), ==, 0);
  write_table (docs_file, doc_ids, doc_values, G_N_ELEMENTS (doc_ids));
  write_table (devices_file, dev_ids, dev_values, G_N_ELEMENTS (dev_ids));
  /* What that pass left: its mark, "kept" (here with another path, as a later rename here
   * would leave it), "camera" changed since; "deleted" and "speakers" deleted since. */
  db = limen_db_open (db_path, &error);
  g_assert_no_error (error);
  perms = limen_perm_store_new (db, &error);
  model = limen_doc_model_new (db, &error);
  g_assert_no_error (error);
  g_assert_true (limen_db_set_meta (db, "reference-state-imported", "1", NULL));
  kept = limen_doc_model_add_with_id (model, "kept", "/h/renamed.txt", 1, 2, 0, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (limen_perm_store_import_entry (perms, "devices", "camera", here, empty, &error));

  limen_import_reference_state (db, perms, model);
  g_assert_true (g_pattern_match_simple ("*WARNING Reference table documents: 1 entries not imported, in a layout this "
                                         "version does not know*: unknown (document data of type (sttu))*",
                                         logged->str));
  g_assert_true (strstr (logged->str, "devices: 1 imported, 1 already here, kept as they are, 1 read by an "
                                      "earlier version\n"));
  g_string_truncate (logged, 0);

  kept_path = limen_doc_dup_path (kept);
  g_assert_cmpstr (kept_path, ==, "/h/renamed.txt");
  g_assert_null ((deleted = limen_doc_model_lookup (model, "deleted")));
  g_assert_nonnull ((refused = limen_doc_model_lookup (model, "refused")));
  g_assert_cmpuint (limen_doc_get_perms (refused, "org.a.App"), ==, LIMEN_DOC_PERM_READ);
  g_assert_null ((unknown = limen_doc_model_lookup (model, "unknown")));
  g_assert_true (limen_perm_store_has_entry (perms, "devices", "camera"));
  g_assert_false (limen_perm_store_has_entry (perms, "devices", "speakers"));
  g_assert_true (limen_perm_store_has_entry (perms, "devices", "later"));
  {
    g_autofree char *a = meta (db, "reference-import/documents/kept");
    g_autofree char *b = meta (db, "reference-import/documents/deleted");
    g_autofree char *c = meta (db, "reference-import/documents/refused");
    g_autofree char *d = meta (db, "reference-import/documents/unknown");
    g_autofree char *e = meta (db, "reference-import/devices/camera");
    g_autofree char *docs_done = meta (db, "reference-import-file/documents");
    g_autofree char *devices_done = meta (db, "reference-import-file/devices");

    g_assert_cmpstr (a, ==, "present");
    g_assert_cmpstr (b, ==, "read-before");
    g_assert_cmpstr (c, ==, "imported");
    g_assert_null (d);                 /* tried again at the next start */
    g_assert_cmpstr (e, ==, "present");
    g_assert_null (docs_done);         /* one entry left to read */
    g_assert_nonnull (devices_done);
  }

  /* The next pass is no longer an upgrade: "deleted", recorded as read, stays deleted even
   * though the old mark is still there; the unknown entry is tried again. */
  limen_import_reference_state (db, perms, model);
  g_assert_true (g_pattern_match_simple ("*WARNING*unknown (document data of type (sttu))*", logged->str));
  g_assert_null (strstr (logged->str, "devices"));
  g_assert_null ((deleted = limen_doc_model_lookup (model, "deleted")));
  g_clear_pointer (&kept, limen_doc_unref);
  g_clear_pointer (&refused, limen_doc_unref);
  limen_doc_model_free (model);
  limen_perm_store_free (perms);
  for (guint i = 0; i < G_N_ELEMENTS (doc_values); i++)
    g_variant_unref (doc_values[i]);
  for (guint i = 0; i < G_N_ELEMENTS (dev_values); i++)
    g_variant_unref (dev_values[i]);
  g_log_set_default_handler (g_log_default_handler, NULL);
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

/* A store too big for the time before the first answers is imported in steps from the main
 * loop; meanwhile an entry or document the steps have not reached is brought in when a call
 * asks for it (by id or by path), and the log says what happens. */
static void
test_import_in_steps (void)
{
  g_autofree char *flatpak_db = g_build_filename (g_get_user_data_dir (), "flatpak", "db", NULL);
  g_autofree char *table_file = g_build_filename (flatpak_db, "bench", NULL);
  g_autofree char *docs_file = g_build_filename (flatpak_db, "documents", NULL);
  g_autofree char *db_path = g_build_filename (g_get_user_data_dir (), "steps.sqlite", NULL);
  /* With the two documents, three whole steps: the last file ends as a step's budget does. */
  const guint n = 2998;
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  const char *doc_ids[] = { "d1", "d2" };
  GVariant *doc_values[] = { doc_value ("/h/one.txt", "old"), doc_value ("/h/two.txt", "old") };
  g_autoptr(GString) logged = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenDb) db = NULL;
  g_autoptr(LimenDoc) d1 = NULL;
  g_autoptr(LimenDoc) d2 = NULL;
  g_autofree char *done = NULL;
  LimenPermStore *perms;
  LimenDocModel *model;

  remove_tree (flatpak_db);
  g_assert_cmpint (g_mkdir_with_parents (flatpak_db, 0700), ==, 0);
  for (guint i = 0; i < n; i++)
    {
      g_ptr_array_add (ids, g_strdup_printf ("e%u", i));
      g_ptr_array_add (values, entry (g_variant_new_boolean (TRUE), "{'org.a.App': ['yes']}"));
    }
  write_table (table_file, (const char * const *) ids->pdata, (GVariant * const *) values->pdata, n);
  write_table (docs_file, doc_ids, doc_values, G_N_ELEMENTS (doc_ids));
  g_log_set_always_fatal (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL);
  g_log_set_default_handler (keep_log, logged);
  db = limen_db_open (db_path, &error);
  g_assert_no_error (error);
  perms = limen_perm_store_new (db, &error);
  model = limen_doc_model_new (db, &error);

  /* No time at all before the first answers: every step is left for the main loop. */
  limen_import_reference_state_start (db, perms, model, 0);
  g_assert_nonnull (strstr (logged->str, "Importing the reference state in the background"));
  g_assert_true (limen_perm_store_has_entry (perms, "bench", "e2499"));
  g_assert_nonnull ((d1 = limen_doc_model_lookup (model, "d1")));
  g_assert_nonnull ((d2 = limen_doc_model_find_by_path (model, "/h/two.txt")));
  g_assert_cmpstr (limen_doc_get_id (d2), ==, "d2");
  g_assert_cmpuint (limen_doc_get_perms (d2, "org.a.App"), ==, LIMEN_DOC_PERM_READ);
  done = meta (db, "reference-import-file/bench");
  g_assert_null (done);

  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_nonnull (strstr (logged->str, "The reference state is imported"));
  g_assert_nonnull (strstr (logged->str, "Reference table bench: 2998 imported\n"));
  for (guint i = 0; i < n; i++)
    g_assert_true (limen_perm_store_has_entry (perms, "bench", ids->pdata[i]));
  done = meta (db, "reference-import-file/bench");
  g_assert_nonnull (done);
  g_free (done);
  /* Its end is marked too: the next start writes nothing. */
  done = meta (db, "reference-import-version");
  g_assert_cmpstr (done, ==, "2");
  g_clear_pointer (&d1, limen_doc_unref);
  g_clear_pointer (&d2, limen_doc_unref);
  limen_doc_model_free (model);
  limen_perm_store_free (perms);
  for (guint i = 0; i < G_N_ELEMENTS (doc_values); i++)
    g_variant_unref (doc_values[i]);
  g_log_set_default_handler (g_log_default_handler, NULL);
}

int
main (int argc, char **argv)
{
  /* A data dir of our own, set before GLib first reads it (G_TEST_OPTION_ISOLATE_DIRS would
   * do it per test, but GLib keeps every earlier test's strings, which LeakSanitizer reports). */
  g_autofree char *data_home = g_dir_make_tmp ("limen-import-XXXXXX", NULL);
  int r;

  g_setenv ("XDG_DATA_HOME", data_home, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/documents-import/parse-layouts", test_parse_layouts);
  g_test_add_func ("/documents-import/parse-refusals", test_parse_refusals);
  g_test_add_func ("/documents-import/upgrade-from-the-unrecorded-import", test_upgrade_from_the_unrecorded_import);
  g_test_add_func ("/documents-import/in-steps", test_import_in_steps);
  r = g_test_run ();
  remove_tree (data_home);
  return r;
}
