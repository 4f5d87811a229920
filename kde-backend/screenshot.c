/* Limen — org.freedesktop.impl.portal.Screenshot: Screenshot (interactive or not) and
 * PickColor. Capturing, the dialog and the picker live in the Qt shim.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include "errors.h"

/* What we capture: 1 the screen, 2 a window the person clicks, 4 an area they drag out,
 * 8 the active window (the "target" option's values; the shared table checks them). */
#define TARGETS 0xfu

static void
on_screenshot_done (LimenQtDialog *dialog, int response, const char *uri, void *user_data)
{
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && uri)
    g_variant_builder_add (&results, "{sv}", "uri", g_variant_new_string (uri));
  g_debug ("Screenshot answered %d%s%s", response, uri ? ": " : "", uri ? uri : "");
  limen_kde_dialog_call_finish (user_data, response, g_variant_builder_end (&results));
}

static void
on_pick_color_done (LimenQtDialog *dialog, int response, const double rgb[3], void *user_data)
{
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && rgb)
    g_variant_builder_add (&results, "{sv}", "color", g_variant_new ("(ddd)", rgb[0], rgb[1], rgb[2]));
  g_debug ("PickColor answered %d", response);
  limen_kde_dialog_call_finish (user_data, response, g_variant_builder_end (&results));
}

/* Common checks; on success a call with its Request and the filtered options. */
static LimenKdeDialogCall *
begin_call (GDBusMethodInvocation *invocation,
            const char            *handle,
            const char            *app_id,
            const char            *parent_window,
            GVariant              *options,
            const LimenOption     *table,
            GVariant             **opts_out,
            const LimenKdeShim   **shim_out)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  LimenKdeDialogCall *call;

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_options_filter (options, &filtered, &error, table, NULL) ||
      !(*shim_out = limen_kde_shim_get_for_dialog (&error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return NULL;
    }
  *opts_out = g_variant_ref_sink (g_variant_builder_end (&filtered));
  call = limen_kde_dialog_call_new (invocation, handle);
  if (!call)
    g_clear_pointer (opts_out, g_variant_unref);
  return call;
}

static gboolean
on_screenshot (LimenDbusImplPortalScreenshot *skeleton,
               GDBusMethodInvocation         *invocation,
               const char                    *handle,
               const char                    *app_id,
               const char                    *parent_window,
               GVariant                      *options,
               gpointer                       user_data)
{
  g_autoptr(GVariant) opts = NULL;
  const LimenKdeShim *shim = NULL;
  gboolean modal = TRUE, interactive = FALSE;
  guint32 target = 0;
  LimenQtScreenshotSpec spec = { 0 };
  LimenKdeDialogCall *call;

  call = begin_call (invocation, handle, app_id, parent_window, options, limen_options_impl_screenshot_screenshot, &opts, &shim);
  if (!call)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  g_variant_lookup (opts, "modal", "b", &modal);
  g_variant_lookup (opts, "interactive", "b", &interactive);
  g_variant_lookup (opts, "target", "u", &target);
  spec.target = target;
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.window.modal = modal;
  spec.app_id = app_id;
  spec.interactive = interactive;
  call->dialog = shim->limen_qt_screenshot_open (&spec, on_screenshot_done, call);
  if (!call->dialog)
    limen_kde_dialog_call_fail (call, "The screenshot could not be started");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_pick_color (LimenDbusImplPortalScreenshot *skeleton,
               GDBusMethodInvocation         *invocation,
               const char                    *handle,
               const char                    *app_id,
               const char                    *parent_window,
               GVariant                      *options,
               gpointer                       user_data)
{
  g_autoptr(GVariant) opts = NULL;
  const LimenKdeShim *shim = NULL;
  LimenQtWindow window = { 0 };
  LimenKdeDialogCall *call;

  call = begin_call (invocation, handle, app_id, parent_window, options, limen_options_screenshot_pick_color, &opts, &shim);
  if (!call)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  window.parent_window = parent_window;
  window.app_id = app_id;
  window.modal = TRUE;
  call->dialog = shim->limen_qt_pick_color_open (&window, on_pick_color_done, call);
  if (!call->dialog)
    limen_kde_dialog_call_fail (call, "The colour picker could not be started");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_screenshot_new (void)
{
  LimenDbusImplPortalScreenshot *skeleton = limen_dbus_impl_portal_screenshot_skeleton_new ();

  limen_dbus_impl_portal_screenshot_set_version (skeleton, 3);
  limen_dbus_impl_portal_screenshot_set_available_targets (skeleton, TARGETS);
  g_signal_connect (skeleton, "handle-screenshot", G_CALLBACK (on_screenshot), NULL);
  g_signal_connect (skeleton, "handle-pick-color", G_CALLBACK (on_pick_color), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
