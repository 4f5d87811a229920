/* Limen — org.freedesktop.impl.portal.Access: AccessDialog.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include "option-tables.h"

enum { TITLE_ARG = 3, SUBTITLE_ARG, BODY_ARG };

static void
on_done (LimenQtDialog *dialog, int response, size_t n_choices, const LimenQtChoiceResult *choices,
         void *user_data)
{
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && n_choices > 0)
    g_variant_builder_add (&results, "{sv}", "choices", limen_kde_choices_result (n_choices, choices));
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static gboolean
check_texts (LimenKdeCall *call, GError **error)
{
  return limen_kde_check_string_arg ("title", limen_kde_call_get_string (call, TITLE_ARG), 1024, error) &&
         limen_kde_check_string_arg ("subtitle", limen_kde_call_get_string (call, SUBTITLE_ARG), 4096, error) &&
         limen_kde_check_string_arg ("body", limen_kde_call_get_string (call, BODY_ARG), 16384, error);
}

static gboolean
open_access (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  g_autoptr(GVariant) choices_v = g_variant_lookup_value (opts, "choices", G_VARIANT_TYPE ("a(ssa(ss)s)"));
  LimenQtAccessSpec spec = { 0 };
  LimenKdeChoices choices;
  gboolean opened;

  limen_kde_call_window (call, &spec.window);
  spec.title = limen_kde_call_get_string (call, TITLE_ARG);
  spec.subtitle = limen_kde_call_get_string (call, SUBTITLE_ARG);
  spec.body = limen_kde_call_get_string (call, BODY_ARG);
  g_variant_lookup (opts, "deny_label", "&s", &spec.deny_label);
  g_variant_lookup (opts, "grant_label", "&s", &spec.grant_label);
  g_variant_lookup (opts, "icon", "&s", &spec.icon);
  limen_kde_choices_init (&choices, choices_v);
  spec.n_choices = choices.choices->len;
  spec.choices = (const LimenQtChoice *) choices.choices->data;
  opened = limen_kde_call_opened (call, shim->limen_qt_access_open (&spec, (LimenQtAccessDone) done, call));
  limen_kde_choices_clear (&choices);
  return opened;
}

static const LimenKdeMethod access_methods[] = {
  { .method = "AccessDialog", .options = limen_options_impl_access_access_dialog, .check = check_texts,
    .open = open_access, .done = G_CALLBACK (on_done), .failed = "The access dialog could not be shown" },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_access_new (void)
{
  return limen_kde_driver_offer (limen_dbus_impl_portal_access_skeleton_new (), access_methods);
}
