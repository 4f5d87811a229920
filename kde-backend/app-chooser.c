/* Limen — org.freedesktop.impl.portal.AppChooser: ChooseApplication, UpdateChoices.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include <string.h>

#include "errors.h"
#include "option-tables.h"

#define MAX_CHOICES 512
#define CHOICES_ARG 3

/* Desktop ids as the frontend sends them (no ".desktop"): [A-Za-z0-9_.-], bounded. */
static gboolean
check_choices (const char *const *choices, GError **error)
{
  guint n = 0;

  for (; choices[n]; n++)
    {
      const char *c = choices[n];

      if (*c == '\0' || strlen (c) > 255 || strspn (c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                        "0123456789_.-") != strlen (c))
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid choices: each must be a desktop file id");
          return FALSE;
        }
    }
  if (n > MAX_CHOICES)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid choices: too many");
      return FALSE;
    }
  return TRUE;
}

static void
on_done (LimenQtDialog *dialog, int response, const char *choice, void *user_data)
{
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && choice && *choice)
    g_variant_builder_add (&results, "{sv}", "choice", g_variant_new_string (choice));
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static gboolean
check_choices_arg (LimenKdeCall *call, GError **error)
{
  g_autoptr(GVariant) choices = limen_kde_call_get_arg (call, CHOICES_ARG);
  g_autofree const char **strv = g_variant_get_strv (choices, NULL);

  return check_choices (strv, error);
}

static gboolean
open_chooser (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  g_autoptr(GVariant) choices = limen_kde_call_get_arg (call, CHOICES_ARG);
  g_autofree const char **strv = g_variant_get_strv (choices, NULL);
  const char *filename = NULL;
  LimenQtAppChooserSpec spec = { .content_type = "", .uri = "", .last_choice = "" };

  g_variant_lookup (opts, "last_choice", "&s", &spec.last_choice);
  g_variant_lookup (opts, "content_type", "&s", &spec.content_type);
  g_variant_lookup (opts, "uri", "&s", &spec.uri);
  g_variant_lookup (opts, "filename", "&s", &filename);
  if (filename && !*spec.uri)
    spec.uri = filename;
  limen_kde_call_window (call, &spec.window);
  spec.n_choices = g_strv_length ((char **) strv);
  spec.choices = strv;
  return limen_kde_call_opened (call, shim->limen_qt_app_chooser_open (&spec, (LimenQtAppChooserDone) done, call));
}

static gboolean
on_update_choices (LimenDbusImplPortalAppChooser *skeleton,
                   GDBusMethodInvocation         *invocation,
                   const char                    *handle,
                   const char *const             *choices,
                   gpointer                       user_data)
{
  g_autoptr(GError) error = NULL;
  LimenKdeCall *call;

  if (!check_choices (choices, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  call = limen_kde_call_lookup (invocation, handle, "ChooseApplication");
  if (!call)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                     "No application chooser is open for this handle");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_kde_shim_get (NULL)->limen_qt_app_chooser_update (limen_kde_call_get_dialog (call),
                                                          g_strv_length ((char **) choices), (const char **) choices);
  limen_dbus_impl_portal_app_chooser_complete_update_choices (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static const LimenKdeMethod app_chooser_methods[] = {
  { .method = "ChooseApplication", .options = limen_options_impl_app_chooser_choose_application,
    .check = check_choices_arg, .open = open_chooser, .done = G_CALLBACK (on_done),
    .failed = "The application chooser could not be shown" },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_app_chooser_new (void)
{
  LimenDbusImplPortalAppChooser *skeleton = limen_dbus_impl_portal_app_chooser_skeleton_new ();

  g_signal_connect (skeleton, "handle-update-choices", G_CALLBACK (on_update_choices), NULL);
  return limen_kde_driver_offer (skeleton, app_chooser_methods);
}
