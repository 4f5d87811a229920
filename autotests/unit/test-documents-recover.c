/* The document store's database after damage (document-fuse/db-recover.c, db.c): a damaged
 * file is moved aside and the store starts from its copy, or from nothing when the copy is
 * damaged too, never refusing to start; the damaged files are kept.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "db.h"

static char *tmpdir;

static void
count_doc (const LimenDbDoc *doc, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
ignore_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
}

static guint
n_docs (LimenDb *db)
{
  g_autoptr(GError) error = NULL;
  guint n = 0;

  g_assert_true (limen_db_doc_load (db, count_doc, ignore_perm, &n, &error));
  g_assert_no_error (error);
  return n;
}

static void
put_docs (LimenDb *db, guint n)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (limen_db_begin (db, &error));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("doc%u", i);
      LimenDbDoc row = { .id = id, .path = "/home/u/file", .dev = 1, .ino = i };

      g_assert_true (limen_db_doc_put (db, &row, &error));
    }
  g_assert_true (limen_db_commit (db, &error));
  g_assert_no_error (error);
}

static guint
count_prefixed (const char *prefix)
{
  g_autoptr(GDir) dir = g_dir_open (tmpdir, 0, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (dir)))
    n += g_str_has_prefix (name, prefix);
  return n;
}

/* Garbage over the first page: SQLite no longer takes the file for a database. */
static void
damage (const char *path)
{
  FILE *f = fopen (path, "r+b");
  char junk[4096];

  g_assert_nonnull (f);
  for (gsize i = 0; i < sizeof junk; i++)
    junk[i] = (char) g_random_int ();
  g_assert_cmpuint (fwrite (junk, 1, sizeof junk, f), ==, sizeof junk);
  fclose (f);
}

/* A database with @n documents whose copy was made at a quiet moment, closed. */
static void
make_with_copy (const char *path, guint n)
{
  g_autofree char *backup = g_strconcat (path, ".backup", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db = limen_db_open (path, &error);
  gint64 start = g_get_monotonic_time ();

  g_assert_no_error (error);
  put_docs (db, n);
  /* The quiet moment comes about a second after the last change. */
  while (!g_file_test (backup, G_FILE_TEST_EXISTS) && g_get_monotonic_time () - start < 20 * G_USEC_PER_SEC)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (g_file_test (backup, G_FILE_TEST_EXISTS));
  limen_db_close (db);
}

static void
test_recover_from_copy (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "a.sqlite", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db;

  make_with_copy (path, 25);
  damage (path);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*a.sqlite is damaged*starting from its copy*");
  db = limen_db_open (path, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpuint (n_docs (db), ==, 25);
  /* And it goes on taking changes. */
  put_docs (db, 30);
  limen_db_close (db);
  g_assert_cmpuint (count_prefixed ("a.sqlite.damaged-"), ==, 1);
}

static void
test_recover_copy_damaged_too (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "b.sqlite", NULL);
  g_autofree char *backup = g_strconcat (path, ".backup", NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db;

  make_with_copy (path, 5);
  damage (path);
  damage (backup);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*b.sqlite is damaged*starting from its copy*");
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*b.sqlite.backup is damaged as well*");
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*b.sqlite is damaged*no copy to start from*");
  db = limen_db_open (path, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpuint (n_docs (db), ==, 0);
  limen_db_close (db);
  /* The original, the copy put in its place, and the copy itself: all kept. */
  g_assert_cmpuint (count_prefixed ("b.sqlite.damaged-"), ==, 2);
  g_assert_cmpuint (count_prefixed ("b.sqlite.backup.damaged-"), ==, 1);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("limen-recover-XXXXXX", NULL);
  g_test_add_func ("/documents/recover/from-copy", test_recover_from_copy);
  g_test_add_func ("/documents/recover/copy-damaged-too", test_recover_copy_damaged_too);
  ret = g_test_run ();
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
  if (system (cmd) != 0)
    g_printerr ("could not remove %s\n", tmpdir);
  return ret;
}
