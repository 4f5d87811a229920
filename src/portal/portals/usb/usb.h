/* Limen — the Usb portal's parts: which devices an app may see (usb-rules.c) and the
 * devices udev knows, under ids of the portal's own (usb-devices.c).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gudev/gudev.h>

#include "app-info.h"

G_BEGIN_DECLS

/* The numbers a rule looks at; a field the device lacks never matches. */
typedef struct {
  guint16  vendor, product;
  guint8   device_class, device_subclass;
  gboolean has_vendor, has_product, has_class, has_subclass;
} LimenUsbNumbers;

typedef struct _LimenUsbRules LimenUsbRules;

/* The rules of @enumerable and @hidden, Flatpak's query lists ("all", "cls:CC:SS" or
 * "cls:CC:*", "vnd:VVVV", "vnd:VVVV+dev:PPPP", parts joined by '+'); a malformed query is
 * left out. NULL lists: none. */
LimenUsbRules *limen_usb_rules_new (const char * const *enumerable, const char * const *hidden);
/* The rules for a caller: a host app sees every device, a Flatpak app what its
 * [USB Devices] group allows, any other sandbox nothing. */
LimenUsbRules *limen_usb_rules_new_for_app (LimenAppInfo *info);
/* TRUE when some enumerable query matches @numbers and no hidden one does. */
gboolean limen_usb_rules_match (const LimenUsbRules *rules, const LimenUsbNumbers *numbers);
/* Free. */
void limen_usb_rules_free (LimenUsbRules *rules);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenUsbRules, limen_usb_rules_free)

typedef struct {
  char            *id;             /* random, the portal's name for it */
  char            *syspath;
  char            *permission_id;  /* "device:VID/PID/SERIAL", the permission store id */
  char            *parent_syspath; /* NULL: no parent */
  GUdevDevice     *udev;
  LimenUsbNumbers  numbers;
  gint             ref_count;
} LimenUsbDevice;

/* @device (never NULL) was added, changed or removed ("add", "change", "remove"). */
typedef void (*LimenUsbDeviceEventFunc) (const char *action, LimenUsbDevice *device, gpointer user_data);

/* Start watching udev's usb subsystem and list the devices there now. */
void limen_usb_devices_init (LimenUsbDeviceEventFunc func, gpointer user_data);
/* The device with portal id @id, or NULL. Not a new reference. */
LimenUsbDevice *limen_usb_devices_lookup (const char *id);
/* The parent device (a hub, say) when the portal knows it, or NULL. */
LimenUsbDevice *limen_usb_devices_parent (LimenUsbDevice *device);
/* Every device known now, in no particular order (a new array of new references). */
GPtrArray *limen_usb_devices_list (void);
/* The information dict of the portal's EnumerateDevices, @parent_id NULL when the app
 * may not see the parent. */
GVariant *limen_usb_device_info (LimenUsbDevice *device, const char *parent_id);

LimenUsbDevice *limen_usb_device_ref (LimenUsbDevice *device);
void limen_usb_device_unref (LimenUsbDevice *device);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenUsbDevice, limen_usb_device_unref)

G_END_DECLS
