/* Limen — answering the hottest read-only calls on GDBus's worker thread.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A normal method call travels worker thread → main loop → worker thread; for calls that
 * only read state we already hold (network status, cached settings) that hand-over is
 * most of the cost. A fast handler runs in the connection's message filter instead. It
 * must only read data kept safe for other threads, and returns NULL whenever it cannot
 * answer for sure: the call then takes the normal path. Only callers that are already
 * identified (cached) get here, so identity rules are the normal ones. */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* Answer @call from @info's point of view, or NULL to leave it to the main loop. */
typedef GDBusMessage *(*LimenFastHandler) (GDBusMessage *call, LimenAppInfo *info);

/* Register @handler for @interface.@member with argument signature @signature ("" for
 * none), at LIMEN_PORTAL_PATH. Main thread, before limen_fast_path_install(). */
void limen_fast_path_add (const char *interface, const char *member, const char *signature,
                          LimenFastHandler handler);

/* Start filtering @connection's incoming messages. */
void limen_fast_path_install (GDBusConnection *connection);

G_END_DECLS
