/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "account.h"

#include "backend.h"
#include "driver.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Account"

static const LimenOption user_information_options[] = {
  { "reason", "s", limen_validate_string_length, 1024 },
  { NULL }
};

static const LimenDriverMethod account_methods[] = {
  { .method = "GetUserInformation", .options = user_information_options,
    .impl_interface = IMPL_IFACE, .impl_method = "GetUserInformation" },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_account_new (LimenPortalContext *context)
{
  LimenDbusPortalAccount *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_account_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_account_set_version (object, 1);
  limen_driver_export (G_DBUS_INTERFACE_SKELETON (object), context, account_methods);
  return G_DBUS_INTERFACE_SKELETON (object);
}
