/* Limen — loading liblimen-qt on first use.
 *
 * Linking Qt Widgets and KIO into limen-kde would map and relocate them at start and
 * cost several times the idle memory the backend may use; most sessions only ever ask
 * it for Settings. So the shim is a module, opened the first time a dialog,
 * notification or mail composer is needed, and kept for the life of the process (Qt
 * cannot be unloaded).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <dlfcn.h>

#include "errors.h"
#include "limen-config.h"

static LimenKdeShim shim;
static gboolean shim_loaded;
static char *shim_error;

/* The build tree keeps the module next to the binary (qt/); an installed limen-kde
 * finds it in its private library directory. */
static char *
find_module (void)
{
  const char *env = NULL;
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

#ifdef LIMEN_TEST_HOOKS
  env = g_getenv ("LIMEN_QT_MODULE");
  if (env && *env)
    return g_strdup (env);
#endif
  (void) env;
  if (exe)
    {
      g_autofree char *dir = g_path_get_dirname (exe);
      g_autofree char *local = g_build_filename (dir, "qt", "liblimen-qt.so", NULL);

      if (g_file_test (local, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&local);
    }
  return g_strdup (LIMEN_QT_MODULE_PATH);
}

const LimenKdeShim *
limen_kde_shim_get (GError **error)
{
  if (!shim_loaded && !shim_error)
    {
      g_autofree char *path = find_module ();
      void *module;
      gboolean ok = TRUE;

      g_debug ("Loading the Qt shim from %s", path);
      module = dlopen (path, RTLD_LAZY | RTLD_LOCAL);
      if (!module)
        shim_error = g_strdup_printf ("Cannot load the Qt shim: %s", dlerror ());
      else
        {
#define LIMEN_KDE_SHIM_RESOLVE(name)                                      \
          shim.name = (__typeof__ (name) *) dlsym (module, #name);        \
          if (!shim.name)                                                 \
            ok = FALSE;
          LIMEN_QT_DLOPEN_FUNCTIONS (LIMEN_KDE_SHIM_RESOLVE)
#undef LIMEN_KDE_SHIM_RESOLVE
          if (!ok)
            shim_error = g_strdup_printf ("The Qt shim %s lacks entry points", path);
          else
            shim_loaded = TRUE;
        }
      if (shim_error)
        g_warning ("%s", shim_error);
    }
  if (!shim_loaded)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, shim_error);
      return NULL;
    }
  return &shim;
}

const LimenKdeShim *
limen_kde_shim_get_for_dialog (GError **error)
{
  const LimenKdeShim *s = limen_kde_shim_get (error);
  const char *reason;

  if (!s)
    return NULL;
  reason = s->limen_qt_unavailable_reason ();
  if (reason)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot show a dialog: %s", reason);
      return NULL;
    }
  return s;
}
