/* Limen — the one parser of /proc/PID/stat (a process's start time, for pid-reuse checks).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* Parse field 22 (start time, clock ticks after boot) from the NUL-terminated text of a
 * /proc/PID/stat file; FALSE when the text is not such a file. */
gboolean limen_proc_stat_parse_start_time (const char *text, guint64 *start_time);

/* Read the start time of the process whose /proc directory is open as @proc_fd
 * (an O_PATH or O_DIRECTORY fd of /proc/PID), setting @error when it cannot. */
gboolean limen_proc_stat_read_start_time_at (int proc_fd, guint64 *start_time, GError **error);

/* The start time of @pid, or 0 when the process is gone or its stat is unreadable. */
guint64 limen_proc_stat_start_time (pid_t pid);

G_END_DECLS
