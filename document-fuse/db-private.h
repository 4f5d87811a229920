/* limen-documents — what the database's files share: the connection's state. Not
 * installed. Files: db.c (SQLite: schema, entries, documents, transactions), db-pending.c
 * (journaled transactions and the quiet moments' work), db-journal.c (the journal file),
 * db-recover.c (a damaged file).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sqlite3.h>

#include "db.h"
#include "db-journal.h"
#include "db-recover.h"

G_BEGIN_DECLS

struct _LimenDb {
  sqlite3      *sql;
  int           depth;      /* nesting of limen_db_begin() */
  gboolean      failed;     /* a nested step failed: the outer commit must roll back */
  char         *fail_reason; /* SQLite's word for the first failed step, for the caller */
  char         *path;
  sqlite3_stmt *put_entry, *delete_entry;
  sqlite3_stmt *get_entry, *has_table, *list_entries;  /* the permission store reads on demand */
  char         *big_table, *big_id;      /* the last big entry read, kept until written */
  GVariant     *big_data, *big_perms;
  sqlite3_stmt *put_doc, *delete_doc, *put_doc_perm, *delete_doc_perm;
  sqlite3_stmt *get_meta, *set_meta;
  /* The document model's reads on demand (limen_db_doc_read), under the model's lock:
   * one document, the documents of an app, every document. */
  sqlite3_stmt *read_doc[3], *read_doc_perms[3], *list_doc_apps, *find_doc_path;
  sqlite3_stmt *begin, *commit;  /* prepared once: parsing them cost each Add ~3% */
  /* Journaled transactions (limen_db_begin_journaled): their document rows go to the journal
   * and wait in @pending, oldest first, until limen_db_flush_journal() applies them to SQLite. */
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

/* Shared by db.c and db-pending.c. */
/* A failed transaction: SQLite's reason to @error (and, with the file's name, to the log); FALSE. */
gboolean limen_db_transaction_failed (LimenDb *db, GError **error);
/* Run a prepared statement that returns no rows (and reset it). */
gboolean limen_db_step_done (LimenDb *db, sqlite3_stmt *stmt, GError **error);
/* The SQLite rows of a document and of an app's rights on one, without the journal. */
gboolean limen_db_sql_doc_put (LimenDb *db, const LimenDbDoc *doc, GError **error);
gboolean limen_db_sql_doc_put_perms (LimenDb *db, const char *id, const char *app, guint perms, GError **error);

/* The journal (db-pending.c). */
/* Apply every pending transaction to SQLite, in one transaction. */
gboolean limen_db_flush_journal (LimenDb *db, GError **error);
/* Commit the open journaled transaction: its rows to the journal with one write(). */
gboolean limen_db_commit_journaled (LimenDb *db, GError **error);
/* Take over what a crashed run left in the journal at @path-pending, then own it. */
void limen_db_open_journal (LimenDb *db, const char *path);
/* A change is in the database or the journal: the quiet moment after it has work to do. */
void limen_db_note_change (LimenDb *db);
/* The journal's transactions SQLite does not have yet, to @doc_func and @perm_func, after
 * the database's rows. */
void limen_db_load_pending (LimenDb *db, LimenDbDocFunc doc_func, LimenDbDocPermFunc perm_func,
                            gpointer user_data);

G_END_DECLS
