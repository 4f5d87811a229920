/* Limen — org.freedesktop.portal.Screenshot.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* Screenshot and PickColor, for sandboxed callers only with the screenshot permission. */
GDBusInterfaceSkeleton *limen_screenshot_new (LimenPortalContext *context);

G_END_DECLS
