/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.NetworkMonitor v3 on GNetworkMonitor. */
GDBusInterfaceSkeleton *limen_network_monitor_new (LimenPortalContext *context);
/* Make GIO's monitor (module lookup, netlink, NetworkManager probe) before the bus is up. */
void limen_network_monitor_prepare (void);
/* Network state and proxies are only for apps that have the network: FALSE after
 * answering @invocation with NotAllowed for the others. */
gboolean limen_network_check_access (GDBusMethodInvocation *invocation, LimenAppInfo *info);
