/* limen-documents — journaled transactions: their rows answered once written to the
 * journal (`-pending`, db-journal.c) and taken over by SQLite in one transaction when
 * quiet; the quiet moments' work (the WAL checkpointed empty, a copy of the database).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "db-private.h"

#include "db-recover.h"
#include "errors.h"

/* When the database takes the journal's changes over: once no change has come for
 * JOURNAL_QUIET_MS, so that a burst of Adds (an app exporting files one by one) waits for no
 * SQLite transaction; in a steady stream, at the latest JOURNAL_MAX_AGE_MS after the oldest
 * waiting one; at once when JOURNAL_MAX_PENDING wait (a bound on memory and on the journal's
 * size). The journal keeps them through a crash meanwhile, and everything the store answers
 * comes from memory, so nothing an app sees depends on when this happens. */
#define JOURNAL_QUIET_MS 250
#define JOURNAL_MAX_AGE_MS 2000
#define JOURNAL_MAX_PENDING 1024
#define JOURNAL_SEQ_KEY "journal-applied"

/* The quiet moments' work (the WAL checkpointed empty, a copy of the database) comes once no
 * change has come for IDLE_MS; a copy at most every BACKUP_INTERVAL_MS, so a steady trickle
 * of changes does not copy the file over and over. */
#define IDLE_MS 1000
#define BACKUP_INTERVAL_MS 10000

gboolean
limen_db_begin_journaled (LimenDb *db, GError **error)
{
  if (db->journal == NULL || db->depth > 0)
    return limen_db_begin (db, error);
  db->depth = 1;
  db->failed = FALSE;
  g_clear_pointer (&db->fail_reason, g_free);
  db->journaling = TRUE;
  return TRUE;
}

static guint64
applied_seq (LimenDb *db)
{
  g_autofree char *value = limen_db_get_meta (db, JOURNAL_SEQ_KEY);

  return value ? g_ascii_strtoull (value, NULL, 10) : 0;
}

/* Hand each record of a journaled transaction "(tav)" to @doc_func or @perm_func. */
static void
walk_transaction (GVariant *transaction, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func, gpointer user_data)
{
  g_autoptr(GVariant) records = g_variant_get_child_value (transaction, 1);

  for (gsize i = 0; i < g_variant_n_children (records); i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (records, i);
      g_autoptr(GVariant) record = g_variant_get_variant (boxed);

      if (g_variant_is_of_type (record, G_VARIANT_TYPE (DOC_RECORD_TYPE)))
        {
          g_autoptr(GVariant) handle = NULL;
          g_autoptr(GBytes) bytes = NULL;
          LimenDbDoc doc = { 0 };

          g_variant_get (record, "(&s^&ayttim@ayu)", &doc.id, &doc.path, &doc.dev, &doc.ino, &doc.handle_type,
                         &handle, &doc.flags);
          if (handle)
            doc.handle = bytes = g_variant_get_data_as_bytes (handle);
          doc_func (&doc, user_data);
        }
      else if (g_variant_is_of_type (record, G_VARIANT_TYPE (PERMS_RECORD)))
        {
          const char *id, *app;
          guint perms;

          g_variant_get (record, "(&s&su)", &id, &app, &perms);
          perm_func (id, app, perms, user_data);
        }
      else
        g_warning ("Skipping a journal record of type %s", g_variant_get_type_string (record));
    }
}

static guint64
transaction_seq (GVariant *transaction)
{
  guint64 seq;

  g_variant_get_child (transaction, 0, "t", &seq);
  return seq;
}

static void
apply_doc (const LimenDbDoc *doc, gpointer user_data)
{
  limen_db_sql_doc_put (user_data, doc, NULL);
}

static void
apply_doc_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
  limen_db_sql_doc_put_perms (user_data, doc_id, app, perms, NULL);
}

/* Apply one journaled transaction "(tav)" unless its sequence number says SQLite has it. */
static void
apply_transaction (LimenDb *db, GVariant *transaction, guint64 applied, guint64 *last)
{
  guint64 seq = transaction_seq (transaction);

  if (seq <= applied)
    return;
  walk_transaction (transaction, apply_doc, apply_doc_perm, db);
  *last = MAX (*last, seq);
}

/* The answered transactions the journal holds and SQLite does not have yet (taking them over
 * failed: a full disk, a read-only file), after the database's rows: they are served all the
 * same, and taken over once that works. */
void
limen_db_load_pending (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func, gpointer user_data)
{
  guint64 applied;
  guint n = 0;

  if (db->pending == NULL || db->pending->len == 0)
    return;
  applied = applied_seq (db);
  for (guint i = 0; i < db->pending->len; i++)
    if (transaction_seq (db->pending->pdata[i]) > applied)
      {
        walk_transaction (db->pending->pdata[i], doc_func, perm_func, user_data);
        n++;
      }
  if (n > 0)
    g_message ("%u answered changes are served from the journal until the database takes them over", n);
}

/* Move the answered changes waiting in the journal into SQLite, in one transaction; the
 * sequence number stored with them makes applying any of them twice a no-op. */
gboolean
limen_db_flush_journal (LimenDb *db, GError **error)
{
  guint64 applied, last = 0;
  char value[32];

  if (db->pending == NULL || db->pending->len == 0)
    return TRUE;
  db->failed = FALSE;
  g_clear_pointer (&db->fail_reason, g_free);
  if (!limen_db_step_done (db, db->begin, error))
    return FALSE;
  applied = applied_seq (db);
  for (guint i = 0; i < db->pending->len; i++)
    apply_transaction (db, db->pending->pdata[i], applied, &last);
  if (last > applied)
    {
      g_snprintf (value, sizeof value, "%" G_GUINT64_FORMAT, last);
      limen_db_set_meta (db, JOURNAL_SEQ_KEY, value, NULL);
    }
  if (db->failed || !limen_db_step_done (db, db->commit, NULL))
    {
      if (db->fail_reason == NULL)
        db->fail_reason = g_strdup (sqlite3_errmsg (db->sql));
      sqlite3_exec (db->sql, "ROLLBACK", NULL, NULL, NULL);
      db->failed = FALSE;
      return limen_db_transaction_failed (db, error);
    }
  g_ptr_array_set_size (db->pending, 0);
  if (db->journal)
    {
      g_autoptr(GError) local_error = NULL;

      /* Harmless if it fails: the sequence numbers keep these from being applied again. */
      if (!limen_db_journal_clear (db->journal, &local_error))
        g_warning ("%s", local_error->message);
    }
  return TRUE;
}

static gboolean
on_flush_due (gpointer user_data)
{
  LimenDb *db = user_data;
  g_autoptr(GError) error = NULL;
  gint64 now = g_get_monotonic_time ();

  if (db->depth > 0)
    {
      /* Runs between calls only: try again shortly. */
      g_source_set_ready_time (db->flush_source, now + 10 * 1000);
      return G_SOURCE_CONTINUE;
    }
  /* Changes still coming: wait for a quiet moment, unless the oldest has waited long enough. */
  if (now - db->last_pending_us < JOURNAL_QUIET_MS * 1000 && now - db->first_pending_us < JOURNAL_MAX_AGE_MS * 1000)
    {
      g_source_set_ready_time (db->flush_source, MIN (db->last_pending_us + JOURNAL_QUIET_MS * 1000,
                                                      db->first_pending_us + JOURNAL_MAX_AGE_MS * 1000));
      return G_SOURCE_CONTINUE;
    }
  g_clear_pointer (&db->flush_source, g_source_unref);
  if (!limen_db_flush_journal (db, &error))
    g_warning ("Changes stay in the journal: %s", error->message);
  return G_SOURCE_REMOVE;
}

static gboolean
flush_source_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  return callback (user_data);
}

/* A source that runs at its ready time (set and moved by the code above). */
static GSourceFuncs flush_source_funcs = { .dispatch = flush_source_dispatch };

gboolean
limen_db_commit_journaled (LimenDb *db, GError **error)
{
  g_autoptr(GVariant) transaction = NULL;

  db->journaling = FALSE;
  if (db->failed)
    {
      g_ptr_array_set_size (db->records, 0);
      return limen_db_transaction_failed (db, error);
    }
  if (db->records->len == 0)
    return TRUE;
  transaction = g_variant_ref_sink (g_variant_new ("(t@av)", db->next_seq,
                                                   g_variant_new_array (G_VARIANT_TYPE_VARIANT,
                                                                        (GVariant **) db->records->pdata,
                                                                        db->records->len)));
  g_ptr_array_set_size (db->records, 0);
  if (!limen_db_journal_append (db->journal, transaction, error))
    return FALSE;
  db->next_seq++;
  g_ptr_array_add (db->pending, g_steal_pointer (&transaction));
  limen_db_note_change (db);
  db->last_pending_us = g_get_monotonic_time ();
  if (db->pending->len == 1)
    db->first_pending_us = db->last_pending_us;
  if (db->pending->len >= JOURNAL_MAX_PENDING)
    {
      g_autoptr(GError) local_error = NULL;

      if (!limen_db_flush_journal (db, &local_error))
        g_warning ("Changes stay in the journal: %s", local_error->message);
    }
  else if (db->flush_source == NULL)
    {
      /* On the thread that runs the default main context, between calls. */
      db->flush_source = g_source_new (&flush_source_funcs, sizeof (GSource));
      g_source_set_ready_time (db->flush_source, db->last_pending_us + JOURNAL_QUIET_MS * 1000);
      g_source_set_callback (db->flush_source, on_flush_due, db, NULL);
      g_source_set_static_name (db->flush_source, "limen-documents: journal flush");
      g_source_attach (db->flush_source, NULL);
    }
  return TRUE;
}

/* ---- quiet moments ----------------------------------------------------------------------- */

/* Empty the WAL into the database: damage to the WAL (a torn write at a power cut, a bad
 * sector) can then cost only what came since. The file stays (SQLITE_FCNTL_PERSIST_WAL). */
static void
checkpoint (LimenDb *db)
{
  int rc = sqlite3_wal_checkpoint_v2 (db->sql, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);

  if (rc != SQLITE_OK)
    g_debug ("No checkpoint of %s now: %s", db->path, sqlite3_errmsg (db->sql));
}

static gboolean
on_idle_due (gpointer user_data)
{
  LimenDb *db = user_data;
  g_autoptr(GError) error = NULL;
  gint64 now = g_get_monotonic_time ();

  if (db->depth > 0)
    {
      g_source_set_ready_time (db->idle_source, now + 10 * 1000);
      return G_SOURCE_CONTINUE;
    }
  if (now - db->last_change_us < IDLE_MS * 1000)
    {
      g_source_set_ready_time (db->idle_source, db->last_change_us + IDLE_MS * 1000);
      return G_SOURCE_CONTINUE;
    }
  if (db->pending && db->pending->len > 0 && !limen_db_flush_journal (db, &error))
    {
      /* Tried again at the next change. */
      g_warning ("Changes stay in the journal: %s", error->message);
      g_clear_pointer (&db->idle_source, g_source_unref);
      return G_SOURCE_REMOVE;
    }
  checkpoint (db);
  if (db->backup_due && limen_db_recover_check_state (db->check) == LIMEN_DB_CHECK_RUNNING)
    {
      g_source_set_ready_time (db->idle_source, now + IDLE_MS * 1000);
      return G_SOURCE_CONTINUE;
    }
  if (db->backup_due && db->last_backup_us && now - db->last_backup_us < BACKUP_INTERVAL_MS * 1000)
    {
      g_source_set_ready_time (db->idle_source, db->last_backup_us + BACKUP_INTERVAL_MS * 1000);
      return G_SOURCE_CONTINUE;
    }
  if (db->backup_due && limen_db_recover_check_state (db->check) == LIMEN_DB_CHECK_OK)
    {
      db->last_backup_us = now;
      if (limen_db_recover_write_backup (db->sql, db->path, &error))
        db->backup_due = FALSE;
      else
        g_warning ("No copy of the database to start from if it is damaged: %s", error->message);
    }
  g_clear_pointer (&db->idle_source, g_source_unref);
  return G_SOURCE_REMOVE;
}

/* A change is in the database or the journal: the quiet moment after it has work to do. Only
 * the journal's owner does it (a second instance, under --replace, leaves it to the first). */
void
limen_db_note_change (LimenDb *db)
{
  db->last_change_us = g_get_monotonic_time ();
  db->backup_due = TRUE;
  if (db->idle_source || db->journal == NULL)
    return;
  db->idle_source = g_source_new (&flush_source_funcs, sizeof (GSource));
  g_source_set_ready_time (db->idle_source, db->last_change_us + IDLE_MS * 1000);
  g_source_set_callback (db->idle_source, on_idle_due, db, NULL);
  g_source_set_static_name (db->idle_source, "limen-documents: checkpoint and copy");
  g_source_attach (db->idle_source, NULL);
}

/* Take over what a previous run answered but left in the journal (it crashed), then keep
 * the journal for this run's answers if no other instance holds it. */
void
limen_db_open_journal (LimenDb *db, const char *path)
{
  g_autofree char *journal_path = g_strconcat (path, "-pending", NULL);
  g_autoptr(LimenDbJournal) journal = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backup = g_strconcat (path, ".backup", NULL);
  gboolean owner = FALSE;
  guint64 highest;
  guint had;

  db->records = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  journal = limen_db_journal_open (journal_path, &owner, &error);
  if (journal == NULL)
    {
      g_warning ("Every change is committed on its own: %s", error->message);
      return;
    }
  db->pending = limen_db_journal_read (journal);
  highest = applied_seq (db);
  for (guint i = 0; i < db->pending->len; i++)
    {
      guint64 seq;

      g_variant_get (db->pending->pdata[i], "(t@av)", &seq, NULL);
      highest = MAX (highest, seq);
    }
  db->next_seq = highest + 1;
  if (owner)
    db->journal = g_steal_pointer (&journal);
  had = db->pending->len;
  if (!limen_db_flush_journal (db, &error))
    g_warning ("The journal's changes are not in the database yet: %s", error->message);
  else if (owner && had > 0)
    limen_db_note_change (db);
  if (owner && !g_file_test (backup, G_FILE_TEST_EXISTS))
    limen_db_note_change (db);   /* a first copy to start from */
  if (!owner)
    g_ptr_array_set_size (db->pending, 0);
}
