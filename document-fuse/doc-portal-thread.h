/* limen-documents — the Add family answered on GDBus's worker thread.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "doc-portal.h"

G_BEGIN_DECLS

/* From now on the main thread holds the store's state (documents, permissions, the
 * database) whenever it is not waiting in poll(), and calls of the Add family from callers
 * already identified are answered on @connection's worker thread while the main thread
 * waits, in the order they came. Call once, on the main thread, after the Documents object
 * is exported. */
void limen_doc_portal_thread_start (LimenDocPortal *portal, GDBusConnection *connection);

/* No call is answered off the main thread after this returns (main thread, before the
 * store's state is freed). */
void limen_doc_portal_thread_stop (void);

G_END_DECLS
