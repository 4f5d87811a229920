/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.ProxyResolver on GProxyResolver (libproxy / glib-networking). */
GDBusInterfaceSkeleton *limen_proxy_resolver_new (LimenPortalContext *context);
