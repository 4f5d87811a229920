/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Snaps: a process in a snap.NAME.* scope is described by `snap routine portal-info PID`,
 * whose keyfile names the instance; the app id is "snap.INSTANCE".
 */
#include "app-info-private.h"

#include <string.h>

#include "errors.h"

gboolean
limen_cgroup_is_snap (const char *cgroup_contents)
{
  g_auto(GStrv) lines = g_strsplit (cgroup_contents, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      const char *path = strchr (lines[i], ':');

      path = path ? strchr (path + 1, ':') : NULL;
      if (path == NULL)
        continue;
      /* snap.NAME.APP-UUID.scope / snap.NAME.hook.X-UUID.scope anywhere in the path. */
      for (const char *p = strstr (path, "/snap."); p; p = strstr (p + 1, "/snap."))
        if (strstr (p, ".scope") || strstr (p, ".service"))
          return TRUE;
    }
  return FALSE;
}

gboolean
limen_app_info_snap_parse (LimenAppInfo *info, const char *data, gsize len, GError **error)
{
  g_autoptr(GKeyFile) keyfile = limen_app_info_load_metadata ("Snap", data, len, error);
  g_autofree char *instance = NULL;
  g_autofree char *id = NULL;

  if (keyfile == NULL)
    return FALSE;
  instance = g_key_file_get_string (keyfile, "Snap Info", "InstanceName", NULL);
  if (instance == NULL || *instance == '\0')
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Snap metadata has no [Snap Info] InstanceName");
      return FALSE;
    }
  id = g_strconcat ("snap.", instance, NULL);
  if (!limen_app_id_is_valid (id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Snap metadata names an invalid instance");
      return FALSE;
    }
  info->id = g_steal_pointer (&id);
  info->metadata = g_steal_pointer (&keyfile);
  return TRUE;
}

gboolean
limen_app_info_snap_identify (LimenAppInfo *info, GError **error)
{
  g_autofree char *snap = g_find_program_in_path ("snap");
  g_autofree char *pid = g_strdup_printf ("%d", info->pid);
  g_autofree char *out = NULL;
  g_autoptr(GError) local_error = NULL;
  int status;
  const char *argv[] = { NULL, "routine", "portal-info", pid, NULL };

  if (snap == NULL)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Caller runs in a Snap, but there is no snap command to describe it");
      return FALSE;
    }
  argv[0] = snap;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &out, NULL, &status, &local_error) ||
      !g_spawn_check_wait_status (status, &local_error))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "snap routine portal-info failed: %s",
                   local_error->message);
      return FALSE;
    }
  info->kind = LIMEN_APP_KIND_SNAP;
  return limen_app_info_snap_parse (info, out, strlen (out), error);
}
