/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host apps may name themselves: org.freedesktop.host.portal.Registry's Register sets the
 * id of an unsandboxed connection once. A sandboxed app's id comes from its sandbox only.
 * The id must name an installed application (its ID.desktop), as upstream's newest frontend
 * requires: permissions, dialogs and launchers are kept per id, and an id no desktop entry
 * describes would be a name the user cannot recognise or manage.
 */
#include "app-info-private.h"

#include <gio/gdesktopappinfo.h>

#include "errors.h"

/* Whether ID.desktop is a desktop entry in the data dirs, the first one found winning as in
 * GLib's lookup. Read from the files on every call, not GLib's cache of them, so an entry
 * installed a moment ago counts. */
static gboolean
desktop_entry_exists (const char *app_id)
{
  g_autofree char *name = g_strconcat (app_id, ".desktop", NULL);
  const char * const *system = g_get_system_data_dirs ();
  g_autoptr(GPtrArray) dirs = g_ptr_array_new ();

  g_ptr_array_add (dirs, (gpointer) g_get_user_data_dir ());
  for (guint i = 0; system[i]; i++)
    g_ptr_array_add (dirs, (gpointer) system[i]);
  for (guint i = 0; i < dirs->len; i++)
    {
      g_autofree char *path = g_build_filename (g_ptr_array_index (dirs, i), "applications", name, NULL);
      g_autoptr(GDesktopAppInfo) entry = NULL;

      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      entry = g_desktop_app_info_new_from_filename (path);
      return entry != NULL;
    }
  return FALSE;
}

gboolean
limen_app_info_register_host_id (GDBusConnection *connection, const char *sender,
                                 const char *app_id, GError **error)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_sender (connection, sender, error);

  if (info == NULL)
    return FALSE;
  if (!limen_app_info_is_host (info))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Only host applications can register an application id");
      return FALSE;
    }
  if (!limen_app_id_is_valid (app_id))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid application id '%s'", app_id);
      return FALSE;
    }
  if (info->registered)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS,
                           "This connection already registered an application id");
      return FALSE;
    }
  if (!desktop_entry_exists (app_id))
    {
      /* Error.Failed with the reference's words first (clients match them). */
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                   "Can't create registered app: no application '%s' is installed", app_id);
      return FALSE;
    }
  g_free (info->id);
  info->id = g_strdup (app_id);
  info->registered = TRUE;
  return TRUE;
}
