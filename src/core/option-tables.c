/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The limits here are the ones an app met end to end before the tables were shared (the
 * smaller of the frontend's and the backend's), so an option refused anywhere is refused at
 * the frontend with InvalidArgument instead of reaching the app as a bare response 2. */
#include "option-tables.h"

#include <math.h>
#include <string.h>

#include "errors.h"
#include "notification-options.h"

#define LABEL_MAX 256
#define NAME_MAX_BYTES 1024
#define ADDRESSES_MAX 256
#define ATTACHMENTS_MAX 64

gboolean
limen_validate_abs_path (const LimenOption *o, GVariant *v, GError **error)
{
  if (!limen_validate_byte_path (o, v, error))
    return FALSE;
  /* A relative path means nothing to a dialog in another process. */
  if (g_variant_get_bytestring (v)[0] != '/')
    {
      limen_option_set_error (error, o->key, "must be an absolute path");
      return FALSE;
    }
  return TRUE;
}

/* A suggested folder: a relative one means nothing to a dialog in another process, and is
 * left out (the dialog opens where it would without one), as Chromium sends "." for a
 * suggested name without a folder; the reference passes it on. */
gboolean
limen_validate_folder_or_drop (const LimenOption *o, GVariant *v, GError **error)
{
  if (!limen_validate_byte_path (o, v, error))
    return FALSE;
  return g_variant_get_bytestring (v)[0] == '/';
}

/* A suggested file name: one with a directory in it is left out (the dialog still opens,
 * with no name suggested); the reference passes it on. */
gboolean
limen_validate_file_name (const LimenOption *o, GVariant *v, GError **error)
{
  if (!limen_validate_string_length (o, v, error))
    return FALSE;
  return strchr (g_variant_get_string (v, NULL), '/') == NULL;
}

/* One line of at most @max characters (not bytes), as the reference counts a mail subject. */
static gboolean
validate_subject (const LimenOption *o, GVariant *v, GError **error)
{
  const LimenOption bytes = { o->key, o->type, NULL, 4 * o->max };   /* UTF-8: 4 bytes a character at most */
  const char *s = g_variant_get_string (v, NULL);

  if (!limen_validate_single_line (&bytes, v, error))
    return FALSE;
  if (g_utf8_strlen (s, -1) > (glong) o->max)
    {
      g_autofree char *why = g_strdup_printf ("longer than %u characters", (guint) o->max);

      limen_option_set_error (error, o->key, why);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_single_line (const LimenOption *o, GVariant *v, GError **error)
{
  /* A line break would let the caller forge mail headers. */
  if (strpbrk (g_variant_get_string (v, NULL), "\r\n") != NULL)
    {
      limen_option_set_error (error, o->key, "must be a single line");
      return FALSE;
    }
  return limen_validate_string_length (o, v, error);
}

static gboolean
address_ok (const char *s)
{
  const char *at = strchr (s, '@');

  if (strlen (s) > 254 || at == NULL || at == s || at[1] == '\0' || strchr (at + 1, '@') != NULL)
    return FALSE;
  /* A quote or a comma would end the address in a mail client's command line (Thunderbird's
   * -compose takes to='a,b'), and take what follows for something else. */
  for (const char *p = s; *p; p++)
    if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p) || strchr (",<>'\"", *p))
      return FALSE;
  return TRUE;
}

gboolean
limen_validate_email_address (const LimenOption *o, GVariant *v, GError **error)
{
  if (!address_ok (g_variant_get_string (v, NULL)))
    {
      limen_option_set_error (error, o->key, "not an email address");
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_email_addresses (const LimenOption *o, GVariant *v, GError **error)
{
  g_autofree const char **list = g_variant_get_strv (v, NULL);

  if (g_strv_length ((char **) list) > ADDRESSES_MAX)
    {
      limen_option_set_error (error, o->key, "too many addresses");
      return FALSE;
    }
  for (guint i = 0; list[i]; i++)
    if (!address_ok (list[i]))
      {
        limen_option_set_error (error, o->key, "not an email address");
        return FALSE;
      }
  return TRUE;
}

static gboolean
validate_set_on (const LimenOption *o, GVariant *v, GError **error)
{
  const char *s = g_variant_get_string (v, NULL);

  if (!g_str_equal (s, "background") && !g_str_equal (s, "lockscreen") && !g_str_equal (s, "both"))
    {
      limen_option_set_error (error, o->key, "must be background, lockscreen or both");
      return FALSE;
    }
  return TRUE;
}

/* Host paths a frontend resolved from the app's fds. */
static gboolean
validate_attachments (const LimenOption *o, GVariant *v, GError **error)
{
  gsize n = g_variant_n_children (v);

  if (n > ATTACHMENTS_MAX)
    {
      limen_option_set_error (error, o->key, "too many attachments");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      const char *p;

      g_variant_get_child (v, i, "&s", &p);
      if (p[0] != '/' || strlen (p) > 4096 || !g_utf8_validate (p, -1, NULL))
        {
          limen_option_set_error (error, o->key, "attachments must be absolute paths");
          return FALSE;
        }
    }
  return TRUE;
}

#define ACCOUNT_REASON_MAX 256

const LimenOption limen_options_account_get_user_information[] = {
  /* A longer reason is left out, as by the reference: the dialog still shows. */
  { "reason", "s", limen_validate_string_or_drop, ACCOUNT_REASON_MAX },
  { NULL }
};

/* A frontend never passes a longer reason on, so a backend refuses one. */
const LimenOption limen_options_impl_account_get_user_information[] = {
  { "reason", "s", limen_validate_string_length, ACCOUNT_REASON_MAX },
  { NULL }
};

#define FILE_CHOOSER_COMMON \
  { "accept_label", "s", limen_validate_string_length, LABEL_MAX }, \
  { "modal", "b", limen_validate_bool, 0 }, \
  { "choices", "a(ssa(ss)s)", limen_validate_choices, 0 }, \
  { "current_folder", "ay", limen_validate_folder_or_drop, 0 }

const LimenOption limen_options_file_chooser_open_file[] = {
  FILE_CHOOSER_COMMON,
  { "multiple", "b", limen_validate_bool, 0 },
  { "directory", "b", limen_validate_bool, 0 },
  { "filters", "a(sa(us))", limen_validate_file_filters, 0 },
  { "current_filter", "(sa(us))", limen_validate_file_filter, 0 },
  { NULL }
};

const LimenOption limen_options_file_chooser_save_file[] = {
  FILE_CHOOSER_COMMON,
  { "filters", "a(sa(us))", limen_validate_file_filters, 0 },
  { "current_filter", "(sa(us))", limen_validate_file_filter, 0 },
  { "current_name", "s", limen_validate_file_name, NAME_MAX_BYTES },
  { "current_file", "ay", limen_validate_abs_path, 0 },
  { NULL }
};

const LimenOption limen_options_file_chooser_save_files[] = {
  FILE_CHOOSER_COMMON,
  { "files", "aay", limen_validate_file_names, 0 },
  { NULL }
};

/* supported_output_file_formats: only the formats the specification names, each once. */
gboolean
limen_validate_output_file_formats (const LimenOption *o, GVariant *v, GError **error)
{
  static const char *const known[] = { "pdf", "ps", "svg", NULL };
  g_autofree const char **formats = g_variant_get_strv (v, NULL);

  for (guint i = 0; formats[i]; i++)
    if (!g_strv_contains (known, formats[i]) || g_strv_contains (formats + i + 1, formats[i]))
      {
        limen_option_set_error (error, o->key, "formats are \"pdf\", \"ps\" and \"svg\", each at most once");
        return FALSE;
      }
  return TRUE;
}

const LimenOption limen_options_print_prepare_print[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "accept_label", "s", limen_validate_string_length, LABEL_MAX },
  { "supported_output_file_formats", "as", limen_validate_output_file_formats, 0 },  /* version 3 */
  { "has_current_page", "b", limen_validate_bool, 0 },                                /* version 4 */
  { "has_selected_pages", "b", limen_validate_bool, 0 },                              /* version 4 */
  { NULL }
};

const LimenOption limen_options_print_print[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "token", "u", NULL, 0 },
  { "supported_output_file_formats", "as", limen_validate_output_file_formats, 0 },  /* version 3 */
  { NULL }
};

/* Screenshot version 3's target: one of 1 screen, 2 a window the person picks, 4 an area,
 * 8 the active window; never a mask. */
gboolean
limen_validate_screenshot_target (const LimenOption *o, GVariant *v, GError **error)
{
  guint32 t = g_variant_get_uint32 (v);

  if (t == 0 || (t & ~0xfu) != 0 || (t & (t - 1)) != 0)
    {
      limen_option_set_error (error, o->key, "must be one target: 1 screen, 2 window, 4 area or 8 active window");
      return FALSE;
    }
  return TRUE;
}

#define SCREENSHOT_APP \
  { "modal", "b", limen_validate_bool, 0 }, \
  { "interactive", "b", limen_validate_bool, 0 }, \
  { "target", "u", limen_validate_screenshot_target, 0 }

const LimenOption limen_options_screenshot_screenshot[] = {
  SCREENSHOT_APP,
  { NULL }
};

const LimenOption limen_options_impl_screenshot_screenshot[] = {
  SCREENSHOT_APP,
  { "permission_store_checked", "b", limen_validate_bool, 0 },
  { NULL }
};

const LimenOption limen_options_screenshot_pick_color[] = {
  { NULL }
};

const LimenOption limen_options_wallpaper[] = {
  { "show-preview", "b", limen_validate_bool, 0 },
  { "set-on", "s", validate_set_on, 0 },
  { NULL }
};

#define EMAIL_APP \
  { "address", "s", limen_validate_email_address, 0 }, \
  { "addresses", "as", limen_validate_email_addresses, 0 }, \
  { "cc", "as", limen_validate_email_addresses, 0 }, \
  { "bcc", "as", limen_validate_email_addresses, 0 }, \
  { "subject", "s", validate_subject, 200 },   /* the reference refuses longer ones */ \
  { "body", "s", limen_validate_string_length, 65536 }, \
  { "activation_token", "s", limen_validate_string_length, 1024 }

const LimenOption limen_options_email_compose[] = {
  EMAIL_APP,
  { NULL }
};

const LimenOption limen_options_impl_email_compose[] = {
  EMAIL_APP,
  { "attachments", "as", validate_attachments, 0 },
  { NULL }
};

const LimenOption limen_options_inhibit_inhibit[] = {
  { "reason", "s", limen_validate_string_length, 1024 },
  { NULL }
};

/* ---- ScreenCast, RemoteDesktop, Clipboard ---- */

#define CAST_SOURCES_ALL 7   /* monitor, window, virtual */
#define CAST_CURSORS_ALL 7   /* hidden, embedded, metadata */
#define CAST_DEVICES_ALL 7   /* keyboard, pointer, touchscreen */
#define MAX_RESTORE_DATA 65536
#define MAX_RESTORE_VENDOR 64
#define MAX_MIME_TYPES 64
#define MAX_MIME_LENGTH 255

/* A bitmask an app may leave empty: ScreenCast's and RemoteDesktop's types, where 0 means
 * the default (a monitor; every device type), as the reference takes it. */
gboolean
limen_validate_bits (const LimenOption *o, GVariant *v, GError **e)
{
  if ((g_variant_get_uint32 (v) & ~(guint32) o->max) != 0)
    {
      g_autofree char *why = g_strdup_printf ("must be a bitmask of %u", (guint) o->max);

      limen_option_set_error (e, o->key, why);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_one_bit (const LimenOption *o, GVariant *v, GError **e)
{
  guint32 value = g_variant_get_uint32 (v);

  if (value == 0 || (value & (value - 1)) != 0 || (value & ~(guint32) o->max) != 0)
    {
      g_autofree char *why = g_strdup_printf ("must be exactly one of the bits of %u", (guint) o->max);

      limen_option_set_error (e, o->key, why);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_persist_mode (const LimenOption *o, GVariant *v, GError **e)
{
  if (g_variant_get_uint32 (v) > 2)
    {
      limen_option_set_error (e, o->key, "must be 0 (no), 1 (while the app runs) or 2 (until revoked)");
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_clipboard_type_is_valid (const char *type)
{
  gsize len = strlen (type);
  const char *slash = strchr (type, '/');
  const char *params = strchr (type, ';');

  if (len == 0 || len > MAX_MIME_LENGTH || slash == type || (slash && slash[1] == '\0') || params == type)
    return FALSE;
  for (const char *p = type; *p; p++)
    {
      /* Spaces only among the parameters ("text/plain; charset=utf-8"). */
      if (*p == ' ' && params && p > params)
        continue;
      if ((guchar) *p < 0x21 || (guchar) *p > 0x7e)
        return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_clipboard_types (const LimenOption *o, GVariant *v, GError **e)
{
  gsize n = g_variant_n_children (v);

  if (n > (o->max ? o->max : MAX_MIME_TYPES))
    {
      limen_option_set_error (e, o->key, "too many MIME types");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (v, i);

      if (!limen_clipboard_type_is_valid (g_variant_get_string (child, NULL)))
        {
          limen_option_set_error (e, o->key, "not a clipboard type (a MIME type or a target name such as "
                                             "UTF8_STRING: printable, at most 255 bytes)");
          return FALSE;
        }
    }
  return TRUE;
}

/* (suv) from an earlier Start, handed back by the frontend only: opaque to it, so only its
 * shape is checked here (vendor name, size); what it names is the backend's check at Start. */
static gboolean
validate_restore_data (const LimenOption *o, GVariant *v, GError **e)
{
  const char *vendor;

  g_variant_get (v, "(&suv)", &vendor, NULL, NULL);
  if (strlen (vendor) > MAX_RESTORE_VENDOR || g_variant_get_size (v) > MAX_RESTORE_DATA)
    {
      limen_option_set_error (e, o->key, "too large");
      return FALSE;
    }
  return TRUE;
}

const LimenOption limen_options_screen_cast_create_session[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

#define SELECT_SOURCES_APP \
  { "handle_token", "s", limen_validate_token, 0 }, \
  { "types", "u", limen_validate_bits, CAST_SOURCES_ALL }, \
  { "multiple", "b", limen_validate_bool, 0 }, \
  { "cursor_mode", "u", limen_validate_one_bit, CAST_CURSORS_ALL }, \
  { "persist_mode", "u", limen_validate_persist_mode, 0 }

const LimenOption limen_options_screen_cast_select_sources[] = {
  SELECT_SOURCES_APP,
  { NULL }
};

const LimenOption limen_options_impl_screen_cast_select_sources[] = {
  SELECT_SOURCES_APP,
  { "restore_data", "(suv)", validate_restore_data, 0 },
  { NULL }
};

const LimenOption limen_options_screen_cast_start[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_screen_cast_open_pipewire_remote[] = {
  { NULL }
};

#define SELECT_DEVICES_APP \
  { "handle_token", "s", limen_validate_token, 0 }, \
  { "types", "u", limen_validate_bits, CAST_DEVICES_ALL }, \
  { "persist_mode", "u", limen_validate_persist_mode, 0 }

const LimenOption limen_options_remote_desktop_select_devices[] = {
  SELECT_DEVICES_APP,
  { NULL }
};

const LimenOption limen_options_impl_remote_desktop_select_devices[] = {
  SELECT_DEVICES_APP,
  { "restore_data", "(suv)", validate_restore_data, 0 },
  { NULL }
};

const LimenOption limen_options_remote_desktop_start[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_remote_desktop_notify[] = {
  { NULL }
};

const LimenOption limen_options_remote_desktop_notify_pointer_axis[] = {
  { "finish", "b", limen_validate_bool, 0 },
  { NULL }
};

const LimenOption limen_options_remote_desktop_connect_to_eis[] = {
  { NULL }
};

const LimenOption limen_options_clipboard_request_clipboard[] = {
  { NULL }
};

const LimenOption limen_options_clipboard_set_selection[] = {
  { "mime_types", "as", limen_validate_clipboard_types, MAX_MIME_TYPES },
  { NULL }
};

const LimenOption limen_options_clipboard_selection_owner_changed[] = {
  { "mime_types", "as", limen_validate_clipboard_types, MAX_MIME_TYPES },
  { "session_is_owner", "b", limen_validate_bool, 0 },
  { NULL }
};

/* ---- InputCapture ---- */


/* A point of the compositor's logical space: two finite numbers. */
static gboolean
validate_point (const LimenOption *o, GVariant *v, GError **e)
{
  double x, y;

  g_variant_get (v, "(dd)", &x, &y);
  if (!isfinite (x) || !isfinite (y))
    {
      limen_option_set_error (e, o->key, "must be two finite numbers");
      return FALSE;
    }
  return TRUE;
}

/* Activated names a barrier by the id the app gave it, which is never 0; capabilities are a
 * non-empty mask whose bits beyond keyboard, pointer and touchscreen are the backend's to
 * judge (the specification tells apps to ignore unknown ones: it will add some). */
static gboolean
validate_nonzero (const LimenOption *o, GVariant *v, GError **e)
{
  if (g_variant_get_uint32 (v) == 0)
    {
      limen_option_set_error (e, o->key, "must not be 0");
      return FALSE;
    }
  return TRUE;
}

const LimenOption limen_options_input_capture_create_session[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { "session_handle_token", "s", limen_validate_token, 0 },
  { "capabilities", "u", validate_nonzero, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_create_session2[] = {
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_start[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { "capabilities", "u", validate_nonzero, 0 },
  { "persist_mode", "u", limen_validate_persist_mode, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_request[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_plain[] = {
  { NULL }
};

const LimenOption limen_options_input_capture_release[] = {
  { "activation_id", "u", NULL, 0 },
  { "cursor_position", "(dd)", validate_point, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_barrier[] = {
  { "barrier_id", "u", validate_nonzero, 0 },
  { "position", "(iiii)", NULL, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_activated[] = {
  { "activation_id", "u", NULL, 0 },
  { "cursor_position", "(dd)", validate_point, 0 },
  { "barrier_id", "u", NULL, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_deactivated[] = {
  { "activation_id", "u", NULL, 0 },
  { "cursor_position", "(dd)", validate_point, 0 },
  { NULL }
};

const LimenOption limen_options_input_capture_zones_changed[] = {
  { "zone_set", "u", NULL, 0 },
  { NULL }
};

/* Buttons, markup, hints and category as the specification's version 2 has them. */
const LimenOption limen_options_notification_add_notification[] = {
  /* Bounds the reference does not have, well above what a notification shows. */
  { "title", "s", limen_validate_string_length, 16384 },
  { "body", "s", limen_validate_string_length, 256 * 1024 },
  { "markup-body", "s", limen_validate_notification_markup, LIMEN_NOTIFICATION_MARKUP_MAX },
  { "priority", "s", limen_validate_notification_priority, 0 },
  { "default-action", "s", limen_validate_notification_action, 0 },
  /* The specification writes "v"; the apps' own libraries (GLib's GNotification, KDE's
   * KNotification) and the reference send the target itself, of its own type. */
  { "default-action-target", "*", limen_validate_notification_target, 0 },
  { "buttons", "aa{sv}", limen_validate_notification_buttons, LIMEN_NOTIFICATION_BUTTONS_MAX },
  { "display-hint", "as", limen_validate_notification_display_hints, 16 },
  { "category", "s", limen_validate_notification_category, 0 },
  { NULL }
};

/* Icons: ("themed", <as>), ("file-descriptor", <h>) (version 2), ("bytes", <ay>) (version 1),
 * or a themed icon's name as a plain string (what Debian's xdg-desktop-portal 1.16 passes on
 * from KNotification); sounds: "default", "silent", ("file-descriptor", <h>), or ("bytes",
 * <ay>) from frontends that followed an earlier draft. Each either as it is (what frontends
 * pass on from GLib's and KDE's clients) or in a variant of its own (the specification's
 * "v"). The fd itself is checked where it is read. */
static gboolean
validate_impl_media (const LimenOption *o, GVariant *v, GError **error)
{
  g_autoptr(GVariant) inner = g_variant_is_of_type (v, G_VARIANT_TYPE_VARIANT) ? g_variant_get_variant (v)
                                                                               : g_variant_ref (v);
  g_autoptr(GVariant) data = NULL;
  gboolean icon = g_str_equal (o->key, "icon");
  const char *kind;

  if (g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING) &&
      (icon ? g_variant_get_size (inner) > 1 && g_variant_get_size (inner) <= 256
            : (g_str_equal (g_variant_get_string (inner, NULL), "default") ||
               g_str_equal (g_variant_get_string (inner, NULL), "silent"))))
    return TRUE;
  if (g_variant_is_of_type (inner, G_VARIANT_TYPE ("(sv)")))
    {
      g_variant_get (inner, "(&sv)", &kind, &data);
      if (icon && g_str_equal (kind, "themed") && g_variant_is_of_type (data, G_VARIANT_TYPE_STRING_ARRAY) &&
          g_variant_n_children (data) > 0 && g_variant_n_children (data) <= 16)
        return TRUE;
      if (g_str_equal (kind, "bytes") && g_variant_is_of_type (data, G_VARIANT_TYPE_BYTESTRING) &&
          g_variant_get_size (data) > 0 && g_variant_get_size (data) <= o->max)
        return TRUE;
      if (g_str_equal (kind, "file-descriptor") && g_variant_is_of_type (data, G_VARIANT_TYPE_HANDLE))
        return TRUE;
    }
  limen_option_set_error (error, o->key, icon ? "expected a themed, file-descriptor or bytes icon"
                                              : "expected \"default\", \"silent\" or a file-descriptor sound");
  return FALSE;
}

const LimenOption limen_options_impl_notification_add_notification[] = {
  { "icon", "*", validate_impl_media, 4 * 1024 * 1024 },
  { "sound", "*", validate_impl_media, 16 * 1024 * 1024 },
  { NULL }
};

static gboolean
validate_launcher_type (const LimenOption *o, GVariant *v, GError **error)
{
  guint32 t = g_variant_get_uint32 (v);

  if (t != LIMEN_LAUNCHER_APPLICATION && t != LIMEN_LAUNCHER_WEBAPP)
    {
      limen_option_set_error (error, o->key, "must be 1 (application) or 2 (web application)");
      return FALSE;
    }
  return TRUE;
}

static gboolean
validate_launcher_target (const LimenOption *o, GVariant *v, GError **error)
{
  const char *s = g_variant_get_string (v, NULL);

  if (!g_str_has_prefix (s, "https://") && !g_str_has_prefix (s, "http://"))
    {
      limen_option_set_error (error, o->key, "must be an http(s) URL");
      return FALSE;
    }
  return limen_validate_single_line (o, v, error);
}

const LimenOption limen_options_dynamic_launcher_prepare_install[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "launcher_type", "u", validate_launcher_type, 0 },
  { "target", "s", validate_launcher_target, 4096 },
  { "editable_name", "b", limen_validate_bool, 0 },
  { "editable_icon", "b", limen_validate_bool, 0 },
  { NULL }
};

gboolean
limen_launcher_name_is_valid (const char *name)
{
  /* One line: the name becomes the Name= line of a desktop file. */
  return *name != '\0' && strlen (name) <= LIMEN_LAUNCHER_NAME_MAX && g_utf8_validate (name, -1, NULL) &&
         strpbrk (name, "\r\n") == NULL;
}

/* Usb: a device's udev properties travel as strings, a bounded few. */
gboolean
limen_validate_usb_properties (const LimenOption *o, GVariant *v, GError **error)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;
  gsize max = o->max ? o->max : 64;

  if (g_variant_n_children (v) > max)
    {
      limen_option_set_error (error, o->key, "too many properties");
      return FALSE;
    }
  g_variant_iter_init (&iter, v);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    if (strlen (key) > 256 || !g_variant_is_of_type (value, G_VARIANT_TYPE_STRING) ||
        g_variant_get_size (value) > 4096)
      {
        limen_option_set_error (error, o->key, "each property a string of at most 4096 bytes");
        g_variant_unref (value);
        return FALSE;
      }
  return TRUE;
}

const LimenOption limen_options_usb_create_session[] = {
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_usb_no_options[] = {
  { NULL }
};

const LimenOption limen_options_usb_acquire_devices[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_usb_device_access[] = {
  { "writable", "b", limen_validate_bool, 0 },
  { NULL }
};

const LimenOption limen_options_usb_device_info[] = {
  { "parent", "s", limen_validate_string_length, 64 },
  { "readable", "b", limen_validate_bool, 0 },
  { "writable", "b", limen_validate_bool, 0 },
  { "device-file", "s", limen_validate_string_length, 4096 },
  { "properties", "a{sv}", limen_validate_usb_properties, 64 },
  { NULL }
};

#define LAUNCHER_ICON_MAX (4 * 1024 * 1024)

GVariant *
limen_launcher_icon_unbox (GVariant *icon_v, GBytes **bytes, GError **error)
{
  g_autoptr(GVariant) icon = g_variant_ref (icon_v);
  g_autoptr(GVariant) inner = NULL;
  const char *kind;

  /* GIcon serializations travel boxed in a variant, once or twice. */
  for (int i = 0; i < 2 && g_variant_is_of_type (icon, G_VARIANT_TYPE_VARIANT); i++)
    {
      GVariant *unboxed = g_variant_get_variant (icon);

      g_variant_unref (icon);
      icon = unboxed;
    }
  if (g_variant_is_of_type (icon, G_VARIANT_TYPE ("(sv)")))
    {
      g_variant_get (icon, "(&sv)", &kind, &inner);
      if (g_str_equal (kind, "bytes") && g_variant_is_of_type (inner, G_VARIANT_TYPE_BYTESTRING) &&
          g_variant_get_size (inner) > 0 && g_variant_get_size (inner) <= LAUNCHER_ICON_MAX)
        {
          *bytes = g_variant_get_data_as_bytes (inner);
          return g_steal_pointer (&icon);
        }
    }
  g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid value for icon_v: must be a serialized bytes icon of at most 4 MiB");
  return NULL;
}

/* ---- tables the backend checks a frontend against (the app never sends these dicts) ---- */

#define ACTIVATION_TOKEN { "activation_token", "s", limen_validate_string_length, 1024 }

const LimenOption limen_options_open_uri_open_uri[] = {
  { "writable", "b", limen_validate_bool, 0 },
  { "ask", "b", limen_validate_bool, 0 },
  ACTIVATION_TOKEN,
  { NULL }
};

const LimenOption limen_options_impl_app_chooser_choose_application[] = {
  { "last_choice", "s", limen_validate_string_length, 255 },
  { "modal", "b", limen_validate_bool, 0 },
  { "content_type", "s", limen_validate_string_length, 255 },
  { "uri", "s", limen_validate_string_length, 16384 },   /* as long as OpenURI takes */
  { "filename", "s", limen_validate_string_length, 4096 },
  ACTIVATION_TOKEN,
  { NULL }
};

const LimenOption limen_options_impl_access_access_dialog[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "deny_label", "s", limen_validate_string_length, 256 },
  { "grant_label", "s", limen_validate_string_length, 256 },
  { "icon", "s", limen_validate_string_length, 256 },
  { "choices", "a(ssa(ss)s)", limen_validate_choices, 0 },
  { NULL }
};

const LimenOption limen_options_global_shortcuts_create_session[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

const LimenOption limen_options_global_shortcuts_request[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

/* GtkPrintSettings keys the backend understands; all strings. */
const LimenOption limen_options_impl_print_settings[] = {
  { "printer", "s", limen_validate_string_length, 256 },
  { "n-copies", "s", limen_validate_string_length, 16 },
  { "collate", "s", limen_validate_string_length, 8 },
  { "duplex", "s", limen_validate_string_length, 16 },
  { "orientation", "s", limen_validate_string_length, 32 },
  { "print-pages", "s", limen_validate_string_length, 16 },
  { "page-ranges", "s", limen_validate_string_length, 256 },
  { "use-color", "s", limen_validate_string_length, 8 },
  { "reverse", "s", limen_validate_string_length, 8 },
  { "paper-format", "s", limen_validate_string_length, 64 },
  { "paper-width", "s", limen_validate_string_length, 32 },
  { "paper-height", "s", limen_validate_string_length, 32 },
  { "output-uri", "s", limen_validate_string_length, 4096 },
  { "output-file-format", "s", limen_validate_string_length, 8 },
  { NULL }
};

/* GtkPageSetup keys the backend understands. */
const LimenOption limen_options_impl_print_page_setup[] = {
  { "PPDName", "s", limen_validate_string_length, 64 },
  { "Name", "s", limen_validate_string_length, 64 },
  { "DisplayName", "s", limen_validate_string_length, 256 },
  { "Width", "d", NULL, 0 },
  { "Height", "d", NULL, 0 },
  { "MarginTop", "d", NULL, 0 },
  { "MarginBottom", "d", NULL, 0 },
  { "MarginLeft", "d", NULL, 0 },
  { "MarginRight", "d", NULL, 0 },
  { "Orientation", "s", limen_validate_string_length, 32 },
  { NULL }
};
