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
#include <gudev/gudev.h>

#include "lazy-library.h"

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

#define LIMEN_GUDEV_NAME(ret, name, params, args) #name,
static const char *const symbols[] = { LIMEN_GUDEV_FUNCTIONS (LIMEN_GUDEV_NAME) };
#undef LIMEN_GUDEV_NAME
G_STATIC_ASSERT (sizeof real == G_N_ELEMENTS (symbols) * sizeof (LimenLazySlot));

/* Opened once, by the first call; logged once when it or one of its symbols is missing. */
static LimenLazyLibrary gudev = {
  .soname = LIMEN_GUDEV_SONAME, .symbols = symbols, .n_symbols = G_N_ELEMENTS (symbols),
  .slots = &real, .failure = "udev is not available",
};

#define LIMEN_GUDEV_DEFINE(ret, name, params, args) \
  ret name params                                   \
  {                                                 \
    if (!limen_lazy_load (&gudev))                  \
      return NULL;                                  \
    return real.name args;                          \
  }
LIMEN_GUDEV_FUNCTIONS (LIMEN_GUDEV_DEFINE)
#undef LIMEN_GUDEV_DEFINE
