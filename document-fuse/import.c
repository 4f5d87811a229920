/* limen-documents — one-time import of the reference implementation's state.
 *
 * xdg-permission-store keeps one GVDB file per table in $XDG_DATA_HOME/flatpak/db; its
 * "main" table maps each id to (v data, a{sas} permissions). The "documents" table's
 * data is (ay path, t device, t inode, u flags) with flags 1 unique, 2 transient,
 * 4 directory, and its permissions are read/write/grant-permissions/delete. We read
 * those files once, never write them, and skip (with a log line) what we cannot read.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "import.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "app-info.h"
#include "gvdb-reader.h"

#define IMPORTED_KEY "reference-state-imported"
#define REF_DOC_UNIQUE 1
#define REF_DOC_TRANSIENT 2
#define REF_DOC_DIRECTORY 4

typedef struct {
  const char     *table;
  LimenPermStore *perms;
  LimenDocModel  *model;
  guint           n_ok, n_bad;
} ImportCtx;

static void
import_permission_entry (const char *id, GVariant *value, gpointer user_data)
{
  ImportCtx *ctx = user_data;
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_variant_is_of_type (value, G_VARIANT_TYPE ("(va{sas})")))
    {
      ctx->n_bad++;
      return;
    }
  g_variant_get (value, "(v@a{sas})", &data, &perms);
  if (!limen_perm_store_import_entry (ctx->perms, ctx->table, id, data, perms, &error))
    {
      g_message ("Not importing %s/%s: %s", ctx->table, id, error->message);
      ctx->n_bad++;
      return;
    }
  ctx->n_ok++;
}

static void
import_document (const char *id, GVariant *value, gpointer user_data)
{
  ImportCtx *ctx = user_data;
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *path = NULL;
  guint64 dev, ino;
  guint32 flags;
  GVariantIter iter;
  const char *app;
  const char **names;

  if (!g_variant_is_of_type (value, G_VARIANT_TYPE ("(va{sas})")))
    goto bad;
  g_variant_get (value, "(v@a{sas})", &data, &perms);
  if (!g_variant_is_of_type (data, G_VARIANT_TYPE ("(ayttu)")))
    goto bad;
  g_variant_get (data, "(^ayttu)", &path, &dev, &ino, &flags);
  if (flags & REF_DOC_TRANSIENT)
    return;  /* session documents did not outlive their session there either */
  doc = limen_doc_model_add_with_id (ctx->model, id, path, dev, ino,
                                     ((flags & REF_DOC_DIRECTORY) ? LIMEN_DOC_FLAG_DIRECTORY : 0) |
                                     ((flags & REF_DOC_UNIQUE) ? LIMEN_DOC_FLAG_UNIQUE : 0), &error);
  if (doc == NULL)
    {
      g_message ("Not importing document %s: %s", id, error->message);
      ctx->n_bad++;
      return;
    }
  g_variant_iter_init (&iter, perms);
  while (g_variant_iter_next (&iter, "{&s^a&s}", &app, &names))
    {
      guint bits = 0;

      for (guint i = 0; names[i]; i++)
        bits |= limen_doc_perm_from_string (names[i]);
      if (limen_app_id_is_valid (app) && bits)
        limen_doc_model_set_perms (ctx->model, doc, app, bits, NULL);
      g_free (names);
    }
  ctx->n_ok++;
  return;

bad:
  ctx->n_bad++;
}

void
limen_import_reference_state (LimenDb *db, LimenPermStore *perms, LimenDocModel *model)
{
  g_autofree char *done = limen_db_get_meta (db, IMPORTED_KEY);
  g_autofree char *dir_path = g_build_filename (g_get_user_data_dir (), "flatpak", "db", NULL);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) error = NULL;
  const char *name;

  if (done)
    return;
  if (!limen_db_begin (db, &error))
    {
      g_warning ("Cannot import %s: %s", dir_path, error->message);
      return;
    }
  dir = g_dir_open (dir_path, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (dir_path, name, NULL);
      g_autoptr(LimenGvdb) file = NULL;
      g_autoptr(LimenGvdb) main_table = NULL;
      g_autoptr(GError) local_error = NULL;
      ImportCtx ctx = { name, perms, model, 0, 0 };
      struct stat st;

      /* Only plain files: a symlink or directory is not the reference's state. */
      if (lstat (path, &st) != 0 || !S_ISREG (st.st_mode) || g_str_has_prefix (name, "."))
        continue;
      if (!limen_perm_table_name_is_valid (name))
        {
          g_warning ("Skipping %s: not a valid table name", path);
          continue;
        }
      file = limen_gvdb_open (path, &local_error);
      if (file == NULL || (main_table = limen_gvdb_get_table (file, "main")) == NULL)
        {
          g_warning ("Skipping unreadable permission table %s: %s", path,
                     local_error ? local_error->message : "no main table");
          continue;
        }
      limen_gvdb_foreach (main_table, strcmp (name, "documents") == 0 ? import_document : import_permission_entry,
                          &ctx);
      g_message ("Imported %u entries of %s from the reference permission store%s", ctx.n_ok, name,
                 ctx.n_bad ? " (some entries could not be read)" : "");
    }
  limen_db_set_meta (db, IMPORTED_KEY, "1", NULL);
  if (!limen_db_commit (db, &error))
    g_warning ("Cannot store the import of %s: %s", dir_path, error->message);
}
