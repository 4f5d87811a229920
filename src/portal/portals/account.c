/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "backend.h"
#include "driver.h"
#include "option-tables.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Account"

static const LimenDriverMethod account_methods[] = {
  { .method = "GetUserInformation", .options = limen_options_account_get_user_information,
    .impl_interface = IMPL_IFACE, .impl_method = "GetUserInformation" },
  { NULL }
};

/* GetUserInformation, answered by the Account backend's dialog. */
GDBusInterfaceSkeleton *
limen_account_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_account_skeleton_new (), 1, account_methods);
}
