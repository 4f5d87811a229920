/* Limen — org.freedesktop.impl.portal.Notification through KNotification.
 *
 * Notifications are keyed by (app_id, id): adding an existing id replaces it. Buttons
 * and the default action come back as ActionInvoked with the action's target, if any.
 * A "bytes" icon or sound is written to a private file, because a notification server
 * takes icons by name or path and sounds as a "sound-file" path hint; "silent" becomes
 * the "suppress-sound" hint.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <glib/gstdio.h>
#include <string.h>

#include "errors.h"

#define MAX_BUTTONS 8
#define MAX_ICON_BYTES (4 * 1024 * 1024)
#define MAX_SOUND_BYTES (16 * 1024 * 1024)

typedef struct {
  char                *key;
  char                *app_id;
  char                *id;
  LimenQtNotification *handle;
  char                *default_action;     /* NULL: none */
  GVariant            *default_target;
  GPtrArray           *actions;            /* char*, per button */
  GPtrArray           *targets;            /* GVariant* or NULL, per button */
  char                *icon_file;
  char                *sound_file;
} Notification;

static LimenDbusImplPortalNotification *notification_skeleton;
static GHashTable *notifications;   /* key → Notification */

static void
notification_free (Notification *n)
{
  if (n->icon_file)
    g_unlink (n->icon_file);
  if (n->sound_file)
    g_unlink (n->sound_file);
  g_free (n->sound_file);
  g_free (n->key);
  g_free (n->app_id);
  g_free (n->id);
  g_free (n->default_action);
  g_clear_pointer (&n->default_target, g_variant_unref);
  g_ptr_array_unref (n->actions);
  g_ptr_array_unref (n->targets);
  g_free (n->icon_file);
  g_free (n);
}

static void
maybe_unref (gpointer p)
{
  if (p)
    g_variant_unref (p);
}

static gboolean
validate_icon (const LimenOption *o, GVariant *v, GError **e)
{
  g_autoptr(GVariant) inner = g_variant_get_variant (v);
  const char *kind;
  g_autoptr(GVariant) data = NULL;

  if (!g_variant_is_of_type (inner, G_VARIANT_TYPE ("(sv)")))
    {
      limen_option_set_error (e, o->key, "expected a serialized icon (sv)");
      return FALSE;
    }
  g_variant_get (inner, "(&sv)", &kind, &data);
  if (g_str_equal (kind, "themed") && g_variant_is_of_type (data, G_VARIANT_TYPE_STRING_ARRAY) &&
      g_variant_n_children (data) > 0 && g_variant_n_children (data) <= 16)
    return TRUE;
  if (g_str_equal (kind, "bytes") && g_variant_is_of_type (data, G_VARIANT_TYPE_BYTESTRING) &&
      g_variant_get_size (data) > 0 && g_variant_get_size (data) <= MAX_ICON_BYTES)
    return TRUE;
  limen_option_set_error (e, o->key, "only themed icons and image bytes are accepted");
  return FALSE;
}

/* "default", "silent", or sound bytes (the frontend has had them validated). */
static gboolean
validate_sound (const LimenOption *o, GVariant *v, GError **e)
{
  g_autoptr(GVariant) inner = g_variant_get_variant (v);
  const char *kind;
  g_autoptr(GVariant) data = NULL;

  if (g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING) &&
      (g_str_equal (g_variant_get_string (inner, NULL), "default") ||
       g_str_equal (g_variant_get_string (inner, NULL), "silent")))
    return TRUE;
  if (g_variant_is_of_type (inner, G_VARIANT_TYPE ("(sv)")))
    {
      g_variant_get (inner, "(&sv)", &kind, &data);
      if (g_str_equal (kind, "bytes") && g_variant_is_of_type (data, G_VARIANT_TYPE_BYTESTRING) &&
          g_variant_get_size (data) > 0 && g_variant_get_size (data) <= MAX_SOUND_BYTES)
        return TRUE;
    }
  limen_option_set_error (e, o->key, "expected \"default\", \"silent\" or sound bytes");
  return FALSE;
}

static gboolean
validate_priority (const LimenOption *o, GVariant *v, GError **e)
{
  const char *p = g_variant_get_string (v, NULL);

  if (g_str_equal (p, "low") || g_str_equal (p, "normal") || g_str_equal (p, "high") || g_str_equal (p, "urgent"))
    return TRUE;
  limen_option_set_error (e, o->key, "must be low, normal, high or urgent");
  return FALSE;
}

static gboolean
validate_action_name (const char *key, const char *action, GError **e)
{
  if (*action == '\0' || strlen (action) > 255 || !g_utf8_validate (action, -1, NULL))
    {
      limen_option_set_error (e, key, "an action name is empty, too long or not UTF-8");
      return FALSE;
    }
  return TRUE;
}

static gboolean
validate_default_action (const LimenOption *o, GVariant *v, GError **e)
{
  return validate_action_name (o->key, g_variant_get_string (v, NULL), e);
}

static gboolean
validate_buttons (const LimenOption *o, GVariant *v, GError **e)
{
  gsize n = g_variant_n_children (v);

  if (n > MAX_BUTTONS)
    {
      limen_option_set_error (e, o->key, "too many buttons");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) b = g_variant_get_child_value (v, i);
      const char *label = NULL, *action = NULL;

      if (!g_variant_lookup (b, "label", "&s", &label) || !g_variant_lookup (b, "action", "&s", &action))
        {
          limen_option_set_error (e, o->key, "each button needs a label and an action (strings)");
          return FALSE;
        }
      if (strlen (label) > 256 || !g_utf8_validate (label, -1, NULL) || !validate_action_name (o->key, action, e))
        {
          if (e && !*e)
            limen_option_set_error (e, o->key, "a button label is too long or not UTF-8");
          return FALSE;
        }
    }
  return TRUE;
}

static const LimenOption notification_options[] = {
  { "title", "s", limen_validate_string_length, 1024 },
  { "body", "s", limen_validate_string_length, 16384 },
  { "icon", "v", validate_icon, 0 },
  { "sound", "v", validate_sound, 0 },
  { "priority", "s", validate_priority, 0 },
  { "default-action", "s", validate_default_action, 0 },
  { "default-action-target", "v", NULL, 0 },
  { "buttons", "aa{sv}", validate_buttons, 0 },
  { NULL }
};

static void
emit_action (Notification *n, const char *action, GVariant *target)
{
  GVariantBuilder params;

  g_variant_builder_init (&params, G_VARIANT_TYPE ("av"));
  if (target)
    g_variant_builder_add (&params, "v", target);
  g_debug ("Notification %s/%s: action %s", n->app_id, n->id, action);
  limen_dbus_impl_portal_notification_emit_action_invoked (notification_skeleton, n->app_id, n->id, action,
                                                           g_variant_builder_end (&params));
}

static void
on_action (LimenQtNotification *handle, int button, void *user_data)
{
  Notification *n = user_data;

  if (button < 0)
    {
      if (n->default_action)
        emit_action (n, n->default_action, n->default_target);
      return;
    }
  if ((guint) button < n->actions->len)
    emit_action (n, g_ptr_array_index (n->actions, button), g_ptr_array_index (n->targets, button));
}

static void
on_closed (LimenQtNotification *handle, void *user_data)
{
  Notification *n = user_data;

  /* Still the current one for its key? A replaced notification is already out. */
  if (g_hash_table_lookup (notifications, n->key) == n)
    g_hash_table_steal (notifications, n->key);
  notification_free (n);
}

/* Icon and sound bytes go to a private file, since a notification server takes a path. */
static char *
write_private_file (const char *subdir, GVariant *bytes, GError **error)
{
  g_autofree char *dir = g_build_filename (g_get_user_runtime_dir (), "limen", subdir, NULL);
  g_autofree char *name = NULL, *checksum = NULL;
  char *path;
  gsize len;
  const guint8 *data = g_variant_get_fixed_array (bytes, &len, 1);

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot create %s", dir);
      return NULL;
    }
  checksum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, len);
  /* One file per notification, so closing one never removes another's. */
  name = g_strdup_printf ("%s-%08x", checksum, g_random_int ());
  path = g_build_filename (dir, name, NULL);
  if (!g_file_set_contents_full (path, (const char *) data, len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error))
    {
      g_free (path);
      return NULL;
    }
  return path;
}

/* A themed icon's name (borrowed from @icon), or NULL after writing an icon given as bytes
 * to a private file for the notification server. */
static const char *
take_icon (Notification *n, GVariant *icon)
{
  g_autoptr(GVariant) inner = g_variant_get_variant (icon);
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GError) error = NULL;
  const char *kind, *name = NULL;

  g_variant_get (inner, "(&sv)", &kind, &data);
  if (g_str_equal (kind, "themed"))
    {
      g_variant_get_child (data, 0, "&s", &name);
      return name;
    }
  n->icon_file = write_private_file ("notification-icons", data, &error);
  if (!n->icon_file)
    g_warning ("Notification icon dropped: %s", error->message);
  return NULL;
}

/* TRUE for "silent"; a sound given as bytes is written to a private file. */
static gboolean
take_sound (Notification *n, GVariant *sound)
{
  g_autoptr(GVariant) inner = g_variant_get_variant (sound);
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GError) error = NULL;
  const char *kind;

  if (g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING))
    return g_str_equal (g_variant_get_string (inner, NULL), "silent");
  g_variant_get (inner, "(&sv)", &kind, &data);
  n->sound_file = write_private_file ("notification-sounds", data, &error);
  if (!n->sound_file)
    g_warning ("Notification sound dropped: %s", error->message);
  return FALSE;
}

static gboolean
on_add_notification (LimenDbusImplPortalNotification *skeleton,
                     GDBusMethodInvocation           *invocation,
                     const char                      *app_id,
                     const char                      *id,
                     GVariant                        *notification,
                     gpointer                         user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL, icon = NULL, buttons = NULL, sound = NULL;
  g_autoptr(GPtrArray) labels = g_ptr_array_new ();
  const char *title = "", *body = "", *priority = "normal", *icon_name = NULL, *default_action = NULL;
  const LimenKdeShim *shim;
  LimenQtNotificationSpec spec = { 0 };
  Notification *n, *old;

  if (!limen_kde_check_string_arg ("app_id", app_id, 255, &error) ||
      !limen_kde_check_string_arg ("id", id, 255, &error) ||
      !limen_options_filter (notification, &filtered, &error, notification_options, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (*id == '\0')
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid id: must not be empty");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  shim = limen_kde_shim_get (&error);
  if (!shim)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "title", "&s", &title);
  g_variant_lookup (opts, "body", "&s", &body);
  g_variant_lookup (opts, "priority", "&s", &priority);
  g_variant_lookup (opts, "default-action", "&s", &default_action);
  icon = g_variant_lookup_value (opts, "icon", G_VARIANT_TYPE_VARIANT);
  buttons = g_variant_lookup_value (opts, "buttons", G_VARIANT_TYPE ("aa{sv}"));
  sound = g_variant_lookup_value (opts, "sound", G_VARIANT_TYPE_VARIANT);

  n = g_new0 (Notification, 1);
  n->key = g_strconcat (app_id, "\n", id, NULL);
  n->app_id = g_strdup (app_id);
  n->id = g_strdup (id);
  n->actions = g_ptr_array_new_with_free_func (g_free);
  n->targets = g_ptr_array_new_with_free_func (maybe_unref);
  n->default_action = g_strdup (default_action);
  n->default_target = g_variant_lookup_value (opts, "default-action-target", NULL);
  if (n->default_target && g_variant_is_of_type (n->default_target, G_VARIANT_TYPE_VARIANT))
    {
      GVariant *inner = g_variant_get_variant (n->default_target);

      g_variant_unref (n->default_target);
      n->default_target = inner;
    }
  for (gsize i = 0; buttons && i < g_variant_n_children (buttons); i++)
    {
      g_autoptr(GVariant) b = g_variant_get_child_value (buttons, i);
      const char *label, *action;
      GVariant *target = g_variant_lookup_value (b, "target", NULL);

      g_variant_lookup (b, "label", "&s", &label);
      g_variant_lookup (b, "action", "&s", &action);
      g_ptr_array_add (labels, (gpointer) label);
      g_ptr_array_add (n->actions, g_strdup (action));
      g_ptr_array_add (n->targets, target);
    }
  if (icon)
    icon_name = take_icon (n, icon);
  if (sound)
    spec.suppress_sound = take_sound (n, sound);
  spec.sound_file = n->sound_file;
  spec.app_id = app_id;
  spec.title = title;
  spec.body = body;
  spec.icon_name = icon_name;
  spec.icon_file = n->icon_file;
  spec.urgency = g_str_equal (priority, "low") ? 0 : g_str_equal (priority, "high") ? 2
               : g_str_equal (priority, "urgent") ? 3 : 1;
  spec.has_default_action = default_action != NULL;
  spec.n_buttons = labels->len;
  spec.button_labels = (const char **) labels->pdata;

  /* Replace: the old one goes first, so its closed callback finds itself no longer
   * current and leaves the new entry alone. */
  old = g_hash_table_lookup (notifications, n->key);
  if (old)
    {
      g_hash_table_steal (notifications, old->key);
      shim->limen_qt_notification_close (old->handle);
    }
  g_hash_table_insert (notifications, n->key, n);
  n->handle = shim->limen_qt_notification_show (&spec, on_action, on_closed, n);
  if (!n->handle)
    {
      g_hash_table_steal (notifications, n->key);
      notification_free (n);
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "The notification could not be sent");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_notification_complete_add_notification (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_remove_notification (LimenDbusImplPortalNotification *skeleton,
                        GDBusMethodInvocation           *invocation,
                        const char                      *app_id,
                        const char                      *id,
                        gpointer                         user_data)
{
  g_autofree char *key = g_strconcat (app_id, "\n", id, NULL);
  Notification *n = g_hash_table_lookup (notifications, key);

  /* Removing what is not there is not an error: it may have expired. */
  if (n)
    {
      g_hash_table_steal (notifications, key);
      limen_kde_shim_get (NULL)->limen_qt_notification_close (n->handle);
    }
  limen_dbus_impl_portal_notification_complete_remove_notification (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_notification_new (void)
{
  notifications = g_hash_table_new (g_str_hash, g_str_equal);
  notification_skeleton = limen_dbus_impl_portal_notification_skeleton_new ();
  /* Icons and sounds as bytes, and the rest of version 2's format: a frontend offers apps
   * min(this, its own). */
  limen_dbus_impl_portal_notification_set_version (notification_skeleton, 2);
  g_signal_connect (notification_skeleton, "handle-add-notification", G_CALLBACK (on_add_notification), NULL);
  g_signal_connect (notification_skeleton, "handle-remove-notification", G_CALLBACK (on_remove_notification), NULL);
  return G_DBUS_INTERFACE_SKELETON (notification_skeleton);
}
