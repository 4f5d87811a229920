/* Limen — what newer GLib has and Debian 12's GLib 2.74 lacks.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <errno.h>
#include <unistd.h>

#if !GLIB_CHECK_VERSION (2, 75, 1)
static inline void
limen_autofd_cleanup (int *fd)
{
  if (*fd >= 0)
    {
      int errsv = errno;
      close (*fd);
      errno = errsv;
    }
}
/* An int fd closed when it leaves scope (GLib 2.76's g_autofd). */
#define g_autofd __attribute__ ((cleanup (limen_autofd_cleanup)))
#endif

/* Close *fd if open and set it to -1. */
static inline void
limen_clear_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* Hand over ownership of an fd, leaving -1 behind. */
static inline int
limen_steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}
