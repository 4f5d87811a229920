/* Unit tests of limen-documents' reads on demand (issue 44): the permission store and the
 * document model answer from SQLite as it is now, keep in memory only what someone holds
 * or SQLite lacks, and the import runs in steps from the main loop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>

#include "db.h"
#include "doc-model.h"
#include "perm-store.h"

static char *tmpdir;

static LimenDb *
open_db (const char *name)
{
  g_autofree char *path = g_build_filename (tmpdir, name, NULL);
  g_autoptr(GError) error = NULL;
  LimenDb *db = limen_db_open (path, &error);

  g_assert_no_error (error);
  return db;
}

static void
keep_row (const char *table, const char *id, GVariant *data, GVariant *perms, gpointer user_data)
{
  GVariant **row = user_data;

  row[0] = data ? g_variant_ref (data) : NULL;
  row[1] = g_variant_ref (perms);
}

/* Rows written to SQLite after the store was made are what it answers: nothing was loaded
 * at start (before issue 44 the store answered from a copy made then). */
static void
test_perm_store_reads_sqlite (void)
{
  LimenDb *db = open_db ("perms.sqlite");
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) perms = g_variant_ref_sink (g_variant_new_parsed ("{'org.a.App': ['yes']}"));
  g_autoptr(GVariant) yes = g_variant_ref_sink (g_variant_new_boolean (TRUE));
  GVariant *row[2] = { NULL, NULL };
  LimenPermStore *store = limen_perm_store_new (db, &error);

  g_assert_no_error (error);
  g_assert_false (limen_perm_store_has_entry (store, "t", "e1"));
  g_assert_true (limen_db_perm_put_entry (db, "t", "e1", NULL, perms, &error));
  g_assert_true (limen_perm_store_has_entry (store, "t", "e1"));

  /* A write through the store keeps what SQLite had. */
  g_assert_true (limen_perm_store_import_entry (store, "t", "e1", yes, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (limen_db_perm_load (db, keep_row, row, &error));
  g_assert_true (g_variant_equal (row[1], perms));
  g_assert_true (g_variant_get_boolean (row[0]));
  g_variant_unref (row[0]);
  g_variant_unref (row[1]);

  g_assert_true (limen_db_perm_delete_entry (db, "t", "e1", &error));
  g_assert_false (limen_perm_store_has_entry (store, "t", "e1"));
  limen_perm_store_free (store);
  limen_db_close (db);
}

static void
put_doc (LimenDb *db, const char *id, const char *path, guint perms)
{
  g_autoptr(GError) error = NULL;
  LimenDbDoc row = { .id = id, .path = path, .dev = 1, .ino = 2 };

  g_assert_true (limen_db_begin (db, &error));
  g_assert_true (limen_db_doc_put (db, &row, &error));
  g_assert_true (limen_db_doc_put_perms (db, id, "org.a.App", perms, &error));
  g_assert_true (limen_db_commit (db, &error));
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Run the main loop past the model's sweeps: a document read is dropped at the second sweep
 * after the last time it was asked for (a sweep a second). */
static void
run_past_sweep (void)
{
  gboolean done = FALSE;

  g_timeout_add (2500, set_flag, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

static gboolean
has_app (GPtrArray *apps, const char *app)
{
  for (guint i = 0; i < apps->len; i++)
    if (g_str_equal (apps->pdata[i], app))
      return TRUE;
  return FALSE;
}

/* Documents are found by id, path and app in SQLite as it is now; one no one holds is
 * dropped after a moment (read again, it shows SQLite's newer row), one held stays the
 * object its holder has. */
static void
test_doc_model_reads_sqlite (void)
{
  LimenDb *db = open_db ("docs.sqlite");
  g_autoptr(GError) error = NULL;
  LimenDocModel *model = limen_doc_model_new (db, &error);
  g_autoptr(LimenDoc) held = NULL;
  g_autoptr(GPtrArray) list = NULL;
  g_autoptr(GPtrArray) apps = NULL;
  LimenDoc *doc;

  g_assert_no_error (error);
  g_assert_null (limen_doc_model_lookup (model, "aaaa"));
  put_doc (db, "aaaa", "/tmp/a.txt", LIMEN_DOC_PERM_READ);
  put_doc (db, "bbbb", "/tmp/b.txt", LIMEN_DOC_PERM_READ);

  doc = limen_doc_model_lookup (model, "aaaa");
  g_assert_nonnull (doc);
  g_assert_cmpuint (limen_doc_get_perms (doc, "org.a.App"), ==, LIMEN_DOC_PERM_READ);
  g_assert_true (limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_PERSISTENT);
  held = limen_doc_model_find_by_path (model, "/tmp/b.txt");
  g_assert_nonnull (held);
  g_assert_cmpstr (limen_doc_get_id (held), ==, "bbbb");
  list = limen_doc_model_list (model, "org.a.App");
  g_assert_cmpuint (list->len, ==, 2);
  apps = limen_doc_model_list_apps (model);
  g_assert_true (has_app (apps, "org.a.App"));
  limen_doc_unref (doc);
  g_clear_pointer (&list, g_ptr_array_unref);

  /* SQLite changes behind the model's back (as only a test does). */
  put_doc (db, "aaaa", "/tmp/a.txt", LIMEN_DOC_PERM_WRITE);
  put_doc (db, "bbbb", "/tmp/b.txt", LIMEN_DOC_PERM_WRITE);
  run_past_sweep ();
  doc = limen_doc_model_lookup (model, "aaaa");
  g_assert_cmpuint (limen_doc_get_perms (doc, "org.a.App"), ==, LIMEN_DOC_PERM_WRITE);
  limen_doc_unref (doc);
  doc = limen_doc_model_lookup (model, "bbbb");
  g_assert_true (doc == held);
  g_assert_cmpuint (limen_doc_get_perms (doc, "org.a.App"), ==, LIMEN_DOC_PERM_READ);
  limen_doc_unref (doc);

  /* A change through the model is what serves, stored or not yet. */
  g_assert_true (limen_doc_model_set_perms (model, held, "org.b.App", LIMEN_DOC_PERM_ALL, &error));
  g_clear_pointer (&held, limen_doc_unref);
  run_past_sweep ();
  doc = limen_doc_model_lookup (model, "bbbb");
  g_assert_cmpuint (limen_doc_get_perms (doc, "org.b.App"), ==, LIMEN_DOC_PERM_ALL);
  limen_doc_unref (doc);
  limen_doc_model_free (model);
  limen_db_close (db);
}

/* The one-time import stands in: on the main thread, it brings in "cccc" (only). */
typedef struct {
  LimenDb   *db;
  GPtrArray *asked;
} FakeImport;

static void
fake_miss (const char *id, const char *path, gpointer user_data)
{
  FakeImport *fake = user_data;

  g_assert_true (g_main_context_is_owner (g_main_context_default ()));
  g_ptr_array_add (fake->asked, g_strdup (id ? id : "(all)"));
  if (id && g_str_equal (id, "cccc"))
    put_doc (fake->db, "cccc", "/tmp/c.txt", LIMEN_DOC_PERM_READ);
}

typedef struct {
  LimenDocModel *model;
  const char    *id;
  gboolean       waiting;   /* limen_doc_model_lookup_waiting(), else the plain lookup */
  gint64         took_us;
  LimenDoc      *found;
  gint           done;
} Lookup;

static gpointer
lookup_thread (gpointer data)
{
  Lookup *l = data;
  gint64 start = g_get_monotonic_time ();

  l->found = l->waiting ? limen_doc_model_lookup_waiting (l->model, l->id) : limen_doc_model_lookup (l->model, l->id);
  l->took_us = g_get_monotonic_time () - start;
  g_atomic_int_set (&l->done, 1);
  g_main_context_wakeup (NULL);
  return NULL;
}

static void
run_lookups (Lookup *lookups, guint n, gboolean iterate)
{
  GThread *threads[8];

  g_assert_cmpuint (n, <=, G_N_ELEMENTS (threads));
  for (guint i = 0; i < n; i++)
    threads[i] = g_thread_new ("lookup", lookup_thread, &lookups[i]);
  for (guint i = 0; i < n; i++)
    {
      while (iterate && !g_atomic_int_get (&lookups[i].done))
        g_main_context_iteration (NULL, TRUE);
      g_thread_join (threads[i]);
    }
}

/* While the import runs, a FUSE worker's lookup of a document it has not reached is served
 * by the main thread, which alone imports; the worker waits for that, not for a timeout. A
 * plain lookup from a worker does not ask; once the main thread stops serving, no one waits. */
static void
test_doc_model_workers_wait_for_the_import (void)
{
  LimenDb *db = open_db ("waiting.sqlite");
  g_autoptr(GError) error = NULL;
  LimenDocModel *model = limen_doc_model_new (db, &error);
  FakeImport fake = { db, g_ptr_array_new_with_free_func (g_free) };
  Lookup lookups[] = {
    { model, "cccc", TRUE }, { model, "dddd", TRUE }, { model, "eeee", FALSE },
  };
  Lookup after[] = { { model, "ffff", TRUE } };

  g_assert_no_error (error);
  limen_doc_model_set_miss_func (model, fake_miss, &fake);
  g_assert_true (limen_doc_model_importing (model));
  run_lookups (lookups, G_N_ELEMENTS (lookups), TRUE);
  g_assert_nonnull (lookups[0].found);
  g_assert_cmpstr (limen_doc_get_id (lookups[0].found), ==, "cccc");
  g_assert_null (lookups[1].found);
  g_assert_null (lookups[2].found);
  for (guint i = 0; i < 2; i++)
    g_assert_cmpint (lookups[i].took_us, <, 2 * G_USEC_PER_SEC);
  g_assert_cmpuint (fake.asked->len, ==, 2);
  g_assert_false (g_ptr_array_find_with_equal_func (fake.asked, "eeee", g_str_equal, NULL));
  g_clear_pointer (&lookups[0].found, limen_doc_unref);

  /* The main thread leaving (it does not iterate here): the worker does not wait. */
  limen_doc_model_stop_waiting (model);
  run_lookups (after, 1, FALSE);
  g_assert_null (after[0].found);
  g_assert_cmpint (after[0].took_us, <, 2 * G_USEC_PER_SEC);

  limen_doc_model_set_miss_func (model, NULL, NULL);
  g_assert_false (limen_doc_model_importing (model));
  g_ptr_array_unref (fake.asked);
  limen_doc_model_free (model);
  limen_db_close (db);
}

int
main (int argc, char **argv)
{
  int r;

  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("limen-docs-lazy-XXXXXX", NULL);
  g_test_add_func ("/documents/perm-store-reads-sqlite", test_perm_store_reads_sqlite);
  g_test_add_func ("/documents/doc-model-reads-sqlite", test_doc_model_reads_sqlite);
  g_test_add_func ("/documents/doc-model-workers-wait-for-the-import", test_doc_model_workers_wait_for_the_import);
  r = g_test_run ();
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
    (void) system (cmd);
  }
  return r;
}
