/* The journal of answered document changes (document-fuse/db-journal.c, db.c): what a
 * journaled transaction committed survives a crash of the process, a torn write at the end
 * is ignored, and a change SQLite already has is never applied again over later ones.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-journal.h"
#include "db.h"

static char *tmpdir;

typedef struct {
  GHashTable *docs;    /* id → path */
  GHashTable *perms;   /* "id app" → perms */
  GHashTable *handles; /* id → handle size */
} Loaded;

static void
on_doc (const LimenDbDoc *doc, gpointer user_data)
{
  Loaded *l = user_data;

  g_hash_table_insert (l->docs, g_strdup (doc->id), g_strdup (doc->path));
  g_hash_table_insert (l->handles, g_strdup (doc->id), GSIZE_TO_POINTER (doc->handle ? g_bytes_get_size (doc->handle) : 0));
}

static void
on_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
  Loaded *l = user_data;

  g_hash_table_insert (l->perms, g_strdup_printf ("%s %s", doc_id, app), GUINT_TO_POINTER (perms));
}

static Loaded *
load (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenDb) db = limen_db_open (path, &error);
  Loaded *l = g_new0 (Loaded, 1);

  g_assert_no_error (error);
  l->docs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  l->perms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  l->handles = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_assert_true (limen_db_doc_load (db, on_doc, on_perm, l, &error));
  g_assert_no_error (error);
  return l;
}

static void
loaded_free (Loaded *l)
{
  g_hash_table_unref (l->docs);
  g_hash_table_unref (l->perms);
  g_hash_table_unref (l->handles);
  g_free (l);
}

/* The files of the database at @from as they are now (what a crash leaves) under @to. */
static void
snapshot (const char *from, const char *to)
{
  static const char *suffixes[] = { "", "-wal", "-pending" };

  for (gsize i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *src = g_strconcat (from, suffixes[i], NULL);
      g_autofree char *dst = g_strconcat (to, suffixes[i], NULL);
      g_autofree char *data = NULL;
      gsize len = 0;

      if (g_file_get_contents (src, &data, &len, NULL))
        g_assert_true (g_file_set_contents (dst, data, len, NULL));
    }
}

static void
put_doc (LimenDb *db, const char *id, const char *path, const char *app, guint perms)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) handle = g_bytes_new_static ("12345678", 8);
  LimenDbDoc row = { .id = id, .path = path, .dev = 7, .ino = 42, .handle_type = 1, .handle = handle };

  g_assert_true (limen_db_begin_journaled (db, &error));
  g_assert_true (limen_db_doc_put (db, &row, &error));
  if (app)
    g_assert_true (limen_db_doc_put_perms (db, id, app, perms, &error));
  g_assert_true (limen_db_commit (db, &error));
  g_assert_no_error (error);
}

static gsize
file_size (const char *path)
{
  GStatBuf st;

  return g_stat (path, &st) == 0 ? (gsize) st.st_size : 0;
}

static gboolean
on_deadline (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Run the default main context for about @ms milliseconds. */
static void
spin (guint ms)
{
  gboolean done = FALSE;

  g_timeout_add (ms, on_deadline, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* When SQLite takes the journal over: not within a burst of changes (the answers of a burst
 * wait for no SQLite transaction), once the changes stop, and during a steady stream at the
 * latest a couple of seconds after the oldest. Only the order of events is checked, with
 * wide margins: a loaded machine only makes the stream slower. */
static void
test_journal_flushed_when_quiet (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "q.sqlite", NULL);
  g_autofree char *pending = g_strconcat (path, "-pending", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db = limen_db_open (path, &error);
  gint64 start;
  gboolean flushed_during_stream = FALSE;
  Loaded *l;

  g_assert_no_error (error);
  for (int i = 0; i < 20; i++)
    {
      g_autofree char *id = g_strdup_printf ("burst%d", i);

      put_doc (db, id, "/home/u/burst", NULL, 0);
    }
  /* Right after the burst, everything is still in the journal. */
  g_assert_cmpuint (file_size (pending), >, 0);
  /* Once nothing more comes, the database takes it over (the journal is emptied). */
  start = g_get_monotonic_time ();
  while (file_size (pending) > 0 && g_get_monotonic_time () - start < 10 * G_USEC_PER_SEC)
    spin (50);
  g_assert_cmpuint (file_size (pending), ==, 0);

  /* A change every 20 ms for a second: none taken over while the changes keep coming (so
   * long as no gap between two of them, on a loaded machine, came near the quiet time). */
  {
    gint64 last = g_get_monotonic_time (), longest_gap = 0;
    gboolean flushed = FALSE;

    start = last;
    for (int i = 0; g_get_monotonic_time () - start < G_USEC_PER_SEC; i++)
      {
        g_autofree char *id = g_strdup_printf ("steady%d", i);
        gint64 now;

        put_doc (db, id, "/home/u/steady", NULL, 0);
        now = g_get_monotonic_time ();
        longest_gap = MAX (longest_gap, now - last);
        last = now;
        spin (20);
        flushed = flushed || file_size (pending) == 0;
      }
    if (longest_gap < 150 * 1000 && g_get_monotonic_time () - start < 1800 * 1000)
      g_assert_false (flushed);
    else
      g_test_message ("inconclusive: a gap of %" G_GINT64_FORMAT " us", longest_gap);
  }

  /* A change every 20 ms for six seconds: never quiet, yet taken over meanwhile. */
  start = g_get_monotonic_time ();
  for (int i = 0; g_get_monotonic_time () - start < 6 * G_USEC_PER_SEC; i++)
    {
      g_autofree char *id = g_strdup_printf ("stream%d", i);

      put_doc (db, id, "/home/u/stream", NULL, 0);
      spin (20);
      if (i > 0 && file_size (pending) == 0)
        flushed_during_stream = TRUE;
    }
  g_assert_true (flushed_during_stream);
  limen_db_close (db);

  l = load (path);
  g_assert_true (g_hash_table_contains (l->docs, "burst19"));
  g_assert_true (g_hash_table_contains (l->docs, "stream0"));
  loaded_free (l);
}

static void
test_journal_survives_crash (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "a.sqlite", NULL);
  g_autofree char *copy = g_build_filename (tmpdir, "a-crash.sqlite", NULL);
  g_autofree char *pending = g_strconcat (copy, "-pending", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db = limen_db_open (path, &error);
  Loaded *l;
  FILE *f;

  g_assert_no_error (error);
  put_doc (db, "doc1", "/home/u/one", "org.example.App", 3);
  put_doc (db, "doc2", "/home/u/two", NULL, 0);
  /* The process dies here: the database never took the journal over. */
  snapshot (path, copy);
  limen_db_close (db);

  /* A write torn by the crash after them is ignored. */
  f = fopen (pending, "a");
  g_assert_nonnull (f);
  fwrite ("\x40\0\0\0\1\2\3\4torn", 1, 12, f);
  fclose (f);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "Ignoring a damaged end of*");
  l = load (copy);
  g_test_assert_expected_messages ();
  g_assert_cmpstr (g_hash_table_lookup (l->docs, "doc1"), ==, "/home/u/one");
  g_assert_cmpstr (g_hash_table_lookup (l->docs, "doc2"), ==, "/home/u/two");
  g_assert_cmpuint (GPOINTER_TO_SIZE (g_hash_table_lookup (l->handles, "doc1")), ==, 8);
  g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (l->perms, "doc1 org.example.App")), ==, 3);
  loaded_free (l);

  /* A clean close leaves everything in the database and the journal empty. */
  l = load (path);
  g_assert_cmpuint (g_hash_table_size (l->docs), ==, 2);
  loaded_free (l);
}

static void
test_journal_applied_once (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "b.sqlite", NULL);
  g_autofree char *journal_path = g_strconcat (path, "-pending", NULL);
  g_autofree char *stale = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  gsize stale_len = 0;
  LimenDb *db = limen_db_open (path, &error);
  Loaded *l;

  g_assert_no_error (error);
  put_doc (db, "doc1", "/home/u/one", "org.example.App", 1);
  /* Keep the frame as it was, as if emptying the journal had failed. */
  g_assert_true (g_file_get_contents (journal_path, &stale, &stale_len, NULL));
  g_assert_cmpuint (stale_len, >, 0);
  /* Any other write puts the journal's changes into SQLite first, in order. */
  g_assert_true (limen_db_begin (db, &error));
  g_assert_true (limen_db_doc_delete (db, "doc1", &error));
  g_assert_true (limen_db_commit (db, &error));
  limen_db_close (db);

  g_assert_true (g_file_set_contents (journal_path, stale, stale_len, NULL));
  l = load (path);
  /* The deleted document does not come back from the stale frame. */
  g_assert_null (g_hash_table_lookup (l->docs, "doc1"));
  g_assert_cmpuint (g_hash_table_size (l->perms), ==, 0);
  loaded_free (l);

  /* Later transactions get later numbers than the stale one: they are applied. */
  db = limen_db_open (path, &error);
  g_assert_no_error (error);
  put_doc (db, "doc3", "/home/u/three", NULL, 0);
  limen_db_close (db);
  l = load (path);
  g_assert_nonnull (g_hash_table_lookup (l->docs, "doc3"));
  loaded_free (l);
}

static void
test_journal_second_instance (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "c.sqlite", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *first = limen_db_open (path, &error);
  LimenDb *second;
  Loaded *l;

  g_assert_no_error (error);
  put_doc (first, "doc1", "/home/u/one", NULL, 0);
  /* A second instance (--replace) finds what the first answered, and never journals itself. */
  second = limen_db_open (path, &error);
  g_assert_no_error (error);
  put_doc (second, "doc2", "/home/u/two", NULL, 0);
  limen_db_close (second);
  l = load (path);
  g_assert_nonnull (g_hash_table_lookup (l->docs, "doc1"));
  g_assert_nonnull (g_hash_table_lookup (l->docs, "doc2"));
  loaded_free (l);
  limen_db_close (first);
}

static void
test_journal_rollback (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "d.sqlite", NULL);
  g_autofree char *copy = g_build_filename (tmpdir, "d-crash.sqlite", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db = limen_db_open (path, &error);
  LimenDbDoc row = { .id = "doc1", .path = "/home/u/one", .dev = 1, .ino = 2 };
  Loaded *l;

  g_assert_no_error (error);
  /* An AddFull that fails half-way: its rows, nested transactions included, are dropped. */
  g_assert_true (limen_db_begin_journaled (db, &error));
  g_assert_true (limen_db_doc_put (db, &row, &error));
  g_assert_true (limen_db_begin_journaled (db, &error));
  g_assert_true (limen_db_doc_put_perms (db, "doc1", "org.example.App", 1, &error));
  g_assert_true (limen_db_commit (db, &error));
  limen_db_rollback (db);
  /* One that succeeds, with nested transactions: one frame, kept whole. */
  g_assert_true (limen_db_begin_journaled (db, &error));
  row.id = "doc2";
  g_assert_true (limen_db_doc_put (db, &row, &error));
  g_assert_true (limen_db_begin (db, &error));
  g_assert_true (limen_db_doc_put_perms (db, "doc2", "org.example.App", 1, &error));
  g_assert_true (limen_db_commit (db, &error));
  g_assert_true (limen_db_commit (db, &error));
  g_assert_no_error (error);
  snapshot (path, copy);
  limen_db_close (db);

  l = load (copy);
  g_assert_null (g_hash_table_lookup (l->docs, "doc1"));
  g_assert_nonnull (g_hash_table_lookup (l->docs, "doc2"));
  g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (l->perms, "doc2 org.example.App")), ==, 1);
  g_assert_cmpuint (g_hash_table_size (l->perms), ==, 1);
  loaded_free (l);
}

/* A journal whose end a crash or a power cut damaged (a torn multi-page AddFull frame) is cut
 * back to its last good frame when it is opened, before anything is appended: frames written
 * after the damage would never be read, so a second crash would lose every one of them. */
static void
test_journal_damaged_end_then_crash (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "e.sqlite", NULL);
  g_autofree char *copy = g_build_filename (tmpdir, "e-crash.sqlite", NULL);
  g_autofree char *pending = g_strconcat (path, "-pending", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;
  gboolean kept = FALSE;
  LimenDb *db;
  Loaded *l;

  /* The first frame of a run, torn: its header promises more than was written. */
  g_assert_true (g_file_set_contents (pending, "\x00\x40\0\0\1\2\3\4torn frame", 18, NULL));
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "Ignoring a damaged end of*");
  db = limen_db_open (path, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  for (int i = 0; i < 20; i++)
    {
      g_autofree char *id = g_strdup_printf ("after%d", i);

      put_doc (db, id, "/home/u/after", "org.example.App", 1);
    }
  /* The process dies before the database takes the journal over. */
  snapshot (path, copy);
  limen_db_close (db);

  l = load (copy);
  g_assert_cmpuint (g_hash_table_size (l->docs), ==, 20);
  g_assert_cmpuint (g_hash_table_size (l->perms), ==, 20);
  loaded_free (l);
  /* The damaged bytes are kept beside the journal. */
  dir = g_dir_open (tmpdir, 0, NULL);
  while ((name = g_dir_read_name (dir)))
    kept = kept || g_str_has_prefix (name, "e.sqlite-pending.damaged-");
  g_assert_true (kept);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("limen-journal-XXXXXX", NULL);
  g_test_add_func ("/documents/journal/survives-crash", test_journal_survives_crash);
  g_test_add_func ("/documents/journal/applied-once", test_journal_applied_once);
  g_test_add_func ("/documents/journal/second-instance", test_journal_second_instance);
  g_test_add_func ("/documents/journal/rollback", test_journal_rollback);
  g_test_add_func ("/documents/journal/damaged-end-then-crash", test_journal_damaged_end_then_crash);
  g_test_add_func ("/documents/journal/flushed-when-quiet", test_journal_flushed_when_quiet);
  ret = g_test_run ();
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
  if (system (cmd) != 0)
    g_printerr ("could not remove %s\n", tmpdir);
  return ret;
}
