/* limen-documents — the documents and their per-app permissions.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-model.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "doc-model-private.h"
#include "errors.h"

/* One app's rights on a document. @app is the shared copy of the app's id (app_name_ref):
 * a store of 100,000 documents names a few hundred apps. */
typedef struct {
  const char *app;
  guint       perms;       /* LimenDocPerms, never 0 */
} DocPerm;

/* Kept small: a listing of every document brings them all into memory for a moment, a few
 * hundred bytes each with its path and index entries. */
struct _LimenDoc {
  gint        ref;
  guint       flags;       /* LimenDocFlags; PERSISTENT may be added later under the lock */
  gint        seen;        /* atomic: served through FUSE */
  /* Under model->lock: */
  gboolean    deleted;
  gboolean    unsaved;     /* its file changed and SQLite could not store it: stays in memory */
  gboolean    used;        /* asked for since the last sweep (under the model's lock) */
  int         handle_type;
  guint       n_perms;
  guint64     dev, ino;
  char       *path;
  GBytes     *handle;
  DocPerm    *perms;       /* n_perms of them, each app once */
  char        id[];
};

struct _LimenDocModel {
  GMutex      lock;
  LimenDb    *db;
  GHashTable *docs;        /* id → LimenDoc: the documents in memory (see "model" below) */
  /* path → LimenDoc (borrowed from docs): the session documents [0] and the persistent
   * ones [1] apart, as a reuse finds only a document kept as long as it asks for (a
   * session's grant never outlives the session); unique documents in neither. */
  GHashTable *by_path[2];
  LimenDocChangedFunc changed;
  gpointer    changed_data;
  guint       sweep_source;  /* drops the documents read that no one holds */
  LimenDocMissFunc miss;     /* the one-time import, while it runs */
  gpointer    miss_data;
  GThread    *miss_thread;   /* the main thread, the only one that may import */
  /* FUSE workers' requests to the main thread for a document the import has not reached
   * (limen_doc_model_lookup_waiting): */
  GMutex      miss_lock;     /* guards these and, for other threads, miss */
  GCond       miss_cond;     /* a request was served */
  GQueue      miss_queue;    /* MissRequest, waiting for the main thread */
  GSource    *miss_source;   /* the main thread's call to serve them, when one is due */
  gboolean    miss_closed;   /* the main thread serves no more (it is leaving) */
  gint        importing;     /* atomic: a miss func is set */
  gboolean    dropped_seen;  /* a document served through FUSE was dropped from memory */
};

/* Readers reach documents through references they hold; the lock guarding the mutable
 * fields is the model's, and there is one model per process. */
static GMutex *doc_lock;

/* The app ids named by documents' rights, each once: app id → AppName. A lock of its own,
 * taken inside the model's or alone, so that the last reference to a document can be
 * dropped anywhere, also under the model's lock. */
typedef struct {
  guint count;             /* rights entries naming it */
  char  name[];
} AppName;

static GHashTable *app_names;
G_LOCK_DEFINE_STATIC (app_names);

static const char *
app_name_ref (const char *app)
{
  AppName *a;

  G_LOCK (app_names);
  if (app_names == NULL)
    app_names = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  a = g_hash_table_lookup (app_names, app);
  if (a == NULL)
    {
      gsize len = strlen (app) + 1;

      a = g_malloc (sizeof *a + len);
      a->count = 0;
      memcpy (a->name, app, len);
      g_hash_table_insert (app_names, a->name, a);
    }
  a->count++;
  G_UNLOCK (app_names);
  return a->name;
}

static void
app_name_unref (const char *name)
{
  AppName *a;

  G_LOCK (app_names);
  a = g_hash_table_lookup (app_names, name);
  if (a && --a->count == 0)
    g_hash_table_remove (app_names, name);
  G_UNLOCK (app_names);
}

static LimenDoc *
doc_new (const char *id, const char *path, guint64 dev, guint64 ino, int handle_type, GBytes *handle, guint flags)
{
  gsize id_len = strlen (id) + 1;
  LimenDoc *doc = g_malloc0 (sizeof *doc + id_len);

  doc->ref = 1;
  memcpy (doc->id, id, id_len);
  doc->path = g_strdup (path);
  doc->dev = dev;
  doc->ino = ino;
  doc->handle_type = handle_type;
  doc->handle = handle ? g_bytes_ref (handle) : NULL;
  doc->flags = flags;
  return doc;
}

/* @app's entry in @doc's rights, or NULL; under the lock or on the writer's thread. */
static DocPerm *
doc_perm_find (LimenDoc *doc, const char *app)
{
  for (guint i = 0; i < doc->n_perms; i++)
    if (strcmp (doc->perms[i].app, app) == 0)
      return &doc->perms[i];
  return NULL;
}

/* Set @app's rights on @doc to @perms (0 removes the entry); under the lock. */
static void
doc_perm_set (LimenDoc *doc, const char *app, guint perms)
{
  DocPerm *p = doc_perm_find (doc, app);

  if (p && perms)
    p->perms = perms;
  else if (p)
    {
      app_name_unref (p->app);
      *p = doc->perms[--doc->n_perms];
      if (doc->n_perms == 0)
        g_clear_pointer (&doc->perms, g_free);
    }
  else if (perms)
    {
      doc->perms = g_renew (DocPerm, doc->perms, doc->n_perms + 1);
      doc->perms[doc->n_perms].app = app_name_ref (app);
      doc->perms[doc->n_perms++].perms = perms;
    }
}

LimenDoc *
limen_doc_ref (LimenDoc *doc)
{
  g_atomic_int_inc (&doc->ref);
  return doc;
}

void
limen_doc_unref (LimenDoc *doc)
{
  if (!g_atomic_int_dec_and_test (&doc->ref))
    return;
  g_free (doc->path);
  g_clear_pointer (&doc->handle, g_bytes_unref);
  for (guint i = 0; i < doc->n_perms; i++)
    app_name_unref (doc->perms[i].app);
  g_free (doc->perms);
  g_free (doc);
}

const char *
limen_doc_get_id (LimenDoc *doc)
{
  return doc->id;
}

guint
limen_doc_get_flags (LimenDoc *doc)
{
  guint flags;

  g_mutex_lock (doc_lock);
  flags = doc->flags;
  g_mutex_unlock (doc_lock);
  return flags;
}

char *
limen_doc_dup_path (LimenDoc *doc)
{
  char *path;

  g_mutex_lock (doc_lock);
  path = g_strdup (doc->path);
  g_mutex_unlock (doc_lock);
  return path;
}

char *
limen_doc_dup_name (LimenDoc *doc)
{
  char *name;

  g_mutex_lock (doc_lock);
  name = g_path_get_basename (doc->path);
  g_mutex_unlock (doc_lock);
  return name;
}

void
limen_doc_get_file_id (LimenDoc *doc, guint64 *dev, guint64 *ino)
{
  g_mutex_lock (doc_lock);
  *dev = doc->dev;
  *ino = doc->ino;
  g_mutex_unlock (doc_lock);
}

void
limen_doc_mark_seen (LimenDoc *doc)
{
  if (!g_atomic_int_get (&doc->seen))
    g_atomic_int_set (&doc->seen, 1);
}

gboolean
limen_doc_was_seen (LimenDoc *doc)
{
  return g_atomic_int_get (&doc->seen);
}

GBytes *
limen_doc_dup_handle (LimenDoc *doc, int *type)
{
  GBytes *handle;

  g_mutex_lock (doc_lock);
  handle = doc->handle ? g_bytes_ref (doc->handle) : NULL;
  *type = doc->handle_type;
  g_mutex_unlock (doc_lock);
  return handle;
}

gboolean
limen_doc_is_deleted (LimenDoc *doc)
{
  gboolean deleted;

  g_mutex_lock (doc_lock);
  deleted = doc->deleted;
  g_mutex_unlock (doc_lock);
  return deleted;
}

guint
limen_doc_get_perms (LimenDoc *doc, const char *app)
{
  guint perms;

  g_mutex_lock (doc_lock);
  if (doc->deleted)
    perms = 0;
  else if (app == NULL)
    perms = LIMEN_DOC_PERM_ALL;
  else
    {
      DocPerm *p = doc_perm_find (doc, app);

      perms = p ? p->perms : 0;
    }
  g_mutex_unlock (doc_lock);
  return perms;
}

GVariant *
limen_doc_perms_to_variant (LimenDoc *doc)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
  g_mutex_lock (doc_lock);
  for (guint i = 0; i < doc->n_perms; i++)
    {
      g_autofree const char **names = limen_doc_perms_to_strv (doc->perms[i].perms);
      g_variant_builder_add (&b, "{s^as}", doc->perms[i].app, names);
    }
  g_mutex_unlock (doc_lock);
  return g_variant_builder_end (&b);
}

/* ---- model ------------------------------------------------------------------------------
 *
 * Persistent documents are read from SQLite when first asked for (by id, path or app) and
 * stay in memory only while someone holds them (a FUSE node, a call in progress) or while
 * SQLite does not have their latest state yet (the journal's rows, an open transaction, a
 * file change not stored); a sweep each second after reads drops the others that no one
 * asked for since the sweep before. Session documents live only here. Reads of SQLite
 * happen under the model's lock, so a document is never made twice, and one that a change
 * keeps in memory is never read back stale. */

#define SWEEP_DELAY_MS 1000

/* The path index @doc belongs in, or NULL for a unique document. */
static GHashTable *
path_index (LimenDocModel *model, LimenDoc *doc)
{
  if (doc->flags & LIMEN_DOC_FLAG_UNIQUE)
    return NULL;
  return model->by_path[(doc->flags & LIMEN_DOC_FLAG_PERSISTENT) != 0];
}

/* Put @doc (taken) in memory, in its path index unless a document there holds the path. */
static void
resident_add (LimenDocModel *model, LimenDoc *doc)
{
  g_hash_table_replace (model->docs, doc->id, doc);
  if (path_index (model, doc) && !g_hash_table_contains (path_index (model, doc), doc->path))
    g_hash_table_insert (path_index (model, doc), doc->path, doc);
}

/* Take @doc out of its path index, if it is the one there. */
static void
path_index_remove (LimenDocModel *model, LimenDoc *doc)
{
  GHashTable *index = path_index (model, doc);

  if (index && g_hash_table_lookup (index, doc->path) == doc)
    g_hash_table_remove (index, doc->path);
}

static gboolean sweep_cb (gpointer user_data);

/* Under the lock: documents were read; drop them again a moment after. */
static void
sweep_later (LimenDocModel *model)
{
  if (model->sweep_source == 0)
    model->sweep_source = g_timeout_add (SWEEP_DELAY_MS, sweep_cb, model);
}

/* Rows read from SQLite become documents; those already in memory are what serves (a
 * change SQLite may not have yet), their rows are left out. */
typedef struct {
  LimenDocModel *model;
  GHashTable    *made;     /* id → LimenDoc, not yet in memory */
} DocRead;

static void
read_doc (const LimenDbDoc *row, gpointer user_data)
{
  DocRead *r = user_data;
  LimenDoc *doc;

  if (g_hash_table_contains (r->model->docs, row->id))
    return;
  if (!limen_doc_id_is_valid (row->id) || row->path[0] != '/')
    {
      g_warning ("Skipping damaged document row %s", row->id);
      return;
    }
  doc = doc_new (row->id, row->path, row->dev, row->ino, row->handle_type, row->handle,
                 row->flags | LIMEN_DOC_FLAG_PERSISTENT);
  /* A document dropped once may have left something in the kernel's caches. */
  doc->seen = r->model->dropped_seen;
  doc->used = TRUE;
  g_hash_table_replace (r->made, doc->id, doc);
}

static void
read_doc_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
  DocRead *r = user_data;
  LimenDoc *doc = g_hash_table_lookup (r->made, doc_id);

  if (doc)
    doc_perm_set (doc, app, perms & LIMEN_DOC_PERM_ALL);
}

/* Under the lock: the documents SQLite has of @id, of @app, or all, into memory (each also
 * to @found, a new reference, when given). */
static void
read_docs (LimenDocModel *model, const char *id, const char *app, GPtrArray *found)
{
  DocRead r = { model, g_hash_table_new (g_str_hash, g_str_equal) };
  GHashTableIter iter;
  gpointer value;

  limen_db_doc_read (model->db, id, app, read_doc, read_doc_perm, &r);
  g_hash_table_iter_init (&iter, r.made);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      resident_add (model, value);
      if (found)
        g_ptr_array_add (found, limen_doc_ref (value));
    }
  if (g_hash_table_size (r.made) > 0)
    sweep_later (model);
  g_hash_table_unref (r.made);
}

/* Under the lock: document @id, in memory or read now; borrowed. */
static LimenDoc *
get_doc (LimenDocModel *model, const char *id)
{
  LimenDoc *doc = g_hash_table_lookup (model->docs, id);

  if (doc == NULL && limen_doc_id_is_valid (id))
    {
      read_docs (model, id, NULL, NULL);
      doc = g_hash_table_lookup (model->docs, id);
    }
  if (doc)
    doc->used = TRUE;
  return doc;
}

/* Drop what only the model holds, SQLite has as it is, and no one asked for since the last
 * sweep (a file manager's listing walks each entry several times: its documents stay while
 * it works); on the main thread, which alone writes the database. The sweep comes back as
 * long as there is something left to drop. */
static gboolean
sweep_cb (gpointer user_data)
{
  LimenDocModel *model = user_data;
  GHashTableIter iter;
  gpointer value;
  guint n = 0, kept = 0;

  if (!limen_db_is_settled (model->db))
    return G_SOURCE_CONTINUE;
  g_mutex_lock (&model->lock);
  g_hash_table_iter_init (&iter, model->docs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LimenDoc *doc = value;

      if (!(doc->flags & LIMEN_DOC_FLAG_PERSISTENT) || doc->unsaved || g_atomic_int_get (&doc->ref) != 1)
        continue;
      if (doc->used)
        {
          doc->used = FALSE;
          kept++;
          continue;
        }
      if (g_atomic_int_get (&doc->seen))
        model->dropped_seen = TRUE;
      path_index_remove (model, doc);
      g_hash_table_iter_remove (&iter);
      n++;
    }
  if (kept == 0)
    model->sweep_source = 0;
  g_mutex_unlock (&model->lock);
  /* A listing of every document read them all: give the memory back. */
  if (n > 1000)
    malloc_trim (0);
  return kept ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* Replays the journal's answered changes (a crash before SQLite took them over): they stay
 * in memory until SQLite has them. */
static void
replay_doc (const LimenDbDoc *row, gpointer user_data)
{
  LimenDocModel *model = user_data;
  LimenDoc *old = g_hash_table_lookup (model->docs, row->id);

  if (!limen_doc_id_is_valid (row->id) || row->path[0] != '/')
    {
      g_warning ("Skipping damaged document row %s", row->id);
      return;
    }
  if (old)
    path_index_remove (model, old);
  resident_add (model, doc_new (row->id, row->path, row->dev, row->ino, row->handle_type, row->handle,
                                row->flags | LIMEN_DOC_FLAG_PERSISTENT));
}

static void
replay_doc_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
  LimenDoc *doc = get_doc (user_data, doc_id);

  /* No rights: a revoke the journal replays over the database's row. */
  if (doc)
    doc_perm_set (doc, app, perms & LIMEN_DOC_PERM_ALL);
}

LimenDocModel *
limen_doc_model_new (LimenDb *db, GError **error)
{
  LimenDocModel *model = g_new0 (LimenDocModel, 1);

  g_mutex_init (&model->lock);
  g_mutex_init (&model->miss_lock);
  g_cond_init (&model->miss_cond);
  g_queue_init (&model->miss_queue);
  doc_lock = &model->lock;
  model->db = db;
  model->docs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) limen_doc_unref);
  model->by_path[0] = g_hash_table_new (g_str_hash, g_str_equal);
  model->by_path[1] = g_hash_table_new (g_str_hash, g_str_equal);
  g_mutex_lock (&model->lock);
  limen_db_replay_pending (db, replay_doc, replay_doc_perm, model);
  g_mutex_unlock (&model->lock);
  return model;
}

void
limen_doc_model_free (LimenDocModel *model)
{
  if (model->sweep_source)
    g_source_remove (model->sweep_source);
  limen_doc_model_stop_waiting (model);
  if (model->miss_source)
    {
      g_source_destroy (model->miss_source);
      g_source_unref (model->miss_source);
    }
  g_clear_pointer (&model->by_path[0], g_hash_table_unref);
  g_clear_pointer (&model->by_path[1], g_hash_table_unref);
  g_clear_pointer (&model->docs, g_hash_table_unref);
  g_free (model);
}

void
limen_doc_model_set_changed_func (LimenDocModel *model, LimenDocChangedFunc func, gpointer user_data)
{
  model->changed = func;
  model->changed_data = user_data;
}

static void
notify (LimenDocModel *model, LimenDoc *doc, const char *app)
{
  if (model->changed)
    model->changed (doc, app, model->changed_data);
}

/* ---- documents the one-time import has not reached -----------------------------------
 *
 * Only the main thread imports: it alone writes the database. A FUSE worker looking up a
 * document by its id (an app opening DOCID/NAME right after the switch from the reference)
 * hands the id to the main thread and waits until it was brought in: one import step at
 * most, as the main thread serves such requests before the next step, also between the
 * steps of a listing that waits for the whole import. The main thread never waits for a
 * FUSE worker, so the only cycle left would be the main thread itself waiting on the mount
 * (the import opens the paths the reference recorded, and one could lie on our mount): its
 * own requests never wait (fuse-ops.c), and a request that is not served within
 * MISS_WAIT_MS gives up and is answered as before the import reached it. */

#define MISS_WAIT_MS 5000

typedef enum { MISS_QUEUED, MISS_TAKEN, MISS_DONE } MissState;

typedef struct {
  const char *id;
  MissState   state;
} MissRequest;

/* Under miss_lock: every request waiting is over (answered from what the model has). */
static void
release_waiters_locked (LimenDocModel *model)
{
  MissRequest *req;

  while ((req = g_queue_pop_head (&model->miss_queue)))
    req->state = MISS_DONE;
  g_cond_broadcast (&model->miss_cond);
}

void
limen_doc_model_set_miss_func (LimenDocModel *model, LimenDocMissFunc func, gpointer user_data)
{
  g_mutex_lock (&model->miss_lock);
  model->miss = func;
  model->miss_data = user_data;
  model->miss_thread = g_thread_self ();
  g_atomic_int_set (&model->importing, func != NULL);
  /* The import is over: everything is where a lookup finds it. */
  if (func == NULL)
    release_waiters_locked (model);
  g_mutex_unlock (&model->miss_lock);
}

gboolean
limen_doc_model_importing (LimenDocModel *model)
{
  return g_atomic_int_get (&model->importing);
}

void
limen_doc_model_stop_waiting (LimenDocModel *model)
{
  g_mutex_lock (&model->miss_lock);
  model->miss_closed = TRUE;
  release_waiters_locked (model);
  g_mutex_unlock (&model->miss_lock);
}

void
limen_doc_model_serve_misses (LimenDocModel *model)
{
  GQueue taken = G_QUEUE_INIT;
  MissRequest *req;

  g_mutex_lock (&model->miss_lock);
  while ((req = g_queue_pop_head (&model->miss_queue)))
    {
      req->state = MISS_TAKEN;
      g_queue_push_tail (&taken, req);
    }
  g_mutex_unlock (&model->miss_lock);
  if (taken.length == 0)
    return;
  /* A request taken stays valid: its worker waits until it is done. */
  for (GList *l = taken.head; l; l = l->next)
    if (model->miss)
      model->miss (((MissRequest *) l->data)->id, NULL, model->miss_data);
  g_mutex_lock (&model->miss_lock);
  for (GList *l = taken.head; l; l = l->next)
    ((MissRequest *) l->data)->state = MISS_DONE;
  g_cond_broadcast (&model->miss_cond);
  g_mutex_unlock (&model->miss_lock);
  g_queue_clear (&taken);
}

static gboolean
serve_misses_cb (gpointer user_data)
{
  LimenDocModel *model = user_data;

  g_mutex_lock (&model->miss_lock);
  g_clear_pointer (&model->miss_source, g_source_unref);
  g_mutex_unlock (&model->miss_lock);
  limen_doc_model_serve_misses (model);
  return G_SOURCE_REMOVE;
}

/* Another thread than the main one: have the main thread bring document @id in, and wait
 * for it. FALSE when it could not be asked or did not answer in time. */
static gboolean
ask_main_thread (LimenDocModel *model, const char *id)
{
  MissRequest req = { id, MISS_QUEUED };
  gint64 deadline = g_get_monotonic_time () + MISS_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  gboolean timed_out = FALSE;

  g_mutex_lock (&model->miss_lock);
  if (model->miss == NULL || model->miss_closed)
    {
      g_mutex_unlock (&model->miss_lock);
      return FALSE;
    }
  g_queue_push_tail (&model->miss_queue, &req);
  if (model->miss_source == NULL)
    {
      /* Before the next import step, which runs at idle priority. */
      model->miss_source = g_idle_source_new ();
      g_source_set_priority (model->miss_source, G_PRIORITY_HIGH);
      g_source_set_callback (model->miss_source, serve_misses_cb, model, NULL);
      g_source_set_static_name (model->miss_source, "[limen] documents the import has not reached");
      g_source_attach (model->miss_source, NULL);
    }
  while (req.state != MISS_DONE)
    {
      /* Once taken, the main thread is at it: wait for its end. */
      if (req.state == MISS_TAKEN)
        g_cond_wait (&model->miss_cond, &model->miss_lock);
      else if (!g_cond_wait_until (&model->miss_cond, &model->miss_lock, deadline) && req.state == MISS_QUEUED)
        {
          g_queue_remove (&model->miss_queue, &req);
          timed_out = TRUE;
          break;
        }
    }
  g_mutex_unlock (&model->miss_lock);
  if (timed_out)
    g_warning ("Document %s was not brought in from the reference's state within %d ms; answered as missing",
               id, MISS_WAIT_MS);
  return !timed_out;
}

/* The import is running and this thread may ask it: the main thread, not a FUSE worker. */
static gboolean
may_ask_import (LimenDocModel *model)
{
  return g_thread_self () == model->miss_thread && model->miss;
}

static LimenDoc *
lookup_ref (LimenDocModel *model, const char *id)
{
  LimenDoc *doc;

  g_mutex_lock (&model->lock);
  doc = get_doc (model, id);
  if (doc)
    limen_doc_ref (doc);
  g_mutex_unlock (&model->lock);
  return doc;
}

LimenDoc *
limen_doc_model_lookup_waiting (LimenDocModel *model, const char *id)
{
  LimenDoc *doc = lookup_ref (model, id);

  if (doc || !limen_doc_id_is_valid (id) || !limen_doc_model_importing (model))
    return doc;
  if (may_ask_import (model))
    model->miss (id, NULL, model->miss_data);
  else if (!ask_main_thread (model, id))
    return NULL;
  return lookup_ref (model, id);
}

LimenDoc *
limen_doc_model_lookup (LimenDocModel *model, const char *id)
{
  LimenDoc *doc = lookup_ref (model, id);

  if (doc == NULL && may_ask_import (model))
    {
      model->miss (id, NULL, model->miss_data);
      doc = lookup_ref (model, id);
    }
  return doc;
}

typedef struct {
  LimenDocModel *model;
  const char    *path;
  LimenDoc      *doc;
} PathRead;

static void
path_read_doc (const LimenDbDoc *row, gpointer user_data)
{
  PathRead *r = user_data;

  if (r->doc == NULL && !(row->flags & LIMEN_DOC_FLAG_UNIQUE) && strcmp (row->path, r->path) == 0)
    r->doc = get_doc (r->model, row->id);
}

/* Under the lock: the persistent document found by @path, borrowed, or NULL. A document in
 * memory serves as it is now (its file may have moved since SQLite last had it). */
static LimenDoc *
find_persistent (LimenDocModel *model, const char *path)
{
  LimenDoc *doc = g_hash_table_lookup (model->by_path[1], path);
  PathRead r = { model, path, NULL };

  if (doc)
    return doc;
  limen_db_doc_find_path (model->db, path, path_read_doc, &r);
  doc = r.doc;
  if (doc && (doc->deleted || (doc->flags & LIMEN_DOC_FLAG_UNIQUE) || strcmp (doc->path, path) != 0))
    return NULL;
  if (doc && !g_hash_table_contains (model->by_path[1], doc->path))
    g_hash_table_insert (model->by_path[1], doc->path, doc);
  return doc;
}

static LimenDoc *
find_path_ref (LimenDocModel *model, const char *path, gboolean persistent, gboolean session)
{
  LimenDoc *doc = NULL;

  g_mutex_lock (&model->lock);
  if (persistent)
    doc = find_persistent (model, path);
  if (doc == NULL && session)
    doc = g_hash_table_lookup (model->by_path[0], path);
  if (doc)
    limen_doc_ref (doc);
  g_mutex_unlock (&model->lock);
  return doc;
}

/* find_path_ref(), asking the import for a persistent document it has not reached. */
static LimenDoc *
find_path (LimenDocModel *model, const char *path, gboolean persistent, gboolean session)
{
  LimenDoc *doc = find_path_ref (model, path, persistent, session);

  if (doc == NULL && persistent && may_ask_import (model))
    {
      model->miss (NULL, path, model->miss_data);
      doc = find_path_ref (model, path, persistent, session);
    }
  return doc;
}

LimenDoc *
limen_doc_model_find_by_path (LimenDocModel *model, const char *path)
{
  return find_path (model, path, TRUE, TRUE);
}

LimenDoc *
limen_doc_model_find_reusable (LimenDocModel *model, const char *path, gboolean persistent)
{
  return find_path (model, path, persistent, !persistent);
}

GPtrArray *
limen_doc_model_list (LimenDocModel *model, const char *app)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_doc_unref);
  GHashTableIter iter;
  gpointer value;

  if (may_ask_import (model))
    model->miss (NULL, NULL, model->miss_data);
  g_mutex_lock (&model->lock);
  /* What is in memory first, as it is now; then what only SQLite has. */
  g_hash_table_iter_init (&iter, model->docs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LimenDoc *doc = value;

      if (app == NULL || doc_perm_find (doc, app))
        g_ptr_array_add (out, limen_doc_ref (doc));
    }
  read_docs (model, NULL, app, out);
  g_mutex_unlock (&model->lock);
  return out;
}

static void
add_app (const char *app, gpointer user_data)
{
  gpointer *seen_out = user_data;

  if (!g_hash_table_contains (seen_out[0], app))
    {
      char *copy = g_strdup (app);

      g_hash_table_add (seen_out[0], copy);
      g_ptr_array_add (seen_out[1], copy);
    }
}

GPtrArray *
limen_doc_model_list_apps (LimenDocModel *model)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  gpointer seen_out[2] = { seen, out };
  GHashTableIter iter;
  gpointer value;

  if (may_ask_import (model))
    model->miss (NULL, NULL, model->miss_data);
  g_mutex_lock (&model->lock);
  g_hash_table_iter_init (&iter, model->docs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LimenDoc *doc = value;

      for (guint i = 0; i < doc->n_perms; i++)
        add_app (doc->perms[i].app, seen_out);
    }
  limen_db_doc_list_apps (model->db, add_app, seen_out);
  g_mutex_unlock (&model->lock);
  return out;
}

static gboolean
persist_doc (LimenDocModel *model, LimenDoc *doc, GError **error)
{
  LimenDbDoc row = { 0 };
  g_autofree char *path = NULL;
  g_autoptr(GBytes) handle = NULL;

  g_mutex_lock (&model->lock);
  path = g_strdup (doc->path);
  handle = doc->handle ? g_bytes_ref (doc->handle) : NULL;
  row.dev = doc->dev;
  row.ino = doc->ino;
  row.handle_type = doc->handle_type;
  row.flags = doc->flags & ~LIMEN_DOC_FLAG_PERSISTENT;
  g_mutex_unlock (&model->lock);
  row.id = doc->id;
  row.path = path;
  row.handle = handle;

  if (!limen_db_begin_journaled (model->db, error))
    return FALSE;
  limen_db_doc_put (model->db, &row, NULL);
  /* Only the writer thread changes perms, so reading them unlocked here is safe. */
  for (guint i = 0; i < doc->n_perms; i++)
    limen_db_doc_put_perms (model->db, doc->id, doc->perms[i].app, doc->perms[i].perms, NULL);
  return limen_db_commit (model->db, error);
}

LimenDoc *
limen_doc_model_add (LimenDocModel *model, const char *path, guint64 dev, guint64 ino,
                     int handle_type, GBytes *handle, guint flags, GError **error)
{
  g_autofree char *id = NULL;
  LimenDoc *doc;

  g_mutex_lock (&model->lock);
  do
    {
      g_free (id);
      id = limen_doc_new_id (error);
    }
  while (id && get_doc (model, id) != NULL);
  g_mutex_unlock (&model->lock);
  if (id == NULL)
    return NULL;

  doc = doc_new (id, path, dev, ino, handle_type, handle, flags);
  if ((flags & LIMEN_DOC_FLAG_PERSISTENT) && !persist_doc (model, doc, error))
    {
      limen_doc_unref (doc);
      return NULL;
    }
  g_mutex_lock (&model->lock);
  /* Lookup and reuse_existing find the oldest document of a path not made unique. */
  resident_add (model, limen_doc_ref (doc));
  if (flags & LIMEN_DOC_FLAG_PERSISTENT)
    sweep_later (model);
  g_mutex_unlock (&model->lock);
  return doc;
}

LimenDoc *
limen_doc_model_add_with_id (LimenDocModel *model, const char *id, const char *path, guint64 dev,
                             guint64 ino, int handle_type, GBytes *handle, guint flags, GError **error)
{
  LimenDoc *doc;

  if (!limen_doc_id_is_valid (id) || path[0] != '/')
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid document %s", id);
      return NULL;
    }
  g_mutex_lock (&model->lock);
  doc = get_doc (model, id);
  g_mutex_unlock (&model->lock);
  if (doc)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS, "Document %s exists", id);
      return NULL;
    }
  doc = doc_new (id, path, dev, ino, handle_type, handle, flags | LIMEN_DOC_FLAG_PERSISTENT);
  if (!persist_doc (model, doc, error))
    {
      limen_doc_unref (doc);
      return NULL;
    }
  g_mutex_lock (&model->lock);
  resident_add (model, limen_doc_ref (doc));
  sweep_later (model);
  g_mutex_unlock (&model->lock);
  return doc;
}

gboolean
limen_doc_model_set_perms (LimenDocModel *model, LimenDoc *doc, const char *app, guint perms, GError **error)
{
  DocPerm *p = doc_perm_find (doc, app);
  guint old = p ? p->perms : 0;

  perms &= LIMEN_DOC_PERM_ALL;
  if (old == perms)
    return TRUE;
  if (doc->flags & LIMEN_DOC_FLAG_PERSISTENT)
    {
      if (!limen_db_begin_journaled (model->db, error))
        return FALSE;
      limen_db_doc_put_perms (model->db, doc->id, app, perms, NULL);
      if (!limen_db_commit (model->db, error))
        return FALSE;
    }
  g_mutex_lock (&model->lock);
  doc_perm_set (doc, app, perms);
  g_mutex_unlock (&model->lock);
  notify (model, doc, app);
  return TRUE;
}

gboolean
limen_doc_model_delete (LimenDocModel *model, LimenDoc *doc, GError **error)
{
  GHashTable *index;

  if (doc->flags & LIMEN_DOC_FLAG_PERSISTENT)
    {
      if (!limen_db_begin (model->db, error))
        return FALSE;
      limen_db_doc_delete (model->db, doc->id, NULL);
      if (!limen_db_commit (model->db, error))
        return FALSE;
    }
  limen_doc_ref (doc);
  g_mutex_lock (&model->lock);
  doc->deleted = TRUE;
  g_hash_table_remove (model->docs, doc->id);
  index = path_index (model, doc);
  if (index && g_hash_table_lookup (index, doc->path) == doc)
    {
      GHashTableIter iter;
      gpointer value;

      /* Another document of the same path and index (their file moved onto it) takes over. */
      g_hash_table_remove (index, doc->path);
      g_hash_table_iter_init (&iter, model->docs);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        if (path_index (model, value) == index && strcmp (((LimenDoc *) value)->path, doc->path) == 0)
          {
            g_hash_table_insert (index, ((LimenDoc *) value)->path, value);
            break;
          }
    }
  g_mutex_unlock (&model->lock);
  notify (model, doc, NULL);
  limen_doc_unref (doc);
  return TRUE;
}

typedef struct {
  LimenDocModel *model;
  LimenDoc      *doc;
} PersistLater;

static gboolean
persist_later_cb (gpointer user_data)
{
  PersistLater *later = user_data;
  g_autoptr(GError) error = NULL;

  if (!limen_doc_is_deleted (later->doc))
    {
      gboolean stored = persist_doc (later->model, later->doc, &error);

      if (!stored)
        g_warning ("Could not store the new file of document %s: %s", later->doc->id, error->message);
      /* Not stored: only memory has the new file, so the document stays there. */
      g_mutex_lock (&later->model->lock);
      later->doc->unsaved = !stored;
      g_mutex_unlock (&later->model->lock);
    }
  limen_doc_unref (later->doc);
  g_free (later);
  return G_SOURCE_REMOVE;
}

void
limen_doc_model_update_file (LimenDocModel *model, LimenDoc *doc, const char *path,
                             guint64 dev, guint64 ino, int handle_type, GBytes *handle)
{
  GHashTable *index;
  gboolean persistent;

  g_mutex_lock (&model->lock);
  index = path_index (model, doc);
  if (index && g_hash_table_lookup (index, doc->path) == doc)
    g_hash_table_remove (index, doc->path);
  g_free (doc->path);
  doc->path = g_strdup (path);
  doc->dev = dev;
  doc->ino = ino;
  doc->handle_type = handle_type;
  g_clear_pointer (&doc->handle, g_bytes_unref);
  doc->handle = handle ? g_bytes_ref (handle) : NULL;
  if (!doc->deleted && index)
    g_hash_table_replace (index, doc->path, doc);
  persistent = (doc->flags & LIMEN_DOC_FLAG_PERSISTENT) && !doc->deleted;
  g_mutex_unlock (&model->lock);

  /* The database belongs to the main thread; the path in memory is what serves now. */
  if (persistent)
    {
      PersistLater *later = g_new0 (PersistLater, 1);

      later->model = model;
      later->doc = limen_doc_ref (doc);
      g_main_context_invoke (NULL, persist_later_cb, later);
    }
}

gboolean
limen_doc_model_begin (LimenDocModel *model, GError **error)
{
  /* Only document rows change inside (exports and grants): a journaled transaction. */
  return limen_db_begin_journaled (model->db, error);
}

gboolean
limen_doc_model_commit (LimenDocModel *model, GError **error)
{
  return limen_db_commit (model->db, error);
}

void
limen_doc_model_rollback (LimenDocModel *model)
{
  limen_db_rollback (model->db);
}
