/* Limen — org.freedesktop.portal.OpenURI.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* OpenURI, OpenFile, OpenDirectory: the AppChooser backend picks among the handlers of the
 * content type, the frontend launches the choice. */
GDBusInterfaceSkeleton *limen_open_uri_new (LimenPortalContext *context);

G_END_DECLS
