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

/* For a portal the reference lets through unless denied: look up @app_id at (@table, @id)
 * without blocking; a stored "no" answers @invocation with NotAllowed (@refusal) and frees
 * @data with @free_data, anything else runs @then (@data), which takes @data over. */
void limen_permission_unless_denied (const char *table, const char *id, const char *app_id,
                                     GDBusMethodInvocation *invocation, const char *refusal,
                                     void (*then) (gpointer data), gpointer data, GDestroyNotify free_data);

/* A PermissionStore.Changed of (@table, @id): @perms is the entry's a{sas} now, NULL when the
 * entry was deleted. */
typedef void (*LimenPermissionChangedFunc) (const char *table, const char *id, GVariant *perms,
                                            gpointer user_data);

/* Call @func for every well-formed Changed signal of @table (NULL: of every table) that the
 * store on @connection emits: how portals act at once on a revocation made anywhere. */
void limen_permission_store_watch (GDBusConnection *connection, const char *table,
                                   LimenPermissionChangedFunc func, gpointer user_data);

/* @app_id's strings in @perms (from a Changed signal; NULL allowed), or NULL when it has no
 * row there; free the array (not the strings) with g_free. */
const char **limen_permission_row (GVariant *perms, const char *app_id);

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
