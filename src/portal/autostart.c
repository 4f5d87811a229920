/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The specification deprecated the backend's EnableAutostart: the frontend writes the
 * entry, so every backend gets the same, desktop-neutral file (the XDG autostart spec),
 * marked X-XDP-Autostart so the desktop can tell who made it. */
#include "autostart.h"

#include <errno.h>
#include <string.h>
#include <gio/gdesktopappinfo.h>
#include <glib/gstdio.h>

#include "errors.h"

char *
limen_autostart_quote_exec_arg (const char *arg)
{
  GString *out = g_string_new (NULL);
  gboolean quote = *arg == '\0' || strpbrk (arg, " \t\n\"'\\><~|&;$*?#()`") != NULL;

  if (quote)
    g_string_append_c (out, '"');
  for (const char *p = arg; *p; p++)
    {
      /* Inside quotes these four are escaped; a field code marker is doubled anywhere. */
      if (quote && strchr ("\"`$\\", *p))
        g_string_append_c (out, '\\');
      if (*p == '%')
        g_string_append_c (out, '%');
      g_string_append_c (out, *p);
    }
  if (quote)
    g_string_append_c (out, '"');
  return g_string_free (out, FALSE);
}

/* The Exec line of the app's own desktop file, which the specification says is used when
 * the app gives no commandline: APPID.desktop for a host app, the one its snap metadata
 * names for a Snap app. NULL when there is none. */
static char *
desktop_file_exec (LimenAppInfo *info)
{
  g_autoptr(GDesktopAppInfo) desktop = NULL;
  g_autofree char *name = NULL;
  GKeyFile *metadata;

  switch (limen_app_info_get_kind (info))
    {
    case LIMEN_APP_KIND_HOST:
      name = g_strconcat (limen_app_info_get_id (info), ".desktop", NULL);
      break;
    case LIMEN_APP_KIND_SNAP:
      metadata = limen_app_info_get_metadata (info);
      name = metadata ? g_key_file_get_string (metadata, "Snap Info", "DesktopFile", NULL) : NULL;
      break;
    default:
      break;
    }
  /* A bare file name only: looked up in the data folders, never a path the app chose. */
  if (name == NULL || strchr (name, '/') != NULL || !g_str_has_suffix (name, ".desktop"))
    return NULL;
  desktop = g_desktop_app_info_new (name);
  return desktop ? g_desktop_app_info_get_string (desktop, G_KEY_FILE_DESKTOP_KEY_EXEC) : NULL;
}

/* The name the session shows for the entry: the app's own (the Name of APPID.desktop, where
 * the app has one installed, as the reference writes it), else its id. */
static char *
display_name (const char *app_id)
{
  char *name = limen_app_id_dup_display_name (app_id);

  return name ? name : g_strdup (app_id);
}

/* The Exec= line, or NULL when there is nothing to run. */
static char *
exec_line (LimenAppInfo *info, const char * const *commandline)
{
  const char *app_id = limen_app_info_get_id (info);
  LimenAppKind kind = limen_app_info_get_kind (info);
  GString *exec = g_string_new (NULL);
  guint first = 0;

  if (kind == LIMEN_APP_KIND_FLATPAK)
    {
      g_string_append (exec, "flatpak run");
      if (commandline && commandline[0])
        {
          g_autofree char *command = g_strconcat ("--command=", commandline[0], NULL);
          g_autofree char *quoted = limen_autostart_quote_exec_arg (command);

          g_string_append_printf (exec, " %s", quoted);
          first = 1;
        }
      g_string_append_printf (exec, " %s", app_id);
    }
  else if (commandline == NULL || commandline[0] == NULL || kind == LIMEN_APP_KIND_SNAP)
    {
      /* A Snap's own command line would be run by the session as it stands, outside the
       * snap's confinement: it starts the way snapd's desktop file for it says, or not at all. */
      if (kind == LIMEN_APP_KIND_SNAP && commandline && commandline[0])
        g_message ("Autostart of %s: the command line it gave is not used; its desktop file's is", app_id);
      g_string_free (exec, TRUE);
      return desktop_file_exec (info);
    }
  for (guint i = first; commandline && commandline[i]; i++)
    {
      g_autofree char *quoted = limen_autostart_quote_exec_arg (commandline[i]);

      g_string_append_printf (exec, "%s%s", exec->len ? " " : "", quoted);
    }
  return g_string_free (exec, FALSE);
}

gboolean
limen_autostart_remove_written (const char *app_id)
{
  g_autofree char *name = g_strconcat (app_id, ".desktop", NULL);
  g_autofree char *path = g_build_filename (g_get_user_config_dir (), "autostart", name, NULL);
  g_autofree char *owner = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  if (!limen_app_id_is_valid (app_id) || !g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    return FALSE;
  owner = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, "X-XDP-Autostart", NULL);
  if (g_strcmp0 (owner, app_id) != 0)
    return FALSE;
  if (g_unlink (path) != 0)
    {
      g_message ("Could not remove %s: %s", path, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_autostart_set (LimenAppInfo *info, gboolean enable, const char * const *commandline,
                     gboolean dbus_activatable, GError **error)
{
  const char *app_id = limen_app_info_get_id (info);
  g_autofree char *dir = g_build_filename (g_get_user_config_dir (), "autostart", NULL);
  g_autofree char *name = g_strconcat (app_id, ".desktop", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *exec = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GKeyFile) kf = NULL;

  if (!limen_app_id_is_valid (app_id))
    return FALSE;     /* no id, no entry of its own */
  if (!enable)
    {
      if (g_unlink (path) != 0 && errno != ENOENT)
        g_message ("Could not remove %s: %s", path, g_strerror (errno));
      return FALSE;
    }
  exec = exec_line (info, commandline);
  if (exec == NULL)
    return FALSE;
  kf = g_key_file_new ();
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_TYPE, "Application");
  shown = display_name (app_id);
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_NAME, shown);
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_EXEC, exec);
  if (dbus_activatable)
    g_key_file_set_boolean (kf, G_KEY_FILE_DESKTOP_GROUP, G_KEY_FILE_DESKTOP_KEY_DBUS_ACTIVATABLE, TRUE);
  if (limen_app_info_get_kind (info) == LIMEN_APP_KIND_FLATPAK)
    g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, "X-Flatpak", app_id);
  g_key_file_set_string (kf, G_KEY_FILE_DESKTOP_GROUP, "X-XDP-Autostart", app_id);
  data = g_key_file_to_data (kf, NULL, NULL);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot create the autostart folder: %s",
                   g_strerror (errno));
      return FALSE;
    }
  return g_file_set_contents_full (path, data, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error);
}
