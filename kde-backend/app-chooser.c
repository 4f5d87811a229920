/* Limen — org.freedesktop.impl.portal.AppChooser: ChooseApplication, UpdateChoices.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>

#include "errors.h"
#include "option-tables.h"

#define MAX_CHOICES 512

typedef struct {
  GDBusMethodInvocation *invocation;
  LimenKdeRequest       *request;
  LimenQtDialog         *dialog;
} ChooserCall;

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
chooser_call_free (ChooserCall *call)
{
  g_clear_object (&call->invocation);
  g_free (call);
}

static void
on_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  ChooserCall *call = user_data;

  limen_kde_shim_get (NULL)->limen_qt_close (call->dialog);
  limen_kde_reply_response (call->invocation, 2, NULL);
  chooser_call_free (call);
}

static void
on_done (LimenQtDialog *dialog, int response, const char *choice, void *user_data)
{
  ChooserCall *call = user_data;
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && choice && *choice)
    g_variant_builder_add (&results, "{sv}", "choice", g_variant_new_string (choice));
  limen_kde_reply_response (call->invocation, response, g_variant_builder_end (&results));
  limen_kde_request_finish (call->request);
  chooser_call_free (call);
}

static gboolean
on_choose_application (LimenDbusImplPortalAppChooser *skeleton,
                       GDBusMethodInvocation         *invocation,
                       const char                    *handle,
                       const char                    *app_id,
                       const char                    *parent_window,
                       const char *const             *choices,
                       GVariant                      *options,
                       gpointer                       user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  const char *last = "", *content_type = "", *uri = "", *filename = NULL;
  gboolean modal = TRUE;
  const LimenKdeShim *shim;
  LimenQtAppChooserSpec spec = { 0 };
  ChooserCall *call;

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !check_choices (choices, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_impl_app_chooser_choose_application, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "last_choice", "&s", &last);
  g_variant_lookup (opts, "modal", "b", &modal);
  g_variant_lookup (opts, "content_type", "&s", &content_type);
  g_variant_lookup (opts, "uri", "&s", &uri);
  g_variant_lookup (opts, "filename", "&s", &filename);
  if (filename && !*uri)
    uri = filename;

  shim = limen_kde_shim_get_for_dialog (&error);
  if (!shim)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  call = g_new0 (ChooserCall, 1);
  call->invocation = g_object_ref (invocation);
  call->request = limen_kde_request_new (invocation, handle, on_request_closed, call, &error);
  if (!call->request)
    {
      limen_invocation_return_gerror (invocation, error);
      chooser_call_free (call);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.window.modal = modal;
  spec.content_type = content_type;
  spec.uri = uri;
  spec.last_choice = last;
  spec.n_choices = g_strv_length ((char **) choices);
  spec.choices = (const char **) choices;
  call->dialog = shim->limen_qt_app_chooser_open (&spec, on_done, call);
  if (!call->dialog)
    {
      limen_kde_fail_dialog (invocation, call->request, "The application chooser could not be shown");
      chooser_call_free (call);
    }
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_update_choices (LimenDbusImplPortalAppChooser *skeleton,
                   GDBusMethodInvocation         *invocation,
                   const char                    *handle,
                   const char *const             *choices,
                   gpointer                       user_data)
{
  g_autoptr(GError) error = NULL;
  LimenKdeRequest *request = limen_kde_request_lookup (g_dbus_method_invocation_get_sender (invocation), handle);
  ChooserCall *call;

  if (!check_choices (choices, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  call = request ? limen_kde_request_get_data (request) : NULL;
  /* Only application chooser requests carry a ChooserCall with a dialog. */
  if (!call || limen_kde_request_get_close_func (request) != on_request_closed)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                     "No application chooser is open for this handle");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_kde_shim_get (NULL)->limen_qt_app_chooser_update (call->dialog, g_strv_length ((char **) choices),
                                                          (const char **) choices);
  limen_dbus_impl_portal_app_chooser_complete_update_choices (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_app_chooser_new (void)
{
  LimenDbusImplPortalAppChooser *skeleton = limen_dbus_impl_portal_app_chooser_skeleton_new ();

  g_signal_connect (skeleton, "handle-choose-application", G_CALLBACK (on_choose_application), NULL);
  g_signal_connect (skeleton, "handle-update-choices", G_CALLBACK (on_update_choices), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
