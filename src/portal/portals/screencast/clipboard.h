/* Limen — org.freedesktop.portal.Clipboard (on RemoteDesktop sessions).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* The Clipboard skeleton, or NULL when no backend offers the impl interface. */
GDBusInterfaceSkeleton *limen_clipboard_new (LimenPortalContext *context);

G_END_DECLS
