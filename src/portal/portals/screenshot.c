/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A non-interactive screenshot shows the user nothing, so a sandboxed app needs the
 * stored "screenshot" permission (or the user's yes in an Access dialog) first. The
 * picture the backend saved is handed to a sandboxed app as a read-only document. */
#include "portal.h"

#include <glib/gi18n.h>

#include "access.h"
#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "document-export.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Screenshot"
#define TABLE "screenshot"

/* After the handle: a non-interactive screenshot shows the user nothing, so it needs the
 * stored permission or the user's yes; an interactive one's dialog is the consent. */
static void
check_access (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  gboolean interactive = FALSE;

  g_variant_lookup (limen_call_get_options (call), "interactive", "b", &interactive);
  if (interactive && g_str_equal (limen_call_get_method (call)->method, "Screenshot"))
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  limen_access_step (call, task, g_variant_get_string (window, NULL), TABLE, LIMEN_ACCESS_ASK,
                     &(LimenAccessDialog) {
                       .title = _("Allow this app to take screenshots?"),
                       .subtitle = limen_app_info_get_id (limen_call_get_app_info (call)),
                       .body = _("It will see everything on your screen whenever it asks, without showing you."),
                       .grant_label = _("Allow"),
                       .deny_label = _("Deny"),
                       .icon = "applets-screenshooter",
                     });
}

static void
on_exported (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) uris = limen_document_export_finish (result, &error);

  if (uris == NULL || uris[0] == NULL)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Could not hand over the screenshot: %s",
                               error ? error->message : "no file");
      return;
    }
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, g_variant_new_parsed ("{'uri': <%s>}", uris[0]));
  g_task_return_boolean (task, TRUE);
}

/* Post-step of Screenshot: the saved picture, as a read-only document for a sandboxed app. */
static void
export_picture (LimenCall *call, GTask *task)
{
  const char *uri = NULL;

  if (!g_variant_lookup (limen_call_get_results (call), "uri", "&s", &uri) || !g_str_has_prefix (uri, "file:"))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Backend answered Screenshot without a file URI");
      return;
    }
  g_task_set_task_data (task, call, NULL);
  limen_document_export_async (limen_call_get_context (call)->connection, limen_call_get_app_info (call),
                               (const char * const[]) { uri, NULL }, 0,
                               limen_request_get_cancellable (limen_call_get_request (call)),
                               on_exported, g_object_ref (task));
}

/* Post-step of PickColor: only a color in range reaches the app. */
static void
check_color (LimenCall *call, GTask *task)
{
  double r, g, b;

  if (!g_variant_lookup (limen_call_get_results (call), "color", "(ddd)", &r, &g, &b) ||
      r < 0 || r > 1 || g < 0 || g > 1 || b < 0 || b > 1)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Backend answered PickColor without a valid color");
      return;
    }
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, g_variant_new_parsed ("{'color': <(%d, %d, %d)>}", r, g, b));
  g_task_return_boolean (task, TRUE);
}

static const LimenStep shot_pre[] = { { check_access, LIMEN_STEP_AFTER_HANDLE }, { NULL } };
static const LimenStep screenshot_post[] = { { export_picture }, { NULL } };
static const LimenStep pick_color_post[] = { { check_color }, { NULL } };

static const LimenDriverMethod screenshot_methods[] = {
  { .method = "Screenshot", .options = limen_options_screenshot_screenshot, .impl_interface = IMPL_IFACE,
    .impl_method = "Screenshot", .pre = shot_pre, .post = screenshot_post },
  { .method = "PickColor", .options = limen_options_screenshot_pick_color, .impl_interface = IMPL_IFACE,
    .impl_method = "PickColor", .pre = shot_pre, .post = pick_color_post },
  { NULL }
};

/* Screenshot and PickColor, for sandboxed callers only with the screenshot permission. */
GDBusInterfaceSkeleton *
limen_screenshot_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_screenshot_skeleton_new (), 2, screenshot_methods);
}
