/* Limen — org.freedesktop.portal.RemoteDesktop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* The RemoteDesktop skeleton, or NULL when no backend offers the impl interface. */
GDBusInterfaceSkeleton *limen_remote_desktop_new (LimenPortalContext *context);

G_END_DECLS
