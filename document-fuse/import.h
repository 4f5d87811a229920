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

/* The same, in steps of a thousand entries (one transaction each): as many as @budget_ms
 * allows now, the rest from the main loop when it is idle, calls answered in between. A
 * store of a few thousand entries is imported before this returns; progress goes to the
 * log. Until the end, the stores ask the job for what they miss (limen_import_job_ensure). */
typedef struct _LimenImportJob LimenImportJob;
/* Bring in now what the running import has not reached: entry @id of @table, the document
 * recorded at @path (table "documents"), or (both NULL) the rest of @table. Main thread. */
void limen_import_job_ensure (LimenImportJob *job, const char *table, const char *id, const char *path);
void limen_import_reference_state_start (LimenDb *db, LimenPermStore *perms, LimenDocModel *model,
                                         guint budget_ms);

G_END_DECLS
