/* Limen — org.freedesktop.impl.portal.Access: AccessDialog.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include "errors.h"
#include "option-tables.h"

static void
on_done (LimenQtDialog *dialog, int response, size_t n_choices, const LimenQtChoiceResult *choices,
         void *user_data)
{
  LimenKdeDialogCall *call = user_data;
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && n_choices > 0)
    g_variant_builder_add (&results, "{sv}", "choices", limen_kde_choices_result (n_choices, choices));
  g_debug ("Access dialog answered %d", response);
  limen_kde_dialog_call_finish (call, response, g_variant_builder_end (&results));
}

static gboolean
on_access_dialog (LimenDbusImplPortalAccess *skeleton,
                  GDBusMethodInvocation     *invocation,
                  const char                *handle,
                  const char                *app_id,
                  const char                *parent_window,
                  const char                *title,
                  const char                *subtitle,
                  const char                *body,
                  GVariant                  *options,
                  gpointer                   user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GVariant) choices_v = NULL;
  const LimenKdeShim *shim;
  LimenKdeChoices choices;
  const char *deny = NULL, *grant = NULL, *icon = NULL;
  gboolean modal = TRUE;
  LimenKdeDialogCall *call;
  LimenQtAccessSpec spec = { 0 };

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_kde_check_string_arg ("title", title, 1024, &error) ||
      !limen_kde_check_string_arg ("subtitle", subtitle, 4096, &error) ||
      !limen_kde_check_string_arg ("body", body, 16384, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_impl_access_access_dialog, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "modal", "b", &modal);
  g_variant_lookup (opts, "deny_label", "&s", &deny);
  g_variant_lookup (opts, "grant_label", "&s", &grant);
  g_variant_lookup (opts, "icon", "&s", &icon);
  choices_v = g_variant_lookup_value (opts, "choices", G_VARIANT_TYPE ("a(ssa(ss)s)"));

  shim = limen_kde_shim_get_for_dialog (&error);
  if (!shim)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  call = limen_kde_dialog_call_new (invocation, handle);
  if (!call)
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  limen_kde_choices_init (&choices, choices_v);
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.window.modal = modal;
  spec.title = title;
  spec.subtitle = subtitle;
  spec.body = body;
  spec.deny_label = deny;
  spec.grant_label = grant;
  spec.icon = icon;
  spec.n_choices = choices.choices->len;
  spec.choices = (const LimenQtChoice *) choices.choices->data;
  call->dialog = shim->limen_qt_access_open (&spec, on_done, call);
  limen_kde_choices_clear (&choices);
  if (!call->dialog)
    limen_kde_dialog_call_fail (call, "The access dialog could not be shown");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_access_new (void)
{
  LimenDbusImplPortalAccess *skeleton = limen_dbus_impl_portal_access_skeleton_new ();

  g_signal_connect (skeleton, "handle-access-dialog", G_CALLBACK (on_access_dialog), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
