/* limen-documents — one-time import of the reference implementation's state.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "db.h"
#include "doc-model.h"
#include "perm-store.h"

G_BEGIN_DECLS

/* Read the GVDB files in $XDG_DATA_HOME/flatpak/db (read-only) into the stores. Each entry
 * read is recorded and never read again; what could not be read (a file, an entry) is
 * logged with its id and reason and tried again at the next start. */
void limen_import_reference_state (LimenDb *db, LimenPermStore *perms, LimenDocModel *model);

G_END_DECLS
