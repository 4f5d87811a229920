/* The /proc/PID/stat parser shared by the core and limen-documents.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <glib.h>
#include <gio/gio.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc-stat.h"

/* Fields 3..21 then the start time (22) and a few more, as the kernel prints them. */
#define REST "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 %s 20 21\n"

static gboolean
parse (const char *comm, const char *start, guint64 *out)
{
  g_autofree char *rest = g_strdup_printf (REST, start);
  g_autofree char *text = g_strdup_printf ("4242 (%s) %s", comm, rest);

  return limen_proc_stat_parse_start_time (text, out);
}

static void
test_parse_names (void)
{
  guint64 t = 0;

  g_assert_true (parse ("bash", "123456", &t));
  g_assert_cmpuint (t, ==, 123456);
  /* A command name with spaces and parentheses must not shift the fields. */
  g_assert_true (parse ("a) (b c) 9 9 9", "777", &t));
  g_assert_cmpuint (t, ==, 777);
  g_assert_true (parse ("", "1", &t));
  g_assert_cmpuint (t, ==, 1);
}

static void
test_parse_bad (void)
{
  guint64 t = 99;

  g_assert_false (limen_proc_stat_parse_start_time ("", &t));
  g_assert_false (limen_proc_stat_parse_start_time ("4242 bash S 1 2", &t));
  g_assert_false (limen_proc_stat_parse_start_time ("4242 (bash) S 1 2 3", &t));
  g_assert_false (limen_proc_stat_parse_start_time ("4242 (bash)", &t));
  g_assert_false (parse ("bash", "12x4", &t));
  g_assert_false (parse ("bash", "-5", &t));
  g_assert_cmpuint (t, ==, 99);
}

static void
test_live_process (void)
{
  g_autoptr(GError) error = NULL;
  guint64 by_pid, by_fd = 0;
  int dirfd = open ("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
  pid_t child;
  int status;

  g_assert_cmpint (dirfd, >=, 0);
  by_pid = limen_proc_stat_start_time (getpid ());
  g_assert_cmpuint (by_pid, >, 0);
  g_assert_true (limen_proc_stat_read_start_time_at (dirfd, &by_fd, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (by_fd, ==, by_pid);
  close (dirfd);

  /* A process that is gone has no start time; its reaped pid reads as 0. */
  child = fork ();
  if (child == 0)
    _exit (0);
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_cmpuint (limen_proc_stat_start_time (child), ==, 0);
  g_assert_cmpuint (limen_proc_stat_start_time (0), ==, 0);
  g_assert_cmpuint (limen_proc_stat_start_time (-1), ==, 0);
}

static void
test_at_missing (void)
{
  g_autoptr(GError) error = NULL;
  guint64 t = 0;
  int dirfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

  g_assert_false (limen_proc_stat_read_start_time_at (dirfd, &t, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  close (dirfd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/proc-stat/parse-names", test_parse_names);
  g_test_add_func ("/proc-stat/parse-bad", test_parse_bad);
  g_test_add_func ("/proc-stat/live-process", test_live_process);
  g_test_add_func ("/proc-stat/at-missing", test_at_missing);
  return g_test_run ();
}
