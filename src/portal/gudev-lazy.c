/* Limen — libgudev, opened on the Usb portal's first device query instead of at start.
 *
 * Only the Usb portal talks to udev, and only once an app asks for devices. Linked
 * normally, libgudev and libudev would be mapped and relocated before main at every start
 * (page faults are most of a cold start's cost), so the frontend calls these definitions,
 * which open libgudev-1.0.so.0 on first use and forward to it; the prototypes are
 * libgudev's own (its headers are included, so a mismatch does not compile).
 *
 * Should libgudev be missing at run time (a broken install: the package depends on it),
 * the reason is logged once and every call answers NULL: no client, no devices.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <string.h>

#include <gudev/gudev.h>

#define LIMEN_GUDEV_SONAME "libgudev-1.0.so.0"

/* (return type, name, parameters, arguments); each answers NULL without the library. */
#define LIMEN_GUDEV_FUNCTIONS(X)                                                                 \
  X (GUdevClient *, g_udev_client_new, (const gchar * const *subsystems), (subsystems))           \
  X (GList *, g_udev_client_query_by_subsystem, (GUdevClient *client, const gchar *subsystem),    \
     (client, subsystem))                                                                         \
  X (const gchar *, g_udev_device_get_device_file, (GUdevDevice *device), (device))               \
  X (const gchar *, g_udev_device_get_devtype, (GUdevDevice *device), (device))                   \
  X (GUdevDevice *, g_udev_device_get_parent, (GUdevDevice *device), (device))                    \
  X (const gchar *, g_udev_device_get_property, (GUdevDevice *device, const gchar *key),          \
     (device, key))                                                                               \
  X (const gchar *, g_udev_device_get_sysfs_attr, (GUdevDevice *device, const gchar *name),       \
     (device, name))                                                                              \
  X (const gchar *, g_udev_device_get_sysfs_path, (GUdevDevice *device), (device))

static struct {
#define LIMEN_GUDEV_FIELD(ret, name, params, args) ret (*name) params;
  LIMEN_GUDEV_FUNCTIONS (LIMEN_GUDEV_FIELD)
#undef LIMEN_GUDEV_FIELD
} real;

/* Opens libgudev once; FALSE (logged once) when it or one of its symbols is missing. */
static gboolean
load_gudev (void)
{
  static gsize done;
  static gboolean loaded;

  if (g_once_init_enter (&done))
    {
      void *lib = dlopen (LIMEN_GUDEV_SONAME, RTLD_LAZY | RTLD_LOCAL);
      const char *missing = NULL;

      if (lib != NULL)
        {
#define LIMEN_GUDEV_RESOLVE(ret, sym, params, args)                                      \
          if (missing == NULL)                                                           \
            {                                                                            \
              void *p = dlsym (lib, #sym);                                               \
              if (p)                                                                     \
                memcpy (&real.sym, &p, sizeof p);                                        \
              else                                                                       \
                missing = #sym;                                                          \
            }
          LIMEN_GUDEV_FUNCTIONS (LIMEN_GUDEV_RESOLVE)
#undef LIMEN_GUDEV_RESOLVE
          if (missing)
            g_warning ("udev is not available: %s lacks %s", LIMEN_GUDEV_SONAME, missing);
        }
      else
        g_warning ("udev is not available: %s", dlerror ());
      loaded = lib != NULL && missing == NULL;
      g_once_init_leave (&done, 1);
    }
  return loaded;
}

#define LIMEN_GUDEV_DEFINE(ret, name, params, args) \
  ret name params                                   \
  {                                                 \
    if (!load_gudev ())                             \
      return NULL;                                  \
    return real.name args;                          \
  }
LIMEN_GUDEV_FUNCTIONS (LIMEN_GUDEV_DEFINE)
#undef LIMEN_GUDEV_DEFINE
