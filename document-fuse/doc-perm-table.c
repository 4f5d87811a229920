/* limen-documents — the documents as the permission store's "documents" table.
 *
 * The reference keeps a document's rights in its permission store, table "documents":
 * the document id, its apps' rights by name, and the data "(ayttu)" (the host path, its
 * device and inode, flags: 1 for one made without reuse, 2 for a document of this session
 * only, 4 for a directory).
 * The flatpak CLI lists and resets rights there; here the same calls reach the documents
 * themselves, so a reset takes effect at once (the reference's running document portal
 * does not see it until it restarts).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-perm-table.h"

#include "app-info.h"
#include "errors.h"

#define REF_FLAG_UNIQUE 1
#define REF_FLAG_TRANSIENT 2
#define REF_FLAG_DIRECTORY 4

static GStrv
table_list (gpointer data, const char *app)
{
  LimenDocModel *model = data;
  g_autoptr(GPtrArray) docs = limen_doc_model_list (model, app);
  GPtrArray *ids = g_ptr_array_new ();

  for (guint i = 0; i < docs->len; i++)
    if (!limen_doc_is_deleted (docs->pdata[i]))
      g_ptr_array_add (ids, g_strdup (limen_doc_get_id (docs->pdata[i])));
  g_ptr_array_add (ids, NULL);
  return (GStrv) g_ptr_array_free (ids, FALSE);
}

static LimenDoc *
find (LimenDocModel *model, const char *id)
{
  LimenDoc *doc = limen_doc_id_is_valid (id) ? limen_doc_model_lookup (model, id) : NULL;

  if (doc && limen_doc_is_deleted (doc))
    g_clear_pointer (&doc, limen_doc_unref);
  return doc;
}

static gboolean
table_lookup (gpointer data, const char *id, GVariant **perms, GVariant **value)
{
  g_autoptr(LimenDoc) doc = find (data, id);
  g_autofree char *path = NULL;
  guint64 dev, ino;
  guint flags = 0;

  if (doc == NULL)
    return FALSE;
  path = limen_doc_dup_path (doc);
  limen_doc_get_file_id (doc, &dev, &ino);
  if (limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY)
    flags |= REF_FLAG_DIRECTORY;
  if (limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_UNIQUE)
    flags |= REF_FLAG_UNIQUE;
  if (!(limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_PERSISTENT))
    flags |= REF_FLAG_TRANSIENT;
  *perms = g_variant_ref_sink (limen_doc_perms_to_variant (doc));
  *value = g_variant_ref_sink (g_variant_new ("(@ayttu)", g_variant_new_bytestring (path), dev, ino, flags));
  return TRUE;
}

static gboolean
table_set_perms (gpointer data, const char *id, const char *app, const char * const *perms, GError **error)
{
  LimenDocModel *model = data;
  g_autoptr(LimenDoc) doc = find (model, id);
  guint bits = 0;

  if (!limen_app_id_is_valid (app))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app id %s", app);
      return FALSE;
    }
  if (perms && !limen_doc_perms_from_strv (perms, "permissions", &bits, error))
    return FALSE;
  if (doc == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No document %s", id);
      return FALSE;
    }
  return limen_doc_model_set_perms (model, doc, app, bits, error);
}

static gboolean
table_set_all (gpointer data, const char *id, GVariant *apps, GError **error)
{
  LimenDocModel *model = data;
  g_autoptr(LimenDoc) doc = find (model, id);
  g_autoptr(GHashTable) want = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GVariant) held = NULL;
  GVariantIter iter;
  GHashTableIter hiter;
  gpointer key, value;
  const char *app;
  GVariant *names;

  if (doc == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No document %s", id);
      return FALSE;
    }
  /* Every app and right checked before anything changes. */
  g_variant_iter_init (&iter, apps);
  while (g_variant_iter_next (&iter, "{&s@as}", &app, &names))
    {
      g_autoptr(GVariant) owned = names;
      g_autofree const char **strv = g_variant_get_strv (names, NULL);
      guint bits = 0;

      if (!limen_app_id_is_valid (app))
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app id %s", app);
          return FALSE;
        }
      if (!limen_doc_perms_from_strv (strv, "permissions", &bits, error))
        return FALSE;
      g_hash_table_insert (want, (gpointer) app, GUINT_TO_POINTER (bits));
    }
  held = g_variant_ref_sink (limen_doc_perms_to_variant (doc));
  if (!limen_doc_model_begin (model, error))
    return FALSE;
  g_variant_iter_init (&iter, held);
  while (g_variant_iter_next (&iter, "{&s@as}", &app, &names))
    {
      g_variant_unref (names);
      if (!g_hash_table_contains (want, app) && !limen_doc_model_set_perms (model, doc, app, 0, error))
        goto fail;
    }
  g_hash_table_iter_init (&hiter, want);
  while (g_hash_table_iter_next (&hiter, &key, &value))
    if (!limen_doc_model_set_perms (model, doc, key, GPOINTER_TO_UINT (value), error))
      goto fail;
  return limen_doc_model_commit (model, error);

fail:
  limen_doc_model_rollback (model);
  return FALSE;
}

static gboolean
table_remove (gpointer data, const char *id, GError **error)
{
  LimenDocModel *model = data;
  g_autoptr(LimenDoc) doc = find (model, id);

  if (doc == NULL)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No document %s", id);
      return FALSE;
    }
  return limen_doc_model_delete (model, doc, error);
}

static const LimenPermDocuments table = {
  .list = table_list,
  .lookup = table_lookup,
  .set_perms = table_set_perms,
  .set_all = table_set_all,
  .remove = table_remove,
};

const LimenPermDocuments *
limen_doc_perm_table (void)
{
  return &table;
}
