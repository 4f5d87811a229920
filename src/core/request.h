/* Limen — org.freedesktop.portal.Request objects of the frontend.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "app-info.h"

G_BEGIN_DECLS

typedef struct _LimenRequest LimenRequest;

/* Response codes of the specification. */
enum {
  LIMEN_RESPONSE_SUCCESS = 0,
  LIMEN_RESPONSE_CANCELLED = 1,
  LIMEN_RESPONSE_OTHER = 2,
};

/* Called once when the request ends without a Response: caller's Close, caller gone,
 * daemon shutdown. The backend's impl Request has already been told to close. */
typedef void (*LimenRequestClosedFunc) (LimenRequest *request, gpointer user_data);

/* Create and export /org/freedesktop/portal/desktop/request/SENDER/TOKEN for the caller of
 * @invocation, TOKEN from the "handle_token" entry of @options (a fresh one when absent).
 * A bad or already used token is InvalidArgument. */
LimenRequest *limen_request_new (GDBusMethodInvocation *invocation,
                                 LimenAppInfo          *app_info,
                                 GVariant              *options,
                                 GError               **error);

/* The object path (also the impl handle given to the backend). */
const char *limen_request_get_path (LimenRequest *request);
/* The caller's unique name. */
const char *limen_request_get_sender (LimenRequest *request);
/* The caller's identity. */
LimenAppInfo *limen_request_get_app_info (LimenRequest *request);

/* Name the backend whose impl Request lives at the same path, so Close reaches it. */
void limen_request_set_backend (LimenRequest *request, const char *backend_name);
/* Cancellable for the request's backend calls, cancelled when the request closes. */
GCancellable *limen_request_get_cancellable (LimenRequest *request);
/* Hook for the end of the request without a Response. */
void limen_request_set_closed_func (LimenRequest *request, LimenRequestClosedFunc func, gpointer user_data);
/* While @unattended, the caller leaving the bus does not close the request: it finishes on
 * its own, as the reference's does (xdg-open opens a file and exits without waiting for
 * the Response). Set back to FALSE before anyone is asked: a request whose caller left
 * meanwhile is closed then. Returns whether the request is still open. */
gboolean limen_request_set_unattended (LimenRequest *request, gboolean unattended);
/* TRUE until Response was sent or the request was closed. */
gboolean limen_request_is_open (LimenRequest *request);

/* Send Response(@response, @results) to the caller only and unexport the request.
 * @results is consumed if floating; NULL means an empty dict. No-op when closed. */
void limen_request_respond (LimenRequest *request, guint response, GVariant *results);

/* Send Response(@response, @results) to the caller and keep the request exported: its Close
 * still reaches the backend (an inhibition lasts until then). @results as above. */
void limen_request_emit_response_keep_open (LimenRequest *request, guint response, GVariant *results);

/* Close as if the caller had called Close (backend told, no Response). */
void limen_request_close (LimenRequest *request);

/* Number of open requests (tests, shutdown). */
guint limen_request_count_open (void);

/* Close every open request: daemon shutdown. */
void limen_request_close_all (void);

/* Take a reference. */
LimenRequest *limen_request_ref (LimenRequest *request);
/* Drop a reference. */
void limen_request_unref (LimenRequest *request);

/* Build the path for (@sender, @token) into a new string; NULL when @token is invalid. */
char *limen_request_path_for (const char *kind, const char *sender, const char *token);

/* FALSE with InvalidArgument naming @key when @options holds a bad token under @key. */
gboolean limen_handle_token_check (GVariant *options, const char *key, GError **error);

/* The Request/Session path for the token under @key in @options (a fresh token when absent);
 * InvalidArgument naming @key for a bad one. */
char *limen_handle_path_from_options (GVariant *options, const char *key, const char *kind,
                                      const char *sender, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenRequest, limen_request_unref)

G_END_DECLS
