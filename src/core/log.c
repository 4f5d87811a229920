/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

static gboolean verbose;

void
limen_log_init (const char *program, gboolean want_verbose)
{
  g_set_prgname (program);
  verbose = want_verbose;
  if (verbose)
    g_log_set_debug_enabled (TRUE);
}

gboolean
limen_log_is_verbose (void)
{
  return verbose || g_log_get_debug_enabled ();
}
