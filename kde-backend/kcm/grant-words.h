/* Limen — a grant of the permission store, in words a person understands.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "permission-model.h"

G_BEGIN_DECLS

/* Fill @grant's title and detail from its table row, permissions and data. */
void limen_grant_describe (LimenGrant *grant);

G_END_DECLS
