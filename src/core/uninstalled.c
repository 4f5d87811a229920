/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "uninstalled.h"

char *
limen_uninstalled_path (const char *relative, const char *installed)
{
#ifdef LIMEN_TEST_HOOKS
  const char *build_dir = g_getenv ("LIMEN_BUILD_DIR");

  if (build_dir && g_path_is_absolute (build_dir))
    {
      g_autofree char *path = g_build_filename (build_dir, relative, NULL);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&path);
    }
#endif
  (void) relative;
  return g_strdup (installed);
}
