/* limen-documents — the database's files after a fault.
 *
 * SQLite's WAL recovery replays frames up to the first one whose salt or checksum does not
 * match and drops the rest without an error: garbage in the middle of the WAL silently takes
 * every later commit with it, and the next checkpoint empties the WAL for good. So the WAL is
 * read here first, per SQLite's file format, and if committed frames of the current WAL lie
 * beyond the point where recovery will stop, both files are copied aside and the log says so.
 * (The database also checkpoints the WAL empty at each quiet moment, so it rarely holds much.)
 *
 * A damaged database file cannot be opened or read at all; the daemon then starts from the
 * copy it keeps (written with SQLite's backup API at quiet moments and at exit), with the
 * damaged files kept beside it.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "db-recover.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

#define WAL_HEADER 32
#define WAL_FRAME_HEADER 24

static char *
stamp_now (void)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

  return g_date_time_format (now, "%Y%m%dT%H%M%SZ");
}

/* @file.damaged-@stamp, or with a number after it if that is taken (a second fault within
 * the same second must not overwrite the first one's evidence). */
static char *
aside_name (const char *file, const char *stamp)
{
  char *name = g_strdup_printf ("%s.damaged-%s", file, stamp);

  for (int i = 1; g_file_test (name, G_FILE_TEST_EXISTS); i++)
    {
      g_free (name);
      name = g_strdup_printf ("%s.damaged-%s.%d", file, stamp, i);
    }
  return name;
}

static guint32
be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

/* SQLite's WAL checksum over @len bytes (a multiple of 8), continuing from s[0], s[1]. */
static void
wal_checksum (gboolean big_endian, const guint8 *data, gsize len, guint32 s[2])
{
  for (gsize i = 0; i + 8 <= len; i += 8)
    {
      guint32 a, b;

      memcpy (&a, data + i, 4);
      memcpy (&b, data + i + 4, 4);
      a = big_endian ? GUINT32_FROM_BE (a) : GUINT32_FROM_LE (a);
      b = big_endian ? GUINT32_FROM_BE (b) : GUINT32_FROM_LE (b);
      s[0] += a + s[1];
      s[1] += b + s[0];
    }
}

typedef struct {
  guint valid;       /* frames SQLite's recovery keeps (up to its last commit) */
  guint beyond;      /* frames of the current WAL after the first bad one */
  guint commits_beyond;
} WalScan;

/* Scan the WAL in @data: FALSE when it has no valid header (nothing there to recover). */
static gboolean
wal_scan (const guint8 *data, gsize len, WalScan *out)
{
  guint32 magic, page_size, salt[2], s[2] = { 0, 0 };
  gboolean big_endian, broken = FALSE;
  gsize frame, pos;
  guint index = 0;

  memset (out, 0, sizeof *out);
  if (len < WAL_HEADER)
    return FALSE;
  magic = be32 (data);
  if ((magic & 0xfffffffe) != 0x377f0682)
    return FALSE;
  big_endian = magic & 1;
  page_size = be32 (data + 8);
  if (page_size == 1)
    page_size = 65536;
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0)
    return FALSE;
  wal_checksum (big_endian, data, 24, s);
  if (s[0] != be32 (data + 24) || s[1] != be32 (data + 28))
    return FALSE;
  salt[0] = be32 (data + 16);
  salt[1] = be32 (data + 20);
  frame = WAL_FRAME_HEADER + page_size;
  for (pos = WAL_HEADER; pos + frame <= len; pos += frame, index++)
    {
      const guint8 *f = data + pos;
      gboolean ours = be32 (f + 8) == salt[0] && be32 (f + 12) == salt[1];

      if (!broken)
        {
          guint32 t[2] = { s[0], s[1] };

          wal_checksum (big_endian, f, 8, t);
          wal_checksum (big_endian, f + WAL_FRAME_HEADER, page_size, t);
          if (ours && be32 (f) != 0 && t[0] == be32 (f + 16) && t[1] == be32 (f + 20))
            {
              s[0] = t[0];
              s[1] = t[1];
              if (be32 (f + 4) != 0)
                out->valid = index + 1;
              continue;
            }
          broken = TRUE;
        }
      /* Past the break, frames of this WAL (its salts) were written after it: lost to
       * recovery. Older frames left from before the WAL was last restarted have other salts. */
      if (ours)
        {
          out->beyond++;
          if (be32 (f + 4) != 0)
            out->commits_beyond++;
        }
    }
  return TRUE;
}

static gboolean
copy_file (const char *from, const char *to, GError **error)
{
  g_autofree char *data = NULL;
  gsize len;

  return g_file_get_contents (from, &data, &len, error) &&
         g_file_set_contents_full (to, data, len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error);
}

guint
limen_db_recover_check_wal (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *stamp = NULL, *db_aside = NULL, *wal_aside = NULL;
  g_autoptr(GMappedFile) map = NULL;
  g_autoptr(GError) error = NULL;
  WalScan scan;

  map = g_mapped_file_new (wal, FALSE, NULL);
  if (map == NULL || !wal_scan ((const guint8 *) g_mapped_file_get_contents (map), g_mapped_file_get_length (map),
                                &scan) || scan.commits_beyond == 0)
    return 0;
  stamp = stamp_now ();
  db_aside = aside_name (path, stamp);
  wal_aside = aside_name (wal, stamp);
  if (!copy_file (path, db_aside, &error) || !copy_file (wal, wal_aside, &error))
    g_warning ("Cannot keep the damaged files aside: %s", error->message);
  g_warning ("%s is damaged: SQLite's recovery keeps its first %u frames and drops %u later ones "
             "(%u committed transactions): the permission and document changes they held are lost. "
             "The files as they were are kept as %s and %s.",
             wal, scan.valid, scan.beyond, scan.commits_beyond, db_aside, wal_aside);
  return scan.beyond;
}

gboolean
limen_db_recover_from_backup (const char *path, const char *reason, GError **error)
{
  static const char *suffixes[] = { "", "-wal", "-shm" };
  g_autofree char *stamp = stamp_now ();
  g_autofree char *backup = g_strconcat (path, ".backup", NULL);
  g_autofree char *aside = aside_name (path, stamp);
  g_autofree char *when = NULL;
  GStatBuf st;

  for (gsize i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *file = g_strconcat (path, suffixes[i], NULL);
      g_autofree char *to = i == 0 ? g_strdup (aside) : aside_name (file, stamp);

      if (g_rename (file, to) != 0 && errno != ENOENT)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot move %s aside: %s", file, g_strerror (errno));
          return FALSE;
        }
    }
  if (g_stat (backup, &st) != 0)
    {
      g_warning ("%s is damaged (%s) and there is no copy to start from: starting with an empty store. "
                 "Every permission and document it held is lost to this session; the file is kept as %s.",
                 path, reason, aside);
      return TRUE;
    }
  {
    g_autoptr(GDateTime) t = g_date_time_new_from_unix_local (st.st_mtime);

    when = g_date_time_format (t, "%Y-%m-%d %H:%M:%S");
  }
  if (!copy_file (backup, path, error))
    return FALSE;
  g_warning ("%s is damaged (%s): starting from its copy of %s (%s). Changes made after that copy "
             "and taken into the database are lost; the damaged file is kept as %s.",
             path, reason, when, backup, aside);
  return TRUE;
}

void
limen_db_recover_drop_backup (const char *path)
{
  g_autofree char *stamp = stamp_now ();
  g_autofree char *backup = g_strconcat (path, ".backup", NULL);
  g_autofree char *aside = aside_name (backup, stamp);

  if (g_rename (backup, aside) != 0)
    g_warning ("Cannot move %s aside: %s", backup, g_strerror (errno));
  else
    g_warning ("The copy %s is damaged as well; it is kept as %s", backup, aside);
}

gboolean
limen_db_recover_write_backup (sqlite3 *sql, const char *path, GError **error)
{
  g_autofree char *tmp = g_strconcat (path, ".backup-new", NULL);
  g_autofree char *final = g_strconcat (path, ".backup", NULL);
  sqlite3 *dest = NULL;
  sqlite3_backup *backup;
  int rc;

  (void) g_unlink (tmp);
  rc = sqlite3_open_v2 (tmp, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (dest, "PRAGMA journal_mode=OFF", NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    {
      backup = sqlite3_backup_init (dest, "main", sql, "main");
      rc = backup ? sqlite3_backup_step (backup, -1) : sqlite3_errcode (dest);
      if (backup && sqlite3_backup_finish (backup) != SQLITE_OK && rc == SQLITE_DONE)
        rc = sqlite3_errcode (dest);
    }
  if (rc != SQLITE_DONE)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot write %s: %s", tmp,
                 dest ? sqlite3_errmsg (dest) : sqlite3_errstr (rc));
  sqlite3_close (dest);
  if (rc != SQLITE_DONE)
    {
      (void) g_unlink (tmp);
      return FALSE;
    }
  if (g_rename (tmp, final) != 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot rename %s: %s", tmp, g_strerror (errno));
      (void) g_unlink (tmp);
      return FALSE;
    }
  return TRUE;
}

/* ---- the check at start ------------------------------------------------------------------ */

/* What says the database is as a clean exit left it: its identity, size and time stamp
 * after the last close, which found no damage. */
static char *
clean_mark (const char *path)
{
  struct stat st;

  if (g_stat (path, &st) != 0)
    return NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                          " %ld\n", (guint64) st.st_dev, (guint64) st.st_ino, (gint64) st.st_size,
                          (gint64) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec);
}

gboolean
limen_db_recover_closed_clean (const char *path)
{
  g_autofree char *mark_path = g_strconcat (path, "-checked", NULL);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *mark = NULL;
  g_autofree char *now = clean_mark (path);
  gboolean had = g_file_get_contents (mark_path, &mark, NULL, NULL);
  struct stat st;
  gboolean clean;
  int fd;

  /* Used once: emptied (made, the first time) now, so that the exit only writes into a
   * file that is there already: whoever removes the directory as the daemon exits finds
   * no file appear in it. Whatever happens from here on, the next start decides anew. */
  fd = open (mark_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0)
    close (fd);
  clean = had && now && strcmp (mark, now) == 0 && (g_stat (wal, &st) != 0 || st.st_size == 0);
  if (had && mark[0] && !clean)
    g_debug ("%s changed since the last clean exit: checking it", path);
  return clean;
}

void
limen_db_recover_mark_clean (const char *path)
{
  g_autofree char *mark_path = g_strconcat (path, "-checked", NULL);
  g_autofree char *mark = clean_mark (path);
  gsize len = mark ? strlen (mark) : 0;
  int fd;

  /* In place, into the file the start made (see above). A torn write only costs a check. */
  if (mark == NULL || (fd = open (mark_path, O_WRONLY | O_CLOEXEC)) < 0)
    return;
  if (pwrite (fd, mark, len, 0) != (ssize_t) len || ftruncate (fd, len) != 0)
    g_warning ("Cannot write %s: %s", mark_path, g_strerror (errno));
  close (fd);
}

/* ---- the check after a clean exit, in the background -------------------------------------- */

struct _LimenDbCheck {
  GThread *thread;
  char    *path;
  gint     state;            /* atomic LimenDbCheckState */
};

static gboolean
sql_is_damaged (sqlite3 *sql)
{
  int rc = sqlite3_errcode (sql) & 0xff;

  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

gboolean
limen_db_recover_quick_check (sqlite3 *sql, gboolean *damaged, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  g_autofree char *first = NULL;

  if (sqlite3_prepare_v2 (sql, "PRAGMA quick_check(1)", -1, &stmt, NULL) != SQLITE_OK)
    {
      *damaged = sql_is_damaged (sql);
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Database error (check): %s", sqlite3_errmsg (sql));
      return FALSE;
    }
  if (sqlite3_step (stmt) == SQLITE_ROW)
    first = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  else
    *damaged = sql_is_damaged (sql);
  sqlite3_finalize (stmt);
  if (g_strcmp0 (first, "ok") == 0)
    return TRUE;
  if (first)
    *damaged = TRUE;
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Database check failed: %s",
               first ? first : sqlite3_errmsg (sql));
  return FALSE;
}

static gpointer
check_thread (gpointer data)
{
  LimenDbCheck *check = data;
  sqlite3 *sql = NULL;
  g_autoptr(GError) error = NULL;
  gboolean damaged = FALSE;

  /* A connection of its own, read-only: WAL lets it read while the main one writes. Only
   * damage counts; a busy or vanished file says nothing about the pages. */
  if (sqlite3_open_v2 (check->path, &sql, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
    {
      /* It reads every page once: a cache would only hold them, in the daemon's memory at
       * start (2 MiB of SQLite's default, as much as the stores themselves). */
      sqlite3_exec (sql, "PRAGMA cache_size=-64", NULL, NULL, NULL);
      limen_db_recover_quick_check (sql, &damaged, &error);
    }
  else
    damaged = sql_is_damaged (sql);
  sqlite3_close (sql);
  if (damaged)
    g_warning ("%s is damaged (%s): the next start begins from its copy", check->path,
               error ? error->message : "cannot be opened");
  g_atomic_int_set (&check->state, damaged ? LIMEN_DB_CHECK_DAMAGED : LIMEN_DB_CHECK_OK);
  return NULL;
}

LimenDbCheck *
limen_db_recover_check_start (const char *path)
{
  LimenDbCheck *check = g_new0 (LimenDbCheck, 1);

  check->path = g_strdup (path);
  check->state = LIMEN_DB_CHECK_RUNNING;
  check->thread = g_thread_new ("limen-db-check", check_thread, check);
  return check;
}

LimenDbCheckState
limen_db_recover_check_state (LimenDbCheck *check)
{
  return check ? g_atomic_int_get (&check->state) : LIMEN_DB_CHECK_OK;
}

LimenDbCheckState
limen_db_recover_check_finish (LimenDbCheck *check)
{
  LimenDbCheckState state;

  if (check == NULL)
    return LIMEN_DB_CHECK_OK;
  g_thread_join (check->thread);
  state = g_atomic_int_get (&check->state);
  g_free (check->path);
  g_free (check);
  return state;
}
