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
