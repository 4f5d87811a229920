/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend writes the app's secret into the fd; it must be the write end of a pipe or
 * a socket, never a file the secret would then be stored in. */
#include "portal.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "backend.h"
#include "driver.h"
#include "fd-check.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Secret"

static const LimenOption secret_options[] = {
  { "token", "s", limen_validate_string_length, 1024 },
  { NULL }
};

/* Pre-step: the fd must be a writable pipe or socket; the backend gets it as handle 0. */
static void
check_fd (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) fd_handle = limen_call_get_arg (call, 0);
  g_autoptr(GUnixFDList) out = g_unix_fd_list_new ();
  g_autofd int fd = limen_fd_list_get (limen_call_get_fd_list (call), g_variant_get_handle (fd_handle), "fd", &error);
  struct stat st;
  int mode;

  if (fd < 0)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  mode = fcntl (fd, F_GETFL);
  if (fstat (fd, &st) != 0 || !(S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode)) ||
      mode < 0 || (mode & O_ACCMODE) == O_RDONLY || (mode & O_PATH))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid value for fd: must be a writable pipe or socket");
      return;
    }
  if (g_unix_fd_list_append (out, fd, &error) < 0)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  limen_call_set_impl_args (call, g_variant_new ("(h)", 0), out);
  g_task_return_boolean (task, TRUE);
}

static const LimenStep retrieve_pre[] = { { check_fd, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };

static const LimenDriverMethod secret_methods[] = {
  { .method = "RetrieveSecret", .options = secret_options,
    .impl_interface = IMPL_IFACE, .impl_method = "RetrieveSecret", .pre = retrieve_pre },
  { NULL }
};

/* RetrieveSecret: the backend writes the app's secret into the caller's pipe. */
GDBusInterfaceSkeleton *
limen_secret_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_secret_skeleton_new (), 1, secret_methods);
}
