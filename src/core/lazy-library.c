/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lazy-library.h"

#include <dlfcn.h>
#include <string.h>

G_STATIC_ASSERT (sizeof (void *) == sizeof (LimenLazySlot));

gboolean
limen_lazy_open (const char         *soname,
                 const char * const *symbols,
                 gsize               n_symbols,
                 void               *slots,
                 GError            **error)
{
  void *lib;

  g_return_val_if_fail (soname != NULL, FALSE);
  g_return_val_if_fail (n_symbols == 0 || (symbols != NULL && slots != NULL), FALSE);

  if (n_symbols > 0)
    memset (slots, 0, n_symbols * sizeof (LimenLazySlot));
  lib = dlopen (soname, RTLD_LAZY | RTLD_LOCAL);
  if (lib == NULL)
    {
      /* dlerror() names the file and the reason (missing, wrong class, a dependency). */
      const char *why = dlerror ();

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s",
                   why ? why : soname);
      return FALSE;
    }

  for (gsize i = 0; i < n_symbols; i++)
    {
      void *p = dlsym (lib, symbols[i]);

      if (p == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s lacks %s", soname, symbols[i]);
          memset (slots, 0, n_symbols * sizeof (LimenLazySlot));
          /* Half a library is no use: unmap it (unless something else holds it). */
          dlclose (lib);
          return FALSE;
        }
      /* POSIX lets dlsym's object pointer stand for a function; memcpy says so to C. */
      memcpy ((char *) slots + i * sizeof (LimenLazySlot), &p, sizeof p);
    }
  /* Never closed: the slots point into it for the rest of the process. */
  return TRUE;
}

gboolean
limen_lazy_load (LimenLazyLibrary *library)
{
  if (g_once_init_enter (&library->once))
    {
      g_autoptr(GError) error = NULL;

      library->loaded = limen_lazy_open (library->soname, library->symbols, library->n_symbols,
                                         library->slots, &error);
      if (!library->loaded)
        {
          library->error = g_strdup_printf ("%s: %s", library->failure, error->message);
          g_warning ("%s", library->error);
        }
      g_once_init_leave (&library->once, 1);
    }
  return library->loaded;
}
