/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host apps may name themselves: org.freedesktop.host.portal.Registry's Register sets the
 * id of an unsandboxed connection once. A sandboxed app's id comes from its sandbox only.
 */
#include "app-info-private.h"

#include "errors.h"

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
  g_free (info->id);
  info->id = g_strdup (app_id);
  info->registered = TRUE;
  return TRUE;
}
