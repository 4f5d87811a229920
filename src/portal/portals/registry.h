/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.host.portal.Registry v1: host apps tell us their app id. */
GDBusInterfaceSkeleton *limen_registry_new (LimenPortalContext *context);
