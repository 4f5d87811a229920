/* Limen — limen-kde internals shared by the impl interfaces.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "limen-dbus.h"
#include "options.h"
#include "limen-qt.h"

G_BEGIN_DECLS

#define LIMEN_KDE_BUS_NAME "org.freedesktop.impl.portal.desktop.limen"
#define LIMEN_KDE_OBJECT_PATH "/org/freedesktop/portal/desktop"

/* ---- interfaces: one file each, limen_kde_PREFIX_new () registered in main.c ---- */

/* NotAllowed when the Kiosk configuration disables printing (lockdown.c). */
gboolean limen_kde_lockdown_check_printing (GError **error);

/* ---- impl Request objects (request.c) ---- */

typedef struct _LimenKdeRequest LimenKdeRequest;

/* Runs when the frontend calls Close or leaves the bus; the request is unexported
 * and freed right after. */
typedef void (*LimenKdeRequestCloseFunc) (LimenKdeRequest *request, gpointer user_data);

/* Export an impl Request at @handle for the sender of @invocation. InvalidArgument
 * when @handle is not a request path, Exists when it is in use. */
LimenKdeRequest *limen_kde_request_new (GDBusMethodInvocation *invocation,
                                        const char            *handle,
                                        LimenKdeRequestCloseFunc close_func,
                                        gpointer               user_data,
                                        GError               **error);

/* Check that @handle is a request path (below /org/freedesktop/portal/desktop/request/). */
gboolean limen_kde_request_check_handle (const char *handle, GError **error);

/* Unexport and free @request without running its close function (the call ended). */
void limen_kde_request_finish (LimenKdeRequest *request);

/* The live request at @handle exported for @sender, or NULL. */
LimenKdeRequest *limen_kde_request_lookup (const char *sender, const char *handle);

/* The data given to limen_kde_request_new(). */
gpointer limen_kde_request_get_data (LimenKdeRequest *request);

/* The close function given to limen_kde_request_new(): tells which portal owns it. */
LimenKdeRequestCloseFunc limen_kde_request_get_close_func (LimenKdeRequest *request);

/* Unexport every request (shutdown), running their close functions. */
void limen_kde_request_close_all (void);

/* ---- impl Session objects (for Inhibit.CreateMonitor) ---- */

typedef struct _LimenKdeSession LimenKdeSession;

/* Runs when the session ends (Close, frontend gone, shutdown), before it is freed. */
typedef void (*LimenKdeSessionCloseFunc) (LimenKdeSession *session, gpointer user_data);

/* Export an impl Session at @handle for the sender of @invocation; @close_func runs on
 * Close or when the frontend leaves. */
LimenKdeSession *limen_kde_session_new (GDBusMethodInvocation *invocation,
                                        const char            *handle,
                                        LimenKdeSessionCloseFunc close_func,
                                        gpointer               user_data,
                                        GError               **error);
/* The session exported at @handle for @sender, or NULL. */
LimenKdeSession *limen_kde_session_lookup (const char *sender, const char *handle);
/* Emit Closed, unexport and free. */
void limen_kde_session_close (LimenKdeSession *session);
gpointer limen_kde_session_get_data (LimenKdeSession *session);
const char *limen_kde_session_get_sender (LimenKdeSession *session);

/* ---- the shim (shim.c) ---- */

typedef struct {
#define LIMEN_KDE_SHIM_FIELD(name) __typeof__ (name) *name;
  LIMEN_QT_DLOPEN_FUNCTIONS (LIMEN_KDE_SHIM_FIELD)
#undef LIMEN_KDE_SHIM_FIELD
} LimenKdeShim;

/* liblimen-qt, loaded on first use; NULL + Error.Failed when it cannot be loaded. */
const LimenKdeShim *limen_kde_shim_get (GError **error);

/* In a KDE session with a display, load the shim in a background thread soon after
 * start-up, so the first dialog does not wait for it (shim.c says why). */
void limen_kde_shim_preload_later (void);

/* The shim, only if it can show windows now; else NULL + Error.Failed saying why. */
const LimenKdeShim *limen_kde_shim_get_for_dialog (GError **error);

/* ---- helpers shared by the dialogs (util.c) ---- */

/* A parsed a(ssa(ss)s) choices list, as the shim takes it. */
typedef struct {
  GPtrArray     *strings;    /* owns every string below */
  GArray        *choices;    /* LimenQtChoice */
  GPtrArray     *arrays;     /* owns option id/label arrays */
} LimenKdeChoices;

/* Fill @out from a validated choices variant (or NULL). */
void limen_kde_choices_init (LimenKdeChoices *out, GVariant *choices);
void limen_kde_choices_clear (LimenKdeChoices *choices);

/* The a(ss) results variant for chosen choices. */
GVariant *limen_kde_choices_result (size_t n, const LimenQtChoiceResult *results);

/* Check a top-level string argument (title, body, ...): bounded UTF-8. */
gboolean limen_kde_check_string_arg (const char *name, const char *value, gsize max, GError **error);

/* The checks every dialog's impl method starts with, in this order: @handle is a request
 * path, @app_id bounded UTF-8 (255 bytes), @parent_window well-formed (limen_check_parent_window). */
gboolean limen_kde_check_request_args (const char *handle,
                                       const char *app_id,
                                       const char *parent_window,
                                       GError    **error);

/* The name a person knows @app_id by: its desktop file's Name, else the id itself;
 * "Unidentified application" (translated) for "". */
char *limen_kde_app_display_name (const char *app_id);

/* Reply (u a{sv}) to an impl request method. */
void limen_kde_reply_response (GDBusMethodInvocation *invocation, guint response, GVariant *results);

G_END_DECLS
