/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Camera access is a PipeWire remote restricted to camera nodes. This build carries no
 * PipeWire client, so it says so plainly: IsCameraPresent is false, AccessCamera ends with
 * response 2 and OpenPipeWireRemote fails with NotFound, each at once and logged. */
#include "camera.h"

#include "backend.h"

static gboolean
handle_access_camera (LimenDbusPortalCamera *object, GDBusMethodInvocation *invocation, GVariant *options,
                      LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenRequest) request = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  request = limen_request_new (invocation, info, options, &error);
  if (request == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(o)", limen_request_get_path (request)));
  g_message ("Camera access for '%s' refused: this limen-portal has no PipeWire support",
             limen_app_info_get_id (info));
  limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_open_pipewire_remote (LimenDbusPortalCamera *object, GDBusMethodInvocation *invocation,
                             GUnixFDList *fd_list, GVariant *options, LimenPortalContext *context)
{
  g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                 "No camera: this limen-portal has no PipeWire support");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_camera_new (LimenPortalContext *context)
{
  LimenDbusPortalCamera *object = limen_dbus_portal_camera_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));

  limen_dbus_portal_camera_set_version (object, 1);
  limen_dbus_portal_camera_set_is_camera_present (object, FALSE);
  g_signal_connect (object, "handle-access-camera", G_CALLBACK (handle_access_camera), context);
  g_signal_connect (object, "handle-open-pipewire-remote", G_CALLBACK (handle_open_pipewire_remote), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
