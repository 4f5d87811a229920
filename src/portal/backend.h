/* Limen — finding the impl backend of an interface and calling it for a Request.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"
#include "request.h"
#include "session.h"

G_BEGIN_DECLS

/* Backend call timeouts: a dialog waits for a person, anything else answers at once. */
#define LIMEN_BACKEND_TIMEOUT_DIALOG G_MAXINT
#define LIMEN_BACKEND_TIMEOUT_QUICK  25000

/* The bus name of the backend chosen for @interface now (config read each call, so a backend
 * that appears later is used); NULL + Error.Failed naming the interface when none. */
const char *limen_backend_find (LimenPortalContext *context, const char *interface, GError **error);

/* TRUE when some *.portal file offers @interface (the portal is exported even when that
 * backend is not running yet). */
gboolean limen_backend_is_configured (LimenPortalContext *context, const char *interface);

/* Call @interface.@method on @backend at the request's path for @request: the backend is
 * named on the request (Close reaches it), its name is watched (vanishing ends the call at
 * once with Error.Failed) and the call is cancelled when the request closes (the result is
 * then G_IO_ERROR_CANCELLED). @parameters is consumed if floating. */
void limen_backend_call_async (LimenPortalContext *context,
                               LimenRequest       *request,
                               const char         *backend,
                               const char         *interface,
                               const char         *method,
                               GVariant           *parameters,
                               GUnixFDList        *fd_list,
                               int                 timeout_ms,
                               GAsyncReadyCallback callback,
                               gpointer            user_data);

/* The backend's reply (new reference) and its fds (@fd_list may be NULL), or NULL + error. */
GVariant *limen_backend_call_finish (GAsyncResult *result, GUnixFDList **fd_list, GError **error);

/* Called with a backend's properties of one interface (a{sv}; empty when the backend has
 * none or could not be asked), each time they were read. */
typedef void (*LimenBackendPropertiesFunc) (GVariant *properties, gpointer user_data);

/* Read @interface's properties on @backend without ever activating it: a portal mirroring
 * them must not start a backend (or load its code) before anyone uses the portal. */
void limen_backend_read_properties (GDBusConnection           *connection,
                                    const char                *backend,
                                    const char                *interface,
                                    LimenBackendPropertiesFunc func,
                                    gpointer                   user_data);

/* Read them whenever the backend chosen for @interface appears on the bus (it may be another
 * program than last time). */
void limen_backend_watch_properties (LimenPortalContext        *context,
                                     const char                *interface,
                                     LimenBackendPropertiesFunc func,
                                     gpointer                   user_data);

/* One signal of a relayed interface, sent by the current owner of @backend's name: the
 * parameters the app is to hear (floating or a new reference; the signal keeps its name)
 * with *@destination set to that app's unique name (a string that outlives the call, such
 * as limen_session_get_sender()), or NULL to drop the signal. */
typedef GVariant *(*LimenBackendSignalFunc) (const char *backend, const char *signal, GVariant *parameters,
                                             const char **destination);

/* @backend's name lost the owner it had (the backend left the bus or crashed); not called
 * for a name that had no owner yet when the relay began (a backend being activated). */
typedef void (*LimenBackendVanishedFunc) (const char *backend);

/* What a portal passes on from its backends' signals: those of @impl_interface, to the
 * app they concern (the owner of the session they name, mostly), on @portal_interface.
 * A static description. */
typedef struct {
  const char              *impl_interface;
  const char              *portal_interface;
  LimenBackendSignalFunc   signal;
  LimenBackendVanishedFunc vanished;   /* may be NULL */
} LimenBackendRelay;

/* Start relaying @relay's signals from @backend (once per interface and backend name, kept
 * for the daemon's life). Only the unique name that owns @backend now is listened to: a
 * unicast signal may name any sender. */
void limen_backend_relay (GDBusConnection *connection, const LimenBackendRelay *relay, const char *backend);

G_END_DECLS
