/* Limen — org.freedesktop.portal.Camera.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* AccessCamera and OpenPipeWireRemote; this build has no PipeWire client, so the camera is reported absent. */
GDBusInterfaceSkeleton *limen_camera_new (LimenPortalContext *context);

G_END_DECLS
