/* Limen — org.freedesktop.portal.Print.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* PreparePrint and Print (the document as an fd checked for the caller). */
GDBusInterfaceSkeleton *limen_print_new (LimenPortalContext *context);

G_END_DECLS
