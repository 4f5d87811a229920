/* Limen — client of org.freedesktop.impl.portal.PermissionStore for the frontend.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LIMEN_STORE_NAME "org.freedesktop.impl.portal.PermissionStore"
#define LIMEN_STORE_PATH "/org/freedesktop/impl/portal/PermissionStore"

typedef enum {
  LIMEN_PERMISSION_UNSET,
  LIMEN_PERMISSION_NO,
  LIMEN_PERMISSION_YES,
  LIMEN_PERMISSION_ASK,
} LimenPermission;

/* Set up the proxy (never blocks: the store is activated on first use). */
void limen_permission_store_init (GDBusConnection *connection);

/* The permission strings of @app_id for (@table, @id); NULL when unset or unreachable. */
char **limen_permission_store_get_raw (const char *table, const char *id, const char *app_id);

/* Store @permissions for @app_id at (@table, @id), creating the entry; FALSE + error on failure. */
gboolean limen_permission_store_set_raw (const char *table, const char *id, const char *app_id,
                                         const char * const *permissions, GError **error);


/* Store a single yes/no/ask permission. */
gboolean limen_permission_store_set (const char *table, const char *id, const char *app_id,
                                     LimenPermission permission, GError **error);

/* "yes"/"no"/"ask" ⇄ LimenPermission. */
const char *limen_permission_to_string (LimenPermission permission);
LimenPermission limen_permission_from_string (const char *string);

G_END_DECLS
