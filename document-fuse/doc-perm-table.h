/* limen-documents — the documents as the permission store's "documents" table.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "doc-model.h"
#include "perm-store.h"

G_BEGIN_DECLS

/* The callbacks for limen_perm_store_set_documents(); their data is the LimenDocModel. */
const LimenPermDocuments *limen_doc_perm_table (void);

G_END_DECLS
