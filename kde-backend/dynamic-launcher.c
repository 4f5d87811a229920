/* Limen — org.freedesktop.impl.portal.DynamicLauncher: PrepareInstall shows the launcher
 * an app wants to add (icon, name, a web application's address) and lets the person rename
 * it; RequestInstallToken says which app stores may add launchers without asking.
 *
 * The frontend writes the desktop file itself (Install) and owns the token; this side only
 * answers the person's choice and the policy.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include <glib/gi18n.h>
#include <string.h>

#include "errors.h"

#define ICON_BYTES_MAX (4 * 1024 * 1024)
#define ICON_PIXELS_MAX 512

/* The software centres trusted to add launchers without a dialog: the same app ids
 * xdg-desktop-portal-kde 5.27 answers 0 for (KDE's Discover, GNOME Software stable and
 * development builds). The frontend decides which callers carry these ids. */
static const char *const install_token_allowlist[] = {
  "org.kde.discover",
  "org.gnome.Software",
  "org.gnome.SoftwareDevel",
  NULL
};

/* The serialized icon rides on the invocation, so it goes with the call however the call
 * ends (answered, Close, the frontend leaving). */
#define ICON_KEY "limen-launcher-icon"

/* The (sv) "bytes" icon inside @icon_v (boxed at most twice, as GIcon serializations
 * travel); NULL + InvalidArgument for anything else. */
static GVariant *
unbox_bytes_icon (GVariant *icon_v, GBytes **bytes, GError **error)
{
  g_autoptr(GVariant) icon = g_variant_ref (icon_v);
  g_autoptr(GVariant) inner = NULL;
  const char *kind;

  for (int i = 0; i < 2 && g_variant_is_of_type (icon, G_VARIANT_TYPE_VARIANT); i++)
    {
      GVariant *unboxed = g_variant_get_variant (icon);

      g_variant_unref (icon);
      icon = unboxed;
    }
  if (g_variant_is_of_type (icon, G_VARIANT_TYPE ("(sv)")))
    {
      g_variant_get (icon, "(&sv)", &kind, &inner);
      if (g_str_equal (kind, "bytes") && g_variant_is_of_type (inner, G_VARIANT_TYPE_BYTESTRING) &&
          g_variant_get_size (inner) > 0 && g_variant_get_size (inner) <= ICON_BYTES_MAX)
        {
          *bytes = g_variant_get_data_as_bytes (inner);
          return g_steal_pointer (&icon);
        }
    }
  g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid icon_v: must be a serialized bytes icon of at most 4 MiB");
  return NULL;
}

static char *
app_name_for (const char *app_id)
{
  g_autofree char *name = limen_kde_app_display_name (app_id);

  /* The dialog has its own wording for an app it cannot name. */
  return *app_id ? g_steal_pointer (&name) : g_strdup ("");
}

static void
on_done (LimenQtDialog *dialog, int response, const char *name, void *user_data)
{
  LimenKdeDialogCall *call = user_data;
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK)
    {
      g_variant_builder_add (&results, "{sv}", "name", g_variant_new_string (name));
      /* Editing the icon is not offered: the app's own icon, as the specification says. */
      g_variant_builder_add (&results, "{sv}", "icon", g_object_get_data (G_OBJECT (call->invocation), ICON_KEY));
    }
  g_debug ("Launcher dialog answered %d", response);
  limen_kde_dialog_call_finish (call, response, g_variant_builder_end (&results));
}

/* Checks every argument of PrepareInstall; the filtered options in @opts. */
static gboolean
check_prepare_args (const char *handle, const char *app_id, const char *parent_window, const char *name,
                    GVariant *options, GVariant **opts, GError **error)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  if (!limen_kde_check_request_args (handle, app_id, parent_window, error))
    return FALSE;
  if (!limen_launcher_name_is_valid (name))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid name: one line of 1 to %d bytes", LIMEN_LAUNCHER_NAME_MAX);
      return FALSE;
    }
  if (!limen_options_filter (options, &filtered, error, limen_options_dynamic_launcher_prepare_install, NULL))
    return FALSE;
  *opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  return TRUE;
}

static gboolean
on_prepare_install (LimenDbusImplPortalDynamicLauncher *skeleton,
                    GDBusMethodInvocation              *invocation,
                    const char                         *handle,
                    const char                         *app_id,
                    const char                         *parent_window,
                    const char                         *name,
                    GVariant                           *icon_v,
                    GVariant                           *options,
                    gpointer                            user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GVariant) icon = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *app_name = NULL;
  const LimenKdeShim *shim = NULL;
  LimenQtLauncherSpec spec = { 0 };
  gboolean modal = TRUE, editable_name = TRUE;
  guint32 type = LIMEN_LAUNCHER_APPLICATION;
  const char *target = NULL;
  LimenKdeDialogCall *call;

  if (!check_prepare_args (handle, app_id, parent_window, name, options, &opts, &error) ||
      (icon = unbox_bytes_icon (icon_v, &bytes, &error)) == NULL ||
      (shim = limen_kde_shim_get_for_dialog (&error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!shim->limen_qt_launcher_icon_check (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                                           ICON_PIXELS_MAX))
    {
      g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                             "Invalid icon_v: not a PNG, JPEG or SVG image of at most %d×%d pixels",
                                             ICON_PIXELS_MAX, ICON_PIXELS_MAX);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_variant_lookup (opts, "modal", "b", &modal);
  g_variant_lookup (opts, "editable_name", "b", &editable_name);
  g_variant_lookup (opts, "launcher_type", "u", &type);
  g_variant_lookup (opts, "target", "&s", &target);

  call = limen_kde_dialog_call_new (invocation, handle);
  if (!call)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  g_object_set_data_full (G_OBJECT (invocation), ICON_KEY, g_variant_ref_sink (g_variant_new_variant (icon)),
                          (GDestroyNotify) g_variant_unref);
  app_name = app_name_for (app_id);
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.window.modal = modal;
  spec.app_name = app_name;
  spec.webapp = type == LIMEN_LAUNCHER_WEBAPP;
  spec.target = target;
  spec.name = name;
  spec.editable_name = editable_name;
  spec.icon_data = g_bytes_get_data (bytes, &spec.icon_size);
  call->dialog = shim->limen_qt_launcher_open (&spec, on_done, call);
  if (!call->dialog)
    limen_kde_dialog_call_fail (call, "The launcher dialog could not be shown");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_request_install_token (LimenDbusImplPortalDynamicLauncher *skeleton,
                          GDBusMethodInvocation              *invocation,
                          const char                         *app_id,
                          GVariant                           *options,
                          gpointer                            user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  gboolean allowed;

  /* The specification defines no options; the frontend forwards PrepareInstall's. */
  if (!limen_kde_check_string_arg ("app_id", app_id, 255, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_dynamic_launcher_prepare_install, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  allowed = *app_id != '\0' && g_strv_contains (install_token_allowlist, app_id);
  g_debug ("Install token for '%s': %s", app_id, allowed ? "allowed" : "refused");
  limen_dbus_impl_portal_dynamic_launcher_complete_request_install_token (skeleton, invocation, allowed ? 0 : 2);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_dynamic_launcher_new (void)
{
  LimenDbusImplPortalDynamicLauncher *skeleton = limen_dbus_impl_portal_dynamic_launcher_skeleton_new ();

  limen_dbus_impl_portal_dynamic_launcher_set_version (skeleton, 1);
  limen_dbus_impl_portal_dynamic_launcher_set_supported_launcher_types (skeleton,
                                                                       LIMEN_LAUNCHER_APPLICATION |
                                                                       LIMEN_LAUNCHER_WEBAPP);
  g_signal_connect (skeleton, "handle-prepare-install", G_CALLBACK (on_prepare_install), NULL);
  g_signal_connect (skeleton, "handle-request-install-token", G_CALLBACK (on_request_install_token), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
