/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A non-interactive screenshot shows the user nothing, so a sandboxed app needs the
 * stored "screenshot" permission (or the user's yes in an Access dialog) first. The
 * picture the backend saved is handed to a sandboxed app as a read-only document, named
 * where its own sandbox mounts the store (/run/flatpak/doc for a Flatpak app). */
#include "portal.h"

#include <glib/gi18n.h>

#include "access.h"
#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "document-export.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Screenshot"
#define TABLE "screenshot"
/* Version 3 adds targets: 1 screen, 2 a window the person picks, 4 an area, 8 the active window. */
#define TARGETS_ALL 0xfu
#define TARGETS_VERSION 3

static LimenDbusPortalScreenshot *skeleton;
static guint backend_version;

/* After the handle: a non-interactive screenshot shows the user nothing, so it needs the
 * stored permission or the user's yes; an interactive one's dialog is the consent. */
static void
check_access (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  gboolean interactive = FALSE;

  g_variant_lookup (limen_call_get_options (call), "interactive", "b", &interactive);
  if (interactive)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  limen_access_step (call, task, g_variant_get_string (window, NULL), TABLE, LIMEN_ACCESS_ASK,
                     &(LimenAccessDialog) {
                       .title = _("Allow this app to take screenshots?"),
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
                               (const char * const[]) { uri, NULL }, LIMEN_EXPORT_APP_VIEW,
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

/* The backend's version and AvailableTargets become ours: version 3 only with a version 3
 * backend, and only the targets it can take. */
static void
apply_backend_properties (GVariant *props, gpointer user_data)
{
  guint32 version = 0, targets = 0;

  g_variant_lookup (props, "version", "u", &version);
  if (version < TARGETS_VERSION || !g_variant_lookup (props, "AvailableTargets", "u", &targets))
    targets = 0;
  backend_version = version;
  limen_dbus_portal_screenshot_set_version (skeleton, version >= TARGETS_VERSION ? TARGETS_VERSION : 2);
  limen_dbus_portal_screenshot_set_available_targets (skeleton, targets & TARGETS_ALL);
}

static void
on_target_properties (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  guint32 target = 0;

  if (reply)
    {
      g_autoptr(GVariant) props = NULL;

      g_variant_get (reply, "(@a{sv})", &props);
      apply_backend_properties (props, NULL);
    }
  g_variant_lookup (limen_call_get_options (call), "target", "u", &target);
  if (backend_version < TARGETS_VERSION)
    {
      /* An older backend does not know targets: it gets the call it always got. */
      limen_call_set_option (call, "target", NULL);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if ((target & limen_dbus_portal_screenshot_get_available_targets (skeleton)) == 0)
    {
      g_autoptr(GError) error = NULL;

      limen_option_set_error (&error, "target", "this target is not available (see AvailableTargets)");
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_return_boolean (task, TRUE);
}

/* Before the handle: a target must be one the backend offers; its properties are read now
 * (the backend is about to be called anyway), so a backend started late is seen. */
static void
check_target (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  const char *backend;

  if (!g_variant_lookup (limen_call_get_options (call), "target", "u", NULL))
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  backend = limen_backend_find (limen_call_get_context (call), IMPL_IFACE, &error);
  if (!backend)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_set_task_data (task, call, NULL);
  g_dbus_connection_call (limen_call_get_context (call)->connection, backend, LIMEN_PORTAL_PATH,
                          "org.freedesktop.DBus.Properties", "GetAll", g_variant_new ("(s)", IMPL_IFACE),
                          G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK, NULL,
                          on_target_properties, g_object_ref (task));
}

static const LimenStep screenshot_pre[] = {
  { check_target, LIMEN_STEP_BEFORE_HANDLE },
  { check_access, LIMEN_STEP_AFTER_HANDLE },
  { NULL }
};
static const LimenStep screenshot_post[] = { { export_picture }, { NULL } };
static const LimenStep pick_color_post[] = { { check_color }, { NULL } };

static const LimenDriverMethod screenshot_methods[] = {
  { .method = "Screenshot", .options = limen_options_screenshot_screenshot, .impl_interface = IMPL_IFACE,
    .impl_method = "Screenshot", .pre = screenshot_pre, .post = screenshot_post },
  { .method = "PickColor", .options = limen_options_screenshot_pick_color, .impl_interface = IMPL_IFACE,
    .impl_method = "PickColor", .post = pick_color_post },
  { NULL }
};

/* Screenshot and PickColor. PickColor asks no permission, as the reference: the backend's
 * picker waits for the person's click, which is the consent, and hands over one colour. */
GDBusInterfaceSkeleton *
limen_screenshot_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  /* Ours for the daemon's life: the backend's properties are copied onto it. */
  skeleton = limen_dbus_portal_screenshot_skeleton_new ();
  limen_backend_watch_properties (context, IMPL_IFACE, apply_backend_properties, NULL);
  /* Version 2 until the backend says it takes targets. */
  return limen_driver_offer (context, G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton)), 2, screenshot_methods);
}
