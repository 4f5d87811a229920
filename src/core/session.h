/* Limen — org.freedesktop.portal.Session objects of the frontend.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "app-info.h"

G_BEGIN_DECLS

typedef struct _LimenSession LimenSession;

/* Called once when the session ends (Close, caller gone, backend Closed, shutdown). */
typedef void (*LimenSessionClosedFunc) (LimenSession *session, gpointer user_data);

/* Create and export /org/freedesktop/portal/desktop/session/SENDER/TOKEN, TOKEN from the
 * "session_handle_token" option; InvalidArgument for a bad or reused token. */
LimenSession *limen_session_new (GDBusMethodInvocation *invocation,
                                 LimenAppInfo          *app_info,
                                 GVariant              *options,
                                 GError               **error);

/* Find an open session by path, owned by @sender; NULL when absent or not the caller's. */
LimenSession *limen_session_lookup (const char *path, const char *sender);

/* The object path. */
const char *limen_session_get_path (LimenSession *session);
/* The caller's unique name. */
const char *limen_session_get_sender (LimenSession *session);
/* The caller's identity. */
LimenAppInfo *limen_session_get_app_info (LimenSession *session);
/* The backend whose impl Session lives at the same path. */
void limen_session_set_backend (LimenSession *session, const char *backend_name);
/* Per-portal data freed with the session. */
void limen_session_set_data (LimenSession *session, gpointer data, GDestroyNotify destroy);
gpointer limen_session_get_data (LimenSession *session);
/* Hook for the end of the session. */
void limen_session_set_closed_func (LimenSession *session, LimenSessionClosedFunc func, gpointer user_data);
/* TRUE until closed. */
gboolean limen_session_is_open (LimenSession *session);
/* Close: backend told, Closed emitted to the caller, object unexported. */
void limen_session_close (LimenSession *session);
/* The same without Closed: for a session whose creating call failed (the caller got the
 * error or a Response other than 0). */
void limen_session_discard (LimenSession *session);
/* Close every session: daemon shutdown. */
void limen_session_close_all (void);
/* Number of open sessions. */
guint limen_session_count_open (void);

/* Take a reference. */
LimenSession *limen_session_ref (LimenSession *session);
/* Drop a reference. */
void limen_session_unref (LimenSession *session);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenSession, limen_session_unref)

G_END_DECLS
