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

/* Ask for @app_id's permission strings at (@table, @id) without blocking; finish with
 * limen_permission_store_lookup_finish(). */
void limen_permission_store_lookup_async (const char *table, const char *id, const char *app_id,
                                          GCancellable *cancellable, GAsyncReadyCallback callback,
                                          gpointer user_data);
/* The strings asked for; NULL when unset or the store did not answer (never an error). */
char **limen_permission_store_lookup_finish (GAsyncResult *result);

/* TRUE when the answer at (@table, @id) for @app_id is a stored "no": the rule of portals the
 * reference lets through unless denied (GameMode, Realtime). */
gboolean limen_permission_is_denied (const char * const *stored);

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
