/* Limen — org.freedesktop.portal.DynamicLauncher.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* PrepareInstall/RequestInstallToken (single-use tokens), Install, Uninstall,
 * GetDesktopEntry, GetIcon, Launch of app-created launchers under $XDG_DATA_HOME. */
GDBusInterfaceSkeleton *limen_dynamic_launcher_new (LimenPortalContext *context);

G_END_DECLS
