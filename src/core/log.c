/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

void
limen_log_init (const char *program, gboolean verbose)
{
  g_set_prgname (program);
  if (verbose)
    g_log_set_debug_enabled (TRUE);
}

