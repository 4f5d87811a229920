/* Limen — what every portal module of limen-portal gets from main.c.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "app-info.h"
#include "errors.h"
#include "options.h"
#include "portal-config.h"
#include "limen-dbus.h"

G_BEGIN_DECLS

typedef struct {
  GDBusConnection   *connection;
  LimenPortalConfig *config;
  GHashTable        *backend_watches;   /* backend name → its NameOwnerChanged watch */
} LimenPortalContext;

#define LIMEN_PORTAL_PATH "/org/freedesktop/portal/desktop"

/* Each portal module: create its interface skeleton, or NULL when it cannot be offered. */
typedef GDBusInterfaceSkeleton *(*LimenPortalNewFunc) (LimenPortalContext *context);

/* Identify the caller or answer the invocation with the error; for handlers. */
#define LIMEN_GET_APP_INFO_OR_RETURN(invocation, var)                     \
  g_autoptr(LimenAppInfo) var = limen_app_info_get_for_invocation (invocation); \
  if (var == NULL)                                                        \
    return G_DBUS_METHOD_INVOCATION_HANDLED

G_END_DECLS
