/* limen-documents — the database's files after a fault: a damaged WAL, a damaged database,
 * and the copy kept to start from. Used by db.c only.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Before SQLite opens @path: if its WAL holds committed frames SQLite's recovery would drop
 * (damage in the middle: recovery stops at the first bad frame without a word), copy the
 * database and the WAL aside and say loudly what is lost. Returns the number of such frames. */
guint limen_db_recover_check_wal (const char *path);

/* Move the damaged database at @path (with its -wal and -shm) aside and put the last good copy
 * (@path.backup) in its place, or nothing when there is none; says loudly what it did. */
gboolean limen_db_recover_from_backup (const char *path, const char *reason, GError **error);

/* The copy turned out damaged as well: move it aside. */
void limen_db_recover_drop_backup (const char *path);

/* Write a copy of @sql's main database to @path.backup (atomically replaced). */
gboolean limen_db_recover_write_backup (sqlite3 *sql, const char *path, GError **error);

/* SQLite's quick check of every page; FALSE with *@damaged TRUE for damage. */
gboolean limen_db_recover_quick_check (sqlite3 *sql, gboolean *damaged, GError **error);

/* TRUE when @path is exactly as the last clean exit left it (limen_db_recover_mark_clean())
 * with an empty WAL: nothing has written to it since a run that opened it checked and found
 * no damage, so the whole-file check at start can be skipped. The mark is used up (the file,
 * @path-checked, stays, empty). */
gboolean limen_db_recover_closed_clean (const char *path);
/* After a close that found no damage: remember the file as it is now. */
void limen_db_recover_mark_clean (const char *path);

/* The whole-file check of a database a clean exit left, run on a thread of its own after the
 * start: until it says OK no copy is made of it (a damaged file must not replace the good
 * copy), and damage it finds is logged and leaves no clean mark, so the next start checks
 * again and begins from the copy. */
typedef enum {
  LIMEN_DB_CHECK_RUNNING,
  LIMEN_DB_CHECK_OK,
  LIMEN_DB_CHECK_DAMAGED,
} LimenDbCheckState;
typedef struct _LimenDbCheck LimenDbCheck;
LimenDbCheck *limen_db_recover_check_start (const char *path);
/* OK for NULL (no check was needed). */
LimenDbCheckState limen_db_recover_check_state (LimenDbCheck *check);
/* Wait for it to end, free it and say what it found. */
LimenDbCheckState limen_db_recover_check_finish (LimenDbCheck *check);

G_END_DECLS
