/* Limen — org.freedesktop.portal.FileChooser.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* OpenFile, SaveFile, SaveFiles: the backend's dialog, the chosen files exported to
 * sandboxed callers through the document store. */
GDBusInterfaceSkeleton *limen_file_chooser_new (LimenPortalContext *context);

G_END_DECLS
