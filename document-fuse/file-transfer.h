/* limen-documents — org.freedesktop.portal.FileTransfer (version 1).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "doc-portal.h"
#include "docs-bus.h"
#include "fuse-ops.h"

G_BEGIN_DECLS

typedef struct _LimenFileTransfer LimenFileTransfer;

/* Transfers export the files for their receiver through @portal. */
LimenFileTransfer *limen_file_transfer_new (LimenDocPortal *portal, LimenFuse *fs);
/* Export at /org/freedesktop/portal/documents. */
void limen_file_transfer_export (LimenFileTransfer *transfer, LimenDocsBus *bus);

G_END_DECLS
