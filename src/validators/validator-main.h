/* Limen — the shared front half of the out-of-process validators (limen-validate-icon,
 * limen-validate-sound): one option, then the whole input from stdin.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include <unistd.h>

#include <glib.h>

/* Parse the one integer option @entry into @value, then read stdin into a new buffer of at
 * most @max bytes. Returns the process exit status to leave with (2 usage or I/O error,
 * 1 too large), or -1 to go on with *@data / *@len. */
static inline int
limen_validator_start (int argc, char **argv, const char *usage, const char *option, const char *help,
                       int *value, gsize max, guchar **data, gsize *len)
{
  g_autoptr(GOptionContext) context = g_option_context_new (usage);
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { option, 0, 0, G_OPTION_ARG_INT, value, help, "N" },
    { NULL }
  };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      return 2;
    }
  *data = g_malloc (max + 1);
  *len = 0;
  for (;;)
    {
      ssize_t n = read (0, *data + *len, max + 1 - *len);

      if (n < 0)
        {
          perror ("read");
          return 2;
        }
      if (n == 0)
        return -1;
      *len += n;
      if (*len > max)
        {
          fprintf (stderr, "rejected: input larger than %" G_GSIZE_FORMAT " bytes\n", max);
          return 1;
        }
    }
}
