/* Limen — org.freedesktop.portal.GlobalShortcuts (version 2).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* Sessions of shortcuts bound by the GlobalShortcuts backend; key events to their owners. */
GDBusInterfaceSkeleton *limen_global_shortcuts_new (LimenPortalContext *context);

G_END_DECLS
