/* Limen — "may this app do X?": the permission store first, the Access dialog second.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"
#include "request.h"

G_BEGIN_DECLS

typedef struct {
  const char *title;        /* translated */
  const char *subtitle;
  const char *body;
  const char *grant_label;
  const char *deny_label;
  const char *icon;
} LimenAccessDialog;

/* Called exactly once with the decision (FALSE when the request closed meanwhile). */
typedef void (*LimenAccessFunc) (LimenRequest *request, gboolean allowed, gpointer user_data);

/* Decide whether the caller of @request may use (@table, @id): host callers may; a stored
 * yes/no decides; otherwise the Access backend asks the user (no backend: refused) and
 * the answer is stored. @dialog strings are copied. */
void limen_access_check (LimenPortalContext      *context,
                         LimenRequest            *request,
                         const char              *parent_window,
                         const char              *table,
                         const char              *id,
                         const LimenAccessDialog *dialog,
                         LimenAccessFunc          func,
                         gpointer                 user_data);

/* Just the stored answer, asynchronously (no dialog): @func gets TRUE only for "yes";
 * host callers always TRUE. */
void limen_access_lookup (LimenPortalContext *context, LimenRequest *request, const char *table, const char *id,
                          LimenAccessFunc func, gpointer user_data);

/* Like limen_access_lookup, but only a stored "no" refuses (unset or "yes": TRUE), for
 * portals whose backend asks the user itself. */
void limen_access_lookup_stored (LimenPortalContext *context, LimenRequest *request, const char *table,
                                 const char *id, LimenAccessFunc func, gpointer user_data);

G_END_DECLS
