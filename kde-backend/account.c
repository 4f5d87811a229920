/* Limen — org.freedesktop.impl.portal.Account: GetUserInformation with a dialog that
 * shows what is shared (name, picture) and the app's reason.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include "option-tables.h"

static void
on_done (LimenQtDialog *dialog, int response, const char *real_name, const char *image_path, void *user_data)
{
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
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
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
open_account (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  g_autofree char *face = find_face ();
  const char *real_name = g_get_real_name ();
  LimenQtAccountSpec spec = { 0 };

  limen_kde_call_window (call, &spec.window);
  spec.window.modal = TRUE;
  spec.reason = "";
  g_variant_lookup (limen_kde_call_get_options (call), "reason", "&s", &spec.reason);
  spec.user_name = g_get_user_name ();
  /* GLib answers "Unknown" when there is no GECOS name. */
  spec.real_name = g_strcmp0 (real_name, "Unknown") == 0 ? g_get_user_name () : real_name;
  spec.image_path = face ? face : "";
  return limen_kde_call_opened (call, shim->limen_qt_account_open (&spec, (LimenQtAccountDone) done, call));
}

static const LimenKdeMethod account_methods[] = {
  { .method = "GetUserInformation", .options = limen_options_impl_account_get_user_information,
    .open = open_account, .done = G_CALLBACK (on_done), .failed = "The account dialog could not be shown" },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_account_new (void)
{
  return limen_kde_driver_offer (limen_dbus_impl_portal_account_skeleton_new (), account_methods);
}
