/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An app may add launchers for itself only: the desktop file id must carry its app id, the
 * user approves each one (PrepareInstall's dialog, or a backend's RequestInstallToken
 * policy) through a single-use token, and the desktop entry is rebuilt from an allow-list
 * (launcher-entry.c) so that the launcher can only start that app again, inside its sandbox
 * for a Flatpak app. A host app gets the same allow-list, with its commands kept as its own:
 * it could write any desktop file itself, but what the portal writes after a dialog is the
 * launcher the person approved, and one rule keeps the two paths from drifting apart. A Snap
 * app's command could only be kept as given, outside its confinement: refused. */
#include "portal.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gio/gdesktopappinfo.h>

#include "backend.h"
#include "driver.h"
#include "media-validate.h"
#include "launcher-entry.h"
#include "option-tables.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.DynamicLauncher"
#define TOKEN_LIFETIME_US (5 * 60 * G_USEC_PER_SEC)
#define ICON_MAX 512
#define ENTRY_MAX (64 * 1024)

typedef struct {
  char     *app_id;
  char     *name;
  GBytes   *icon;
  char     *format;
  guint     size;
  gint64    expires;
} Token;

static GHashTable *tokens;   /* token → Token */
static LimenDbusPortalDynamicLauncher *launcher;

/* The backend's SupportedLauncherTypes becomes ours, as in the reference: an app must not be
 * offered web apps its backend cannot install. Until the backend has been seen, both kinds
 * (what limen-kde installs). */
static void
on_backend_properties (GVariant *props, gpointer user_data)
{
  guint32 types;

  if (launcher && g_variant_lookup (props, "SupportedLauncherTypes", "u", &types))
    limen_dbus_portal_dynamic_launcher_set_supported_launcher_types (launcher,
                                                                     types & (LIMEN_LAUNCHER_APPLICATION |
                                                                              LIMEN_LAUNCHER_WEBAPP));
}

static void
token_free (Token *t)
{
  g_free (t->app_id);
  g_free (t->name);
  g_bytes_unref (t->icon);
  g_free (t->format);
  g_free (t);
}

static char *
token_new (const char *app_id, const char *name, GBytes *icon, const char *format, guint size)
{
  Token *t = g_new0 (Token, 1);
  guchar raw[18];
  char *id;

  for (guint i = 0; i < sizeof raw; i++)
    raw[i] = (guchar) g_random_int_range (0, 256);
  id = g_base64_encode (raw, sizeof raw);
  g_strdelimit (id, "+/=", '_');
  t->app_id = g_strdup (app_id);
  t->name = g_strdup (name);
  t->icon = g_bytes_ref (icon);
  t->format = g_strdup (format);
  t->size = size;
  t->expires = g_get_monotonic_time () + TOKEN_LIFETIME_US;
  g_hash_table_insert (tokens, g_strdup (id), t);
  return id;
}

static char *
data_dir (const char *sub)
{
  return g_build_filename (g_get_user_data_dir (), "xdg-desktop-portal", sub, NULL);
}

/* "APPID.SOMETHING.desktop" with plain characters only. */
static gboolean
desktop_id_ok (LimenAppInfo *info, const char *id, GError **error)
{
  const char *app_id = limen_app_info_get_id (info);
  gsize len = strlen (id);

  if (*app_id == '\0')
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Launchers need an app id");
      return FALSE;
    }
  if (!g_str_has_prefix (id, app_id) || id[strlen (app_id)] != '.' || !g_str_has_suffix (id, ".desktop") ||
      len > 255 || len <= strlen (app_id) + strlen (".desktop") + 1)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for desktop_file_id: must be APPID.NAME.desktop");
      return FALSE;
    }
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '_' && *p != '-')
      {
        g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                             "Invalid value for desktop_file_id: only [A-Za-z0-9._-]");
        return FALSE;
      }
  return TRUE;
}

/* The icon must be a serialized bytes icon; its bytes are judged out of process. */
static GBytes *
icon_bytes (GVariant *icon_v, GError **error)
{
  GBytes *bytes = NULL;
  g_autoptr(GVariant) icon = limen_launcher_icon_unbox (icon_v, &bytes, error);

  return icon ? bytes : NULL;
}

static gboolean
name_ok (const char *name, GError **error)
{
  if (!limen_launcher_name_is_valid (name))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for name: one line of 1 to 256 bytes");
      return FALSE;
    }
  return TRUE;
}

/* A launcher being approved: its name and its judged icon. */
typedef struct {
  char   *name;
  GBytes *icon;
  char   *format;
  guint   size;
} Prep;

static void
prep_free (Prep *p)
{
  g_free (p->name);
  g_clear_pointer (&p->icon, g_bytes_unref);
  g_free (p->format);
  g_free (p);
}

/* The name and icon bytes from the (name, icon_v) arguments; NULL + InvalidArgument. */
static Prep *
prep_new (GVariant *name_v, GVariant *icon_v, GError **error)
{
  const char *name = g_variant_get_string (name_v, NULL);
  g_autoptr(GBytes) icon = NULL;
  Prep *p;

  if (!name_ok (name, error) || (icon = icon_bytes (icon_v, error)) == NULL)
    return NULL;
  p = g_new0 (Prep, 1);
  p->name = g_strdup (name);
  p->icon = g_steal_pointer (&icon);
  return p;
}

/* The icon validator's answer into @p; FALSE: not an acceptable image. */
static gboolean
prep_take_icon_result (Prep *p, GAsyncResult *result, GError **error)
{
  guint width = 0;

  if (!limen_icon_validate_finish (result, &p->format, &width))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for icon_v: not a PNG, JPEG or SVG image of at most 512×512 pixels");
      return FALSE;
    }
  p->size = g_str_equal (p->format, "svg") ? 0 : width;
  return TRUE;
}

static void
on_icon_checked (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  GError *error = NULL;

  if (!prep_take_icon_result (limen_call_get_data (call), result, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/* Pre-step of PrepareInstall: one line of name, an icon judged out of process. */
static void
check_name_and_icon (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) name_v = limen_call_get_arg (call, 1);
  g_autoptr(GVariant) icon_v = limen_call_get_arg (call, 2);
  GError *error = NULL;
  Prep *p = prep_new (name_v, icon_v, &error);

  if (p == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  limen_call_set_data (call, p, (GDestroyNotify) prep_free);
  g_task_set_task_data (task, call, NULL);
  limen_icon_validate_async (p->icon, ICON_MAX, on_icon_checked, g_object_ref (task));
}

/* Post-step: the user may have edited the name; an edited icon would need judging again, so
 * the app's own (already checked) icon stays. The answer carries the single-use token. */
static void
issue_token (LimenCall *call, GTask *task)
{
  Prep *p = limen_call_get_data (call);
  const char *name = p->name;
  g_autofree char *token = NULL;

  g_variant_lookup (limen_call_get_results (call), "name", "&s", &name);
  if (!name_ok (name, NULL))
    name = p->name;
  token = token_new (limen_app_info_get_id (limen_call_get_app_info (call)), name, p->icon, p->format, p->size);
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS,
                          g_variant_new_parsed ("{'name': <%s>, 'token': <%s>}", name, token));
  g_task_return_boolean (task, TRUE);
}

static const LimenStep prepare_pre[] = { { check_name_and_icon, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep prepare_post[] = { { issue_token }, { NULL } };

static const LimenDriverMethod dynamic_launcher_methods[] = {
  { .method = "PrepareInstall", .options = limen_options_dynamic_launcher_prepare_install, .impl_interface = IMPL_IFACE,
    .impl_method = "PrepareInstall", .pre = prepare_pre, .post = prepare_post },
  { NULL }
};

/* RequestInstallToken answers at once (no Request): the backend's policy decides. */
typedef struct {
  LimenPortalContext    *context;
  GDBusMethodInvocation *invocation;
  LimenAppInfo          *info;
  GVariant              *options;   /* filtered */
  Prep                  *prep;
} TokenCall;

static void
token_call_free (TokenCall *t)
{
  if (t->info)
    limen_app_info_unref (t->info);
  g_clear_pointer (&t->options, g_variant_unref);
  prep_free (t->prep);
  g_free (t);
}

static void
on_token_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  TokenCall *t = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  guint response = LIMEN_RESPONSE_OTHER;
  g_autofree char *token = NULL;

  if (reply)
    g_variant_get (reply, "(u)", &response);
  if (response != LIMEN_RESPONSE_SUCCESS)
    g_dbus_method_invocation_return_error_literal (t->invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                   "Installing launchers without asking is not allowed");
  else
    {
      token = token_new (limen_app_info_get_id (t->info), t->prep->name, t->prep->icon, t->prep->format, t->prep->size);
      g_dbus_method_invocation_return_value (t->invocation, g_variant_new ("(s)", token));
    }
  token_call_free (t);
}

static void
on_token_icon_checked (GObject *source, GAsyncResult *result, gpointer user_data)
{
  TokenCall *t = user_data;
  g_autoptr(GError) error = NULL;
  const char *backend;

  if (!prep_take_icon_result (t->prep, result, &error) ||
      (backend = limen_backend_find (t->context, IMPL_IFACE, &error)) == NULL)
    {
      limen_invocation_return_gerror (t->invocation, error);
      token_call_free (t);
      return;
    }
  g_dbus_connection_call (t->context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE,
                          "RequestInstallToken",
                          g_variant_new ("(s@a{sv})", limen_app_info_get_id (t->info), t->options),
                          G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK, NULL,
                          on_token_reply, t);
}

static gboolean
handle_request_install_token (LimenDbusPortalDynamicLauncher *object, GDBusMethodInvocation *invocation,
                              const char *name, GVariant *icon_v, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) name_v = g_variant_ref_sink (g_variant_new_string (name));
  Prep *p;
  TokenCall *t;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, limen_options_dynamic_launcher_prepare_install, NULL) ||
      (p = prep_new (name_v, icon_v, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  t = g_new0 (TokenCall, 1);
  t->context = context;
  t->invocation = invocation;
  t->info = limen_app_info_ref (info);
  t->options = g_variant_ref_sink (g_variant_builder_end (&b));
  t->prep = p;
  limen_icon_validate_async (p->icon, ICON_MAX, on_token_icon_checked, t);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static char *
icon_path_for (const char *desktop_id, const char *format, guint size)
{
  g_autofree char *base = g_strndup (desktop_id, strlen (desktop_id) - strlen (".desktop"));
  g_autofree char *dir_name = size ? g_strdup_printf ("%ux%u", size, size) : g_strdup ("scalable");
  g_autofree char *dir = data_dir ("icons");
  g_autofree char *file = g_strconcat (base, ".", format, NULL);

  return g_build_filename (dir, dir_name, file, NULL);
}

/* The launcher to write for @entry, or NULL + InvalidArgument. A Snap app's command could
 * only be kept as it is, which would run it outside its confinement: refused, as the
 * reference does. */
static GKeyFile *
launcher_build (LimenAppInfo *info, Token *t, const char *desktop_file_id, const char *entry, char **icon_path,
                GError **error)
{
  LimenLauncherTarget target = {
    .app_id = limen_app_info_get_id (info),
    .flatpak = limen_app_info_get_kind (info) == LIMEN_APP_KIND_FLATPAK,
    .name = t->name,
  };

  if (limen_app_info_get_kind (info) == LIMEN_APP_KIND_SNAP)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Launchers of Snap apps are not supported");
      return NULL;
    }
  if (!desktop_id_ok (info, desktop_file_id, error))
    return NULL;
  if (strlen (entry) > ENTRY_MAX)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for desktop_entry: larger than 64 KiB");
      return NULL;
    }
  *icon_path = icon_path_for (desktop_file_id, t->format, t->size);
  target.icon = *icon_path;
  return limen_launcher_entry_build (entry, &target, error);
}

static gboolean
handle_install (LimenDbusPortalDynamicLauncher *object, GDBusMethodInvocation *invocation, const char *token,
                const char *desktop_file_id, const char *desktop_entry, GVariant *options,
                LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = NULL;
  Token *t;
  g_autofree char *apps_dir = data_dir ("applications");
  g_autofree char *path = NULL;
  g_autofree char *icon_path = NULL;
  g_autofree char *icon_dir = NULL;
  g_autofree char *link_dir = g_build_filename (g_get_user_data_dir (), "applications", NULL);
  g_autofree char *link = NULL;
  g_autofree char *data = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  t = g_hash_table_lookup (tokens, token);
  if (t == NULL || t->expires < g_get_monotonic_time () ||
      g_strcmp0 (t->app_id, limen_app_info_get_id (info)) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Invalid or expired token");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* What the user approved is what gets installed: name and icon come from the token. */
  kf = launcher_build (info, t, desktop_file_id, desktop_entry, &icon_path, &error);
  if (kf == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  icon_dir = g_path_get_dirname (icon_path);
  path = g_build_filename (apps_dir, desktop_file_id, NULL);
  link = g_build_filename (link_dir, desktop_file_id, NULL);
  data = g_key_file_to_data (kf, NULL, NULL);
  if (g_mkdir_with_parents (apps_dir, 0700) != 0 || g_mkdir_with_parents (icon_dir, 0700) != 0 ||
      g_mkdir_with_parents (link_dir, 0700) != 0 ||
      !g_file_set_contents (icon_path, g_bytes_get_data (t->icon, NULL), g_bytes_get_size (t->icon), &error) ||
      !g_file_set_contents (path, data, -1, &error))
    {
      g_message ("Installing launcher %s failed: %s", desktop_file_id, error ? error->message : g_strerror (errno));
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "The launcher could not be written");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  unlink (link);
  if (symlink (path, link) != 0)
    g_message ("Could not link %s: %s", link, g_strerror (errno));
  g_hash_table_remove (tokens, token);   /* single use */
  g_debug ("Installed launcher %s for '%s'", desktop_file_id, limen_app_info_get_id (info));
  limen_dbus_portal_dynamic_launcher_complete_install (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The installed key file of @id, which must be the caller's. */
static GKeyFile *
load_installed (LimenAppInfo *info, const char *id, char **path_out, GError **error)
{
  g_autofree char *dir = data_dir ("applications");
  g_autofree char *path = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  if (!desktop_id_ok (info, id, error))
    return NULL;
  path = g_build_filename (dir, id, NULL);
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_TRANSLATIONS, NULL))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No launcher %s", id);
      return NULL;
    }
  if (path_out)
    *path_out = g_steal_pointer (&path);
  return g_steal_pointer (&kf);
}

static gboolean
handle_uninstall (LimenDbusPortalDynamicLauncher *object, GDBusMethodInvocation *invocation,
                  const char *id, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *icon = NULL;
  g_autofree char *link = NULL;
  g_autoptr(GKeyFile) kf = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  kf = load_installed (info, id, &path, &error);
  if (kf == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  icon = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_ICON, NULL);
  link = g_build_filename (g_get_user_data_dir (), "applications", id, NULL);
  unlink (link);
  unlink (path);
  if (icon && g_str_has_prefix (icon, g_get_user_data_dir ()))
    unlink (icon);
  limen_dbus_portal_dynamic_launcher_complete_uninstall (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_desktop_entry (LimenDbusPortalDynamicLauncher *object, GDBusMethodInvocation *invocation,
                          const char *id, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = NULL;
  g_autofree char *data = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  kf = load_installed (info, id, NULL, &error);
  if (kf == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  data = g_key_file_to_data (kf, NULL, NULL);
  limen_dbus_portal_dynamic_launcher_complete_get_desktop_entry (object, invocation, data);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_icon (LimenDbusPortalDynamicLauncher *object, GDBusMethodInvocation *invocation,
                 const char *id, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = NULL;
  g_autofree char *icon = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *dir_name = NULL;
  g_autoptr(GBytes) bytes = NULL;
  const char *dot;
  gsize len;
  guint size = 0;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  kf = load_installed (info, id, NULL, &error);
  if (kf == NULL ||
      (icon = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_ICON, NULL)) == NULL ||
      !g_file_get_contents (icon, &contents, &len, NULL) || (dot = strrchr (icon, '.')) == NULL)
    {
      if (error == NULL)
        g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No icon for %s", id);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  dir = g_path_get_dirname (icon);
  dir_name = g_path_get_basename (dir);
  sscanf (dir_name, "%u", &size);
  bytes = g_bytes_new_take (g_steal_pointer (&contents), len);
  limen_dbus_portal_dynamic_launcher_complete_get_icon (
    object, invocation,
    g_variant_new ("v", g_variant_new ("(sv)", "bytes",
                                        g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, bytes, TRUE))),
    dot + 1, size);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_launch (LimenDbusPortalDynamicLauncher *object, GDBusMethodInvocation *invocation,
               const char *id, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GKeyFile) kf = NULL;
  g_autoptr(GDesktopAppInfo) app = NULL;
  g_autoptr(GAppLaunchContext) ctx = g_app_launch_context_new ();
  const char *token = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  kf = load_installed (info, id, &path, &error);
  if (kf == NULL || (app = g_desktop_app_info_new_from_keyfile (kf)) == NULL)
    {
      if (error == NULL)
        g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "Launcher %s cannot be started", id);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (g_variant_lookup (options, "activation_token", "&s", &token) && *token)
    {
      g_app_launch_context_setenv (ctx, "XDG_ACTIVATION_TOKEN", token);
      g_app_launch_context_setenv (ctx, "DESKTOP_STARTUP_ID", token);
    }
  if (!g_app_info_launch (G_APP_INFO (app), NULL, ctx, &error))
    {
      g_message ("Launching %s failed: %s", id, error->message);
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "The launcher could not be started");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_portal_dynamic_launcher_complete_launch (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- launchers installed before ----
 * One written by the reference or an earlier Limen may hold what Install now leaves out (an
 * action's host command, Exec[xx], TerminalOptions): each is brought under the allow-list,
 * or, when its commands are not its app's own, disabled (kept as ID.unsafe, out of the menu). */

#define RECHECK_MAX (4 * ENTRY_MAX)   /* re-quoting may make an entry grow */

static void
launcher_disable (const char *path, const char *id, const char *why)
{
  g_autofree char *link = g_build_filename (g_get_user_data_dir (), "applications", id, NULL);
  g_autofree char *aside = g_strconcat (path, ".unsafe", NULL);
  GStatBuf st;

  g_warning ("Launcher %s disabled (kept as %s.unsafe): %s", id, id, why);
  if (g_lstat (link, &st) == 0 && S_ISLNK (st.st_mode))
    unlink (link);
  if (rename (path, aside) != 0)
    unlink (path);
}

static void
launcher_recheck (const char *dir, const char *icon_dir, const char *id)
{
  g_autofree char *path = g_build_filename (dir, id, NULL);
  g_autofree char *data = NULL;
  g_autofree char *fixed = NULL;
  g_autoptr(GError) error = NULL;
  GStatBuf st;
  gsize len;

  if (g_lstat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return;
  if (st.st_size > RECHECK_MAX || !g_file_get_contents (path, &data, &len, NULL) || strlen (data) != len)
    {
      launcher_disable (path, id, "unreadable or too large");
      return;
    }
  fixed = limen_launcher_entry_recheck (id, data, icon_dir, &error);
  if (fixed == NULL)
    launcher_disable (path, id, error->message);
  else if (!g_str_equal (fixed, data))
    {
      if (g_file_set_contents (path, fixed, -1, &error))
        g_message ("Launcher %s: removed what could start anything but its app", id);
      else
        launcher_disable (path, id, error->message);
    }
}

static gboolean
launchers_recheck_all (gpointer user_data)
{
  g_autofree char *dir = data_dir ("applications");
  g_autofree char *icon_dir = data_dir ("icons");
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".desktop"))
      launcher_recheck (dir, icon_dir, name);
  return G_SOURCE_REMOVE;
}

/* PrepareInstall/RequestInstallToken (single-use tokens), Install, Uninstall,
 * GetDesktopEntry, GetIcon, Launch of app-created launchers under $XDG_DATA_HOME. */
GDBusInterfaceSkeleton *
limen_dynamic_launcher_new (LimenPortalContext *context)
{
  LimenDbusPortalDynamicLauncher *object;

  /* Whether or not this portal is offered, the menu shows what was installed before. */
  g_idle_add_full (G_PRIORITY_LOW, launchers_recheck_all, NULL, NULL);
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  tokens = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) token_free);
  object = limen_dbus_portal_dynamic_launcher_skeleton_new ();
  limen_driver_offer (context, object, 1, dynamic_launcher_methods);
  limen_dbus_portal_dynamic_launcher_set_supported_launcher_types (object, LIMEN_LAUNCHER_APPLICATION | LIMEN_LAUNCHER_WEBAPP);
  launcher = object;
  limen_backend_watch_properties (context, IMPL_IFACE, on_backend_properties, NULL);
  g_signal_connect (object, "handle-request-install-token", G_CALLBACK (handle_request_install_token), context);
  g_signal_connect (object, "handle-install", G_CALLBACK (handle_install), context);
  g_signal_connect (object, "handle-uninstall", G_CALLBACK (handle_uninstall), context);
  g_signal_connect (object, "handle-get-desktop-entry", G_CALLBACK (handle_get_desktop_entry), context);
  g_signal_connect (object, "handle-get-icon", G_CALLBACK (handle_get_icon), context);
  g_signal_connect (object, "handle-launch", G_CALLBACK (handle_launch), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
