/* Limen — org.freedesktop.impl.portal.Usb: AcquireDevices asks the person whether an app
 * may open USB devices, naming the app and each device.
 *
 * The answer is response 0 either way: with every device asked for ("Allow"), or with none
 * ("Deny", Escape, closing the window), which tells the frontend that the person refused
 * them (it remembers that). Only a Request closed from outside answers 2.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include <gio/gdesktopappinfo.h>
#include <glib/gi18n.h>
#include <string.h>

#include "errors.h"
#include "option-tables.h"

#define MAX_DEVICES 64
#define MAX_ID 64
#define DEVICES_ARG 3

/* A udev "ENC" string: \xNN escapes for bytes; NULL when it does not decode to UTF-8. */
static char *
decode_udev (const char *s)
{
  GString *out = g_string_new (NULL);

  while (*s)
    {
      if (s[0] == '\\' && s[1] == 'x' && g_ascii_isxdigit (s[2]) && g_ascii_isxdigit (s[3]))
        {
          g_string_append_c (out, (char) (g_ascii_xdigit_value (s[2]) * 16 + g_ascii_xdigit_value (s[3])));
          s += 4;
        }
      else
        g_string_append_c (out, *s++);
    }
  g_strstrip (out->str);
  if (!g_utf8_validate (out->str, -1, NULL) || out->str[0] == '\0')
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

/* The best name udev gives: the hardware database's, the device's own, else none. */
static char *
udev_name (GVariant *props, const char *database_key, const char *enc_key)
{
  const char *s;

  if (props && g_variant_lookup (props, database_key, "&s", &s) && *s)
    return g_strdup (s);
  if (props && g_variant_lookup (props, enc_key, "&s", &s))
    return decode_udev (s);
  return NULL;
}

/* "Vendor Product (vvvv:pppp)", from what the frontend read from udev. */
static char *
device_label (GVariant *info)
{
  g_autoptr(GVariant) props = g_variant_lookup_value (info, "properties", G_VARIANT_TYPE_VARDICT);
  g_autofree char *vendor = udev_name (props, "ID_VENDOR_FROM_DATABASE", "ID_VENDOR_ENC");
  g_autofree char *model = udev_name (props, "ID_MODEL_FROM_DATABASE", "ID_MODEL_ENC");
  const char *vid = "????", *pid = "????";
  g_autofree char *name = NULL;

  if (props)
    {
      g_variant_lookup (props, "ID_VENDOR_ID", "&s", &vid);
      g_variant_lookup (props, "ID_MODEL_ID", "&s", &pid);
    }
  if (vendor && model)
    name = g_strdup_printf ("%s %s", vendor, model);
  else if (vendor || model)
    name = g_strdup (vendor ? vendor : model);
  else
    /* TRANSLATORS: a USB device whose names are unknown */
    name = g_strdup (_("Unknown USB device"));
  return g_strdup_printf ("%s (%s:%s)", name, vid, pid);
}

/* The dialog's question, naming the app as its .desktop file does, else by its id. */
static char *
question (const char *app_id)
{
  g_autofree char *desktop_id = NULL;
  g_autoptr(GDesktopAppInfo) info = NULL;
  const char *name = app_id;

  if (!*app_id)
    return g_strdup (_("Allow an unidentified application to use USB devices?"));
  desktop_id = g_strconcat (app_id, ".desktop", NULL);
  info = g_desktop_app_info_new (desktop_id);
  if (info && g_app_info_get_display_name (G_APP_INFO (info)))
    name = g_app_info_get_display_name (G_APP_INFO (info));
  /* TRANSLATORS: %s is an application's name */
  return g_strdup_printf (_("Allow %s to use USB devices?"), name);
}

/* The device list, checked as the frontend's own tables say; @kept gets (id, access) per
 * device and @body a line per device. */
static gboolean
check_devices (GVariant *devices, GVariantBuilder *kept, GString *body, GError **error)
{
  gsize n = g_variant_n_children (devices);

  if (n == 0 || n > MAX_DEVICES)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for devices: 1 to %d devices", MAX_DEVICES);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_auto(GVariantBuilder) info = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      g_auto(GVariantBuilder) access = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      g_autoptr(GVariant) raw_info = NULL, raw_access = NULL, info_v = NULL, access_v = NULL;
      g_autofree char *label = NULL;
      gboolean writable = FALSE;
      const char *id;

      g_variant_get_child (devices, i, "(&s@a{sv}@a{sv})", &id, &raw_info, &raw_access);
      if (!limen_kde_check_string_arg ("devices", id, MAX_ID, error) ||
          !limen_options_filter (raw_info, &info, error, limen_options_usb_device_info, NULL) ||
          !limen_options_filter (raw_access, &access, error, limen_options_usb_device_access, NULL))
        return FALSE;
      info_v = g_variant_ref_sink (g_variant_builder_end (&info));
      access_v = g_variant_ref_sink (g_variant_builder_end (&access));
      g_variant_lookup (access_v, "writable", "b", &writable);
      label = device_label (info_v);
      g_string_append_printf (body, "%s• %s — %s", i ? "\n" : "", label,
                              writable ? _("read and write") : _("read only"));
      g_variant_builder_add (kept, "(s@a{sv})", id, access_v);
    }
  return TRUE;
}

/* "Allow" grants every device as asked: the list is read again from the call, which was
 * checked when it came (so this cannot fail), and which lives as long as the dialog. */
static void
on_done (LimenQtDialog *dialog, int response, size_t n_choices, const LimenQtChoiceResult *choices,
         void *user_data)
{
  g_auto(GVariantBuilder) kept = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));
  g_autoptr(GString) scratch = g_string_new (NULL);
  g_autoptr(GVariant) devices = NULL;

  g_debug ("USB dialog answered %d", response);
  if (response == LIMEN_QT_RESPONSE_OK)
    {
      devices = limen_kde_call_get_arg (user_data, DEVICES_ARG);
      check_devices (devices, &kept, scratch, NULL);
    }
  limen_kde_call_finish (user_data, 0, g_variant_new_parsed ("{'devices': <%@a(sa{sv})>}",
                                                             g_variant_builder_end (&kept)));
}

static gboolean
check_devices_arg (LimenKdeCall *call, GError **error)
{
  g_auto(GVariantBuilder) kept = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GVariant) devices = limen_kde_call_get_arg (call, DEVICES_ARG);

  return check_devices (devices, &kept, body, error);
}

static gboolean
open_usb (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  g_auto(GVariantBuilder) kept = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GVariant) devices = limen_kde_call_get_arg (call, DEVICES_ARG);
  g_autofree char *title = question (limen_kde_call_get_app_id (call));
  LimenQtAccessSpec spec = { 0 };

  check_devices (devices, &kept, body, NULL);   /* checked already: only the text */
  limen_kde_call_window (call, &spec.window);
  spec.window.modal = TRUE;
  spec.app_title = _("USB Device Access");
  spec.title = title;
  spec.subtitle = _("The app will talk to these devices directly, bypassing their usual drivers:");
  spec.body = body->str;
  spec.icon = "drive-removable-media-usb";
  return limen_kde_call_opened (call, shim->limen_qt_access_open (&spec, (LimenQtAccessDone) done, call));
}

static const LimenKdeMethod usb_methods[] = {
  { .method = "AcquireDevices", .options = limen_options_usb_no_options, .check = check_devices_arg,
    .open = open_usb, .done = G_CALLBACK (on_done), .failed = "The USB dialog could not be shown",
    .flags = LIMEN_KDE_METHOD_PARENT_WINDOW_FIRST },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_usb_new (void)
{
  LimenDbusImplPortalUsb *skeleton = limen_dbus_impl_portal_usb_skeleton_new ();

  limen_dbus_impl_portal_usb_set_version (skeleton, 1);
  return limen_kde_driver_offer (skeleton, usb_methods);
}
