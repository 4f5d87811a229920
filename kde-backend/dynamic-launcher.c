/* Limen — org.freedesktop.impl.portal.DynamicLauncher: PrepareInstall shows the launcher
 * an app wants to add (icon, name, a web application's address) and lets the person rename
 * it; RequestInstallToken says which app stores may add launchers without asking.
 *
 * The frontend writes the desktop file itself (Install) and owns the token; this side only
 * answers the person's choice and the policy.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include <errno.h>
#include <string.h>

#include "errors.h"

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

/* ---- keeping KDE's menu up to date ----
 *
 * The frontend writes an approved launcher to $XDG_DATA_HOME/xdg-desktop-portal/applications
 * (linked into applications/). KDE's menu reads KService's sycoca cache and refreshes when the
 * cache is rebuilt; in a Plasma session kded5 watches the desktop-file folders and runs
 * kbuildsycoca5 about 5 s after a change (kded5(8)). Without kded5 on the bus nothing
 * rebuilds it, and a running menu never shows the launcher: so for the token's lifetime after
 * an approval, a new or removed launcher there makes us run kbuildsycoca5 (measured here:
 * ~0.1 s CPU in its own process) unless kded5 is there to do it. */

#define WATCH_SECONDS (5 * 60)   /* the frontend's token lifetime */
#define SETTLE_MS 500             /* one rebuild for the desktop file, its icon and its link */

static GFileMonitor *launcher_monitor;
static GDBusConnection *launcher_bus;     /* where kded5 would be */
static guint watch_expiry;
static guint settle_source;

static void
on_sycoca_built (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  if (!g_subprocess_wait_check_finish (G_SUBPROCESS (source), result, &error))
    g_message ("kbuildsycoca5 failed: %s", error->message);
  else
    g_debug ("KService's cache rebuilt for a new launcher");
}

static void
on_kded_checked (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  gboolean kded = FALSE;

  if (reply)
    g_variant_get (reply, "(b)", &kded);
  if (kded)
    {
      g_debug ("kded5 rebuilds KService's cache itself");
      return;
    }
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                           "kbuildsycoca5", NULL);
  if (!proc)
    g_debug ("Not rebuilding KService's cache: %s", error->message);
  else
    g_subprocess_wait_check_async (proc, NULL, on_sycoca_built, NULL);
}

static gboolean
rebuild_sycoca (gpointer user_data)
{
  settle_source = 0;
  if (launcher_bus)
    g_dbus_connection_call (launcher_bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "NameHasOwner", g_variant_new ("(s)", "org.kde.kded5"), G_VARIANT_TYPE ("(b)"),
                            G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_kded_checked, NULL);
  return G_SOURCE_REMOVE;
}

static void
on_launchers_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event, gpointer data)
{
  /* The frontends write through a temporary file renamed into place. */
  g_autofree char *name = g_file_get_basename (event == G_FILE_MONITOR_EVENT_RENAMED && other ? other : file);

  if (!g_str_has_suffix (name, ".desktop") ||
      (event != G_FILE_MONITOR_EVENT_CREATED && event != G_FILE_MONITOR_EVENT_DELETED &&
       event != G_FILE_MONITOR_EVENT_MOVED_IN && event != G_FILE_MONITOR_EVENT_MOVED_OUT &&
       event != G_FILE_MONITOR_EVENT_RENAMED))
    return;
  if (settle_source)
    g_source_remove (settle_source);
  settle_source = g_timeout_add (SETTLE_MS, rebuild_sycoca, NULL);
}

static gboolean
stop_watching (gpointer user_data)
{
  watch_expiry = 0;
  g_clear_object (&launcher_monitor);
  g_clear_object (&launcher_bus);
  return G_SOURCE_REMOVE;
}

/* A launcher was approved: watch for the frontend's Install for the token's lifetime. */
static void
watch_for_install (GDBusConnection *bus)
{
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "xdg-desktop-portal", "applications", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (dir);
  g_autoptr(GError) error = NULL;

  if (!launcher_monitor)
    {
      /* The folder the frontends would make (as they do, private): GLib watches a missing
       * folder only by polling, and would miss the first launcher written into it. */
      if (g_mkdir_with_parents (dir, 0700) != 0)
        g_debug ("Cannot create %s: %s", dir, g_strerror (errno));
      launcher_monitor = g_file_monitor_directory (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);
      if (!launcher_monitor)
        {
          g_debug ("Not watching %s: %s", dir, error->message);
          return;
        }
      g_signal_connect (launcher_monitor, "changed", G_CALLBACK (on_launchers_changed), NULL);
    }
  g_set_object (&launcher_bus, bus);
  if (watch_expiry)
    g_source_remove (watch_expiry);
  watch_expiry = g_timeout_add_seconds (WATCH_SECONDS, stop_watching, NULL);
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
      watch_for_install (g_dbus_method_invocation_get_connection (call->invocation));
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
      (icon = limen_launcher_icon_unbox (icon_v, &bytes, &error)) == NULL ||
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
  if (allowed)
    watch_for_install (g_dbus_method_invocation_get_connection (invocation));
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
