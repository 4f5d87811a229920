/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend writes the app's secret into the fd; it must be the write end of a pipe or
 * a socket, never a file the secret would then be stored in. */
#include "secret.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "backend.h"
#include "fd-check.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Secret"

static const LimenOption secret_options[] = {
  { "token", "s", limen_validate_string_length, 1024 },
  { NULL }
};

static gboolean
handle_retrieve_secret (LimenDbusPortalSecret *object, GDBusMethodInvocation *invocation, GUnixFDList *fd_list,
                        GVariant *fd_handle, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autofd int fd = -1;
  g_autoptr(GUnixFDList) out = g_unix_fd_list_new ();
  g_autoptr(LimenRequest) request = NULL;
  struct stat st;
  int mode;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  fd = limen_fd_list_get (fd_list, g_variant_get_handle (fd_handle), "fd", &error);
  if (fd < 0)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  mode = fcntl (fd, F_GETFL);
  if (fstat (fd, &st) != 0 || !(S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode)) ||
      mode < 0 || (mode & O_ACCMODE) == O_RDONLY || (mode & O_PATH))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for fd: must be a writable pipe or socket");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (g_unix_fd_list_append (out, fd, &error) < 0)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  request = limen_backend_request_method (context, invocation, info, IMPL_IFACE, "RetrieveSecret",
                                          g_variant_new ("(h)", 0), options, secret_options, NULL, out,
                                          NULL, NULL, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_secret_new (LimenPortalContext *context)
{
  LimenDbusPortalSecret *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_secret_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_secret_set_version (object, 1);
  g_signal_connect (object, "handle-retrieve-secret", G_CALLBACK (handle_retrieve_secret), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
