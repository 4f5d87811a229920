/* limen-documents — what doc-model.c and doc-util.c share. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A new random document id (20 base-32 characters), or NULL and @error when the kernel's
 * pool cannot be read: never a guessable id instead. */
char *limen_doc_new_id (GError **error);

G_END_DECLS
