/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <glib/gstdio.h>
#include <sys/socket.h>

#include "errors.h"
#include "fd-check.h"

static char *tmpdir;

static LimenAppInfo *
self (void)
{
  g_autoptr(GError) error = NULL;
  LimenAppInfo *info = limen_app_info_get_for_pid (getpid (), &error);

  g_assert_no_error (error);
  return info;
}

static char *
make_file (const char *name)
{
  char *path = g_build_filename (tmpdir, name, NULL);

  g_assert_true (g_file_set_contents (path, "data", -1, NULL));
  return path;
}

static void
test_modes (void)
{
  g_autoptr(LimenAppInfo) info = self ();
  g_autofree char *path = make_file ("modes");
  g_autofd int ro = open (path, O_RDONLY | O_CLOEXEC);
  g_autofd int rw = open (path, O_RDWR | O_CLOEXEC);
  g_autofd int wo = open (path, O_WRONLY | O_CLOEXEC);
  LimenFdInfo fi;
  g_autoptr(GError) error = NULL;

  g_assert_true (limen_fd_check (info, ro, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_READ, &fi, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (fi.path, ==, path);
  g_assert_true (fi.readable);
  g_assert_false (fi.writable);
  g_assert_false (fi.is_dir);
  limen_fd_info_clear (&fi);

  g_assert_false (limen_fd_check (info, ro, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_WRITE, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
  g_clear_error (&error);

  g_assert_true (limen_fd_check (info, rw, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_READ | LIMEN_FD_NEED_WRITE, &fi, &error));
  g_assert_true (fi.readable && fi.writable);
  limen_fd_info_clear (&fi);

  g_assert_false (limen_fd_check (info, wo, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_READ, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
  g_clear_error (&error);

  /* Judged by the view (TrashFile): a read-only fd counts for what the caller may do with
   * the file, here write it. */
  g_assert_true (limen_fd_check (info, ro, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_RIGHTS_FROM_VIEW | LIMEN_FD_NEED_WRITE,
                                 &fi, &error));
  g_assert_no_error (error);
  g_assert_true (fi.writable);
  limen_fd_info_clear (&fi);
}

static void
test_types (void)
{
  g_autoptr(LimenAppInfo) info = self ();
  g_autofree char *path = make_file ("types");
  g_autofd int opath = open (path, O_PATH | O_CLOEXEC);
  g_autofd int dir = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int sv[2];
  LimenFdInfo fi;
  g_autoptr(GError) error = NULL;

  g_assert_false (limen_fd_check (info, opath, LIMEN_FD_ALLOW_REGULAR, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_false (limen_fd_check (info, dir, LIMEN_FD_ALLOW_REGULAR, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_true (limen_fd_check (info, dir, LIMEN_FD_ALLOW_DIRECTORY, &fi, &error));
  g_assert_true (fi.is_dir);
  limen_fd_info_clear (&fi);

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
  g_assert_false (limen_fd_check (info, sv[0], LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_DIRECTORY, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  close (sv[0]);
  close (sv[1]);

  g_assert_false (limen_fd_check (info, 9999, LIMEN_FD_ALLOW_REGULAR, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
}

static void
test_deleted (void)
{
  g_autoptr(LimenAppInfo) info = self ();
  g_autofree char *path = make_file ("deleted");
  g_autofd int fd = open (path, O_RDONLY | O_CLOEXEC);
  LimenFdInfo fi;
  g_autoptr(GError) error = NULL;

  g_unlink (path);
  g_assert_false (limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
}

static void
test_replaced (void)
{
  g_autoptr(LimenAppInfo) info = self ();
  g_autofree char *path = make_file ("replaced");
  g_autofree char *other = make_file ("other");
  g_autofd int fd = open (path, O_RDONLY | O_CLOEXEC);
  LimenFdInfo fi;
  g_autoptr(GError) error = NULL;

  /* A rename over the path: the fd's old path now names another inode... */
  g_assert_cmpint (g_rename (other, path), ==, 0);
  /* ...and the kernel reports the fd as deleted, so it is refused either way. */
  g_assert_false (limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR, &fi, &error));
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED);
}

static void
test_delete_check (void)
{
  g_autoptr(LimenAppInfo) info = self ();
  g_autofree char *path = make_file ("deletable");
  g_autofd int fd = open (path, O_RDWR | O_CLOEXEC);
  LimenFdInfo fi;
  g_autoptr(GError) error = NULL;

  g_assert_true (limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_DELETE, &fi, &error));
  g_assert_no_error (error);
  limen_fd_info_clear (&fi);
}

static void
test_fd_list (void)
{
  g_autoptr(GUnixFDList) list = g_unix_fd_list_new ();
  g_autoptr(GError) error = NULL;
  int fd;

  g_assert_cmpint (limen_fd_list_get (NULL, 0, "fd", &error), ==, -1);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpint (g_unix_fd_list_append (list, 0, NULL), ==, 0);
  g_assert_cmpint (limen_fd_list_get (list, 1, "fd", &error), ==, -1);
  g_assert_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "fd"));
  g_clear_error (&error);
  g_assert_cmpint (limen_fd_list_get (list, -1, "fd", &error), ==, -1);
  g_clear_error (&error);
  fd = limen_fd_list_get (list, 0, "fd", &error);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
}

int
main (int argc, char **argv)
{
  int r;
  g_autofree char *cmd = NULL;

  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND"))
    g_unsetenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND");
  tmpdir = g_dir_make_tmp ("limen-fd-XXXXXX", NULL);
  g_test_add_func ("/fd-check/modes", test_modes);
  g_test_add_func ("/fd-check/types", test_types);
  g_test_add_func ("/fd-check/deleted", test_deleted);
  g_test_add_func ("/fd-check/replaced", test_replaced);
  g_test_add_func ("/fd-check/delete", test_delete_check);
  g_test_add_func ("/fd-check/fd-list", test_fd_list);
  r = g_test_run ();
  cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
  if (system (cmd) != 0)
    g_printerr ("could not remove %s\n", tmpdir);
  g_free (tmpdir);
  return r;
}
