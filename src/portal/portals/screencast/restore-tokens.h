/* Limen — single-use restore tokens of screen-cast and remote-desktop sessions.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LIMEN_RESTORE_TABLE_SCREEN_CAST "screencast"
#define LIMEN_RESTORE_TABLE_REMOTE_DESKTOP "remote-desktop"

/* Where persistent tokens are kept: the permission store on @connection. */
void limen_restore_tokens_init (GDBusConnection *connection);

/* The backend's restore data kept under @token for @app_id (calling from the connection
 * @sender) in @table, and the token forgotten (each is good once). NULL when @token is not a
 * live token of this app (of mode 1: of this connection), for whatever reason: the caller
 * then asks the person as if no token had been given. */
GVariant *limen_restore_token_take (const char *table, const char *app_id, const char *sender, const char *token);

/* Keep @restore_data ((suv), from the backend's Start) for @app_id: persist_mode 1 in
 * memory for as long as the connection @sender stays on the bus, 2 in the permission store,
 * the app's row naming the input @devices granted (1 keyboard, 2 pointer, 4 touchscreen) and
 * the time after its "yes", for the permissions page. The new token, or NULL when nothing was kept (bad data,
 * mode 0, store unreachable: logged). */
char *limen_restore_token_store (const char *table, const char *app_id, const char *sender, guint32 persist_mode,
                                 GVariant *restore_data, guint32 devices);

G_END_DECLS
