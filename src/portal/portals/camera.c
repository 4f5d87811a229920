/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Camera access is a PipeWire remote restricted to camera nodes. This build carries no
 * PipeWire client, so it says so plainly: IsCameraPresent is false, AccessCamera ends with
 * response 2 and OpenPipeWireRemote fails with NotFound, each at once and logged. While
 * Lockdown's disable-camera is set, AccessCamera fails with NotAllowed instead. */
#include "portal.h"

#include "driver.h"
#include "lockdown.h"

/* Lockdown's disable-camera refuses the call itself, as the reference does. */
static void
check_lockdown (LimenCall *call, GTask *task)
{
  limen_lockdown_step (call, task, "disable-camera", "Camera access is disabled");
}

static const LimenStep camera_pre[] = {
  { check_lockdown, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

/* The in-process impl of AccessCamera: there is nothing to grant. */
static void
refuse_camera (LimenCall *call, GTask *task)
{
  g_message ("Camera access for '%s' refused: this limen-portal has no PipeWire support",
             limen_app_info_get_id (limen_call_get_app_info (call)));
  limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
  g_task_return_boolean (task, FALSE);
}

static const LimenDriverMethod camera_methods[] = {
  { .method = "AccessCamera", .pre = camera_pre, .run = refuse_camera },
  { NULL }
};

static gboolean
handle_open_pipewire_remote (LimenDbusPortalCamera *object, GDBusMethodInvocation *invocation,
                             GUnixFDList *fd_list, GVariant *options, LimenPortalContext *context)
{
  g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                 "No camera: this limen-portal has no PipeWire support");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* AccessCamera and OpenPipeWireRemote; this build has no PipeWire client, so the camera is reported absent. */
GDBusInterfaceSkeleton *
limen_camera_new (LimenPortalContext *context)
{
  LimenDbusPortalCamera *object = limen_dbus_portal_camera_skeleton_new ();

  limen_driver_offer (context, object, 1, camera_methods);
  limen_dbus_portal_camera_set_is_camera_present (object, FALSE);
  g_signal_connect (object, "handle-open-pipewire-remote", G_CALLBACK (handle_open_pipewire_remote), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
