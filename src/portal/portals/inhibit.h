/* Limen — org.freedesktop.portal.Inhibit.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* Inhibit (the Request is the inhibition), CreateMonitor, QueryEndResponse. */
GDBusInterfaceSkeleton *limen_inhibit_new (LimenPortalContext *context);

G_END_DECLS
