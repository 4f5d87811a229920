/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Flatpak apps: a /.flatpak-info in the process's root names the app. Any such file is a
 * claim to be sandboxed, so one we cannot read or parse refuses the caller rather than
 * letting it pass for the host.
 */
#include "app-info-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

#define FLATPAK_INFO_MAX (256 * 1024)

gboolean
limen_app_info_flatpak_parse (LimenAppInfo *info, const char *data, gsize len, GError **error)
{
  g_autoptr(GKeyFile) keyfile = limen_app_info_load_metadata ("Flatpak", data, len, error);
  g_autofree char *name = NULL;

  if (keyfile == NULL)
    return FALSE;
  name = g_key_file_get_string (keyfile, "Application", "name", NULL);
  if (name == NULL)
    {
      /* Runtimes run sandboxed too; [Runtime] without [Application] is no app we can name. */
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Flatpak metadata has no [Application] name");
      return FALSE;
    }
  if (!limen_app_id_is_valid (name))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Flatpak metadata names an invalid application id");
      return FALSE;
    }
  info->id = g_steal_pointer (&name);
  info->instance = g_key_file_get_string (keyfile, "Instance", "instance-id", NULL);
  info->metadata = g_steal_pointer (&keyfile);
  return TRUE;
}

LimenAppInfo *
limen_app_info_new_flatpak_from_data (const char *data, gsize len, pid_t pid, GError **error)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_alloc (LIMEN_APP_KIND_FLATPAK, pid);

  if (!limen_app_info_flatpak_parse (info, data, len, error))
    return NULL;
  return g_steal_pointer (&info);
}

/* The contents of the regular file @root_fd/.flatpak-info, or NULL + error. */
static char *
read_flatpak_info (int root_fd, const struct stat *st_link, gsize *len, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofd int fd = -1;
  struct stat st;
  char *data;

  if (!S_ISREG (st_link->st_mode))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Caller's /.flatpak-info is not a regular file");
      return NULL;
    }
  fd = openat (root_fd, ".flatpak-info", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Caller's /.flatpak-info cannot be read");
      return NULL;
    }
  data = limen_app_info_read_fd (fd, ".flatpak-info", FLATPAK_INFO_MAX, len, &local_error);
  if (data == NULL)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                 "Caller's /.flatpak-info cannot be read: %s", local_error->message);
  return data;
}

gboolean
limen_app_info_flatpak_identify (LimenAppInfo *info, int root_fd, gboolean *found, GError **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize len;

  *found = FALSE;
  if (fstatat (root_fd, ".flatpak-info", &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno == ENOENT)
        return TRUE;
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                   "Cannot inspect the caller's /.flatpak-info: %s", g_strerror (errno));
      return FALSE;
    }
  *found = TRUE;
  info->kind = LIMEN_APP_KIND_FLATPAK;
  data = read_flatpak_info (root_fd, &st, &len, error);
  return data != NULL && limen_app_info_flatpak_parse (info, data, len, error);
}
