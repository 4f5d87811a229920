/* Limen — org.freedesktop.portal.Wallpaper.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* SetWallpaperURI and SetWallpaperFile. */
GDBusInterfaceSkeleton *limen_wallpaper_new (LimenPortalContext *context);

G_END_DECLS
