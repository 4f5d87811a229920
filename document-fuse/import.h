/* limen-documents — one-time import of the reference implementation's state.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "db.h"
#include "doc-model.h"
#include "perm-store.h"

G_BEGIN_DECLS

/* On the first start, read the GVDB files in $XDG_DATA_HOME/flatpak/db (read-only) into the
 * stores; unreadable files are logged and skipped. Never runs twice. */
void limen_import_reference_state (LimenDb *db, LimenPermStore *perms, LimenDocModel *model);

G_END_DECLS
