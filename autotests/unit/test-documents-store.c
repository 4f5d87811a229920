/* Unit tests of limen-documents' store pieces: SQLite schema and reopen, name validation,
 * permission strings, and the GVDB reader on good, truncated and random input.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "db.h"
#include "errors.h"
#include "doc-model.h"
#include "gvdb-reader.h"
#include "perm-store.h"

static char *tmpdir;

static void
test_names (void)
{
  g_assert_true (limen_perm_table_name_is_valid ("devices"));
  g_assert_true (limen_perm_table_name_is_valid ("desktop-used-apps"));
  g_assert_false (limen_perm_table_name_is_valid (""));
  g_assert_false (limen_perm_table_name_is_valid ("a/b"));
  g_assert_false (limen_perm_table_name_is_valid ("../../../x"));
  g_assert_false (limen_perm_table_name_is_valid (".."));
  g_assert_false (limen_perm_table_name_is_valid ("a\nb"));
  g_assert_true (limen_perm_id_is_valid ("text/plain"));
  g_assert_true (limen_perm_id_is_valid ("camera"));
  g_assert_false (limen_perm_id_is_valid ("a/../b"));
  g_assert_false (limen_perm_id_is_valid ("/etc/passwd"));
  g_assert_false (limen_perm_id_is_valid (""));
  g_assert_true (limen_doc_id_is_valid ("1a2b3c4d"));
  g_assert_true (limen_doc_id_is_valid ("0123456789abcdefghij"));
  g_assert_false (limen_doc_id_is_valid ("../x"));
  g_assert_false (limen_doc_id_is_valid (""));
}

static void
test_perm_strings (void)
{
  const char *good[] = { "read", "write", "grant-permissions", "delete", NULL };
  const char *bad[] = { "read", "fly", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree const char **names = NULL;
  guint bits = 0;

  g_assert_true (limen_doc_perms_from_strv (good, "permissions", &bits, NULL));
  g_assert_cmpuint (bits, ==, LIMEN_DOC_PERM_ALL);
  g_assert_false (limen_doc_perms_from_strv (bad, "permissions", &bits, &error));
  g_assert_nonnull (strstr (error->message, "permissions"));
  names = limen_doc_perms_to_strv (LIMEN_DOC_PERM_READ | LIMEN_DOC_PERM_DELETE);
  g_assert_cmpstr (names[0], ==, "read");
  g_assert_cmpstr (names[1], ==, "delete");
  g_assert_null (names[2]);
}

static void
count_entry (const char *table, const char *id, GVariant *data, GVariant *perms, gpointer user_data)
{
  (*(int *) user_data)++;
  g_assert_cmpstr (table, ==, "t");
  g_assert_true (g_variant_is_of_type (perms, G_VARIANT_TYPE ("a{sas}")));
}

static void
test_db_reopen (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "db.sqlite", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) perms = g_variant_ref_sink (g_variant_new_parsed ("{'org.a.App': ['yes']}"));
  g_autoptr(GVariant) empty = g_variant_ref_sink (g_variant_new_parsed ("@a{sas} {}"));
  LimenDb *db = limen_db_open (path, &error);
  int n = 0;

  g_assert_no_error (error);
  g_assert_true (limen_db_begin (db, &error));
  g_assert_true (limen_db_perm_put_entry (db, "t", "one", NULL, perms, &error));
  g_assert_true (limen_db_perm_put_entry (db, "t", "two", g_variant_new_boolean (TRUE), empty, &error));
  g_assert_true (limen_db_commit (db, &error));
  g_assert_true (limen_db_set_meta (db, "k", "v", &error));
  limen_db_close (db);

  db = limen_db_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (limen_db_perm_load (db, count_entry, &n, &error));
  g_assert_cmpint (n, ==, 2);
  g_autofree char *meta = limen_db_get_meta (db, "k");
  g_assert_cmpstr (meta, ==, "v");
  limen_db_close (db);
}

static void
keep_entry (const char *table, const char *id, GVariant *data, GVariant *perms, gpointer user_data)
{
  GPtrArray *kept = user_data;

  g_ptr_array_add (kept, data ? g_variant_ref (data) : NULL);
  g_ptr_array_add (kept, g_variant_ref (perms));
}

/* Rows holding the same data or the same rights are loaded as one shared value (100,000
 * entries with copies of their own took tens of MiB), equal to what was stored. */
static void
test_db_load_shares_values (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "shared.sqlite", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) yes = g_variant_ref_sink (g_variant_new_parsed ("{'org.a.App': ['yes']}"));
  g_autoptr(GVariant) no = g_variant_ref_sink (g_variant_new_parsed ("{'org.b.App': ['no']}"));
  g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  LimenDb *db = limen_db_open (path, &error);

  g_assert_no_error (error);
  g_assert_true (limen_db_begin (db, &error));
  g_assert_true (limen_db_perm_put_entry (db, "t", "a", g_variant_new_boolean (TRUE), yes, &error));
  g_assert_true (limen_db_perm_put_entry (db, "t", "b", g_variant_new_boolean (TRUE), yes, &error));
  g_assert_true (limen_db_perm_put_entry (db, "t", "c", g_variant_new_string ("x"), no, &error));
  g_assert_true (limen_db_commit (db, &error));
  limen_db_close (db);

  db = limen_db_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (limen_db_perm_load (db, keep_entry, kept, &error));
  limen_db_close (db);
  g_assert_cmpuint (kept->len, ==, 6);
  for (guint i = 0; i < 6; i += 2)
    {
      gboolean is_c = g_variant_is_of_type (kept->pdata[i], G_VARIANT_TYPE_STRING);

      g_assert_true (g_variant_equal (kept->pdata[i + 1], is_c ? no : yes));
      for (guint j = 0; j < 6; j += 2)
        if (j != i && !is_c && !g_variant_is_of_type (kept->pdata[j], G_VARIANT_TYPE_STRING))
          {
            g_assert_true (kept->pdata[i] == kept->pdata[j]);
            g_assert_true (kept->pdata[i + 1] == kept->pdata[j + 1]);
          }
    }
}

/* A GVDB file with root {"main": H {"id": v}} written by hand from the format. */
static GBytes *
make_gvdb (GVariant *value)
{
  g_autoptr(GVariant) boxed = g_variant_ref_sink (g_variant_new_variant (value));
  GByteArray *b = g_byte_array_new ();
  guint32 header[6] = { GUINT32_TO_LE (0x72615647), GUINT32_TO_LE (0x746e6169), 0, 0, 0, 0 };
  gsize value_size = g_variant_get_size (boxed);
  /* Layout: header(24) | root table [8 + 1 bucket + 1 item] | main table [8 + 1 bucket + 1 item] | keys | value */
  guint32 root_start = 24, root_end = root_start + 8 + 4 + 24;
  guint32 main_start = root_end, main_end = main_start + 8 + 4 + 24;
  guint32 keys = main_end, value_start = keys + 8;
  guint32 t[3];
  guint8 item[24];

  header[4] = GUINT32_TO_LE (root_start);
  header[5] = GUINT32_TO_LE (root_end);
  g_byte_array_append (b, (guint8 *) header, sizeof header);
  for (int table = 0; table < 2; table++)
    {
      guint32 key_start = keys + (table == 0 ? 0 : 4);
      guint16 key_size = table == 0 ? 4 : 2;
      guint32 start = table == 0 ? main_start : value_start;
      guint32 end = table == 0 ? main_end : value_start + value_size;
      guint32 none = 0xffffffff;

      t[0] = 0;  /* no bloom words */
      t[1] = GUINT32_TO_LE (1);
      t[2] = 0;
      g_byte_array_append (b, (guint8 *) t, sizeof t);
      memset (item, 0, sizeof item);
      memcpy (item + 4, &none, 4);
      memcpy (item + 8, &key_start, 4);
      memcpy (item + 12, &key_size, 2);
      item[14] = table == 0 ? 'H' : 'v';
      memcpy (item + 16, &start, 4);
      memcpy (item + 20, &end, 4);
      g_byte_array_append (b, item, sizeof item);
    }
  g_byte_array_append (b, (const guint8 *) "mainid\0\0", 8);
  g_byte_array_append (b, g_variant_get_data (boxed), value_size);
  return g_byte_array_free_to_bytes (b);
}

/* Plain write: g_file_set_contents() would fsync on every one of thousands of rounds. */
static void
put (const char *path, const void *data, gsize len)
{
  FILE *f = fopen (path, "wb");

  g_assert_nonnull (f);
  g_assert_cmpuint (fwrite (data, 1, len, f), ==, len);
  fclose (f);
}

static void
collect (const char *key, GVariant *value, gpointer user_data)
{
  if (value)
    g_hash_table_insert (user_data, g_strdup (key), g_variant_ref (value));
}

static void
test_gvdb_reader (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "table", NULL);
  g_autoptr(GBytes) bytes = make_gvdb (g_variant_new_parsed ("(<'data'>, {'org.a.App': ['yes']})"));
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenGvdb) db = NULL;
  g_autoptr(LimenGvdb) main_table = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                      (GDestroyNotify) g_variant_unref);
  g_autoptr(GVariant) v = NULL;
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  g_assert_true (g_file_set_contents (path, (const char *) data, len, NULL));
  db = limen_gvdb_open (path, &error);
  g_assert_no_error (error);
  main_table = limen_gvdb_get_table (db, "main");
  g_assert_nonnull (main_table);
  limen_gvdb_foreach (main_table, collect, seen);
  g_assert_cmpuint (g_hash_table_size (seen), ==, 1);
  v = limen_gvdb_get_value (main_table, "id");
  g_assert_nonnull (v);
  g_assert_true (g_variant_is_of_type (v, G_VARIANT_TYPE ("(va{sas})")));

  /* Every truncation and random corruption is refused or read safely, never a crash. */
  for (gsize cut = 0; cut < len; cut++)
    {
      g_autoptr(LimenGvdb) t = NULL;
      g_autoptr(LimenGvdb) m = NULL;

      put (path, data, cut);
      t = limen_gvdb_open (path, NULL);
      if (t && (m = limen_gvdb_get_table (t, "main")))
        limen_gvdb_foreach (m, collect, seen);
    }
  for (int round = 0; round < 2000; round++)
    {
      g_autofree guint8 *copy = g_memdup2 (data, len);
      g_autoptr(LimenGvdb) t = NULL;
      g_autoptr(LimenGvdb) m = NULL;

      for (int k = 0; k < 4; k++)
        copy[g_random_int_range (24, len)] = g_random_int ();
      put (path, copy, len);
      t = limen_gvdb_open (path, NULL);
      if (t && (m = limen_gvdb_get_table (t, "main")))
        limen_gvdb_foreach (m, collect, seen);
    }
  g_assert_true (g_file_set_contents (path, "not a gvdb", -1, NULL));
  g_clear_error (&error);
  g_assert_null (limen_gvdb_open (path, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL);
}

/* The one-walk serializer writes exactly what g_variant_store() writes, across every
 * offset width (entries and the array crossing 255, 65535 bytes), empty permission lists,
 * empty strings and the empty array, and refuses what the store's limits refuse. */
static void
test_serialize_app_perms (void)
{
  static const gsize counts[] = { 0, 1, 2, 7, 40, 300, 3000, 20000 };
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);

  for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
    for (guint form = 0; form < 2; form++)
      {
        GVariantBuilder b;
        g_autoptr(GVariant) apps = NULL;
        g_autoptr(GBytes) ours = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree guint8 *ref = NULL;
        gsize size;

        g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
        for (gsize i = 0; i < counts[c]; i++)
          {
            g_autofree char *app = g_strdup_printf ("org.example.App%" G_GSIZE_FORMAT "%s", i,
                                                    i % 13 == 0 ? "" : ".Long.Name.Part");
            g_autoptr(GPtrArray) perms = g_ptr_array_new_with_free_func (g_free);
            guint n = g_rand_int_range (rand, 0, i % 97 == 5 ? 200 : 4);

            for (guint j = 0; j < n; j++)
              g_ptr_array_add (perms, g_strnfill (g_rand_int_range (rand, 0, i % 89 == 3 ? 250 : 6), 'a' + j % 26));
            g_ptr_array_add (perms, NULL);
            g_variant_builder_add (&b, "{s^as}", i == 1 ? "" : app, (char **) perms->pdata);
          }
        apps = g_variant_ref_sink (g_variant_builder_end (&b));
        if (form == 1)
          {
            /* Serialized form, as entries loaded from the database are. */
            g_autoptr(GBytes) data = g_bytes_new (g_variant_get_data (apps), g_variant_get_size (apps));
            GVariant *copy = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("a{sas}"), data, FALSE));

            g_variant_unref (apps);
            apps = copy;
          }
        size = g_variant_get_size (apps);
        ref = g_malloc (MAX (size, 1));
        g_variant_store (apps, ref);
        ours = limen_perm_serialize_app_perms (apps, &error);
        g_assert_no_error (error);
        g_assert_cmpmem (g_bytes_get_data (ours, NULL), g_bytes_get_size (ours), ref, size);
      }

  {
    const char *too_many[258];
    g_autofree char *long_perm = g_strnfill (257, 'p');
    g_autofree char *long_app = g_strnfill (1025, 'a');
    const char *one[] = { long_perm, NULL };
    const char *yes[] = { "yes", NULL };
    struct { const char *app; const char * const *perms; } bad[] = {
      { "org.example.A", one }, { long_app, yes }, { "org.example.B", too_many },
    };

    for (guint i = 0; i < 257; i++)
      too_many[i] = "x";
    too_many[257] = NULL;
    for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        GVariantBuilder b;
        g_autoptr(GVariant) apps = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GBytes) bytes = NULL;

        g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
        g_variant_builder_add (&b, "{s^as}", "org.example.Fine", yes);
        g_variant_builder_add (&b, "{s^as}", bad[i].app, bad[i].perms);
        apps = g_variant_ref_sink (g_variant_builder_end (&b));
        bytes = limen_perm_serialize_app_perms (apps, &error);
        g_assert_null (bytes);
        g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
      }
  }
}

/* Make every getrandom() of this process fail with EIO (a seccomp filter). */
static void
deny_getrandom (void)
{
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_getrandom, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { G_N_ELEMENTS (filter), filter };

  g_assert_cmpint (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), ==, 0);
  g_assert_cmpint (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), ==, 0);
}

/* Ids come from a pool refilled every 32 documents: across refills they stay valid, 20
 * characters long, and all different. */
static void
test_ids_across_pool_refills (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "ids.sqlite", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  LimenDb *db = limen_db_open (path, &error);
  LimenDocModel *model;

  g_assert_no_error (error);
  model = limen_doc_model_new (db, &error);
  g_assert_no_error (error);
  for (int i = 0; i < 200; i++)
    {
      g_autofree char *file = g_strdup_printf ("/tmp/ids-file-%d", i);
      LimenDoc *doc = limen_doc_model_add (model, file, 1, 1000 + i, 0, NULL, 0, &error);
      const char *id;

      g_assert_no_error (error);
      id = limen_doc_get_id (doc);
      g_assert_true (limen_doc_id_is_valid (id));
      g_assert_cmpuint (strlen (id), ==, 20);
      g_assert_true (g_hash_table_add (seen, g_strdup (id)));
      limen_doc_unref (doc);
    }
  limen_doc_model_free (model);
  limen_db_close (db);
}

/* No random numbers for a document id is an error for the caller, never an abort. */
static void
test_add_without_random (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *path = g_build_filename (tmpdir, "norandom.sqlite", NULL);
      g_autoptr(GError) error = NULL;
      LimenDb *db = limen_db_open (path, &error);
      LimenDocModel *model;
      LimenDoc *doc;

      /* The daemon logs the failure as a warning: expected here, not fatal. */
      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      g_assert_no_error (error);
      model = limen_doc_model_new (db, &error);
      g_assert_no_error (error);
      deny_getrandom ();
      doc = limen_doc_model_add (model, "/tmp/some-file", 1, 2, 0, NULL, 0, &error);
      g_assert_null (doc);
      g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*getrandom*");
}

int
main (int argc, char **argv)
{
  int r;

  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("limen-docs-XXXXXX", NULL);
  g_test_add_func ("/documents/names", test_names);
  g_test_add_func ("/documents/perm-strings", test_perm_strings);
  g_test_add_func ("/documents/db-reopen", test_db_reopen);
  g_test_add_func ("/documents/db-load-shares-values", test_db_load_shares_values);
  g_test_add_func ("/documents/serialize-app-perms", test_serialize_app_perms);
  g_test_add_func ("/documents/ids-across-pool-refills", test_ids_across_pool_refills);
  g_test_add_func ("/documents/gvdb-reader", test_gvdb_reader);
  g_test_add_func ("/documents/add-without-random", test_add_without_random);
  r = g_test_run ();
  {
    g_autoptr(GDir) d = g_dir_open (tmpdir, 0, NULL);
    const char *n;

    while (d && (n = g_dir_read_name (d)))
      {
        g_autofree char *p = g_build_filename (tmpdir, n, NULL);
        g_unlink (p);
      }
    g_rmdir (tmpdir);
  }
  return r;
}
