/* limen-documents — import of the reference implementation's state.
 *
 * xdg-permission-store keeps one GVDB file per table in $XDG_DATA_HOME/flatpak/db; its
 * "main" table maps each id to (v data, a{sas} permissions); import-document.c reads one
 * entry. We never write those files.
 *
 * Every entry that was read is recorded in the meta table ("reference-import/TABLE/ID"), in
 * the transaction that stores it, and never looked at again: a document deleted here is
 * not brought back, a permission changed here is not reset. An entry that was not read (a
 * layout this version does not know, a damaged value, a database error) is not recorded and
 * is tried again at every start, by this version or a later one. A file with nothing left
 * to read is recorded by its identity and size and time ("reference-import-file/TABLE"), so
 * later starts do not read it again until the reference rewrites it.
 *
 * Versions before these records marked the whole import done ("reference-state-imported")
 * after one pass that accepted only (va{sas}) entries and documents in the old layout
 * exactly. With that mark and no records, an entry that pass would have accepted counts as
 * read (imported then, or deleted since: not ours to bring back); every other one, such as
 * each document in the layout of upstream 1.21.2, is imported now.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "import.h"

#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>

#include "gvdb-reader.h"
#include "import-private.h"

#define LEGACY_KEY       "reference-state-imported"
#define VERSION_KEY      "reference-import-version"
#define ENTRY_KEY_PREFIX "reference-import/"
#define FILE_KEY_PREFIX  "reference-import-file/"
#define IDS_LOGGED       20
#define PROGRESS_EVERY   10000

static const char *const outcome_names[LIMEN_IMPORT_N_OUTCOMES] = {
  [LIMEN_IMPORT_IMPORTED] = "imported",
  [LIMEN_IMPORT_SESSION_ONLY] = "session-only",
  [LIMEN_IMPORT_PRESENT] = "present",
  [LIMEN_IMPORT_READ_BEFORE] = "read-before",
  [LIMEN_IMPORT_UNKNOWN_LAYOUT] = "in a layout this version does not know",
  [LIMEN_IMPORT_MALFORMED] = "damaged",
  [LIMEN_IMPORT_FAILED] = "not stored",
};

static const char *const note_names[LIMEN_IMPORT_N_NOTES] = {
  "read with members or flags this version leaves out",
  "found again through the file handle of their folder, which moved",
  "not at their recorded path, kept with it (on a drive not mounted now?)",
  "at their recorded path in a folder that is not the recorded one, kept by their path",
  "with app ids that are not valid, left out",
};

typedef struct {
  LimenDb        *db;
  LimenPermStore *perms;
  LimenDocModel  *model;
  LimenImportRun *run;
  const char     *table;
  gboolean        legacy;
  guint           n_recorded;  /* read at an earlier start */
  guint           n_seen;      /* entries of the file looked at so far */
  gint64          started_us;
  guint           counts[LIMEN_IMPORT_N_OUTCOMES];
  GPtrArray      *ids[LIMEN_IMPORT_N_OUTCOMES];  /* "id (why)" of each entry not read */
  GPtrArray      *noted[LIMEN_IMPORT_N_NOTES];   /* ids of imported documents with a note */
} FileImport;

static void
file_import_clear (FileImport *fi)
{
  for (guint i = 0; i < LIMEN_IMPORT_N_OUTCOMES; i++)
    g_clear_pointer (&fi->ids[i], g_ptr_array_unref);
  for (guint i = 0; i < LIMEN_IMPORT_N_NOTES; i++)
    g_clear_pointer (&fi->noted[i], g_ptr_array_unref);
}

static void
add_id (GPtrArray **list, char *text)
{
  if (*list == NULL)
    *list = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (*list, text);
}

static char *
entry_key (const FileImport *fi, const char *id)
{
  return g_strconcat (ENTRY_KEY_PREFIX, fi->table, "/", id, NULL);
}

/* Read one entry not recorded yet, and record it when it was read. */
static void
read_entry (FileImport *fi, const char *key, const char *id, GVariant *value)
{
  g_autofree char *why = NULL;
  LimenImportOutcome outcome;
  guint notes = 0;

  if (strcmp (fi->table, "documents") == 0)
    outcome = limen_import_document (fi->run, fi->model, id, value, fi->legacy, &notes, &why);
  else
    outcome = limen_import_permission_entry (fi->perms, fi->table, id, value, fi->legacy, &why);
  fi->counts[outcome]++;
  if (!LIMEN_IMPORT_OUTCOME_IS_READ (outcome))
    {
      add_id (&fi->ids[outcome], g_strdup_printf ("%s (%s)", id, why ? why : "?"));
      return;
    }
  for (guint i = 0; i < LIMEN_IMPORT_N_NOTES; i++)
    if (notes & (1u << i))
      add_id (&fi->noted[i], g_strdup (id));
  if (!limen_db_set_meta (fi->db, key, outcome_names[outcome], NULL))
    g_warning ("Cannot record the import of %s/%s", fi->table, id);
}

/* What the log of a file has counted so far, to take back what a call's read of an entry
 * added when the steps will read that entry again (it was not read, or not stored). */
typedef struct {
  guint counts[LIMEN_IMPORT_N_OUTCOMES];
  guint n_ids[LIMEN_IMPORT_N_OUTCOMES];
  guint n_noted[LIMEN_IMPORT_N_NOTES];
} FileImportMark;

static void
file_import_mark (const FileImport *fi, FileImportMark *mark)
{
  memcpy (mark->counts, fi->counts, sizeof mark->counts);
  for (guint i = 0; i < LIMEN_IMPORT_N_OUTCOMES; i++)
    mark->n_ids[i] = fi->ids[i] ? fi->ids[i]->len : 0;
  for (guint i = 0; i < LIMEN_IMPORT_N_NOTES; i++)
    mark->n_noted[i] = fi->noted[i] ? fi->noted[i]->len : 0;
}

static void
file_import_back_to (FileImport *fi, const FileImportMark *mark)
{
  memcpy (fi->counts, mark->counts, sizeof mark->counts);
  for (guint i = 0; i < LIMEN_IMPORT_N_OUTCOMES; i++)
    if (fi->ids[i])
      g_ptr_array_set_size (fi->ids[i], mark->n_ids[i]);
  for (guint i = 0; i < LIMEN_IMPORT_N_NOTES; i++)
    if (fi->noted[i])
      g_ptr_array_set_size (fi->noted[i], mark->n_noted[i]);
}

/* The steps' walk through a file. */
static void
import_entry (const char *id, GVariant *value, gpointer user_data)
{
  FileImport *fi = user_data;
  g_autofree char *key = entry_key (fi, id);
  g_autofree char *recorded = limen_db_get_meta (fi->db, key);

  /* A store of years of use holds tens of thousands of entries; its one-time import takes
   * seconds, which the log should account for as it goes. */
  if (++fi->n_seen % PROGRESS_EVERY == 0)
    g_message ("Reference table %s: %u entries looked at (%.1f s)", fi->table, fi->n_seen,
               (g_get_monotonic_time () - fi->started_us) / 1e6);
  if (recorded)
    {
      fi->n_recorded++;
      return;
    }
  read_entry (fi, key, id, value);
}

/* "a, b, c" with at most IDS_LOGGED of them. */
static char *
join_ids (GPtrArray *ids)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < ids->len && i < IDS_LOGGED; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", (const char *) ids->pdata[i]);
  if (ids->len > IDS_LOGGED)
    g_string_append_printf (s, " and %u more", ids->len - IDS_LOGGED);
  return g_string_free (s, FALSE);
}

/* One line for what was read, one for what was not (with ids and reasons), one per note. */
static void
log_file (FileImport *fi, guint n_nameless)
{
  const guint *c = fi->counts;
  guint n_unread = n_nameless;

  for (guint i = LIMEN_IMPORT_UNKNOWN_LAYOUT; i < LIMEN_IMPORT_N_OUTCOMES; i++)
    n_unread += c[i];
  if (c[LIMEN_IMPORT_IMPORTED] + c[LIMEN_IMPORT_SESSION_ONLY] + c[LIMEN_IMPORT_PRESENT] +
      c[LIMEN_IMPORT_READ_BEFORE] + n_unread == 0)
    return;
  {
    g_autoptr(GString) line = g_string_new (NULL);
    const struct { guint n; const char *what; } parts[] = {
      { c[LIMEN_IMPORT_IMPORTED], "imported" },
      { c[LIMEN_IMPORT_SESSION_ONLY], "session-only documents left out" },
      { c[LIMEN_IMPORT_PRESENT], "already here, kept as they are" },
      { c[LIMEN_IMPORT_READ_BEFORE], "read by an earlier version" },
      { fi->n_recorded, "read at an earlier start" },
      { n_unread, "not imported" },
    };

    for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
      if (parts[i].n || i == 0)
        g_string_append_printf (line, "%s%u %s", i ? ", " : "", parts[i].n, parts[i].what);
    g_message ("Reference table %s: %s", fi->table, line->str);
  }
  for (guint i = LIMEN_IMPORT_UNKNOWN_LAYOUT; i < LIMEN_IMPORT_N_OUTCOMES; i++)
    if (fi->ids[i])
      {
        g_autofree char *ids = join_ids (fi->ids[i]);

        g_warning ("Reference table %s: %u entries not imported, %s; tried again at the next start: %s",
                   fi->table, fi->ids[i]->len, outcome_names[i], ids);
      }
  if (n_nameless)
    g_warning ("Reference table %s: %u entries without a readable name not imported; tried again at the next start",
               fi->table, n_nameless);
  for (guint i = 0; i < LIMEN_IMPORT_N_NOTES; i++)
    if (fi->noted[i])
      {
        g_autofree char *ids = join_ids (fi->noted[i]);

        g_message ("Reference table %s: %u documents %s: %s", fi->table, fi->noted[i]->len, note_names[i], ids);
      }
}

static char *
file_stamp (const struct stat *st)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ":%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT
                          ".%09ld", (guint64) st->st_dev, (guint64) st->st_ino, (gint64) st->st_size,
                          (gint64) st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}

/* The import as a job of steps: each step reads up to STEP_ITEMS entries in one transaction,
 * so a big store's import can run from the main loop with calls answered between steps.
 * Until it ends, a call on an entry the steps have not reached yet brings that entry in
 * first (limen_import_job_ensure()): the calls see the whole reference state, as if it had
 * been imported at start. */
#define STEP_ITEMS 1000

typedef struct {
  char       *name;        /* the table */
  char       *key, *stamp; /* its file's record */
  LimenGvdb  *file, *main_table;
  FileImport  fi;
  guint       next_item, n_nameless;
  guint       n_ensured;   /* read ahead of the steps for a call: the steps find them recorded */
} TableFile;

struct _LimenImportJob {
  LimenDb        *db;
  LimenPermStore *perms;
  LimenDocModel  *model;
  LimenImportRun *run;
  gboolean        legacy;
  gboolean        marked;      /* the marks job_finish() sets are there already */
  gboolean        busy;        /* inside a step: the stores' own reads must not recurse */
  gboolean        stopped;     /* the database failed a call's import: the rest waits for the
                                * next start */
  char           *dir_path;
  GPtrArray      *files;       /* TableFile, the ones to read */
  guint           next_file;
  GHashTable     *doc_paths;   /* recorded path → ids of documents made with reuse there, built
                                * at the first path miss */
  gint64          started_us;
  guint           n_steps, n_ensured;
};

static void
table_file_free (TableFile *tf)
{
  file_import_clear (&tf->fi);
  g_clear_pointer (&tf->main_table, limen_gvdb_free);
  g_clear_pointer (&tf->file, limen_gvdb_free);
  g_free (tf->key);
  g_free (tf->stamp);
  g_free (tf->name);
  g_free (tf);
}

/* The file of table @name if it needs reading (not recorded as read with this stamp). */
static TableFile *
table_file_open (LimenImportJob *job, const char *name)
{
  g_autofree char *path = g_build_filename (job->dir_path, name, NULL);
  g_autofree char *recorded = NULL;
  g_autoptr(GError) error = NULL;
  TableFile *tf;
  struct stat st;

  /* Only plain files: a symlink or directory is not the reference's state. */
  if (lstat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return NULL;
  tf = g_new0 (TableFile, 1);
  tf->name = g_strdup (name);
  tf->key = g_strconcat (FILE_KEY_PREFIX, name, NULL);
  tf->stamp = file_stamp (&st);
  recorded = limen_db_get_meta (job->db, tf->key);
  if (recorded && strcmp (recorded, tf->stamp) == 0)
    {
      table_file_free (tf);
      return NULL;
    }
  tf->file = limen_gvdb_open (path, &error);
  if (tf->file == NULL || (tf->main_table = limen_gvdb_get_table (tf->file, "main")) == NULL)
    {
      g_warning ("Cannot read the reference table %s (%s); tried again at the next start", path,
                 error ? error->message : "no main table");
      table_file_free (tf);
      return NULL;
    }
  tf->fi = (FileImport) { job->db, job->perms, job->model, job->run, tf->name, job->legacy };
  tf->fi.started_us = g_get_monotonic_time ();
  return tf;
}

/* The file is read: log it; it is recorded as done only when every entry in it was read. */
static void
table_file_close (LimenImportJob *job, TableFile *tf)
{
  guint n_unread = tf->n_nameless;

  /* Counted once, as what they became when a call brought them in. */
  tf->fi.n_recorded -= MIN (tf->fi.n_recorded, tf->n_ensured);
  log_file (&tf->fi, tf->n_nameless);
  for (guint i = LIMEN_IMPORT_UNKNOWN_LAYOUT; i < LIMEN_IMPORT_N_OUTCOMES; i++)
    n_unread += tf->fi.counts[i];
  if (n_unread == 0)
    limen_db_set_meta (job->db, tf->key, tf->stamp, NULL);
}

static LimenImportJob *
job_new (LimenDb *db, LimenPermStore *perms, LimenDocModel *model)
{
  LimenImportJob *job = g_new0 (LimenImportJob, 1);
  g_autofree char *legacy_mark = limen_db_get_meta (db, LEGACY_KEY);
  g_autofree char *version = limen_db_get_meta (db, VERSION_KEY);
  g_autoptr(GDir) dir = NULL;
  const char *name;

  job->db = db;
  job->perms = perms;
  job->model = model;
  job->run = limen_import_run_new ();
  job->legacy = legacy_mark && !version;
  job->marked = legacy_mark && g_strcmp0 (version, "2") == 0;
  job->dir_path = g_build_filename (g_get_user_data_dir (), "flatpak", "db", NULL);
  job->files = g_ptr_array_new_with_free_func ((GDestroyNotify) table_file_free);
  job->started_us = g_get_monotonic_time ();
  dir = g_dir_open (job->dir_path, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)))
    {
      TableFile *tf;

      if (g_str_has_prefix (name, "."))
        continue;
      if (!limen_perm_table_name_is_valid (name))
        {
          g_warning ("Skipping %s/%s: not a valid table name", job->dir_path, name);
          continue;
        }
      if ((tf = table_file_open (job, name)))
        g_ptr_array_add (job->files, tf);
    }
  return job;
}

static void
job_free (LimenImportJob *job)
{
  g_ptr_array_unref (job->files);
  g_clear_pointer (&job->doc_paths, g_hash_table_unref);
  limen_import_run_free (job->run);
  g_free (job->dir_path);
  g_free (job);
}

/* What is left after the last file, in the last step's transaction. */
static void
job_finish (LimenImportJob *job)
{
  if (limen_import_run_lacks_privilege (job->run))
    g_message ("Documents whose folder moved can be found by its file handle only with CAP_DAC_READ_SEARCH; "
               "those are kept at their recorded paths");
  /* The old mark too: a version before the records then does not import everything again. */
  limen_db_set_meta (job->db, VERSION_KEY, "2", NULL);
  limen_db_set_meta (job->db, LEGACY_KEY, "1", NULL);
}

/* Read up to STEP_ITEMS entries in one transaction; TRUE when the job is over (done, or
 * stopped by the database: what was not stored is tried again at the next start). */
static gboolean
job_step (LimenImportJob *job)
{
  g_autoptr(GError) error = NULL;
  guint budget = STEP_ITEMS;
  gboolean done = FALSE;

  /* Nothing to read and nothing to mark: no write at all. The first write after a start
   * syncs the write-ahead log and its directory, tens of ms before the first answer. */
  if ((job->next_file == job->files->len && job->marked) || job->stopped)
    return TRUE;
  if (!limen_db_begin (job->db, &error))
    {
      g_warning ("Cannot import %s: %s", job->dir_path, error->message);
      job->stopped = TRUE;
      return TRUE;
    }
  job->busy = TRUE;
  job->n_steps++;
  while (budget > 0)
    {
      TableFile *tf;
      guint to, n;

      if (job->next_file == job->files->len)
        {
          job_finish (job);
          done = TRUE;
          break;
        }
      tf = job->files->pdata[job->next_file];
      n = limen_gvdb_n_items (tf->main_table);
      to = MIN (n, tf->next_item + budget);
      tf->n_nameless += limen_gvdb_foreach_range (tf->main_table, tf->next_item, to, import_entry, &tf->fi);
      budget -= to - tf->next_item;
      tf->next_item = to;
      if (to == n)
        {
          table_file_close (job, tf);
          job->next_file++;
        }
    }
  job->busy = FALSE;
  /* A failed commit leaves this step's entries unrecorded: tried again at the next start. */
  if (!limen_db_commit (job->db, &error))
    {
      g_warning ("Cannot store the import of %s (tried again at the next start): %s", job->dir_path,
                 error->message);
      job->stopped = TRUE;
      return TRUE;
    }
  return done;
}

void
limen_import_reference_state (LimenDb *db, LimenPermStore *perms, LimenDocModel *model)
{
  LimenImportJob *job = job_new (db, perms, model);

  while (!job_step (job))
    ;
  job_free (job);
}

/* The file of @table still being read, or NULL. */
static TableFile *
job_pending_file (LimenImportJob *job, const char *table)
{
  for (guint i = job->next_file; i < job->files->len; i++)
    if (strcmp (((TableFile *) job->files->pdata[i])->name, table) == 0)
      return job->files->pdata[i];
  return NULL;
}

/* Documents' recorded paths → the ids of those a path finds, for a Lookup or a reuse by path
 * before the import reached them (one pass over the file, once). A unique or session-only
 * document is never found by its path: were it the one brought in, the document made with
 * reuse at the same path would be missed, and an Add would make another one beside it. */
static void
index_doc_path (const char *id, GVariant *value, gpointer user_data)
{
  g_auto(LimenRefDoc) rd = { 0 };
  g_autoptr(GVariant) perms = NULL;
  g_autofree char *why = NULL;
  GPtrArray *ids;

  if (limen_import_parse_document (value, &rd, &perms, &why) != LIMEN_IMPORT_IMPORTED ||
      (rd.flags & (LIMEN_REF_DOC_UNIQUE | LIMEN_REF_DOC_TRANSIENT)))
    return;
  if (!(ids = g_hash_table_lookup (user_data, rd.path)))
    {
      ids = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_insert (user_data, g_strdup (rd.path), ids);
    }
  g_ptr_array_add (ids, g_strdup (id));
}

/* Bring in one entry now, in a transaction of its own, unless it was read before (an entry
 * deleted here since stays deleted, and counts as nothing brought in). */
static void
job_import_one (LimenImportJob *job, TableFile *tf, const char *id)
{
  g_autofree char *key = entry_key (&tf->fi, id);
  g_autofree char *recorded = limen_db_get_meta (job->db, key);
  g_autoptr(GVariant) value = NULL;
  g_autoptr(GError) error = NULL;
  FileImportMark mark;
  guint n_read = 0;

  if (recorded || !(value = limen_gvdb_get_value (tf->main_table, id)) || !limen_db_begin (job->db, &error))
    return;
  job->busy = TRUE;
  file_import_mark (&tf->fi, &mark);
  read_entry (&tf->fi, key, id, value);
  for (guint i = 0; LIMEN_IMPORT_OUTCOME_IS_READ (i); i++)
    n_read += tf->fi.counts[i] - mark.counts[i];
  job->busy = FALSE;
  if (!limen_db_commit (job->db, &error))
    {
      /* A document it made stays in memory for this session; were the steps to go on, they
       * would find it there and record it as read, and the next start would not bring it
       * back. They stop, as after a step that was not stored. */
      g_warning ("Cannot store the import of %s/%s (the import is tried again at the next start): %s",
                 tf->name, id, error->message);
      job->stopped = TRUE;
      n_read = 0;
    }
  /* Not read or not stored: the steps come to it again, and count it then. */
  if (n_read == 0)
    {
      file_import_back_to (&tf->fi, &mark);
      return;
    }
  /* The steps find it recorded: counted once, as what it became here. */
  tf->n_ensured += n_read;
  job->n_ensured += n_read;
}

void
limen_import_job_ensure (LimenImportJob *job, const char *table, const char *id, const char *path)
{
  TableFile *tf;

  if (job->busy || job->stopped || !(tf = job_pending_file (job, table)))
    return;
  if (id == NULL && path == NULL)
    {
      /* A listing: it waits for the rest of the import. FUSE workers waiting for a
       * document are served between its steps, not after them all. */
      while (job_pending_file (job, table) && !job_step (job))
        limen_doc_model_serve_misses (job->model);
      return;
    }
  if (path)
    {
      GPtrArray *ids;

      if (job->doc_paths == NULL)
        {
          job->doc_paths = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                  (GDestroyNotify) g_ptr_array_unref);
          limen_gvdb_foreach (tf->main_table, index_doc_path, job->doc_paths);
        }
      /* All of them: which one the path names is the model's choice, as after the import. */
      if ((ids = g_hash_table_lookup (job->doc_paths, path)))
        for (guint i = 0; i < ids->len && !job->stopped; i++)
          job_import_one (job, tf, ids->pdata[i]);
      return;
    }
  job_import_one (job, tf, id);
}

/* Tests that write, crash or read the mount in the middle of an import set a pause between
 * its background steps (ms), so that "the middle" does not depend on the machine's speed. */
static guint
test_step_pause_ms (void)
{
#ifdef LIMEN_TEST_HOOKS
  const char *pause = g_getenv ("LIMEN_TEST_IMPORT_STEP_PAUSE_MS");

  return pause ? (guint) g_ascii_strtoull (pause, NULL, 10) : 0;
#else
  return 0;
#endif
}

static gboolean job_step_cb (gpointer user_data);

static void
schedule_step (LimenImportJob *job)
{
  guint pause = test_step_pause_ms ();

  if (pause)
    g_timeout_add (pause, job_step_cb, job);
  else
    g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, job_step_cb, job, NULL);
}

static gboolean
job_step_cb (gpointer user_data)
{
  LimenImportJob *job = user_data;
  gboolean done = job_step (job);

  if (!done && test_step_pause_ms ())
    {
      schedule_step (job);
      return G_SOURCE_REMOVE;
    }
  if (!done)
    return G_SOURCE_CONTINUE;
  if (job->stopped)
    g_message ("The import of the reference state stops here; what it did not store is read at the next start");
  else
    g_message ("The reference state is imported (%.1f s, %u steps, %u entries brought in first for calls)",
               (g_get_monotonic_time () - job->started_us) / 1e6, job->n_steps, job->n_ensured);
  limen_perm_store_set_import (job->perms, NULL);
  limen_doc_model_set_miss_func (job->model, NULL, NULL);
  job_free (job);
  /* The import read and freed as much as it kept: give it back. */
  malloc_trim (0);
  return G_SOURCE_REMOVE;
}

static void
doc_miss (const char *id, const char *path, gpointer user_data)
{
  limen_import_job_ensure (user_data, "documents", id, path);
}

void
limen_import_reference_state_start (LimenDb *db, LimenPermStore *perms, LimenDocModel *model, guint budget_ms)
{
  LimenImportJob *job = job_new (db, perms, model);

  while (g_get_monotonic_time () - job->started_us < budget_ms * (gint64) 1000)
    if (job_step (job))
      {
        job_free (job);
        return;
      }
  g_message ("Importing the reference state in the background (%s): calls are answered meanwhile, "
             "an entry not imported yet is brought in first", job->dir_path);
  limen_perm_store_set_import (perms, job);
  limen_doc_model_set_miss_func (model, doc_miss, job);
  schedule_step (job);
}
