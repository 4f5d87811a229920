/* Limen — org.freedesktop.impl.portal.Account: GetUserInformation with a dialog that
 * shows what is shared (name, picture) and the app's reason.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include "errors.h"

static void
on_done (LimenQtDialog *dialog, int response, const char *real_name, const char *image_path, void *user_data)
{
  LimenKdeDialogCall *call = user_data;
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK)
    {
      g_variant_builder_add (&results, "{sv}", "id", g_variant_new_string (g_get_user_name ()));
      g_variant_builder_add (&results, "{sv}", "name",
                             g_variant_new_string (g_utf8_validate (real_name, -1, NULL) ? real_name : ""));
      if (image_path && *image_path)
        {
          g_autofree char *uri = g_filename_to_uri (image_path, NULL, NULL);

          g_variant_builder_add (&results, "{sv}", "image", g_variant_new_string (uri ? uri : ""));
        }
      else
        g_variant_builder_add (&results, "{sv}", "image", g_variant_new_string (""));
    }
  limen_kde_dialog_call_finish (call, response, g_variant_builder_end (&results));
}

/* The user's picture as KDE and AccountsService keep it. */
static char *
find_face (void)
{
  const char *candidates[] = { ".face.icon", ".face" };

  for (gsize i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      g_autofree char *p = g_build_filename (g_get_home_dir (), candidates[i], NULL);

      if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer (&p);
    }
  {
    g_autofree char *p = g_build_filename ("/var/lib/AccountsService/icons", g_get_user_name (), NULL);

    if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
      return g_steal_pointer (&p);
  }
  return NULL;
}

static gboolean
on_get_user_information (LimenDbusImplPortalAccount *skeleton,
                         GDBusMethodInvocation      *invocation,
                         const char                 *handle,
                         const char                 *app_id,
                         const char                 *window,
                         GVariant                   *options,
                         gpointer                    user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autofree char *face = NULL;
  const char *reason = "";
  const char *real_name = g_get_real_name ();
  const LimenKdeShim *shim;
  LimenQtAccountSpec spec = { 0 };
  LimenKdeDialogCall *call;

  if (!limen_kde_check_request_args (handle, app_id, window, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_impl_account_get_user_information, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "reason", "&s", &reason);
  shim = limen_kde_shim_get_for_dialog (&error);
  if (!shim)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  call = limen_kde_dialog_call_new (invocation, handle);
  if (!call)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  face = find_face ();
  spec.window.parent_window = window;
  spec.window.app_id = app_id;
  spec.window.modal = TRUE;
  spec.reason = reason;
  spec.user_name = g_get_user_name ();
  /* GLib answers "Unknown" when there is no GECOS name. */
  spec.real_name = g_strcmp0 (real_name, "Unknown") == 0 ? g_get_user_name () : real_name;
  spec.image_path = face ? face : "";
  call->dialog = shim->limen_qt_account_open (&spec, on_done, call);
  if (!call->dialog)
    limen_kde_dialog_call_fail (call, "The account dialog could not be shown");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_account_new (void)
{
  LimenDbusImplPortalAccount *skeleton = limen_dbus_impl_portal_account_skeleton_new ();

  g_signal_connect (skeleton, "handle-get-user-information", G_CALLBACK (on_get_user_information), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
