/* Limen — the USB devices udev knows, each under a random id of the portal's own.
 *
 * Only whole devices count (DEVTYPE usb_device with a device node), not their interfaces:
 * that is what an app opens with libusb. An id lives as long as the device stays plugged
 * in and this daemon runs; it is a UUID so that it tells nothing about the device.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "usb.h"

#include <string.h>
#include <unistd.h>

static GUdevClient *client;
static GHashTable *by_id;        /* id → LimenUsbDevice (owned) */
static GHashTable *by_syspath;   /* syspath → LimenUsbDevice (not owned) */
static LimenUsbDeviceEventFunc event_func;
static gpointer event_data;

/* The udev properties an app may read (the same set as the reference implementation's). */
static const char * const shown_properties[] = {
  "ID_INPUT_JOYSTICK", "ID_MODEL_ID", "ID_MODEL_ENC", "ID_MODEL_FROM_DATABASE", "ID_REVISION",
  "ID_SERIAL", "ID_SERIAL_SHORT", "ID_TYPE", "ID_VENDOR_ENC", "ID_VENDOR_ID", "ID_VENDOR_FROM_DATABASE",
  NULL
};

LimenUsbDevice *
limen_usb_device_ref (LimenUsbDevice *device)
{
  g_atomic_int_inc (&device->ref_count);
  return device;
}

void
limen_usb_device_unref (LimenUsbDevice *device)
{
  if (device == NULL || !g_atomic_int_dec_and_test (&device->ref_count))
    return;
  g_free (device->id);
  g_free (device->syspath);
  g_free (device->permission_id);
  g_free (device->parent_syspath);
  g_clear_object (&device->udev);
  g_free (device);
}

static gboolean
is_whole_device (GUdevDevice *udev)
{
  return g_udev_device_get_device_file (udev) != NULL &&
         g_strcmp0 (g_udev_device_get_devtype (udev), "usb_device") == 0 &&
         g_udev_device_get_sysfs_path (udev) != NULL;
}

/* A hex number of at most 4 digits from a udev property or, failing that, a sysfs attribute. */
static gboolean
read_hex (GUdevDevice *udev, const char *property, const char *attribute, guint max, guint16 *out)
{
  const char *s = property ? g_udev_device_get_property (udev, property) : NULL;
  guint64 value;
  char *end;

  if (s == NULL && attribute)
    s = g_udev_device_get_sysfs_attr (udev, attribute);
  if (s == NULL || *s == '\0' || strlen (s) > 4)
    return FALSE;
  value = g_ascii_strtoull (s, &end, 16);
  if (*end != '\0' && *end != '\n')
    return FALSE;
  if (value > max)
    return FALSE;
  *out = (guint16) value;
  return TRUE;
}

static void
read_numbers (GUdevDevice *udev, LimenUsbNumbers *n)
{
  guint16 v;

  n->has_vendor = read_hex (udev, "ID_VENDOR_ID", "idVendor", G_MAXUINT16, &n->vendor);
  n->has_product = read_hex (udev, "ID_MODEL_ID", "idProduct", G_MAXUINT16, &n->product);
  if ((n->has_class = read_hex (udev, NULL, "bDeviceClass", G_MAXUINT8, &v)))
    n->device_class = (guint8) v;
  if ((n->has_subclass = read_hex (udev, NULL, "bDeviceSubClass", G_MAXUINT8, &v)))
    n->device_subclass = (guint8) v;
}

/* The permission store id: vendor, product and serial, as the reference implementation
 * names a device, so that answers given to either are kept for both. */
static char *
permission_id (GUdevDevice *udev)
{
  const char *keys[] = { "ID_VENDOR_ID", "ID_MODEL_ID", "ID_SERIAL" };
  GString *s = g_string_new ("device:");
  gboolean first = TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      const char *value = g_udev_device_get_property (udev, keys[i]);

      if (value == NULL)
        continue;
      if (!first)
        g_string_append_c (s, '/');
      g_string_append (s, value);
      first = FALSE;
    }
  return g_string_free (s, FALSE);
}

static void
update (LimenUsbDevice *device, GUdevDevice *udev)
{
  g_autoptr(GUdevDevice) parent = g_udev_device_get_parent (udev);

  g_set_object (&device->udev, udev);
  /* Kept as a path: asking udev for the parent on every listing reads sysfs each time. */
  g_free (device->parent_syspath);
  device->parent_syspath = parent ? g_strdup (g_udev_device_get_sysfs_path (parent)) : NULL;
  g_free (device->permission_id);
  device->permission_id = permission_id (udev);
  memset (&device->numbers, 0, sizeof device->numbers);
  read_numbers (udev, &device->numbers);
}

static LimenUsbDevice *
add (GUdevDevice *udev)
{
  LimenUsbDevice *device = g_new0 (LimenUsbDevice, 1);

  device->ref_count = 1;
  do
    {
      g_free (device->id);
      device->id = g_uuid_string_random ();
    }
  while (g_hash_table_contains (by_id, device->id));
  device->syspath = g_strdup (g_udev_device_get_sysfs_path (udev));
  update (device, udev);
  g_hash_table_insert (by_id, device->id, device);
  g_hash_table_insert (by_syspath, device->syspath, device);
  g_debug ("USB device %s is %s", device->syspath, device->id);
  return device;
}

static void
on_uevent (GUdevClient *c, const char *action, GUdevDevice *udev, gpointer user_data)
{
  const char *syspath = g_udev_device_get_sysfs_path (udev);
  LimenUsbDevice *device = syspath ? g_hash_table_lookup (by_syspath, syspath) : NULL;

  if (g_str_equal (action, "remove"))
    {
      g_autoptr(LimenUsbDevice) gone = device ? limen_usb_device_ref (device) : NULL;

      if (gone == NULL)
        return;
      g_hash_table_remove (by_syspath, gone->syspath);
      g_hash_table_remove (by_id, gone->id);
      event_func ("remove", gone, event_data);
      return;
    }
  if (!g_str_equal (action, "add") && !g_str_equal (action, "change"))
    return;
  if (!is_whole_device (udev))
    return;
  if (device)
    {
      update (device, udev);
      event_func ("change", device, event_data);
    }
  else
    event_func ("add", add (udev), event_data);
}

void
limen_usb_devices_init (LimenUsbDeviceEventFunc func, gpointer user_data)
{
  static const char * const subsystems[] = { "usb", NULL };
  GList *list;

  event_func = func;
  event_data = user_data;
  by_id = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) limen_usb_device_unref);
  by_syspath = g_hash_table_new (g_str_hash, g_str_equal);
  client = g_udev_client_new (subsystems);
  g_signal_connect (client, "uevent", G_CALLBACK (on_uevent), NULL);
  list = g_udev_client_query_by_subsystem (client, "usb");
  for (GList *l = list; l; l = l->next)
    if (is_whole_device (l->data))
      add (l->data);
  g_list_free_full (list, g_object_unref);
}

LimenUsbDevice *
limen_usb_devices_lookup (const char *id)
{
  return by_id ? g_hash_table_lookup (by_id, id) : NULL;
}

LimenUsbDevice *
limen_usb_devices_parent (LimenUsbDevice *device)
{
  return device->parent_syspath ? g_hash_table_lookup (by_syspath, device->parent_syspath) : NULL;
}

GPtrArray *
limen_usb_devices_list (void)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_usb_device_unref);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, by_id);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (out, limen_usb_device_ref (value));
  return out;
}

GVariant *
limen_usb_device_info (LimenUsbDevice *device, const char *parent_id)
{
  g_auto(GVariantBuilder) info = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) props = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  const char *file = g_udev_device_get_device_file (device->udev);
  gboolean any = FALSE;

  if (parent_id)
    g_variant_builder_add (&info, "{sv}", "parent", g_variant_new_string (parent_id));
  if (file)
    {
      /* What this daemon could open for the app, which is what AcquireDevices can give. */
      g_variant_builder_add (&info, "{sv}", "device-file", g_variant_new_string (file));
      g_variant_builder_add (&info, "{sv}", "readable", g_variant_new_boolean (access (file, R_OK) == 0));
      g_variant_builder_add (&info, "{sv}", "writable", g_variant_new_boolean (access (file, W_OK) == 0));
    }
  for (guint i = 0; shown_properties[i]; i++)
    {
      const char *value = g_udev_device_get_property (device->udev, shown_properties[i]);

      if (value && g_utf8_validate (value, -1, NULL))
        {
          g_variant_builder_add (&props, "{sv}", shown_properties[i], g_variant_new_string (value));
          any = TRUE;
        }
    }
  if (any)
    g_variant_builder_add (&info, "{sv}", "properties", g_variant_builder_end (&props));
  return g_variant_builder_end (&info);
}
