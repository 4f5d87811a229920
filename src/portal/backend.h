/* Limen — finding the impl backend of an interface and calling it for a Request.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"
#include "request.h"

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

/* Called once with the backend's reply (or @error: backend failed, vanished, timed out).
 * Never called after the request closed (Close, caller gone): the backend was told then. */
typedef void (*LimenBackendReplyFunc) (LimenRequest *request,
                                       GVariant     *reply,
                                       GUnixFDList  *fd_list,
                                       const GError *error,
                                       gpointer      user_data);

/* Call @interface.@method on @backend at the request's path for @request: the backend is
 * named on the request (Close reaches it), its name is watched (vanishing ends the call at
 * once with an error) and the call is cancelled when the request closes. @parameters is
 * consumed if floating. */
void limen_backend_call (LimenRequest         *request,
                         const char           *backend,
                         const char           *interface,
                         const char           *method,
                         GVariant             *parameters,
                         GUnixFDList          *fd_list,
                         int                   timeout_ms,
                         LimenBackendReplyFunc func,
                         gpointer              user_data,
                         GDestroyNotify        destroy);

/* Reply handler for methods answering (ua{sv}): forward response and results as they are;
 * an error becomes response 2. */
void limen_backend_forward_reply (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list,
                                  const GError *error, gpointer user_data);

/* Response code from a backend reply (ua{sv}), clamped to the three the spec knows. */
guint limen_backend_reply_response (GVariant *reply, GVariant **results);

/* The common start of a request method: create the Request for @invocation (token from
 * "handle_token" of @caller_options), name @backend on it and answer the invocation with
 * the handle. NULL + error (the invocation is NOT answered then). The result is a new
 * reference. */
LimenRequest *limen_backend_start_request (GDBusMethodInvocation *invocation,
                                           LimenAppInfo          *info,
                                           GVariant              *caller_options,
                                           const char            *backend,
                                           GError               **error);

G_END_DECLS

G_BEGIN_DECLS

/* The whole of a typical request method: check @caller_options against @table (error →
 * the invocation gets InvalidArgument), find the backend of @impl_interface (none →
 * Error.Failed), create the Request and answer the handle, then call
 * @impl_interface.@method (handle, app_id, @middle..., filtered options) with @func
 * (limen_backend_forward_reply when NULL) on its reply. @middle is a tuple (or NULL),
 * consumed if floating. @extra_options are added to the filtered ones (NULL: none).
 * Returns the request (new reference) or NULL when the invocation got an error. */
LimenRequest *limen_backend_request_method (LimenPortalContext    *context,
                                            GDBusMethodInvocation *invocation,
                                            LimenAppInfo          *info,
                                            const char            *impl_interface,
                                            const char            *method,
                                            GVariant              *middle,
                                            GVariant              *caller_options,
                                            const LimenOption     *table,
                                            GVariant              *extra_options,
                                            GUnixFDList           *fd_list,
                                            LimenBackendReplyFunc  func,
                                            gpointer               user_data,
                                            GDestroyNotify         destroy);

/* Build (handle, app_id, @middle..., @options) for an impl call; @middle/@options consumed if floating. */
GVariant *limen_backend_build_parameters (LimenRequest *request, GVariant *middle, GVariant *options);

G_END_DECLS
