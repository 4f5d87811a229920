/* Limen — "may this app do X?": the permission store first, the Access dialog second.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"
#include "driver.h"
#include "request.h"
#include "permission-store.h"

G_BEGIN_DECLS

typedef enum {
  LIMEN_ACCESS_MODAL_UNSET = 0,   /* the caller did not say */
  LIMEN_ACCESS_MODAL_YES,
  LIMEN_ACCESS_MODAL_NO,
} LimenAccessModal;

typedef struct {
  LimenAccessModal modal;   /* the caller's "modal" option, for the Access dialog */
  const char *title;        /* translated */
  const char *subtitle;     /* NULL: the app, as app_label() in access.c names it */
  const char *body;
  const char *grant_label;
  const char *deny_label;
  const char *icon;
} LimenAccessDialog;

typedef enum {
  LIMEN_ACCESS_ASK = 0,     /* a stored yes/no decides; otherwise the Access dialog asks */
  LIMEN_ACCESS_LOOKUP,      /* only a stored "yes" allows; nobody is asked */
  LIMEN_ACCESS_NOT_DENIED,  /* only a stored "no" refuses (the backend asks the user itself) */
  LIMEN_ACCESS_GRANT_FIRST, /* nothing stored: allowed and "yes" stored (the backend tells the
                               person); "ask" asks every time, yes/no decide */
} LimenAccessMode;

/* A table whose entries are not a single "yes"/"no"/"ask": how to read an app's stored
 * strings (NULL-terminated, never empty) and what to store for the person's answer. */
typedef struct {
  LimenPermission (*read) (const char * const *stored);
  const char * const *granted;
  const char * const *denied;
} LimenAccessFormat;

/* From now on, entries of @table are read and written as @format says (static, not copied). */
void limen_access_set_format (const char *table, const LimenAccessFormat *format);

/* Decide whether the caller of @request may use (@table, @id) as @mode says, from the app's
 * stored permission: "no" refuses and "yes" allows; "ask" asks every time (LIMEN_ACCESS_ASK);
 * with nothing stored the person is asked (LIMEN_ACCESS_ASK) and the answer stored. The same
 * for every caller, as in the reference: a host app is looked up under its app id, and all
 * host apps without one share the entry of the empty id (one answer for all of them).
 * LIMEN_ACCESS_ASK needs @dialog (strings copied; no Access backend: refused).
 * Runs until the request closes (then: refused). */
void limen_access_check_async (LimenPortalContext      *context,
                               LimenRequest            *request,
                               const char              *parent_window,
                               const char              *table,
                               const char              *id,
                               LimenAccessMode          mode,
                               const LimenAccessDialog *dialog,
                               GAsyncReadyCallback      callback,
                               gpointer                 user_data);

/* TRUE when allowed; FALSE when refused or the request closed (no error is set for a refusal). */
gboolean limen_access_check_finish (GAsyncResult *result, GError **error);

/* A driver pre-step (LIMEN_STEP_AFTER_HANDLE) asking for the call's Request: completes @task
 * TRUE when allowed, else with Error.NotAllowed (the driver answers Response 2). The call's
 * "modal" option, when its table has one, reaches the Access dialog. */
void limen_access_step (LimenCall               *call,
                        GTask                   *task,
                        const char              *parent_window,
                        const char              *table,
                        LimenAccessMode          mode,
                        const LimenAccessDialog *dialog);

G_END_DECLS
