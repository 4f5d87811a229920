/* limen-documents — org.freedesktop.impl.portal.PermissionStore (version 2).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "db.h"

G_BEGIN_DECLS

typedef struct _LimenPermStore LimenPermStore;

/* Load every table from @db. */
LimenPermStore *limen_perm_store_new (LimenDb *db, GError **error);
/* Export the interface at /org/freedesktop/impl/portal/PermissionStore. */
gboolean limen_perm_store_export (LimenPermStore *store, GDBusConnection *connection, GError **error);
void limen_perm_store_free (LimenPermStore *store);

/* The "documents" table: the document store's rights, served from the document store
 * itself (the reference keeps them as a table of its permission store, where the flatpak
 * CLI reads and resets them). Every callback runs on the main thread. */
typedef struct {
  /* Ids of the documents @app (NULL: any app) has rights on, NULL-terminated. */
  GStrv    (*list)      (gpointer data, const char *app);
  /* @id's rights (a{sas}) and its entry's data, "(ayttu)" (path, device, inode, flags) as
   * the reference keeps it, both new references; FALSE when there is no such document. */
  gboolean (*lookup)    (gpointer data, const char *id, GVariant **perms, GVariant **value);
  /* Give @app exactly @perms on @id (NULL or empty: no rights at all). */
  gboolean (*set_perms) (gpointer data, const char *id, const char *app, const char * const *perms,
                         GError **error);
  /* Give every app exactly its rights in @apps (a{sas}) on @id, the others none; all or
   * nothing. */
  gboolean (*set_all)   (gpointer data, const char *id, GVariant *apps, GError **error);
  /* Delete document @id, as Documents.Delete does. */
  gboolean (*remove)    (gpointer data, const char *id, GError **error);
} LimenPermDocuments;

/* Serve the "documents" table through @docs; call before limen_perm_store_export(). */
void limen_perm_store_set_documents (LimenPermStore *store, const LimenPermDocuments *docs, gpointer data);

typedef struct _LimenImportJob LimenImportJob;
/* While @job (the one-time import, NULL once over) runs, entries it has not reached are
 * brought in before a call reads them. */
void limen_perm_store_set_import (LimenPermStore *store, LimenImportJob *job);

/* TRUE when (@table, @id) has an entry. */
gboolean limen_perm_store_has_entry (LimenPermStore *store, const char *table, const char *id);
/* Replace (@table, @id) with @data and @permissions (a{sas}); used by the import. */
gboolean limen_perm_store_import_entry (LimenPermStore *store, const char *table, const char *id,
                                        GVariant *data, GVariant *permissions, GError **error);

/* @apps (a{sas}) in GVariant's serialized form, as g_variant_store() writes it, after checking
 * every app and permission against the store's limits (InvalidArgument otherwise). */
GBytes *limen_perm_serialize_app_perms (GVariant *apps, GError **error);

/* TRUE when @table is a name the store accepts (no '/', no "..", no control bytes, ≤ 128 bytes). */
gboolean limen_perm_table_name_is_valid (const char *table);
/* TRUE when @id is an acceptable entry id (non-empty, ≤ 4096 bytes, no ".." component). */
gboolean limen_perm_id_is_valid (const char *id);

G_END_DECLS
