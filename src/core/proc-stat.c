/* Limen — the one parser of /proc/PID/stat.
 *
 * A process is named by (pid, start time) wherever a pid could be reused between two
 * looks at it; the start time is field 22 of /proc/PID/stat. The second field (the
 * command name, in parentheses) may itself hold spaces and ')' characters, so fields
 * are counted from the LAST ')' of the file, never split from its start.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "proc-stat.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

/* The file is one line of ~52 fields; a command name is at most 64 bytes (TASK_COMM_LEN
 * for kernel threads); 4 KiB leaves room for any field growth and still reads once. */
#define PROC_STAT_MAX 4096

gboolean
limen_proc_stat_parse_start_time (const char *text, guint64 *start_time)
{
  const char *end = text + strlen (text);
  const char *p = NULL;
  char *num_end = NULL;
  guint64 value;

  for (const char *q = text; q < end; q++)
    if (*q == ')')
      p = q;
  if (p == NULL || p + 2 > end || p[1] != ' ')
    return FALSE;
  p += 2;                               /* field 3 (state) starts here */
  for (int field = 3; field < 22; field++)
    {
      p = memchr (p, ' ', end - p);
      if (p == NULL)
        return FALSE;
      p++;
    }
  if (p >= end || !g_ascii_isdigit (*p))
    return FALSE;
  value = g_ascii_strtoull (p, &num_end, 10);
  if (num_end == p || (*num_end != ' ' && *num_end != '\n' && *num_end != '\0'))
    return FALSE;
  *start_time = value;
  return TRUE;
}

/* Read @fd (a stat file) into @buf once; the kernel hands the whole line in one read. */
static gssize
read_stat_fd (int fd, char *buf, gsize size)
{
  gssize n;

  do
    n = read (fd, buf, size - 1);
  while (n < 0 && errno == EINTR);
  if (n >= 0)
    buf[n] = '\0';
  return n;
}

gboolean
limen_proc_stat_read_start_time_at (int proc_fd, guint64 *start_time, GError **error)
{
  char buf[PROC_STAT_MAX];
  int fd = openat (proc_fd, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  gssize n;
  int errsv;

  if (fd < 0)
    {
      errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "stat: %s", g_strerror (errsv));
      return FALSE;
    }
  n = read_stat_fd (fd, buf, sizeof buf);
  errsv = errno;
  close (fd);
  if (n < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "stat: %s", g_strerror (errsv));
      return FALSE;
    }
  if (!limen_proc_stat_parse_start_time (buf, start_time))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "unparsable /proc stat");
      return FALSE;
    }
  return TRUE;
}

guint64
limen_proc_stat_start_time (pid_t pid)
{
  char path[64], buf[PROC_STAT_MAX];
  int fd;
  gssize n;
  guint64 start = 0;

  if (pid <= 0)
    return 0;
  g_snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return 0;
  n = read_stat_fd (fd, buf, sizeof buf);
  close (fd);
  if (n <= 0 || !limen_proc_stat_parse_start_time (buf, &start))
    return 0;
  return start;
}
