/* Limen — org.freedesktop.impl.portal.DynamicLauncher: PrepareInstall shows the launcher
 * an app wants to add (icon, name, a web application's address) and lets the person rename
 * it; RequestInstallToken says which app stores may add launchers without asking.
 *
 * The frontend writes the desktop file itself (Install) and owns the token; this side only
 * answers the person's choice and the policy.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

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

#define NAME_ARG 3
#define ICON_ARG 4

/* The checked icon of a PrepareInstall call, kept as the call's data so it goes with the
 * call however the call ends (answered, Close, the frontend leaving). */
typedef struct {
  GVariant *icon;    /* the (sv) icon, boxed once for the results */
  GBytes   *bytes;   /* its image data */
} LauncherIcon;

static void
launcher_icon_free (LauncherIcon *icon)
{
  g_variant_unref (icon->icon);
  g_bytes_unref (icon->bytes);
  g_free (icon);
}

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
  LauncherIcon *icon = limen_kde_call_get_data (user_data);
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK)
    {
      g_variant_builder_add (&results, "{sv}", "name", g_variant_new_string (name));
      /* Editing the icon is not offered: the app's own icon, as the specification says. */
      g_variant_builder_add (&results, "{sv}", "icon", icon->icon);
      watch_for_install (limen_kde_call_get_connection (user_data));
    }
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

/* The name, and the icon: a PNG, JPEG or SVG image the shim can decode, small enough. A shim
 * that cannot be loaded leaves the icon to the driver's next step, which then fails. */
static gboolean
check_name_and_icon (LimenKdeCall *call, GError **error)
{
  g_autoptr(GVariant) icon_v = limen_kde_call_get_arg (call, ICON_ARG);
  const LimenKdeShim *shim = limen_kde_shim_get (NULL);
  g_autoptr(GVariant) icon = NULL;
  g_autoptr(GBytes) bytes = NULL;
  LauncherIcon *kept;

  if (!limen_launcher_name_is_valid (limen_kde_call_get_string (call, NAME_ARG)))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid name: one line of 1 to %d bytes", LIMEN_LAUNCHER_NAME_MAX);
      return FALSE;
    }
  if (!(icon = limen_launcher_icon_unbox (icon_v, &bytes, error)))
    return FALSE;
  if (shim && !shim->limen_qt_launcher_icon_check (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                                                   ICON_PIXELS_MAX))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid icon_v: not a PNG, JPEG or SVG image of at most %d×%d pixels",
                   ICON_PIXELS_MAX, ICON_PIXELS_MAX);
      return FALSE;
    }
  kept = g_new0 (LauncherIcon, 1);
  kept->icon = g_variant_ref_sink (g_variant_new_variant (icon));
  kept->bytes = g_steal_pointer (&bytes);
  limen_kde_call_set_data (call, kept, (GDestroyNotify) launcher_icon_free);
  return TRUE;
}

static gboolean
open_launcher (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  LauncherIcon *icon = limen_kde_call_get_data (call);
  g_autofree char *app_name = app_name_for (limen_kde_call_get_app_id (call));
  LimenQtLauncherSpec spec = { 0 };
  gboolean editable_name = TRUE;
  guint32 type = LIMEN_LAUNCHER_APPLICATION;

  g_variant_lookup (opts, "editable_name", "b", &editable_name);
  g_variant_lookup (opts, "launcher_type", "u", &type);
  g_variant_lookup (opts, "target", "&s", &spec.target);
  limen_kde_call_window (call, &spec.window);
  spec.app_name = app_name;
  spec.webapp = type == LIMEN_LAUNCHER_WEBAPP;
  spec.name = limen_kde_call_get_string (call, NAME_ARG);
  spec.editable_name = editable_name;
  spec.icon_data = g_bytes_get_data (icon->bytes, &spec.icon_size);
  return limen_kde_call_opened (call, shim->limen_qt_launcher_open (&spec, (LimenQtLauncherDone) done, call));
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

static const LimenKdeMethod dynamic_launcher_methods[] = {
  { .method = "PrepareInstall", .options = limen_options_dynamic_launcher_prepare_install,
    .check = check_name_and_icon, .open = open_launcher, .done = G_CALLBACK (on_done),
    .failed = "The launcher dialog could not be shown" },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_dynamic_launcher_new (void)
{
  LimenDbusImplPortalDynamicLauncher *skeleton = limen_dbus_impl_portal_dynamic_launcher_skeleton_new ();

  limen_dbus_impl_portal_dynamic_launcher_set_version (skeleton, 1);
  limen_dbus_impl_portal_dynamic_launcher_set_supported_launcher_types (skeleton,
                                                                       LIMEN_LAUNCHER_APPLICATION |
                                                                       LIMEN_LAUNCHER_WEBAPP);
  g_signal_connect (skeleton, "handle-request-install-token", G_CALLBACK (on_request_install_token), NULL);
  return limen_kde_driver_offer (skeleton, dynamic_launcher_methods);
}
