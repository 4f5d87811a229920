/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.Trash: trash a file the caller passes as an fd. */
GDBusInterfaceSkeleton *limen_trash_new (LimenPortalContext *context);
