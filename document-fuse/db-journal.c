/* limen-documents — the file of changes answered but not yet in the database.
 *
 * A SQLite transaction per exported file costs more than everything else Documents.Add
 * does (its locks, its 4 KiB WAL frame). An Add is answered once its change is in this
 * file instead: one write() of a small record, which, like a WAL commit with
 * synchronous=NORMAL, survives a crash of the daemon (not a power cut). The database takes
 * the records over in one transaction a moment later (see db.c).
 *
 * Each transaction is one frame: its length and FNV-1a checksum (32 bits, little endian),
 * then a serialized GVariant "(tav)": the transaction's sequence number and its records. A frame is written with one pwrite(); a crash in the
 * middle leaves a frame whose checksum fails, and reading stops there.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "db-journal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

#define FRAME_HEADER 8
#define FRAME_MAX (1u << 28)   /* a sanity bound: AddFull takes up to 16,384 files */

struct _LimenDbJournal {
  int   fd;
  off_t end;      /* where the next frame goes */
  char *path;
  gboolean broken; /* a damaged end could not be cut off: appending would lose the frame */
};

static guint32
fnv1a (const guint8 *data, gsize len)
{
  guint32 h = 2166136261u;

  for (gsize i = 0; i < len; i++)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

static gboolean
io_error (GError **error, const char *what, const char *path)
{
  int errsv = errno;

  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "%s %s: %s", what, path, g_strerror (errsv));
  return FALSE;
}

/* The whole file (its size in *@len), or NULL when it is empty or unreadable. */
static guint8 *
read_all (LimenDbJournal *journal, gsize *len)
{
  struct stat st;
  g_autofree guint8 *data = NULL;
  gsize size, got = 0;

  *len = 0;
  if (fstat (journal->fd, &st) != 0 || st.st_size <= 0)
    return NULL;
  size = st.st_size;
  data = g_malloc (size);
  while (got < size)
    {
      ssize_t n = pread (journal->fd, data + got, size - got, got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
    }
  *len = got;
  return g_steal_pointer (&data);
}

/* The length of the frame at @pos of @data, header included, or 0 if it is torn or damaged. */
static gsize
frame_at (const guint8 *data, gsize len, gsize pos)
{
  guint32 header[2], size, sum;

  if (pos + FRAME_HEADER > len)
    return 0;
  memcpy (header, data + pos, sizeof header);
  size = GUINT32_FROM_LE (header[0]);
  sum = GUINT32_FROM_LE (header[1]);
  if (size == 0 || size > FRAME_MAX || size > len - pos - FRAME_HEADER ||
      fnv1a (data + pos + FRAME_HEADER, size) != sum)
    return 0;
  return FRAME_HEADER + size;
}

/* Where the complete frames at the start of @data end. */
static gsize
good_end (const guint8 *data, gsize len)
{
  gsize pos = 0, n;

  while ((n = frame_at (data, len, pos)) > 0)
    pos += n;
  return pos;
}

/* Cut a damaged end (a crash in the middle of a frame's write, a power cut) back to the last
 * complete frame, before anything is appended: a frame written after it would never be read,
 * since reading stops at the damage. The damaged bytes are kept beside the journal. Only the
 * owner does this; a reader meanwhile stops at the same place either way. */
static void
cut_damaged_end (LimenDbJournal *journal)
{
  gsize len, end;
  g_autofree guint8 *data = read_all (journal, &len);
  g_autofree char *stamp = NULL, *aside = NULL;
  g_autoptr(GDateTime) now = NULL;
  g_autoptr(GError) error = NULL;

  end = good_end (data, len);
  journal->end = end;
  if (end == len)
    return;
  now = g_date_time_new_now_utc ();
  stamp = g_date_time_format (now, "%Y%m%dT%H%M%SZ");
  aside = g_strdup_printf ("%s.damaged-%s", journal->path, stamp);
  if (!g_file_set_contents_full (aside, (const char *) data + end, len - end, G_FILE_SET_CONTENTS_NONE,
                                 0600, &error))
    g_warning ("Cannot keep the damaged end of %s: %s", journal->path, error->message);
  g_warning ("Ignoring a damaged end of %s (%" G_GSIZE_FORMAT " bytes after %" G_GSIZE_FORMAT
             " good ones, kept in %s): a change answered in it, if any, is lost",
             journal->path, len - end, end, aside);
  if (ftruncate (journal->fd, end) != 0)
    {
      g_warning ("Cannot truncate %s: %s", journal->path, g_strerror (errno));
      /* Appending after the damage would hide every new frame: append nothing. */
      journal->broken = TRUE;
    }
}

LimenDbJournal *
limen_db_journal_open (const char *path, gboolean *owner, GError **error)
{
  g_autoptr(LimenDbJournal) journal = g_new0 (LimenDbJournal, 1);
  struct stat st;

  journal->path = g_strdup (path);
  journal->fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (journal->fd < 0 || fstat (journal->fd, &st) != 0)
    {
      io_error (error, "Cannot open", path);
      return NULL;
    }
  /* A second instance (--replace starts one while the first still serves) only reads. */
  *owner = flock (journal->fd, LOCK_EX | LOCK_NB) == 0;
  journal->end = st.st_size;
  if (*owner)
    cut_damaged_end (journal);
  return g_steal_pointer (&journal);
}

void
limen_db_journal_close (LimenDbJournal *journal)
{
  if (journal->fd >= 0)
    close (journal->fd);
  g_free (journal->path);
  g_free (journal);
}

gboolean
limen_db_journal_append (LimenDbJournal *journal, GVariant *transaction, GError **error)
{
  gsize len = g_variant_get_size (transaction);
  g_autofree guint8 *frame = NULL;
  guint32 header[2];
  gsize done = 0;

  if (len == 0 || len > FRAME_MAX)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Journal record of a bad size");
      return FALSE;
    }
  if (journal->broken)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                           "The document store's journal is damaged and cannot be repaired");
      return FALSE;
    }
  frame = g_malloc (FRAME_HEADER + len);
  g_variant_store (transaction, frame + FRAME_HEADER);
  header[0] = GUINT32_TO_LE ((guint32) len);
  header[1] = GUINT32_TO_LE (fnv1a (frame + FRAME_HEADER, len));
  memcpy (frame, header, sizeof header);
  while (done < FRAME_HEADER + len)
    {
      ssize_t n = pwrite (journal->fd, frame + done, FRAME_HEADER + len - done, journal->end + done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int errsv = n < 0 ? errno : ENOSPC;

          /* The path goes to the log only: the message goes back to the caller. */
          g_warning ("Cannot write %s: %s", journal->path, g_strerror (errsv));
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot write the document store's journal: %s",
                       g_strerror (errsv));
          /* A torn frame would hide every frame after it: take it back. */
          if (ftruncate (journal->fd, journal->end) != 0)
            g_warning ("Cannot truncate %s: %s", journal->path, g_strerror (errno));
          return FALSE;
        }
      done += n;
    }
  journal->end += done;
  return TRUE;
}

GPtrArray *
limen_db_journal_read (LimenDbJournal *journal)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  gsize got, pos = 0, n;
  g_autofree guint8 *data = read_all (journal, &got);

  while ((n = frame_at (data, got, pos)) > 0)
    {
      gsize len = n - FRAME_HEADER;
      gpointer copy = g_memdup2 (data + pos + FRAME_HEADER, len);
      g_autoptr(GVariant) v = g_variant_ref_sink (g_variant_new_from_data (G_VARIANT_TYPE ("(tav)"), copy, len,
                                                                           FALSE, g_free, copy));

      /* Ours, but read back from a file: normalise before anyone trusts it. */
      g_ptr_array_add (out, g_variant_get_normal_form (v));
      pos += n;
    }
  if (pos < got)
    g_warning ("Ignoring a damaged end of %s (%" G_GSIZE_FORMAT " bytes)", journal->path, got - pos);
  return out;
}

gboolean
limen_db_journal_clear (LimenDbJournal *journal, GError **error)
{
  if (ftruncate (journal->fd, 0) != 0)
    return io_error (error, "Cannot empty", journal->path);
  journal->end = 0;
  return TRUE;
}
