/* limen-documents — the Documents name on a bus connection of its own (sd-bus).
 *
 * org.freedesktop.portal.Documents and org.freedesktop.portal.FileTransfer are served on
 * /org/freedesktop/portal/documents of this connection; the permission store, the caller
 * identification (app-info) and everything else stay on the daemon's GDBus connection.
 * See docs-bus.c for why.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "app-info.h"

G_BEGIN_DECLS

#define LIMEN_DOCS_PATH "/org/freedesktop/portal/documents"
#define LIMEN_DOCS_IFACE "org.freedesktop.portal.Documents"
#define LIMEN_FILE_TRANSFER_IFACE "org.freedesktop.portal.FileTransfer"

typedef struct _LimenDocsBus LimenDocsBus;

/* One method call. Its handler owns it and answers it exactly once, now or later; an
 * answer frees it. */
typedef struct _LimenDocsCall LimenDocsCall;

typedef void (*LimenDocsMethodFunc) (LimenDocsCall *call, gpointer user_data);

/* Connect to the session bus (the same one as @lookups, which identifies callers and tells
 * which peers vanished). Nothing is served before limen_docs_bus_own_name. */
LimenDocsBus *limen_docs_bus_new (GDBusConnection *lookups, GError **error);

/* Every call on the object runs @func first, before its caller is identified. */
void limen_docs_bus_set_before_call (LimenDocsBus *bus, void (*func) (gpointer user_data), gpointer user_data);

/* @method of @interface (one of the two above) is answered by @func. */
void limen_docs_bus_add_method (LimenDocsBus *bus, const char *interface, const char *method,
                                LimenDocsMethodFunc func, gpointer user_data);

/* Own @name (allowing replacement; taking it over with @replace). FALSE and @error when
 * another process has it. @lost runs once if the name or the bus goes away later. */
gboolean limen_docs_bus_own_name (LimenDocsBus *bus, const char *name, gboolean replace,
                                  void (*lost) (gboolean bus_gone, gpointer user_data), gpointer user_data,
                                  GError **error);

/* Signal @member of @interface from the object, to @destination only; consumes a floating @body. */
void limen_docs_bus_emit_signal (LimenDocsBus *bus, const char *destination, const char *interface,
                                 const char *member, GVariant *body);

/* Answers calls still waiting ("shutting down"), sends what is queued, disconnects. */
void limen_docs_bus_free (LimenDocsBus *bus);

const char *limen_docs_call_get_sender (LimenDocsCall *call);
const char *limen_docs_call_get_method (LimenDocsCall *call);

/* The call's arguments as a tuple; an fd argument is a handle (index) as on the wire. */
GVariant *limen_docs_call_get_parameters (LimenDocsCall *call);

/* The fd behind @handle, borrowed (open as long as the call is), or -1 and an
 * InvalidArgument naming @key. */
int limen_docs_call_peek_fd (LimenDocsCall *call, gint32 handle, const char *key, GError **error);

/* The caller, identified before the call was dispatched; NULL after answering the call
 * with the reason there is none. */
LimenAppInfo *limen_docs_call_get_app_info (LimenDocsCall *call);

/* Answer with @body (a tuple; NULL for none; a floating one is consumed). */
void limen_docs_call_return_value (LimenDocsCall *call, GVariant *body);

/* Answer with @error: Limen's and GDBus's errors keep their D-Bus names, others become
 * org.freedesktop.portal.Error.Failed. */
void limen_docs_call_return_gerror (LimenDocsCall *call, const GError *error);

G_END_DECLS
