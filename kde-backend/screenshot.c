/* Limen — org.freedesktop.impl.portal.Screenshot: Screenshot (interactive or not) and
 * PickColor. Capturing, the dialog and the picker live in the Qt shim.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include "option-tables.h"

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
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static void
on_pick_color_done (LimenQtDialog *dialog, int response, const double rgb[3], void *user_data)
{
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && rgb)
    g_variant_builder_add (&results, "{sv}", "color", g_variant_new ("(ddd)", rgb[0], rgb[1], rgb[2]));
  g_debug ("PickColor answered %d", response);
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static gboolean
open_screenshot (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  LimenQtScreenshotSpec spec = { 0 };
  gboolean interactive = FALSE;
  guint32 target = 0;

  g_variant_lookup (opts, "interactive", "b", &interactive);
  g_variant_lookup (opts, "target", "u", &target);
  limen_kde_call_window (call, &spec.window);
  spec.target = target;
  spec.app_id = limen_kde_call_get_app_id (call);
  spec.interactive = interactive;
  return limen_kde_call_opened (call, shim->limen_qt_screenshot_open (&spec, (LimenQtScreenshotDone) done, call));
}

static gboolean
open_pick_color (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  LimenQtWindow window = { 0 };

  limen_kde_call_window (call, &window);
  window.modal = TRUE;
  return limen_kde_call_opened (call, shim->limen_qt_pick_color_open (&window, (LimenQtPickColorDone) done, call));
}

static const LimenKdeMethod screenshot_methods[] = {
  { .method = "Screenshot", .options = limen_options_impl_screenshot_screenshot, .open = open_screenshot,
    .done = G_CALLBACK (on_screenshot_done), .failed = "The screenshot could not be started" },
  { .method = "PickColor", .options = limen_options_screenshot_pick_color, .open = open_pick_color,
    .done = G_CALLBACK (on_pick_color_done), .failed = "The colour picker could not be started" },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_screenshot_new (void)
{
  LimenDbusImplPortalScreenshot *skeleton = limen_dbus_impl_portal_screenshot_skeleton_new ();

  limen_dbus_impl_portal_screenshot_set_version (skeleton, 3);
  limen_dbus_impl_portal_screenshot_set_available_targets (skeleton, TARGETS);
  return limen_kde_driver_offer (skeleton, screenshot_methods);
}
