/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.Settings v2, merged from every configured Settings backend. */
GDBusInterfaceSkeleton *limen_settings_new (LimenPortalContext *context);
