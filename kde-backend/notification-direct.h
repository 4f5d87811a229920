/* Limen — notifications straight to org.freedesktop.Notifications (notification-direct.c),
 * when KNotification would drop them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "limen-qt.h"

G_BEGIN_DECLS

/* Watch the server's signals on @connection; once, before the first show. */
void limen_kde_notify_direct_init (GDBusConnection *connection);

/* As limen_qt_notification_show/update/close, over GDBus. */
LimenQtNotification *limen_kde_notify_direct_show (const LimenQtNotificationSpec *spec,
                                                   LimenQtNotificationAction action,
                                                   LimenQtNotificationClosed closed, void *user_data);
void limen_kde_notify_direct_update (LimenQtNotification *handle, const LimenQtNotificationSpec *spec);
void limen_kde_notify_direct_close (LimenQtNotification *handle);

G_END_DECLS
