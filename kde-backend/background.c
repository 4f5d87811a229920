/* Limen — org.freedesktop.impl.portal.Background: GetAppState (apps with windows: KWin's
 * window list on Wayland, the X11 window list through the shim), NotifyBackground (a
 * dialog), EnableAutostart (a .desktop file in ~/.config/autostart).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "errors.h"
#include "wayland/loader.h"

#define AUTOSTART_DBUS_ACTIVATABLE 1

static void
on_notify_done (LimenQtDialog *dialog, int response, int choice, void *user_data)
{
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK)
    g_variant_builder_add (&results, "{sv}", "result", g_variant_new_uint32 ((guint32) choice));
  g_debug ("NotifyBackground answered %d (choice %d)", response, choice);
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static gboolean
check_app_id (const char *app_id, GError **error)
{
  /* It names a file below ~/.config/autostart: a valid application id only. */
  if (!g_application_id_is_valid (app_id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id");
      return FALSE;
    }
  return TRUE;
}

#define NAME_ARG 2

static gboolean
check_name (LimenKdeCall *call, GError **error)
{
  return limen_kde_check_string_arg ("name", limen_kde_call_get_string (call, NAME_ARG), 256, error);
}

static gboolean
open_notify (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  LimenQtBackgroundSpec spec = { 0 };

  limen_kde_call_window (call, &spec.window);
  spec.window.modal = FALSE;
  spec.app_id = limen_kde_call_get_app_id (call);
  spec.name = limen_kde_call_get_string (call, NAME_ARG);
  return limen_kde_call_opened (call, shim->limen_qt_background_open (&spec, (LimenQtBackgroundDone) done, call));
}

static const LimenKdeMethod background_methods[] = {
  { .method = "NotifyBackground", .check = check_name, .open = open_notify, .done = G_CALLBACK (on_notify_done),
    .failed = "The background dialog could not be shown", .flags = LIMEN_KDE_METHOD_NO_PARENT_WINDOW },
  { NULL }
};

static void
add_app_state (const char *app_id, unsigned int state, void *user_data)
{
  g_variant_builder_add (user_data, "{sv}", app_id, g_variant_new_uint32 (state));
}

static void
on_apps_changed (void *user_data)
{
  limen_dbus_impl_portal_background_emit_running_applications_changed (user_data);
}

/* Plasma on Wayland: KWin's window list (org_kde_plasma_window_management), as the reference
 * reads it. An app with several windows is as present as its most present one. FALSE when this
 * is not a Wayland session whose compositor lists windows for us. */
static gboolean
wayland_app_states (GVariantBuilder *apps, LimenDbusImplPortalBackground *skeleton)
{
  static gboolean watching;
  const char *display = g_getenv ("WAYLAND_DISPLAY");
  const LimenKdeWayland *w;
  const LimenWlWindow *windows;
  g_autoptr(GHashTable) states = NULL;
  GHashTableIter iter;
  gpointer app_id, state;
  gsize n;

  if (!display || !*display || !(w = limen_kde_wayland_get (NULL)) ||
      !(w->limen_wl_features (w->wl) & LIMEN_WL_HAS_WINDOWS))
    return FALSE;
  states = g_hash_table_new (g_str_hash, g_str_equal);
  windows = w->limen_wl_windows (w->wl, &n);
  for (gsize i = 0; i < n; i++)
    {
      guint s = windows[i].active ? 2 : 1;

      /* A window that names no app cannot be matched to one. */
      if (!*windows[i].app_id)
        continue;
      if (GPOINTER_TO_UINT (g_hash_table_lookup (states, windows[i].app_id)) < s)
        g_hash_table_insert (states, (gpointer) windows[i].app_id, GUINT_TO_POINTER (s));
    }
  g_hash_table_iter_init (&iter, states);
  while (g_hash_table_iter_next (&iter, &app_id, &state))
    add_app_state (app_id, GPOINTER_TO_UINT (state), apps);
  if (!watching)
    {
      w->limen_wl_windows_watch (w->wl, on_apps_changed, skeleton);
      watching = TRUE;
    }
  return TRUE;
}

static gboolean
on_get_app_state (LimenDbusImplPortalBackground *skeleton,
                  GDBusMethodInvocation         *invocation,
                  gpointer                       user_data)
{
  static gboolean watching;
  GVariantBuilder apps;
  const LimenKdeShim *shim;

  g_variant_builder_init (&apps, G_VARIANT_TYPE_VARDICT);
  /* Without a display nobody has windows: every app is in the background. */
  if (!wayland_app_states (&apps, skeleton) && (shim = limen_kde_shim_get_for_dialog (NULL)))
    {
      shim->limen_qt_app_states (add_app_state, &apps);
      /* Watch from the first question on, not from start-up: watching needs Qt, and
       * the frontend asks before it cares about changes. */
      if (!watching)
        watching = shim->limen_qt_watch_app_states (on_apps_changed, skeleton);
    }
  limen_dbus_impl_portal_background_complete_get_app_state (skeleton, invocation, g_variant_builder_end (&apps));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
write_autostart (const char *app_id, const char *const *commandline, guint flags, GError **error)
{
  g_autofree char *dir = g_build_filename (g_get_user_config_dir (), "autostart", NULL);
  g_autofree char *file = g_strconcat (app_id, ".desktop", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GString) exec = g_string_new (NULL);
  g_autofree char *data = NULL;

  for (const char *const *arg = commandline; *arg; arg++)
    {
      g_autofree char *quoted = NULL;

      /* Exec= has its own escaping on top of quoting (Desktop Entry spec). */
      if (strchr (*arg, '%') || strchr (*arg, '\n'))
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid commandline: '%' and newlines are not allowed");
          return FALSE;
        }
      /* Quote only what needs it, so the file stays readable. */
      quoted = **arg && strspn (*arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/=:,+-@") ==
                          strlen (*arg)
                 ? g_strdup (*arg) : g_shell_quote (*arg);
      if (exec->len)
        g_string_append_c (exec, ' ');
      g_string_append (exec, quoted);
    }
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_TYPE, "Application");
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_NAME, app_id);
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_EXEC, exec->str);
  if (flags & AUTOSTART_DBUS_ACTIVATABLE)
    g_key_file_set_boolean (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_DBUS_ACTIVATABLE, TRUE);
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, "X-Flatpak", app_id);
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, "X-Limen-Autostart", "true");
  data = g_key_file_to_data (kf, NULL, NULL);
  if (g_mkdir_with_parents (dir, 0700) < 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot create the autostart folder: %s", g_strerror (errno));
      return FALSE;
    }
  return g_file_set_contents (path, data, -1, error);
}

static gboolean
on_enable_autostart (LimenDbusImplPortalBackground *skeleton,
                     GDBusMethodInvocation         *invocation,
                     const char                    *app_id,
                     gboolean                       enable,
                     const char *const             *commandline,
                     guint                          flags,
                     gpointer                       user_data)
{
  g_autoptr(GError) error = NULL;
  guint n = commandline ? g_strv_length ((char **) commandline) : 0;

  if (!check_app_id (app_id, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!enable)
    {
      g_autofree char *file = g_strconcat (app_id, ".desktop", NULL);
      g_autofree char *path = g_build_filename (g_get_user_config_dir (), "autostart", file, NULL);

      if (g_unlink (path) < 0 && errno != ENOENT)
        g_warning ("Cannot remove %s: %s", path, g_strerror (errno));
      limen_dbus_impl_portal_background_complete_enable_autostart (skeleton, invocation, FALSE);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (n == 0 || n > 256)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid commandline: empty or too long");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  for (guint i = 0; i < n; i++)
    if (!limen_kde_check_string_arg ("commandline", commandline[i], 4096, &error))
      {
        limen_invocation_return_gerror (invocation, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
      }
  if (!write_autostart (app_id, commandline, flags, &error))
    {
      if (error->domain != LIMEN_ERROR)
        g_warning ("Autostart for %s: %s", app_id, error->message);
      if (error->domain == LIMEN_ERROR && error->code == LIMEN_ERROR_INVALID_ARGUMENT)
        {
          limen_invocation_return_gerror (invocation, error);
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
      limen_dbus_impl_portal_background_complete_enable_autostart (skeleton, invocation, FALSE);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_background_complete_enable_autostart (skeleton, invocation, TRUE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_background_new (void)
{
  LimenDbusImplPortalBackground *skeleton = limen_dbus_impl_portal_background_skeleton_new ();

  g_signal_connect (skeleton, "handle-get-app-state", G_CALLBACK (on_get_app_state), NULL);
  g_signal_connect (skeleton, "handle-enable-autostart", G_CALLBACK (on_enable_autostart), NULL);
  return limen_kde_driver_offer (skeleton, background_methods);
}
