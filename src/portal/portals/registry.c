/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

static gboolean
handle_register (LimenDbusHostPortalRegistry *object, GDBusMethodInvocation *invocation,
                 const char *app_id, GVariant *options)
{
  g_autoptr(GError) error = NULL;

  if (!limen_app_id_is_valid (app_id))
    {
      g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                             "Invalid application id");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* An identity is chosen once, before anything was done under another one: a connection
   * that already made a call (it was identified then, maybe used) or registered before
   * keeps what it has. */
  if (!limen_app_info_invocation_is_first (invocation))
    {
      /* Error.Failed in the reference's words (clients match them): Qt logs it as a
       * warning and goes on. */
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "Connection already associated with an application ID");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* No options are defined yet; whatever comes is dropped. */
  if (!limen_app_info_register_host_id (g_dbus_method_invocation_get_connection (invocation),
                                        g_dbus_method_invocation_get_sender (invocation), app_id, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_host_portal_registry_complete_register (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* org.freedesktop.host.portal.Registry v1: host apps tell us their app id. */
GDBusInterfaceSkeleton *
limen_registry_new (LimenPortalContext *context)
{
  LimenDbusHostPortalRegistry *object = limen_dbus_host_portal_registry_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));

  limen_dbus_host_portal_registry_set_version (object, 1);
  g_signal_connect (object, "handle-register", G_CALLBACK (handle_register), NULL);
  return G_DBUS_INTERFACE_SKELETON (object);
}
