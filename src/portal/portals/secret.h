/* Limen — org.freedesktop.portal.Secret.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* RetrieveSecret: the backend writes the app's secret into the caller's pipe. */
GDBusInterfaceSkeleton *limen_secret_new (LimenPortalContext *context);

G_END_DECLS
