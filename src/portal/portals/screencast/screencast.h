/* Limen — org.freedesktop.portal.ScreenCast.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* The ScreenCast skeleton, or NULL when no backend offers the impl interface. */
GDBusInterfaceSkeleton *limen_screen_cast_new (LimenPortalContext *context);

G_END_DECLS
