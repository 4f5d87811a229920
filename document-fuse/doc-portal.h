/* limen-documents — org.freedesktop.portal.Documents (version 5).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "doc-model.h"
#include "docs-bus.h"
#include "fuse-ops.h"

G_BEGIN_DECLS

typedef struct _LimenDocPortal LimenDocPortal;

/* Serve the documents of @model, with files in @fs, at /org/freedesktop/portal/documents. */
LimenDocPortal *limen_doc_portal_new (LimenDocModel *model, LimenFuse *fs);
/* Answer the Documents methods on @bus (whose calls want the mount, see below). */
void limen_doc_portal_export (LimenDocPortal *portal, LimenDocsBus *bus);
/* The filesystem is mounted only when it is first needed: @func runs (on the main thread)
 * before every call on Documents or FileTransfer is handled, and mounts it at the first, at
 * once or once the Documents name is ours. A daemon asked only for the permission store
 * mounts nothing, as the reference's separate permission store does not. */
void limen_doc_portal_set_mount_func (LimenDocPortal *portal, void (*func) (gpointer user_data), gpointer user_data);
void limen_doc_portal_want_mount (LimenDocPortal *portal);
/* The filesystem is mounted (or failed to): GetMountPoint calls waiting for it are answered. */
void limen_doc_portal_mount_settled (LimenDocPortal *portal);

/* Export one file (or directory, with LIMEN_DOC_EXPORT_DIRECTORY) for @info's caller;
 * also used by FileTransfer. @fd is the caller's; @name is AddNamed's basename or NULL.
 * Returns the document (reused or new) and, for a sandboxed caller, the rights the fd
 * proved in *@rights. */
typedef enum {
  LIMEN_DOC_EXPORT_REUSE      = 1 << 0,
  LIMEN_DOC_EXPORT_PERSISTENT = 1 << 1,
  LIMEN_DOC_EXPORT_AS_NEEDED  = 1 << 2,
  LIMEN_DOC_EXPORT_DIRECTORY  = 1 << 3,
} LimenDocExportFlags;

struct _LimenAppInfo;
LimenDoc *limen_doc_portal_export_fd (LimenDocPortal *portal, struct _LimenAppInfo *info, int fd,
                                      const char *name, guint flags, guint *rights, GError **error);

/* A document for host file @path (already checked by the caller) granting @app @perms:
 * a session document of it reused when one exists (never a persistent one: a transfer
 * grants for this session only), a new session document else. */
LimenDoc *limen_doc_portal_export_path (LimenDocPortal *portal, const char *path, gboolean is_dir,
                                        const char *app, guint perms, GError **error);

G_END_DECLS
