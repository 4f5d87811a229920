/* Limen — PipeWire remotes that show a caller only the nodes its session may use.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Connect to the PipeWire daemon (in a worker thread), restrict the new connection to
 * seeing and using only @nodes (everything else, present or future, hidden) and hand back its
 * socket: the fd a caller passes to pw_context_connect_fd. */
void limen_pipewire_remote_open_async (const guint32 *nodes, guint n_nodes, GAsyncReadyCallback callback,
                                       gpointer user_data);

/* The same, with the connection tagged pipewire.access.portal.app_id = @app_id and
 * pipewire.access.portal.media_roles = @media_roles (either NULL: not set), as WirePlumber's
 * portal access script expects of a camera remote. */
void limen_pipewire_remote_open_for_app_async (const guint32 *nodes, guint n_nodes, const char *app_id,
                                               const char *media_roles, GAsyncReadyCallback callback,
                                               gpointer user_data);

/* The remote's fd (the caller owns it); @client gets the object.serial of the connection's
 * client (for limen_pipewire_remote_revoke: unlike its id, never reused by another client).
 * -1 + Error.NotFound/Failed when PipeWire is not there or did not answer within a few
 * seconds. */
int limen_pipewire_remote_open_finish (GAsyncResult *result, guint64 *client, GError **error);

/* Hide @nodes from the remote @client (a serial from limen_pipewire_remote_open_finish), if
 * it is still connected: the session ended, so its streams must disappear from the caller's
 * view even where the backend keeps the nodes alive. Runs in a worker thread, bounded in
 * time; failures are logged. With no @nodes only the bookkeeping is dropped. */
void limen_pipewire_remote_revoke (guint64 client, const guint32 *nodes, guint n_nodes);

/* Disconnect the remote @client (a serial from limen_pipewire_remote_open_finish), if it is
 * still connected: what it was given was taken back. Worker thread, bounded in time. */
void limen_pipewire_remote_end (guint64 client);

/* The PipeWire object.serial of each of @nodes (never reused, unlike node ids: what
 * ScreenCast version 6 hands out as pipewire-serial), looked up in a worker thread. */
void limen_pipewire_node_serials_async (const guint32 *nodes, guint n_nodes, GAsyncReadyCallback callback,
                                        gpointer user_data);

/* A new array with one serial per node, 0 where PipeWire shows no such node; NULL and
 * Error.NotFound/Failed when PipeWire is not there or did not answer within a few seconds. */
guint64 *limen_pipewire_node_serials_finish (GAsyncResult *result, GError **error);

G_END_DECLS
