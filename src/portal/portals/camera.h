/* Limen — org.freedesktop.portal.Camera.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* AccessCamera, OpenPipeWireRemote and IsCameraPresent (watched in PipeWire). */
GDBusInterfaceSkeleton *limen_camera_new (LimenPortalContext *context);

G_END_DECLS
