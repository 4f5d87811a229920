/* Limen — what an app holds of global shortcuts, kept in the permission store.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LIMEN_KDE_SHORTCUT_TABLE "global-shortcuts"

/* Look @app_id's entry up (the reply is (a{sas}v); NotFound when it has none). */
void limen_kde_shortcut_store_lookup (GDBusConnection *connection, const char *app_id, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data);

/* @app_id's refused shortcut ids in a PermissionStore Lookup reply ((a{sas}v), NULL allowed),
 * as a set; @has_row tells whether the app holds an entry at all (none: ask again). */
GHashTable *limen_kde_shortcut_store_refused (GVariant *reply, const char *app_id, gboolean *has_row);

/* Write @app_id's entry after a change: the data names what kglobalaccel holds for
 * @component now (asked first), with the descriptions of @descriptions (a{ss}; else the
 * stored ones); the refusals are the stored ones plus @refused (NULL-terminated) minus what is
 * held. Nothing is written when the app would hold nothing and has no row. */
void limen_kde_shortcut_store_record_async (GDBusConnection *connection, const char *app_id,
                                            const char *component, const char *const *refused,
                                            GVariant *descriptions, GCancellable *cancellable,
                                            GAsyncReadyCallback callback, gpointer user_data);
gboolean limen_kde_shortcut_store_record_finish (GAsyncResult *result, GError **error);

/* A change of @app_id's entry made by anyone: @refused its refused ids now (NULL-terminated),
 * NULL when its row is gone — the person revoked what the app held. */
typedef void (*LimenKdeShortcutStoreFunc) (const char *app_id, const char *const *refused, gpointer user_data);

/* Call @func for every PermissionStore.Changed of the table on @connection. */
void limen_kde_shortcut_store_watch (GDBusConnection *connection, LimenKdeShortcutStoreFunc func,
                                     gpointer user_data);

G_END_DECLS
