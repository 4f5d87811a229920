/* Limen — org.freedesktop.portal.Account.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* GetUserInformation, answered by the Account backend's dialog. */
GDBusInterfaceSkeleton *limen_account_new (LimenPortalContext *context);

G_END_DECLS
