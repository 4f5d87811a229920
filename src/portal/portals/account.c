/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "account.h"

#include "backend.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Account"

static const LimenOption user_information_options[] = {
  { "reason", "s", limen_validate_string_length, 1024 },
  { NULL }
};

static gboolean
handle_get_user_information (LimenDbusPortalAccount *object, GDBusMethodInvocation *invocation,
                             const char *window, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(LimenRequest) request = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  request = limen_backend_request_method (context, invocation, info, IMPL_IFACE, "GetUserInformation",
                                          g_variant_new ("(s)", window), options, user_information_options,
                                          NULL, NULL, NULL, NULL, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_account_new (LimenPortalContext *context)
{
  LimenDbusPortalAccount *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_account_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_account_set_version (object, 1);
  g_signal_connect (object, "handle-get-user-information", G_CALLBACK (handle_get_user_information), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
