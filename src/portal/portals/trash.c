/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include <sys/stat.h>

#include "fd-check.h"

typedef struct {
  LimenDbusPortalTrash  *object;
  GDBusMethodInvocation *invocation;
} TrashData;

static void
on_trashed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  TrashData *data = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_file_trash_finish (G_FILE (source), result, &error);

  if (!ok)
    g_debug ("Trashing failed: %s", error->message);
  /* The specification's answer to a failed trash is result 0, not an error. */
  limen_dbus_portal_trash_complete_trash_file (data->object, data->invocation, NULL, ok ? 1 : 0);
  g_object_unref (data->object);
  g_free (data);
}

static gboolean
answer_not_trashed (LimenDbusPortalTrash *object, GDBusMethodInvocation *invocation, LimenAppInfo *info,
                    const char *why)
{
  g_debug ("Not trashing for '%s': %s", limen_app_info_get_id (info), why);
  limen_dbus_portal_trash_complete_trash_file (object, invocation, NULL, 0);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_trash_file (LimenDbusPortalTrash *object, GDBusMethodInvocation *invocation,
                   GUnixFDList *fd_list, GVariant *fd_handle)
{
  g_autoptr(GError) error = NULL;
  g_autofd int fd = -1;
  LimenFdInfo fdinfo = { 0 };
  struct stat host;
  TrashData *data;
  g_autoptr(GFile) file = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  fd = limen_fd_list_get (fd_list, g_variant_get_handle (fd_handle), "fd", &error);
  if (fd < 0 ||
      !limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_DIRECTORY | LIMEN_FD_ALLOW_O_PATH |
                       LIMEN_FD_RIGHTS_FROM_VIEW | LIMEN_FD_NEED_WRITE | LIMEN_FD_NEED_DELETE, &fdinfo, &error))
    {
      /* A broken call (no such fd, not a file) is an error; a file this caller may not
       * trash is the specification's result 0. */
      if (g_error_matches (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED))
        return answer_not_trashed (object, invocation, info, error->message);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* We trash by path in our own view: it must be the very file the caller showed us. */
  if (lstat (fdinfo.path, &host) != 0 || host.st_dev != fdinfo.dev || host.st_ino != fdinfo.ino)
    {
      limen_fd_info_clear (&fdinfo);
      return answer_not_trashed (object, invocation, info, "the file is not at the same place outside the sandbox");
    }
  g_debug ("Trashing %s for '%s'", fdinfo.path, limen_app_info_get_id (info));
  file = g_file_new_for_path (fdinfo.path);
  limen_fd_info_clear (&fdinfo);
  data = g_new0 (TrashData, 1);
  data->object = g_object_ref (object);
  data->invocation = invocation;
  g_file_trash_async (file, G_PRIORITY_DEFAULT, NULL, on_trashed, data);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* org.freedesktop.portal.Trash: trash a file the caller passes as an fd. */
GDBusInterfaceSkeleton *
limen_trash_new (LimenPortalContext *context)
{
  LimenDbusPortalTrash *object = limen_dbus_portal_trash_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));

  limen_dbus_portal_trash_set_version (object, 1);
  g_signal_connect (object, "handle-trash-file", G_CALLBACK (handle_trash_file), NULL);
  return G_DBUS_INTERFACE_SKELETON (object);
}
