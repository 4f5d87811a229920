/* limen-documents — the documents and their per-app permissions.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-model.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "errors.h"

/* One app's rights on a document. @app is the shared copy of the app's id (app_name_ref):
 * a store of 100,000 documents names a few hundred apps. */
typedef struct {
  const char *app;
  guint       perms;       /* LimenDocPerms, never 0 */
} DocPerm;

/* Kept small: every document of the store is in memory, a few hundred bytes each with its
 * path and index entries (a hash table of rights per document was three times that). */
struct _LimenDoc {
  gint        ref;
  guint       flags;       /* LimenDocFlags; PERSISTENT may be added later under the lock */
  gint        seen;        /* atomic: served through FUSE */
  /* Under model->lock: */
  gboolean    deleted;
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
  GHashTable *docs;        /* id → LimenDoc */
  /* path → LimenDoc (borrowed from docs): the session documents [0] and the persistent
   * ones [1] apart, as a reuse finds only a document kept as long as it asks for (a
   * session's grant never outlives the session); unique documents in neither. */
  GHashTable *by_path[2];
  LimenDocChangedFunc changed;
  gpointer    changed_data;
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

static const char *perm_names[] = { "read", "write", "grant-permissions", "delete" };

guint
limen_doc_perm_from_string (const char *perm)
{
  for (guint i = 0; i < G_N_ELEMENTS (perm_names); i++)
    if (strcmp (perm, perm_names[i]) == 0)
      return 1u << i;
  return 0;
}

gboolean
limen_doc_perms_from_strv (const char * const *perms, const char *key, guint *out, GError **error)
{
  guint bits = 0;

  for (guint i = 0; perms && perms[i]; i++)
    {
      guint bit = limen_doc_perm_from_string (perms[i]);

      if (bit == 0)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid %s: unknown permission (expected read, write, grant-permissions or delete)", key);
          return FALSE;
        }
      bits |= bit;
    }
  *out = bits;
  return TRUE;
}

const char **
limen_doc_perms_to_strv (guint perms)
{
  const char **v = g_new0 (const char *, G_N_ELEMENTS (perm_names) + 1);
  guint n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (perm_names); i++)
    if (perms & (1u << i))
      v[n++] = perm_names[i];
  return v;
}

gboolean
limen_doc_id_is_valid (const char *id)
{
  gsize len = strlen (id);

  if (len == 0 || len > 64)
    return FALSE;
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

/* Random bytes for document ids, read from the kernel 32 ids at a time (one getrandom()
 * per Add was a tenth of an Add's system calls). Bytes handed out are wiped. */
#define ID_BYTES 20
static guint8 id_pool[ID_BYTES * 32];
static gsize id_pool_left;
G_LOCK_DEFINE_STATIC (id_pool);

static gboolean
take_random (guint8 *out, GError **error)
{
  G_LOCK (id_pool);
  if (id_pool_left < ID_BYTES)
    {
      gsize got = 0;

      while (got < sizeof id_pool)
        {
          ssize_t r = getrandom (id_pool + got, sizeof id_pool - got, 0);

          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            {
              int errsv = errno;

              G_UNLOCK (id_pool);
              g_warning ("Cannot make a document id: getrandom: %s", g_strerror (errsv));
              g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "No random numbers for a document id: %s",
                           g_strerror (errsv));
              return FALSE;
            }
          got += r;
        }
      id_pool_left = sizeof id_pool;
    }
  id_pool_left -= ID_BYTES;
  memcpy (out, id_pool + id_pool_left, ID_BYTES);
  memset (id_pool + id_pool_left, 0, ID_BYTES);
  G_UNLOCK (id_pool);
  return TRUE;
}

/* 20 base-32 characters from the kernel's random pool: 100 bits nobody can guess.
 * NULL (and @error) when the pool cannot be read: never a guessable id instead. */
static char *
new_doc_id (GError **error)
{
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuv";
  guint8 bytes[ID_BYTES];
  char *id;

  if (!take_random (bytes, error))
    return NULL;
  id = g_malloc (sizeof bytes + 1);
  for (gsize i = 0; i < sizeof bytes; i++)
    id[i] = alphabet[bytes[i] & 31];
  id[sizeof bytes] = '\0';
  return id;
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

/* ---- model ------------------------------------------------------------------------------ */

/* The path index @doc belongs in, or NULL for a unique document. */
static GHashTable *
path_index (LimenDocModel *model, LimenDoc *doc)
{
  if (doc->flags & LIMEN_DOC_FLAG_UNIQUE)
    return NULL;
  return model->by_path[(doc->flags & LIMEN_DOC_FLAG_PERSISTENT) != 0];
}

static void
load_doc (const LimenDbDoc *row, gpointer user_data)
{
  LimenDocModel *model = user_data;
  LimenDoc *doc;

  if (!limen_doc_id_is_valid (row->id) || row->path[0] != '/')
    {
      g_warning ("Skipping damaged document row %s", row->id);
      return;
    }
  doc = doc_new (row->id, row->path, row->dev, row->ino, row->handle_type, row->handle,
                 row->flags | LIMEN_DOC_FLAG_PERSISTENT);
  /* A row the journal replays over one from the database: the old one leaves its index. */
  {
    LimenDoc *old = g_hash_table_lookup (model->docs, row->id);

    if (old && path_index (model, old) && g_hash_table_lookup (path_index (model, old), old->path) == old)
      g_hash_table_remove (path_index (model, old), old->path);
  }
  g_hash_table_replace (model->docs, doc->id, doc);
  if (path_index (model, doc))
    g_hash_table_replace (path_index (model, doc), doc->path, doc);
}

static void
load_doc_perm (const char *doc_id, const char *app, guint perms, gpointer user_data)
{
  LimenDocModel *model = user_data;
  LimenDoc *doc = g_hash_table_lookup (model->docs, doc_id);

  /* No rights: a revoke the journal replays over the database's row. */
  if (doc)
    doc_perm_set (doc, app, perms & LIMEN_DOC_PERM_ALL);
}

LimenDocModel *
limen_doc_model_new (LimenDb *db, GError **error)
{
  LimenDocModel *model = g_new0 (LimenDocModel, 1);

  g_mutex_init (&model->lock);
  doc_lock = &model->lock;
  model->db = db;
  model->docs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) limen_doc_unref);
  model->by_path[0] = g_hash_table_new (g_str_hash, g_str_equal);
  model->by_path[1] = g_hash_table_new (g_str_hash, g_str_equal);
  if (!limen_db_doc_load (db, load_doc, load_doc_perm, model, error))
    {
      limen_doc_model_free (model);
      return NULL;
    }
  return model;
}

void
limen_doc_model_free (LimenDocModel *model)
{
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

/* A reference to the document under @key in @table (docs or a path index), or NULL. */
static LimenDoc *
lookup_ref (LimenDocModel *model, GHashTable *table, const char *key)
{
  LimenDoc *doc;

  g_mutex_lock (&model->lock);
  doc = g_hash_table_lookup (table, key);
  if (doc)
    limen_doc_ref (doc);
  g_mutex_unlock (&model->lock);
  return doc;
}

LimenDoc *
limen_doc_model_lookup (LimenDocModel *model, const char *id)
{
  return lookup_ref (model, model->docs, id);
}

LimenDoc *
limen_doc_model_find_by_path (LimenDocModel *model, const char *path)
{
  LimenDoc *doc = lookup_ref (model, model->by_path[1], path);

  return doc ? doc : lookup_ref (model, model->by_path[0], path);
}

LimenDoc *
limen_doc_model_find_reusable (LimenDocModel *model, const char *path, gboolean persistent)
{
  return lookup_ref (model, model->by_path[persistent != FALSE], path);
}

GPtrArray *
limen_doc_model_list (LimenDocModel *model, const char *app)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_doc_unref);
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&model->lock);
  g_hash_table_iter_init (&iter, model->docs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LimenDoc *doc = value;

      if (app == NULL || doc_perm_find (doc, app))
        g_ptr_array_add (out, limen_doc_ref (doc));
    }
  g_mutex_unlock (&model->lock);
  return out;
}

GPtrArray *
limen_doc_model_list_apps (LimenDocModel *model)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&model->lock);
  g_hash_table_iter_init (&iter, model->docs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LimenDoc *doc = value;

      for (guint i = 0; i < doc->n_perms; i++)
        if (g_hash_table_add (seen, (gpointer) doc->perms[i].app))
          g_ptr_array_add (out, g_strdup (doc->perms[i].app));
    }
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
      id = new_doc_id (error);
    }
  while (id && g_hash_table_contains (model->docs, id));
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
  g_hash_table_insert (model->docs, doc->id, limen_doc_ref (doc));
  /* Lookup and reuse_existing find the oldest document of a path not made unique. */
  if (path_index (model, doc) && !g_hash_table_contains (path_index (model, doc), doc->path))
    g_hash_table_insert (path_index (model, doc), doc->path, doc);
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
  doc = g_hash_table_lookup (model->docs, id);
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
  g_hash_table_insert (model->docs, doc->id, limen_doc_ref (doc));
  if (path_index (model, doc) && !g_hash_table_contains (path_index (model, doc), doc->path))
    g_hash_table_insert (path_index (model, doc), doc->path, doc);
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

  if (!limen_doc_is_deleted (later->doc) && !persist_doc (later->model, later->doc, &error))
    g_warning ("Could not store the new file of document %s: %s", later->doc->id, error->message);
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

/* /proc/self/fd, opened once: reading a link through it walks one name, not four. */
static int
proc_self_fd (void)
{
  static gsize once;
  static int dirfd = -1;

  if (g_once_init_enter (&once))
    {
      dirfd = open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
      g_once_init_leave (&once, 1);
    }
  return dirfd;
}

char *
limen_doc_fd_path (int fd)
{
  char proc[64];
  char buf[PATH_MAX];
  ssize_t n;

  g_snprintf (proc, sizeof proc, "%d", fd);
  if (proc_self_fd () >= 0 && (n = readlinkat (proc_self_fd (), proc, buf, sizeof buf)) >= 0 &&
      (gsize) n < sizeof buf)
    return g_strndup (buf, n);
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  return g_file_read_link (proc, NULL);
}

GBytes *
limen_doc_file_handle (int fd, int *type)
{
  struct { struct file_handle fh; unsigned char data[MAX_HANDLE_SZ]; } h;
  int mount_id;

  h.fh.handle_bytes = MAX_HANDLE_SZ;
  *type = 0;
  if (name_to_handle_at (fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) != 0)
    return NULL;
  *type = h.fh.handle_type;
  return g_bytes_new (h.fh.f_handle, h.fh.handle_bytes);
}
