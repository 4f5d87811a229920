/* limen-documents — a small read-only reader for GVDB files (the reference
 * permission store's format), written from the format description.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _LimenGvdb LimenGvdb;

/* Open @path (read into memory; the file is never written). */
LimenGvdb *limen_gvdb_open (const char *path, GError **error);
void limen_gvdb_free (LimenGvdb *db);

/* The nested table @key of the root table ("main" etc.), or NULL. */
LimenGvdb *limen_gvdb_get_table (LimenGvdb *db, const char *key);
/* The keys of the table's value items, NULL-terminated. */
char **limen_gvdb_list_keys (LimenGvdb *db);
/* Call @func for every value item (key, unboxed value) in one pass; the value is NULL for an
 * item whose value cannot be read. Returns how many items were skipped because even their
 * key could not be read. */
guint limen_gvdb_foreach (LimenGvdb *db, void (*func) (const char *key, GVariant *value, gpointer user_data),
                         gpointer user_data);
/* The number of items of @db's table (values and others), for limen_gvdb_foreach_range(). */
guint limen_gvdb_n_items (LimenGvdb *db);
/* limen_gvdb_foreach() over the items @from to @to (excluded) only. */
guint limen_gvdb_foreach_range (LimenGvdb *db, guint from, guint to,
                                void (*func) (const char *key, GVariant *value, gpointer user_data),
                                gpointer user_data);
/* The value of @key (a new reference, already unboxed from its "v"), or NULL. */
GVariant *limen_gvdb_get_value (LimenGvdb *db, const char *key);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenGvdb, limen_gvdb_free)

G_END_DECLS
