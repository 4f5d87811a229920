/* limen-documents — the SQLite database behind the document and permission stores.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef struct _LimenDb LimenDb;

/* One persistent document row, as stored. */
typedef struct {
  const char *id;
  const char *path;        /* host path of the file or directory */
  guint64     dev;
  guint64     ino;
  int         handle_type; /* name_to_handle_at() type, 0 with no handle */
  GBytes     *handle;      /* name_to_handle_at() bytes or NULL */
  guint       flags;       /* LimenDocFlags */
} LimenDbDoc;

/* Called for each row when loading. */
typedef void (*LimenDbPermEntryFunc) (const char *table, const char *id, GVariant *data, GVariant *perms,
                                      gpointer user_data);
typedef void (*LimenDbDocFunc) (const LimenDbDoc *doc, gpointer user_data);
typedef void (*LimenDbDocPermFunc) (const char *doc_id, const char *app, guint perms, gpointer user_data);

/* Open (creating and migrating) the database at @path: WAL, foreign keys, schema version. */
LimenDb *limen_db_open (const char *path, GError **error);
/* Close the database (checkpoints the WAL). */
void limen_db_close (LimenDb *db);
/* SQLite found the file damaged (a read, or the check of a file a clean exit left). */
gboolean limen_db_is_damaged (LimenDb *db);

/* Start / end a write transaction; nested calls are counted. */
gboolean limen_db_begin (LimenDb *db, GError **error);
gboolean limen_db_commit (LimenDb *db, GError **error);
/* Start a transaction of document rows only (limen_db_doc_put, limen_db_doc_put_perms) whose
 * commit is one write() to the journal beside the database, which survives a crash of this
 * process as a WAL commit does; the database takes such transactions over a moment later,
 * at the next limen_db_begin() or limen_db_close() at the latest. Nested in another
 * transaction (or with no journal) it is an ordinary one. */
gboolean limen_db_begin_journaled (LimenDb *db, GError **error);
/* Undo the outermost transaction (after an error anywhere inside it). */
void limen_db_rollback (LimenDb *db);

/* The string value of @key in the meta table, or NULL. */
char *limen_db_get_meta (LimenDb *db, const char *key);
gboolean limen_db_set_meta (LimenDb *db, const char *key, const char *value, GError **error);

/* Permission-store rows: (table, id) → data (may be NULL) and every app's permissions (a{sas}). */
gboolean limen_db_perm_put_entry (LimenDb *db, const char *table, const char *id, GVariant *data,
                                  GVariant *perms, GError **error);
/* The same with the a{sas} already serialized. */
gboolean limen_db_perm_put_entry_bytes (LimenDb *db, const char *table, const char *id, GVariant *data,
                                        GBytes *perms, GError **error);
gboolean limen_db_perm_delete_entry (LimenDb *db, const char *table, const char *id, GError **error);
/* The entry (@table, @id), read now: its data (unboxed; NULL when it has none) and, unless
 * @perms is NULL, its a{sas}, new references; FALSE (and @error only on a database error)
 * when there is none. The last entry read with rights of 64 KiB or more is kept until it is
 * written. */
gboolean limen_db_perm_get_entry (LimenDb *db, const char *table, const char *id, GVariant **data,
                                  GVariant **perms, GError **error);
/* Keep (@table, @id) as just committed (@data unboxed, @perms checked), if it is big: the
 * read that follows a Set need not check 20,000 apps' bytes again. */
void limen_db_perm_keep_entry (LimenDb *db, const char *table, const char *id, GVariant *data, GVariant *perms);
/* TRUE when @table has at least one entry. */
gboolean limen_db_perm_has_table (LimenDb *db, const char *table);
/* Every entry of @table to @entry_func (no data; its a{sas} only when @with_perms). */
gboolean limen_db_perm_list (LimenDb *db, const char *table, gboolean with_perms, LimenDbPermEntryFunc entry_func,
                             gpointer user_data, GError **error);
/* Every row, for tests and tools: the daemon reads entries on demand. */
gboolean limen_db_perm_load (LimenDb *db, LimenDbPermEntryFunc entry_func, gpointer user_data, GError **error);

/* Document rows. */
gboolean limen_db_doc_put (LimenDb *db, const LimenDbDoc *doc, GError **error);
gboolean limen_db_doc_delete (LimenDb *db, const char *id, GError **error);
gboolean limen_db_doc_put_perms (LimenDb *db, const char *id, const char *app, guint perms, GError **error);
/* The rows SQLite holds (not the journal's): document @id, or the documents @app has rights
 * on, or (both NULL) every document; their rows to @doc_func, then every right of theirs
 * (each app's) to @perm_func. Callers serialize these reads (the document model's lock);
 * FALSE (logged) when SQLite failed. */
gboolean limen_db_doc_read (LimenDb *db, const char *id, const char *app, LimenDbDocFunc doc_func,
                            LimenDbDocPermFunc perm_func, gpointer user_data);
/* The documents SQLite has at @path that are not unique ones, newest id first, to @doc_func;
 * same rules. */
gboolean limen_db_doc_find_path (LimenDb *db, const char *path, LimenDbDocFunc doc_func, gpointer user_data);
/* Every app with a right on a document in SQLite, to @app_func; same rules. */
gboolean limen_db_doc_list_apps (LimenDb *db, void (*app_func) (const char *app, gpointer user_data),
                                 gpointer user_data);
/* TRUE when SQLite holds every change: no transaction open, nothing waiting in the journal. */
gboolean limen_db_is_settled (LimenDb *db);
/* The journal's transactions SQLite does not have yet (after a crash), to @doc_func and
 * @perm_func in order. */
void limen_db_replay_pending (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func,
                              gpointer user_data);
/* Every row, for tests and tools: the daemon reads documents on demand. */
gboolean limen_db_doc_load (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func,
                            gpointer user_data, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenDb, limen_db_close)

G_END_DECLS
