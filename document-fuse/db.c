/* limen-documents — the SQLite database behind the document and permission stores.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "db.h"

#include <sqlite3.h>

#include "db-journal.h"
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

/* Bump when the schema changes; migrate() brings older files forward. */
#define LIMEN_DB_SCHEMA_VERSION 1

struct _LimenDb {
  sqlite3      *sql;
  int           depth;      /* nesting of limen_db_begin() */
  gboolean      failed;     /* a nested step failed: the outer commit must roll back */
  char         *fail_reason; /* SQLite's word for the first failed step, for the caller */
  char         *path;
  sqlite3_stmt *put_entry, *delete_entry;
  sqlite3_stmt *put_doc, *delete_doc, *put_doc_perm, *delete_doc_perm;
  sqlite3_stmt *get_meta, *set_meta;
  sqlite3_stmt *begin, *commit;  /* prepared once: parsing them cost each Add ~3% */
  /* Journaled transactions (limen_db_begin_journaled): their document rows go to the journal
   * and wait in @pending, oldest first, until flush_journal() applies them to SQLite. */
  LimenDbJournal *journal;       /* NULL: every transaction is a SQLite one */
  gboolean      journaling;      /* the open transaction is a journaled one */
  GPtrArray    *records;         /* its rows, "v" each */
  GPtrArray    *pending;         /* "(tav)" transactions in the journal, not in SQLite yet */
  guint64       next_seq;
  GSource      *flush_source;
  gint64        first_pending_us;  /* monotonic time the oldest of @pending was answered */
  gint64        last_pending_us;   /* ... and the newest */
  /* Work for quiet moments: the WAL checkpointed empty (so damage to it can cost little) and
   * a copy of the database to start from if the file is ever damaged. */
  GSource      *idle_source;
  gint64        last_change_us;
  gint64        last_backup_us;
  gboolean      backup_due;        /* changed since the last copy */
  gboolean      opened;            /* checked (or closed clean last time) and prepared */
  gboolean      damage_seen;       /* SQLite said the file is damaged */
  LimenDbCheck *check;             /* the background check of a file a clean exit left */
};

/* A journaled document row and a row of its rights. */
#define DOC_RECORD "(s^ayttim@ayu)"
#define DOC_RECORD_TYPE "(sayttimayu)"
#define PERMS_RECORD "(ssu)"

static gboolean flush_journal (LimenDb *db, GError **error);
static gboolean commit_journaled (LimenDb *db, GError **error);
static void open_journal (LimenDb *db, const char *path);
static void note_change (LimenDb *db);
static void load_pending (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func, gpointer user_data);
static gboolean sql_doc_put (LimenDb *db, const LimenDbDoc *doc, GError **error);
static gboolean sql_doc_put_perms (LimenDb *db, const char *id, const char *app, guint perms, GError **error);

static gboolean
db_error (LimenDb *db, GError **error, const char *what)
{
  int rc = sqlite3_errcode (db->sql) & 0xff;

  if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
    db->damage_seen = TRUE;
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Database error (%s): %s",
               what, sqlite3_errmsg (db->sql));
  return FALSE;
}

/* A transaction that failed: SQLite's reason (a full disk, a read-only file) goes back to
 * the caller, and with the file's name, which callers are not told, to the log. */
static gboolean
transaction_failed (LimenDb *db, GError **error)
{
  const char *reason = db->fail_reason ? db->fail_reason : sqlite3_errmsg (db->sql);

  g_warning ("A transaction on %s failed: %s", db->path, reason);
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Database transaction failed: %s", reason);
  g_clear_pointer (&db->fail_reason, g_free);
  return FALSE;
}

static gboolean
db_exec (LimenDb *db, const char *sql, GError **error)
{
  char *msg = NULL;

  if (sqlite3_exec (db->sql, sql, NULL, NULL, &msg) != SQLITE_OK)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Database error: %s", msg);
      sqlite3_free (msg);
      return FALSE;
    }
  return TRUE;
}

static gboolean
db_prepare (LimenDb *db, sqlite3_stmt **stmt, const char *sql, GError **error)
{
  if (sqlite3_prepare_v3 (db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL) != SQLITE_OK)
    return db_error (db, error, "prepare");
  return TRUE;
}

/* Run a prepared statement to completion and reset it for the next use. */
static gboolean
db_step (LimenDb *db, sqlite3_stmt *stmt, GError **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    {
      db->failed = TRUE;
      if (db->fail_reason == NULL)
        db->fail_reason = g_strdup (sqlite3_errmsg (db->sql));
      return db_error (db, error, "step");
    }
  return TRUE;
}

static int
db_schema_version (LimenDb *db)
{
  sqlite3_stmt *stmt = NULL;
  int version = 0;

  if (sqlite3_prepare_v2 (db->sql, "SELECT MAX(version) FROM schema_version", -1, &stmt, NULL) != SQLITE_OK)
    return 0;
  if (sqlite3_step (stmt) == SQLITE_ROW)
    version = sqlite3_column_int (stmt, 0);
  sqlite3_finalize (stmt);
  return version;
}

static gboolean
db_migrate (LimenDb *db, GError **error)
{
  int version;

  if (!db_exec (db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", error))
    return FALSE;
  version = db_schema_version (db);
  if (version > LIMEN_DB_SCHEMA_VERSION)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                   "Database schema version %d is newer than this program (%d)",
                   version, LIMEN_DB_SCHEMA_VERSION);
      return FALSE;
    }
  if (version < 1)
    {
      if (!db_exec (db,
                    "BEGIN IMMEDIATE;"
                    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
                    /* Permission store: one row per (table, id) holding its data (v) and
                     * every app's permissions (a{sas}), so Set of an entry with 20,000
                     * apps is one row write, not 20,000. */
                    "CREATE TABLE perm_entries (tbl TEXT NOT NULL, id TEXT NOT NULL, data BLOB,"
                    "  perms BLOB NOT NULL, PRIMARY KEY (tbl, id)) WITHOUT ROWID;"
                    /* Persistent documents; session documents never reach the disk. */
                    "CREATE TABLE documents (id TEXT PRIMARY KEY, path BLOB NOT NULL, dev INTEGER NOT NULL,"
                    "  ino INTEGER NOT NULL, handle_type INTEGER NOT NULL DEFAULT 0, handle BLOB,"
                    "  flags INTEGER NOT NULL) WITHOUT ROWID;"
                    "CREATE TABLE doc_perms (doc TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,"
                    "  app TEXT NOT NULL, perms INTEGER NOT NULL, PRIMARY KEY (doc, app)) WITHOUT ROWID;"
                    "INSERT INTO schema_version (version) VALUES (1);"
                    "COMMIT;", error))
        {
          sqlite3_exec (db->sql, "ROLLBACK", NULL, NULL, NULL);
          return FALSE;
        }
    }
  return TRUE;
}

/* SQLite says the file is damaged (not a database at all, or a page that makes no sense). */
static gboolean
db_is_damaged (LimenDb *db)
{
  int rc = sqlite3_errcode (db->sql) & 0xff;

  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* Open the file and prepare everything but the journal; *@damaged says whether a failure is
 * the file's own damage (which a copy can stand in for). */
static LimenDb *
db_open_file (const char *path, gboolean *damaged, GError **error)
{
  g_autoptr(LimenDb) db = g_new0 (LimenDb, 1);
  int persist_wal = 1;
  /* Read before SQLite opens the file. Checking a file of 100,000 documents (all its pages)
   * took longer than loading them: a file no one wrote to since a clean exit is not read
   * twice. Damage found while loading is still damage (db_error()). */
  gboolean closed_clean = limen_db_recover_closed_clean (path);

  *damaged = FALSE;
  db->path = g_strdup (path);
  if (sqlite3_open_v2 (path, &db->sql, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                       NULL) != SQLITE_OK)
    {
      db_error (db, error, "open");
      return NULL;
    }
  sqlite3_busy_timeout (db->sql, 2000);
  /* The -wal and -shm files stay when the database is closed (the WAL emptied): SQLite
   * would otherwise delete them as the daemon exits, and whoever removes the data directory
   * at that moment (a test's teardown after unmounting the store, a user's rm -r) would
   * find a file it listed gone. The reference leaves its files alone at exit as well. */
  sqlite3_file_control (db->sql, "main", SQLITE_FCNTL_PERSIST_WAL, &persist_wal);
  /* WAL + NORMAL: a commit is durable against a crash of this process (kill -9);
   * only a power loss can cost the last transactions. A journal size limit is what makes
   * SQLite empty a persistent WAL at close; it also trims it after checkpoints. */
  if (!db_exec (db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                     " PRAGMA cache_size=-512; PRAGMA journal_size_limit=1048576;", error)
      || !db_migrate (db, error))
    {
      *damaged = db_is_damaged (db);
      return NULL;
    }
  /* A damaged page shows at once, not at the first read of it by some later call. */
  if (closed_clean)
    db->check = limen_db_recover_check_start (path);
  else if (!limen_db_recover_quick_check (db->sql, damaged, error))
    return NULL;

  if (!db_prepare (db, &db->put_entry,
                   "INSERT OR REPLACE INTO perm_entries (tbl, id, data, perms) VALUES (?1, ?2, ?3, ?4)", error)
      || !db_prepare (db, &db->delete_entry, "DELETE FROM perm_entries WHERE tbl = ?1 AND id = ?2", error)
      || !db_prepare (db, &db->put_doc,
                      "INSERT OR REPLACE INTO documents (id, path, dev, ino, handle_type, handle, flags)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", error)
      || !db_prepare (db, &db->delete_doc, "DELETE FROM documents WHERE id = ?1", error)
      || !db_prepare (db, &db->put_doc_perm,
                      "INSERT OR REPLACE INTO doc_perms (doc, app, perms) VALUES (?1, ?2, ?3)", error)
      || !db_prepare (db, &db->delete_doc_perm, "DELETE FROM doc_perms WHERE doc = ?1 AND app = ?2", error)
      || !db_prepare (db, &db->get_meta, "SELECT value FROM meta WHERE key = ?1", error)
      || !db_prepare (db, &db->set_meta, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", error)
      || !db_prepare (db, &db->begin, "BEGIN IMMEDIATE", error)
      || !db_prepare (db, &db->commit, "COMMIT", error))
    return NULL;
  db->opened = TRUE;
  return g_steal_pointer (&db);
}

LimenDb *
limen_db_open (const char *path, GError **error)
{
  g_autoptr(LimenDb) db = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean damaged;

  /* Before SQLite's recovery reads the WAL (and silently drops what follows damage). */
  limen_db_recover_check_wal (path);
  db = db_open_file (path, &damaged, &local_error);
  /* Damaged: start from the copy; if the copy is damaged too, from nothing (every call of the
   * session failing would serve nobody). The damaged files stay beside, for whoever can. */
  for (int tries = 0; db == NULL && damaged && tries < 2; tries++)
    {
      g_autofree char *reason = g_strdup (local_error->message);

      g_clear_error (&local_error);
      if (tries > 0)
        limen_db_recover_drop_backup (path);
      if (limen_db_recover_from_backup (path, reason, &local_error))
        db = db_open_file (path, &damaged, &local_error);
    }
  if (db == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s: ", path);
      return NULL;
    }
  open_journal (db, path);
  return g_steal_pointer (&db);
}

gboolean
limen_db_is_damaged (LimenDb *db)
{
  return db->damage_seen || limen_db_recover_check_state (db->check) == LIMEN_DB_CHECK_DAMAGED;
}

void
limen_db_close (LimenDb *db)
{
  sqlite3_stmt *stmts[] = { db->put_entry, db->delete_entry,
                            db->put_doc, db->delete_doc, db->put_doc_perm, db->delete_doc_perm,
                            db->get_meta, db->set_meta, db->begin, db->commit };
  g_autoptr(GError) error = NULL;

  if (db->flush_source)
    {
      g_source_destroy (db->flush_source);
      g_clear_pointer (&db->flush_source, g_source_unref);
    }
  if (db->idle_source)
    {
      g_source_destroy (db->idle_source);
      g_clear_pointer (&db->idle_source, g_source_unref);
    }
  if (db->journal && db->pending && db->pending->len > 0 && db->put_doc && !flush_journal (db, &error))
    g_warning ("Changes stay in the journal for the next start: %s", error->message);
  g_clear_pointer (&db->journal, limen_db_journal_close);
  g_clear_pointer (&db->pending, g_ptr_array_unref);
  g_clear_pointer (&db->records, g_ptr_array_unref);
  for (gsize i = 0; i < G_N_ELEMENTS (stmts); i++)
    sqlite3_finalize (stmts[i]);
  if (limen_db_recover_check_finish (g_steal_pointer (&db->check)) == LIMEN_DB_CHECK_DAMAGED)
    db->damage_seen = TRUE;
  if (db->sql && sqlite3_close (db->sql) == SQLITE_OK && db->opened && !db->damage_seen)
    limen_db_recover_mark_clean (db->path);
  g_free (db->fail_reason);
  g_free (db->path);
  g_free (db);
}

/* Run a prepared statement that returns no rows. */
static gboolean
db_step_done (LimenDb *db, sqlite3_stmt *stmt, GError **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    return db_error (db, error, sqlite3_sql (stmt));
  return TRUE;
}

gboolean
limen_db_begin (LimenDb *db, GError **error)
{
  if (db->depth++ > 0)
    return TRUE;
  db->failed = FALSE;
  g_clear_pointer (&db->fail_reason, g_free);
  /* SQLite sees the changes in the order they were answered. */
  if ((db->pending && db->pending->len > 0 && !flush_journal (db, error)) ||
      !db_step_done (db, db->begin, error))
    {
      db->depth = 0;
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_db_commit (LimenDb *db, GError **error)
{
  g_return_val_if_fail (db->depth > 0, FALSE);
  if (--db->depth > 0)
    return TRUE;
  if (db->journaling)
    return commit_journaled (db, error);
  if (db->failed || !db_step_done (db, db->commit, NULL))
    {
      if (db->fail_reason == NULL)
        db->fail_reason = g_strdup (sqlite3_errmsg (db->sql));
      sqlite3_exec (db->sql, "ROLLBACK", NULL, NULL, NULL);
      return transaction_failed (db, error);
    }
  note_change (db);
  return TRUE;
}

void
limen_db_rollback (LimenDb *db)
{
  if (db->depth == 0)
    return;
  db->depth = 0;
  if (db->journaling)
    {
      db->journaling = FALSE;
      g_ptr_array_set_size (db->records, 0);
      return;
    }
  sqlite3_exec (db->sql, "ROLLBACK", NULL, NULL, NULL);
}

char *
limen_db_get_meta (LimenDb *db, const char *key)
{
  char *value = NULL;

  sqlite3_bind_text (db->get_meta, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (db->get_meta) == SQLITE_ROW)
    value = g_strdup ((const char *) sqlite3_column_text (db->get_meta, 0));
  sqlite3_reset (db->get_meta);
  sqlite3_clear_bindings (db->get_meta);
  return value;
}

gboolean
limen_db_set_meta (LimenDb *db, const char *key, const char *value, GError **error)
{
  g_return_val_if_fail (!db->journaling, FALSE);
  sqlite3_bind_text (db->set_meta, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_text (db->set_meta, 2, value, -1, SQLITE_STATIC);
  return db_step (db, db->set_meta, error);
}

static void
bind_variant (sqlite3_stmt *stmt, int col, GVariant *value)
{
  if (value == NULL)
    {
      sqlite3_bind_null (stmt, col);
      return;
    }
  /* Stored as a serialized "v" so any type round-trips. */
  g_autoptr(GVariant) boxed = g_variant_ref_sink (g_variant_new_variant (value));
  sqlite3_bind_blob64 (stmt, col, g_variant_get_data (boxed), g_variant_get_size (boxed), SQLITE_TRANSIENT);
}

static GVariant *
column_variant (sqlite3_stmt *stmt, int col, const GVariantType *type)
{
  const void *blob = sqlite3_column_blob (stmt, col);
  int size = sqlite3_column_bytes (stmt, col);
  static const guint8 nothing[1];
  g_autoptr(GVariant) v = NULL;

  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return NULL;
  {
    gpointer copy = size ? g_memdup2 (blob, size) : g_memdup2 (nothing, 1);

    /* GVariant hands the notify its user_data, not the data: pass the copy itself. */
    v = g_variant_ref_sink (g_variant_new_from_data (type, copy, size, FALSE, g_free, copy));
  }
  /* Rows are ours, but a damaged file must not crash us: normalise untrusted data. */
  return g_variant_get_normal_form (v);
}

gboolean
limen_db_perm_put_entry_bytes (LimenDb *db, const char *table, const char *id, GVariant *data, GBytes *perms,
                               GError **error)
{
  gsize size;
  const void *bytes = g_bytes_get_data (perms, &size);

  g_return_val_if_fail (!db->journaling, FALSE);
  sqlite3_bind_text (db->put_entry, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (db->put_entry, 2, id, -1, SQLITE_STATIC);
  bind_variant (db->put_entry, 3, data);
  /* An empty a{sas} serializes to no bytes at all; NULL data would bind SQL NULL. */
  if (size == 0)
    sqlite3_bind_zeroblob (db->put_entry, 4, 0);
  else
    sqlite3_bind_blob64 (db->put_entry, 4, bytes, size, SQLITE_STATIC);
  return db_step (db, db->put_entry, error);
}

gboolean
limen_db_perm_put_entry (LimenDb *db, const char *table, const char *id, GVariant *data, GVariant *perms,
                         GError **error)
{
  /* g_variant_store, not g_variant_get_data: a value that came in a D-Bus message stays
   * in tree form, which GDBus writes out again (Lookup, Changed) much faster than the
   * serialized form it would otherwise be turned into here. */
  gsize size = g_variant_get_size (perms);
  g_autoptr(GBytes) bytes = NULL;

  if (size == 0)
    bytes = g_bytes_new_static ("", 0);
  else
    {
      guint8 *copy = g_malloc (size);

      g_variant_store (perms, copy);
      bytes = g_bytes_new_take (copy, size);
    }
  return limen_db_perm_put_entry_bytes (db, table, id, data, bytes, error);
}

gboolean
limen_db_perm_delete_entry (LimenDb *db, const char *table, const char *id, GError **error)
{
  g_return_val_if_fail (!db->journaling, FALSE);
  sqlite3_bind_text (db->delete_entry, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (db->delete_entry, 2, id, -1, SQLITE_STATIC);
  return db_step (db, db->delete_entry, error);
}

gboolean
limen_db_perm_load (LimenDb *db, LimenDbPermEntryFunc entry_func, gpointer user_data, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  if (sqlite3_prepare_v2 (db->sql, "SELECT tbl, id, data, perms FROM perm_entries", -1, &stmt, NULL) != SQLITE_OK)
    return db_error (db, error, "load");
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GVariant) boxed = column_variant (stmt, 2, G_VARIANT_TYPE_VARIANT);
      g_autoptr(GVariant) data = boxed ? g_variant_get_variant (boxed) : NULL;
      g_autoptr(GVariant) perms = column_variant (stmt, 3, G_VARIANT_TYPE ("a{sas}"));

      entry_func ((const char *) sqlite3_column_text (stmt, 0), (const char *) sqlite3_column_text (stmt, 1),
                  data, perms, user_data);
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    return db_error (db, error, "load");
  return TRUE;
}

static gboolean
sql_doc_put (LimenDb *db, const LimenDbDoc *doc, GError **error)
{
  sqlite3_bind_text (db->put_doc, 1, doc->id, -1, SQLITE_STATIC);
  sqlite3_bind_blob (db->put_doc, 2, doc->path, strlen (doc->path), SQLITE_STATIC);
  sqlite3_bind_int64 (db->put_doc, 3, (sqlite3_int64) doc->dev);
  sqlite3_bind_int64 (db->put_doc, 4, (sqlite3_int64) doc->ino);
  sqlite3_bind_int (db->put_doc, 5, doc->handle_type);
  if (doc->handle)
    sqlite3_bind_blob (db->put_doc, 6, g_bytes_get_data (doc->handle, NULL), g_bytes_get_size (doc->handle),
                       SQLITE_STATIC);
  else
    sqlite3_bind_null (db->put_doc, 6);
  sqlite3_bind_int64 (db->put_doc, 7, doc->flags);
  return db_step (db, db->put_doc, error);
}

gboolean
limen_db_doc_put (LimenDb *db, const LimenDbDoc *doc, GError **error)
{
  GVariant *handle = NULL;

  if (!db->journaling)
    return sql_doc_put (db, doc, error);
  if (doc->handle)
    handle = g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, g_bytes_get_data (doc->handle, NULL),
                                        g_bytes_get_size (doc->handle), 1);
  g_ptr_array_add (db->records, g_variant_ref_sink (g_variant_new_variant (
                     g_variant_new (DOC_RECORD, doc->id, doc->path, doc->dev, doc->ino, doc->handle_type,
                                    handle, doc->flags))));
  return TRUE;
}

gboolean
limen_db_doc_put_perms (LimenDb *db, const char *id, const char *app, guint perms, GError **error)
{
  if (!db->journaling)
    return sql_doc_put_perms (db, id, app, perms, error);
  g_ptr_array_add (db->records, g_variant_ref_sink (g_variant_new_variant (
                     g_variant_new (PERMS_RECORD, id, app, perms))));
  return TRUE;
}

gboolean
limen_db_doc_delete (LimenDb *db, const char *id, GError **error)
{
  g_return_val_if_fail (!db->journaling, FALSE);
  sqlite3_bind_text (db->delete_doc, 1, id, -1, SQLITE_STATIC);
  return db_step (db, db->delete_doc, error);
}

static gboolean
sql_doc_put_perms (LimenDb *db, const char *id, const char *app, guint perms, GError **error)
{
  if (perms == 0)
    {
      sqlite3_bind_text (db->delete_doc_perm, 1, id, -1, SQLITE_STATIC);
      sqlite3_bind_text (db->delete_doc_perm, 2, app, -1, SQLITE_STATIC);
      return db_step (db, db->delete_doc_perm, error);
    }
  sqlite3_bind_text (db->put_doc_perm, 1, id, -1, SQLITE_STATIC);
  sqlite3_bind_text (db->put_doc_perm, 2, app, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (db->put_doc_perm, 3, perms);
  return db_step (db, db->put_doc_perm, error);
}

gboolean
limen_db_doc_load (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func,
                   gpointer user_data, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  if (sqlite3_prepare_v2 (db->sql, "SELECT id, path, dev, ino, handle_type, handle, flags FROM documents",
                          -1, &stmt, NULL) != SQLITE_OK)
    return db_error (db, error, "load");
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autofree char *path = g_strndup (sqlite3_column_blob (stmt, 1), sqlite3_column_bytes (stmt, 1));
      g_autoptr(GBytes) handle = NULL;
      LimenDbDoc doc = { 0 };

      if (sqlite3_column_type (stmt, 5) != SQLITE_NULL)
        handle = g_bytes_new (sqlite3_column_blob (stmt, 5), sqlite3_column_bytes (stmt, 5));
      doc.id = (const char *) sqlite3_column_text (stmt, 0);
      doc.path = path;
      doc.dev = (guint64) sqlite3_column_int64 (stmt, 2);
      doc.ino = (guint64) sqlite3_column_int64 (stmt, 3);
      doc.handle_type = sqlite3_column_int (stmt, 4);
      doc.handle = handle;
      doc.flags = (guint) sqlite3_column_int64 (stmt, 6);
      doc_func (&doc, user_data);
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    return db_error (db, error, "load");

  if (sqlite3_prepare_v2 (db->sql, "SELECT doc, app, perms FROM doc_perms", -1, &stmt, NULL) != SQLITE_OK)
    return db_error (db, error, "load");
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    perm_func ((const char *) sqlite3_column_text (stmt, 0), (const char *) sqlite3_column_text (stmt, 1),
               (guint) sqlite3_column_int64 (stmt, 2), user_data);
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    return db_error (db, error, "load");
  load_pending (db, doc_func, perm_func, user_data);
  return TRUE;
}

/* ---- the journal ----------------------------------------------------------------------- */

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
  sql_doc_put (user_data, doc, NULL);
}

static void
apply_doc_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
  sql_doc_put_perms (user_data, doc_id, app, perms, NULL);
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
static void
load_pending (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func, gpointer user_data)
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
static gboolean
flush_journal (LimenDb *db, GError **error)
{
  guint64 applied, last = 0;
  char value[32];

  if (db->pending == NULL || db->pending->len == 0)
    return TRUE;
  db->failed = FALSE;
  g_clear_pointer (&db->fail_reason, g_free);
  if (!db_step_done (db, db->begin, error))
    return FALSE;
  applied = applied_seq (db);
  for (guint i = 0; i < db->pending->len; i++)
    apply_transaction (db, db->pending->pdata[i], applied, &last);
  if (last > applied)
    {
      g_snprintf (value, sizeof value, "%" G_GUINT64_FORMAT, last);
      limen_db_set_meta (db, JOURNAL_SEQ_KEY, value, NULL);
    }
  if (db->failed || !db_step_done (db, db->commit, NULL))
    {
      if (db->fail_reason == NULL)
        db->fail_reason = g_strdup (sqlite3_errmsg (db->sql));
      sqlite3_exec (db->sql, "ROLLBACK", NULL, NULL, NULL);
      db->failed = FALSE;
      return transaction_failed (db, error);
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
  if (!flush_journal (db, &error))
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

static gboolean
commit_journaled (LimenDb *db, GError **error)
{
  g_autoptr(GVariant) transaction = NULL;

  db->journaling = FALSE;
  if (db->failed)
    {
      g_ptr_array_set_size (db->records, 0);
      return transaction_failed (db, error);
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
  note_change (db);
  db->last_pending_us = g_get_monotonic_time ();
  if (db->pending->len == 1)
    db->first_pending_us = db->last_pending_us;
  if (db->pending->len >= JOURNAL_MAX_PENDING)
    {
      g_autoptr(GError) local_error = NULL;

      if (!flush_journal (db, &local_error))
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
  if (db->pending && db->pending->len > 0 && !flush_journal (db, &error))
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
static void
note_change (LimenDb *db)
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
static void
open_journal (LimenDb *db, const char *path)
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
  if (!flush_journal (db, &error))
    g_warning ("The journal's changes are not in the database yet: %s", error->message);
  else if (owner && had > 0)
    note_change (db);
  if (owner && !g_file_test (backup, G_FILE_TEST_EXISTS))
    note_change (db);   /* a first copy to start from */
  if (!owner)
    g_ptr_array_set_size (db->pending, 0);
}
