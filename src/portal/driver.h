/* Limen — the frontend's request and session driver.
 *
 * Every portal method that answers with a Request (or creates or uses a Session) is one
 * static table row, and the driver runs every row in the same order:
 *
 *   1. identify the caller (LimenAppInfo; an unknown caller gets the error, nothing else);
 *   2. check the options against the row's table: InvalidArgument before anything else
 *      (or, for a row flagged LIMEN_DRIVER_LENIENT_OPTIONS, the bad option left out);
 *   3. the row's pre-steps marked LIMEN_STEP_BEFORE_HANDLE (Lockdown key, argument and fd
 *      checks, path translation): a refusal is the method's D-Bus error;
 *   4. find the backend (none: Error.Failed), create the Request (and the Session), answer
 *      the handle;
 *   5. the pre-steps marked LIMEN_STEP_AFTER_HANDLE (permission-store lookup, an Access
 *      question): a refusal is Response 2;
 *   6. call the backend's impl method (its name watched: leaving the bus ends the call;
 *      Request.Close cancels it), or the row's in-process @run step;
 *   7. on response 0 the post-steps (document export, translating results);
 *   8. emit Response to the caller.
 *
 * A step is an asynchronous GTask step: it gets the call and a GTask, and completes the task
 * with g_task_return_boolean (task, TRUE) to go on, g_task_return_error () to refuse (see
 * above for what a refusal becomes), or g_task_return_boolean (task, FALSE) after it
 * answered the call itself (limen_call_return_error () or limen_call_set_response ()).
 *
 * Usage (a whole portal method):
 *
 *   static void
 *   export_picture (LimenCall *call, GTask *task)
 *   {
 *     ... limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, new_results);
 *     g_task_return_boolean (task, TRUE);
 *   }
 *   static const LimenStep post[] = { { export_picture }, { NULL } };
 *   static const LimenDriverMethod methods[] = {
 *     { .method = "Screenshot", .options = limen_options_screenshot_screenshot,
 *       .impl_interface = "org.freedesktop.impl.portal.Screenshot", .impl_method = "Screenshot",
 *       .post = post },
 *     { NULL }
 *   };
 *   ... in limen_screenshot_new ():
 *     return limen_driver_offer (context, limen_dbus_portal_screenshot_skeleton_new (), 2, methods);
 *
 * The impl method gets (handle, [session_handle,] app_id, the method's other in-arguments,
 * the filtered options) unless a step set other arguments (limen_call_set_impl_args).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gunixfdlist.h>

#include "portal.h"
#include "request.h"
#include "session.h"

G_BEGIN_DECLS

/* One method call in flight through the driver. */
typedef struct _LimenCall LimenCall;

typedef enum {
  LIMEN_CALL_REQUEST = 0,     /* answers a Request handle */
  LIMEN_CALL_CREATE_SESSION,  /* Request + a new Session ("session_handle_token"); response 0
                                 answers {session_handle}, any other closes the Session */
  LIMEN_CALL_NEW_SESSION,     /* only a new Session, answered as (o): no Request, no Response;
                                 the @run step (if any) runs before the answer */
  LIMEN_CALL_IN_SESSION,      /* the first in-argument is a session_handle the caller owns;
                                 answers a Request */
} LimenCallKind;

typedef enum {
  LIMEN_STEP_BEFORE_HANDLE = 0,  /* refusal: the method's D-Bus error */
  LIMEN_STEP_AFTER_HANDLE,       /* refusal: Response 2 (the step may use the Request) */
} LimenStepWhen;

typedef enum {
  LIMEN_DRIVER_NONE = 0,
  LIMEN_DRIVER_KEEP_OPEN = 1 << 0,      /* response 0 leaves the Request open (Inhibit) */
  LIMEN_DRIVER_NO_IMPL_OPTIONS = 1 << 1, /* the impl method takes no options dict */
  LIMEN_DRIVER_SESSION_RESULTS = 1 << 2, /* CreateSession's Response carries the post-steps'
                                            results beside session_handle (InputCapture's
                                            capabilities); otherwise only session_handle */
  LIMEN_DRIVER_UNATTENDED = 1 << 3,      /* the Request finishes if its caller leaves, until
                                            the run step asks someone (OpenURI) */
  LIMEN_DRIVER_LENIENT_OPTIONS = 1 << 4, /* an option of the wrong type, or refused by its
                                            validator, is left out (logged) and the call goes
                                            on, as upstream does for Print; otherwise
                                            such an option is InvalidArgument */
  LIMEN_DRIVER_SESSION_HANDLE_PATH = 1 << 5, /* CreateSession's session_handle result is an
                                            object path (o), as InputCapture's specification
                                            has it; otherwise it is a string (s): ScreenCast,
                                            RemoteDesktop, GlobalShortcuts and Inhibit's
                                            CreateMonitor answer it so, in the specification
                                            and in the reference, and clients read it with
                                            the "s" format, which an "o" fails */
} LimenDriverFlags;

/* A step: complete @task as the header comment says. */
typedef void (*LimenStepFunc) (LimenCall *call, GTask *task);

typedef struct {
  LimenStepFunc func;   /* NULL ends a step list */
  LimenStepWhen when;   /* pre-steps only */
} LimenStep;

typedef struct {
  const char        *method;          /* D-Bus method of the portal interface; NULL ends a table */
  LimenCallKind      kind;
  const LimenOption *options;         /* the method's option table (option-tables.h) */
  const char        *impl_interface;  /* backend interface; NULL: @run answers */
  const char        *impl_method;
  const LimenStep   *pre;             /* NULL or a list ended by { NULL } */
  LimenStepFunc      run;             /* in-process impl (no backend): sets the response */
  const LimenStep   *post;            /* run on response 0 only */
  int                timeout_ms;      /* backend call; 0: a dialog, no timeout */
  LimenDriverFlags   flags;
} LimenDriverMethod;

/* Connect every row of @methods (ended by { NULL }) to @skeleton's handle-* signal of the same
 * method; FALSE (and a critical) when the interface has no such method. */
gboolean limen_driver_export (GDBusInterfaceSkeleton  *skeleton,
                              LimenPortalContext      *context,
                              const LimenDriverMethod *methods);

/* Offer @skeleton (a new gdbus-codegen skeleton, taken) at @version: callers are identified
 * before any handler runs (limen_app_info_gate_skeleton) and every row of @methods (NULL: a
 * portal without request methods) is connected. Returns @skeleton, for _new to return. */
GDBusInterfaceSkeleton *limen_driver_offer (LimenPortalContext      *context,
                                            gpointer                 skeleton,
                                            guint                    version,
                                            const LimenDriverMethod *methods);

/* The portal's context. */
LimenPortalContext *limen_call_get_context (LimenCall *call);
/* The row being run. */
const LimenDriverMethod *limen_call_get_method (LimenCall *call);
/* The caller's identity. */
LimenAppInfo *limen_call_get_app_info (LimenCall *call);
/* The caller's unique bus name. */
const char *limen_call_get_sender (LimenCall *call);
/* The method's in-arguments as received (a tuple). */
GVariant *limen_call_get_parameters (LimenCall *call);
/* In-argument @index of the method (0 = first), a new reference; NULL past the end. */
GVariant *limen_call_get_arg (LimenCall *call, guint index);
/* The fds the caller sent (may be NULL). */
GUnixFDList *limen_call_get_fd_list (LimenCall *call);
/* The caller's own options dict (unfiltered: for reading tokens and flags). */
GVariant *limen_call_get_caller_options (LimenCall *call);
/* The filtered options (after the table); what the backend gets. */
GVariant *limen_call_get_options (LimenCall *call);
/* Set or replace one filtered option (@value consumed if floating; NULL removes it). */
void limen_call_set_option (LimenCall *call, const char *key, GVariant *value);
/* The impl method's arguments between (handle, [session,] app_id) and the options dict;
 * @middle a tuple, consumed if floating; @fd_list the fds for its handles (may be NULL). */
void limen_call_set_impl_args (LimenCall *call, GVariant *middle, GUnixFDList *fd_list);
/* The Request (NULL before the handle, or for LIMEN_CALL_NEW_SESSION). */
LimenRequest *limen_call_get_request (LimenCall *call);
/* The Session (LIMEN_CALL_*SESSION kinds), else NULL. */
LimenSession *limen_call_get_session (LimenCall *call);
/* Portal data for later steps, freed with the call. */
void limen_call_set_data (LimenCall *call, gpointer data, GDestroyNotify destroy);
gpointer limen_call_get_data (LimenCall *call);
/* Take the portal data back (the call no longer frees it). */
gpointer limen_call_steal_data (LimenCall *call);
/* The response so far (the backend's, clamped) and its results (NULL: none). */
guint limen_call_get_response (LimenCall *call);
GVariant *limen_call_get_results (LimenCall *call);
/* Replace the response and results (@results consumed if floating, NULL: empty). */
void limen_call_set_results (LimenCall *call, guint response, GVariant *results);
/* Before the handle: answer the method with @error (a step then returns FALSE). */
void limen_call_return_error (LimenCall *call, const GError *error);

/* Response code of a backend reply (ua{sv}) or (u), clamped to the spec's three; @results
 * (may be NULL) gets the dict of a (ua{sv}) reply. */
guint limen_driver_reply_response (GVariant *reply, GVariant **results);

/* A session handle argument of a plain (no Request) session method: the caller's open
 * Session, or NULL + InvalidArgument naming the session_handle. */
LimenSession *limen_driver_lookup_session (GDBusMethodInvocation *invocation,
                                           const char            *session_handle,
                                           GError               **error);

G_END_DECLS
