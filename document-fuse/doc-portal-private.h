/* limen-documents — what the Documents files share. Not installed. Files: doc-portal.c
 * (the interface, GetMountPoint, grants, Delete, the host-only methods), doc-add.c (the
 * Add family), doc-export.c (a caller's file exported as a document).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "doc-portal.h"
#include "app-access.h"
#include "app-info.h"
#include "errors.h"

G_BEGIN_DECLS

struct _LimenDocPortal {
  LimenDocModel *model;
  LimenFuse     *fs;
  gboolean       mount_settled;   /* the mount is up, or will not come */
  GPtrArray     *mount_waiters;   /* GetMountPoint calls that came before */
  guint          mount_timeout;
  void         (*want_mount) (gpointer user_data);
  gpointer       want_mount_data;
  GList         *lookups;         /* LookupCall*: Lookup calls opening their path */
};

/* export_fd() for a sandboxed AddFull naming the caller's own app: the app gets what it
 * asks for there, not a caller's rights besides (as in the reference). Internal, above the
 * flags of the API. */
#define EXPORT_FOR_SELF (1u << 16)

/* export_fd with everything: *@created tells whether the document is new; with @reach,
 * an as-needed export asks it whether the app reaches the file with @need (*@reached). */
LimenDoc *limen_doc_portal_export_fd_full (LimenDocPortal *portal, LimenAppInfo *info, int fd, const char *name,
                                           guint flags, guint *rights_out, gboolean *created,
                                           LimenAppAccessRules *reach, LimenAppAccess need, gboolean *reached,
                                           GError **error);
/* Add, AddNamed, AddFull and AddNamedFull (doc-add.c). */
void limen_doc_portal_handle_add (LimenDocsCall *dcall, gpointer user_data);
/* Argument @index of @params as a byte string: with or without the customary trailing NUL,
 * never with another, not empty, at most PATH_MAX (InvalidArgument naming @key else). */
char *limen_doc_portal_bytestring (GVariant *params, gsize index, const char *key, GError **error);

/* Answer @call with @error, taken. */
static inline void
limen_doc_portal_return_error (LimenDocsCall *call, GError *error)
{
  limen_docs_call_return_gerror (call, error);
  g_error_free (error);
}

G_END_DECLS
