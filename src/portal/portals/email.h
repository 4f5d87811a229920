/* Limen — org.freedesktop.portal.Email.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* ComposeEmail with checked addresses and attachment fds. */
GDBusInterfaceSkeleton *limen_email_new (LimenPortalContext *context);

G_END_DECLS
