/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.GameMode v4, forwarded to GameMode's com.feralinteractive.GameMode
 * with pids translated out of the caller's sandbox. */
GDBusInterfaceSkeleton *limen_game_mode_new (LimenPortalContext *context);
