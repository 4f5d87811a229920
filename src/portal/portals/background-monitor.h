/* Limen — org.freedesktop.background.Monitor: the sandboxed apps running without windows.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* Export the monitor on @context's connection at /org/freedesktop/background/monitor, own
 * its bus name, and follow running Flatpak instances and the Background backend
 * @impl_interface's window states. Once per daemon. */
void limen_background_monitor_start (LimenPortalContext *context, const char *impl_interface);

/* Background.SetStatus of a sandboxed caller with a Flatpak instance (@info): keep
 * @message (NULL: none) for that instance while it runs, and answer @invocation once the
 * listing holds it (Error.Failed when the backend cannot say whether the app has windows). */
void limen_background_monitor_set_status (LimenAppInfo          *info,
                                          const char            *message,
                                          GDBusMethodInvocation *invocation);

G_END_DECLS
