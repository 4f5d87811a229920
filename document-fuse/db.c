/* limen-documents — the SQLite database behind the document and permission stores.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "db-private.h"

#include "db-journal.h"
#include "db-recover.h"
#include "errors.h"

static void big_entry_forget (LimenDb *db, const char *table, const char *id);

/* Bump when the schema changes; migrate() brings older files forward. */
#define LIMEN_DB_SCHEMA_VERSION 1

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
gboolean
limen_db_transaction_failed (LimenDb *db, GError **error)
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

/* Indexes for the document model's reads on demand (a document by its path, an app's
 * documents). Added in place, without a new schema version: older versions read and write
 * the file as before, and SQLite keeps the indexes up to date for them too. Without them
 * (a full disk at the first start) every read still works, by a scan. */
static void
db_add_indexes (LimenDb *db)
{
  g_autoptr(GError) error = NULL;

  if (!db_exec (db, "CREATE INDEX IF NOT EXISTS documents_path ON documents (path);"
                    "CREATE INDEX IF NOT EXISTS doc_perms_app ON doc_perms (app, doc);", &error))
    g_warning ("No index for the documents (reads scan the table): %s", error->message);
}

#define DOC_COLUMNS "d.id, d.path, d.dev, d.ino, d.handle_type, d.handle, d.flags"

static gboolean
db_prepare_doc_reads (LimenDb *db, GError **error)
{
  return db_prepare (db, &db->read_doc[0], "SELECT " DOC_COLUMNS " FROM documents d WHERE d.id = ?1", error)
    && db_prepare (db, &db->read_doc[1],
                   "SELECT " DOC_COLUMNS " FROM doc_perms p JOIN documents d ON d.id = p.doc WHERE p.app = ?1", error)
    && db_prepare (db, &db->read_doc[2], "SELECT " DOC_COLUMNS " FROM documents d", error)
    && db_prepare (db, &db->read_doc_perms[0], "SELECT doc, app, perms FROM doc_perms WHERE doc = ?1", error)
    && db_prepare (db, &db->read_doc_perms[1],
                   "SELECT q.doc, q.app, q.perms FROM doc_perms p JOIN doc_perms q ON q.doc = p.doc"
                   " WHERE p.app = ?1", error)
    && db_prepare (db, &db->read_doc_perms[2], "SELECT doc, app, perms FROM doc_perms", error)
    && db_prepare (db, &db->list_doc_apps, "SELECT DISTINCT app FROM doc_perms", error)
    /* Newest id first: the one a full load of old left in the path index. */
    && db_prepare (db, &db->find_doc_path, "SELECT " DOC_COLUMNS " FROM documents d WHERE d.path = ?1"
                   " AND (d.flags & 4) = 0 ORDER BY d.id DESC", error);
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
  db_add_indexes (db);
  /* A damaged page shows at once, not at the first read of it by some later call. */
  if (closed_clean)
    db->check = limen_db_recover_check_start (path);
  else if (!limen_db_recover_quick_check (db->sql, damaged, error))
    return NULL;

  if (!db_prepare (db, &db->put_entry,
                   "INSERT OR REPLACE INTO perm_entries (tbl, id, data, perms) VALUES (?1, ?2, ?3, ?4)", error)
      || !db_prepare (db, &db->delete_entry, "DELETE FROM perm_entries WHERE tbl = ?1 AND id = ?2", error)
      || !db_prepare (db, &db->get_entry, "SELECT data, perms FROM perm_entries WHERE tbl = ?1 AND id = ?2", error)
      || !db_prepare (db, &db->has_table, "SELECT 1 FROM perm_entries WHERE tbl = ?1 LIMIT 1", error)
      || !db_prepare (db, &db->list_entries, "SELECT id, perms FROM perm_entries WHERE tbl = ?1", error)
      || !db_prepare (db, &db->put_doc,
                      "INSERT OR REPLACE INTO documents (id, path, dev, ino, handle_type, handle, flags)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", error)
      || !db_prepare (db, &db->delete_doc, "DELETE FROM documents WHERE id = ?1", error)
      || !db_prepare (db, &db->put_doc_perm,
                      "INSERT OR REPLACE INTO doc_perms (doc, app, perms) VALUES (?1, ?2, ?3)", error)
      || !db_prepare (db, &db->delete_doc_perm, "DELETE FROM doc_perms WHERE doc = ?1 AND app = ?2", error)
      || !db_prepare (db, &db->get_meta, "SELECT value FROM meta WHERE key = ?1", error)
      || !db_prepare (db, &db->set_meta, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", error)
      || !db_prepare_doc_reads (db, error)
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
  limen_db_open_journal (db, path);
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
  sqlite3_stmt *stmts[] = { db->put_entry, db->delete_entry, db->get_entry, db->has_table, db->list_entries,
                            db->put_doc, db->delete_doc, db->put_doc_perm, db->delete_doc_perm,
                            db->get_meta, db->set_meta, db->begin, db->commit,
                            db->read_doc[0], db->read_doc[1], db->read_doc[2], db->read_doc_perms[0],
                            db->read_doc_perms[1], db->read_doc_perms[2], db->list_doc_apps,
                            db->find_doc_path };
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
  if (db->journal && db->pending && db->pending->len > 0 && db->put_doc && !limen_db_flush_journal (db, &error))
    g_warning ("Changes stay in the journal for the next start: %s", error->message);
  g_clear_pointer (&db->journal, limen_db_journal_close);
  g_clear_pointer (&db->pending, g_ptr_array_unref);
  g_clear_pointer (&db->records, g_ptr_array_unref);
  for (gsize i = 0; i < G_N_ELEMENTS (stmts); i++)
    sqlite3_finalize (stmts[i]);
  big_entry_forget (db, NULL, NULL);
  if (limen_db_recover_check_finish (g_steal_pointer (&db->check)) == LIMEN_DB_CHECK_DAMAGED)
    db->damage_seen = TRUE;
  if (db->sql && sqlite3_close (db->sql) == SQLITE_OK && db->opened && !db->damage_seen)
    limen_db_recover_mark_clean (db->path);
  g_free (db->fail_reason);
  g_free (db->path);
  g_free (db);
}

/* Run a prepared statement that returns no rows. */
gboolean
limen_db_step_done (LimenDb *db, sqlite3_stmt *stmt, GError **error)
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
  if ((db->pending && db->pending->len > 0 && !limen_db_flush_journal (db, error)) ||
      !limen_db_step_done (db, db->begin, error))
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
    return limen_db_commit_journaled (db, error);
  if (db->failed || !limen_db_step_done (db, db->commit, NULL))
    {
      if (db->fail_reason == NULL)
        db->fail_reason = g_strdup (sqlite3_errmsg (db->sql));
      sqlite3_exec (db->sql, "ROLLBACK", NULL, NULL, NULL);
      return limen_db_transaction_failed (db, error);
    }
  limen_db_note_change (db);
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

gboolean
limen_db_is_settled (LimenDb *db)
{
  return db->depth == 0 && !db->journaling && (db->pending == NULL || db->pending->len == 0);
}

void
limen_db_replay_pending (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func, gpointer user_data)
{
  limen_db_load_pending (db, doc_func, perm_func, user_data);
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
  big_entry_forget (db, table, id);
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
  big_entry_forget (db, table, id);
  sqlite3_bind_text (db->delete_entry, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (db->delete_entry, 2, id, -1, SQLITE_STATIC);
  return db_step (db, db->delete_entry, error);
}

/* The value of @col (unboxed from its "v" with @unbox), one GVariant for all the rows that
 * hold the same bytes: permission entries repeat their data and their rights (an empty a{sv},
 * an app's "yes"), and each with copies of its own cost 100,000 entries some 30 MiB. */
static GVariant *
shared_column (GHashTable *seen, sqlite3_stmt *stmt, int col, const GVariantType *type, gboolean unbox)
{
  g_autoptr(GBytes) key = NULL;
  GVariant *v;

  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return NULL;
  key = g_bytes_new (sqlite3_column_blob (stmt, col), sqlite3_column_bytes (stmt, col));
  if ((v = g_hash_table_lookup (seen, key)))
    return g_variant_ref (v);
  if ((v = column_variant (stmt, col, type)) && unbox)
    {
      GVariant *child = g_variant_get_variant (v);

      g_variant_unref (v);
      v = child;
    }
  if (v)
    g_hash_table_insert (seen, g_steal_pointer (&key), g_variant_ref (v));
  return v;
}

gboolean
limen_db_perm_load (LimenDb *db, LimenDbPermEntryFunc entry_func, gpointer user_data, GError **error)
{
  g_autoptr(GHashTable) seen_data = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                           (GDestroyNotify) g_bytes_unref,
                                                           (GDestroyNotify) g_variant_unref);
  g_autoptr(GHashTable) seen_perms = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                            (GDestroyNotify) g_bytes_unref,
                                                            (GDestroyNotify) g_variant_unref);
  sqlite3_stmt *stmt = NULL;
  int rc;

  if (sqlite3_prepare_v2 (db->sql, "SELECT tbl, id, data, perms FROM perm_entries", -1, &stmt, NULL) != SQLITE_OK)
    return db_error (db, error, "load");
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GVariant) data = shared_column (seen_data, stmt, 2, G_VARIANT_TYPE_VARIANT, TRUE);
      g_autoptr(GVariant) perms = shared_column (seen_perms, stmt, 3, G_VARIANT_TYPE ("a{sas}"), FALSE);

      entry_func ((const char *) sqlite3_column_text (stmt, 0), (const char *) sqlite3_column_text (stmt, 1),
                  data, perms, user_data);
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    return db_error (db, error, "load");
  return TRUE;
}

/* The a{sas} of column @col: the stored bytes, checked (a damaged file must not crash us). */
static GVariant *
column_perms (sqlite3_stmt *stmt, int col)
{
  GVariant *perms = column_variant (stmt, col, G_VARIANT_TYPE ("a{sas}"));

  return perms ? perms : g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sas}"), NULL, 0));
}

/* The one big entry read last (its rights ≥ BIG_ENTRY bytes), kept: a Lookup of an entry of
 * 20,000 apps spent most of its time checking the bytes it had read. Any write of it drops it. */
#define BIG_ENTRY 65536

static void
big_entry_forget (LimenDb *db, const char *table, const char *id)
{
  if (db->big_id && (table == NULL || (strcmp (db->big_table, table) == 0 && strcmp (db->big_id, id) == 0)))
    {
      g_clear_pointer (&db->big_table, g_free);
      g_clear_pointer (&db->big_id, g_free);
      g_clear_pointer (&db->big_data, g_variant_unref);
      g_clear_pointer (&db->big_perms, g_variant_unref);
    }
}

void
limen_db_perm_keep_entry (LimenDb *db, const char *table, const char *id, GVariant *data, GVariant *perms)
{
  if (g_variant_get_size (perms) < BIG_ENTRY)
    return;
  big_entry_forget (db, NULL, NULL);
  db->big_table = g_strdup (table);
  db->big_id = g_strdup (id);
  db->big_data = data ? g_variant_ref (data) : NULL;
  db->big_perms = g_variant_ref (perms);
}

gboolean
limen_db_perm_get_entry (LimenDb *db, const char *table, const char *id, GVariant **data, GVariant **perms,
                         GError **error)
{
  sqlite3_stmt *stmt = db->get_entry;
  int rc;

  *data = NULL;
  if (perms)
    *perms = NULL;
  if (db->big_id && strcmp (db->big_table, table) == 0 && strcmp (db->big_id, id) == 0)
    {
      *data = db->big_data ? g_variant_ref (db->big_data) : NULL;
      if (perms)
        *perms = g_variant_ref (db->big_perms);
      return TRUE;
    }
  sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 2, id, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      g_autoptr(GVariant) boxed = column_variant (stmt, 0, G_VARIANT_TYPE_VARIANT);

      *data = boxed ? g_variant_get_variant (boxed) : NULL;
      /* Rights are read only when asked for: Set of a whole entry needs its data alone. */
      if (perms)
        *perms = column_perms (stmt, 1);
      if (perms)
        limen_db_perm_keep_entry (db, table, id, *data, *perms);
    }
  else if (rc != SQLITE_DONE)
    db_error (db, error, "lookup");
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  return rc == SQLITE_ROW;
}

gboolean
limen_db_perm_has_table (LimenDb *db, const char *table)
{
  gboolean found;

  sqlite3_bind_text (db->has_table, 1, table, -1, SQLITE_STATIC);
  found = sqlite3_step (db->has_table) == SQLITE_ROW;
  sqlite3_reset (db->has_table);
  sqlite3_clear_bindings (db->has_table);
  return found;
}

gboolean
limen_db_perm_list (LimenDb *db, const char *table, gboolean with_perms, LimenDbPermEntryFunc entry_func,
                    gpointer user_data, GError **error)
{
  sqlite3_stmt *stmt = db->list_entries;
  int rc;

  sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GVariant) perms = with_perms ? column_perms (stmt, 1) : NULL;

      entry_func (table, (const char *) sqlite3_column_text (stmt, 0), NULL, perms, user_data);
    }
  if (rc != SQLITE_DONE)
    db_error (db, error, "list");
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  return rc == SQLITE_DONE;
}

gboolean
limen_db_sql_doc_put (LimenDb *db, const LimenDbDoc *doc, GError **error)
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
    return limen_db_sql_doc_put (db, doc, error);
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
    return limen_db_sql_doc_put_perms (db, id, app, perms, error);
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

gboolean
limen_db_sql_doc_put_perms (LimenDb *db, const char *id, const char *app, guint perms, GError **error)
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

/* The document row @stmt is on, to @doc_func. */
static void
doc_row (sqlite3_stmt *stmt, LimenDbDocFunc doc_func, gpointer user_data)
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

/* Step @stmt to its end, each row to @row; reset it. */
static gboolean
db_read_rows (LimenDb *db, sqlite3_stmt *stmt, void (*row) (sqlite3_stmt *, gpointer), gpointer data)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    row (stmt, data);
  if (rc != SQLITE_DONE)
    {
      int code = sqlite3_errcode (db->sql) & 0xff;

      if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
        db->damage_seen = TRUE;
      g_warning ("Cannot read the documents: %s", sqlite3_errmsg (db->sql));
    }
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  return rc == SQLITE_DONE;
}

typedef struct {
  LimenDbDocFunc     doc_func;
  LimenDbDocPermFunc perm_func;
  gpointer           user_data;
} DocRead;

static void
read_doc_row (sqlite3_stmt *stmt, gpointer data)
{
  DocRead *r = data;

  doc_row (stmt, r->doc_func, r->user_data);
}

static void
read_perm_row (sqlite3_stmt *stmt, gpointer data)
{
  DocRead *r = data;

  r->perm_func ((const char *) sqlite3_column_text (stmt, 0), (const char *) sqlite3_column_text (stmt, 1),
                (guint) sqlite3_column_int64 (stmt, 2), r->user_data);
}

gboolean
limen_db_doc_read (LimenDb *db, const char *id, const char *app, LimenDbDocFunc doc_func,
                   LimenDbDocPermFunc perm_func, gpointer user_data)
{
  DocRead r = { doc_func, perm_func, user_data };
  int which = id ? 0 : app ? 1 : 2;

  if (which < 2)
    {
      sqlite3_bind_text (db->read_doc[which], 1, id ? id : app, -1, SQLITE_STATIC);
      sqlite3_bind_text (db->read_doc_perms[which], 1, id ? id : app, -1, SQLITE_STATIC);
    }
  return db_read_rows (db, db->read_doc[which], read_doc_row, &r)
         && db_read_rows (db, db->read_doc_perms[which], read_perm_row, &r);
}

static void
read_app_row (sqlite3_stmt *stmt, gpointer data)
{
  void (*func) (const char *, gpointer) = ((gpointer *) data)[0];

  func ((const char *) sqlite3_column_text (stmt, 0), ((gpointer *) data)[1]);
}

gboolean
limen_db_doc_find_path (LimenDb *db, const char *path, LimenDbDocFunc doc_func, gpointer user_data)
{
  DocRead r = { doc_func, NULL, user_data };

  sqlite3_bind_blob (db->find_doc_path, 1, path, strlen (path), SQLITE_STATIC);
  return db_read_rows (db, db->find_doc_path, read_doc_row, &r);
}

gboolean
limen_db_doc_list_apps (LimenDb *db, void (*app_func) (const char *app, gpointer user_data), gpointer user_data)
{
  gpointer data[2] = { (gpointer) app_func, user_data };

  return db_read_rows (db, db->list_doc_apps, read_app_row, data);
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
    doc_row (stmt, doc_func, user_data);
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
  limen_db_load_pending (db, doc_func, perm_func, user_data);
  return TRUE;
}
