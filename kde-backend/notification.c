/* Limen — org.freedesktop.impl.portal.Notification (version 2) through KNotification.
 *
 * Notifications are keyed by (app_id, id): adding an existing id replaces it. A button or
 * the default action whose action is the app's own ("app.NAME", what GNotification sends)
 * is activated in the app over org.freedesktop.Application, as the specification asks for
 * exported actions and the reference does: GLib's portal client listens for nothing else.
 * Other actions, an inline reply, and an "app." action the app does not take that way come
 * back as ActionInvoked with the action's target, if any (an "app." action the reference
 * would drop).
 * Image or sound data (a memfd, or bytes from a version 1 frontend) is written to a
 * private file, because a notification server takes icons by name or path and sounds as a
 * "sound-file" path hint; "silent" becomes the "suppress-sound" hint.
 *
 * Version 2's keys as KDE can honour them: markup-body is KNotification's rich text (the
 * server shows it if it has body-markup, KNotification strips it otherwise); category is
 * the "category" hint and raises the urgency of alarms, incoming calls and danger alerts;
 * display-hint transient is the "transient" hint, persistent KNotification's Persistent
 * flag, tray a low urgency (Plasma shows low urgency only in its history); an
 * im.reply-with-text button is KNotification's inline reply (a plain button on a server
 * without inline-reply). Not mapped: the other button purposes (plain buttons, labelled
 * after their purpose when the app gave no label), hide-on-lockscreen and
 * hide-content-on-lockscreen (nothing to do: Plasma 5.27's lock screen shows no
 * notifications at all). Reusing an id updates the notification in place (the server gets
 * the same id back); show-as-new closes it and shows a new one.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "errors.h"
#include "fd-check.h"
#include "notification-direct.h"
#include "notification-options.h"
#include "option-tables.h"

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

/* Where notifications go: KNotification through the shim, or (without limen.notifyrc,
 * which KNotification needs) the notification server directly. */
typedef struct {
  LimenQtNotification *(*show) (const LimenQtNotificationSpec *spec, LimenQtNotificationAction action,
                                LimenQtNotificationClosed closed, void *user_data);
  void (*update) (LimenQtNotification *handle, const LimenQtNotificationSpec *spec);
  void (*close) (LimenQtNotification *handle);
} Sink;

static gboolean direct;   /* no limen.notifyrc: notification-direct.c */

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

/* The options KDE makes something of (SupportedOptions): every category of the
 * specification is passed on as the "category" hint, and the only purpose with a KDE
 * counterpart is the inline reply. */
static GVariant *
supported_options (void)
{
  static const char *const purposes[] = { "im.reply-with-text", NULL };
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "category", g_variant_new_strv (limen_notification_categories, -1));
  g_variant_builder_add (&b, "{sv}", "button-purpose", g_variant_new_strv (purposes, -1));
  return g_variant_builder_end (&b);
}

/* An action on its way to the app through org.freedesktop.Application: what to send as
 * ActionInvoked if the app does not take it (the notification may be gone by then). */
typedef struct {
  char     *app_id;
  char     *id;
  char     *action;
  GVariant *params;
} Delivery;

static void
delivery_free (Delivery *d)
{
  g_free (d->app_id);
  g_free (d->id);
  g_free (d->action);
  g_variant_unref (d->params);
  g_free (d);
}

static void
emit_invoked (const char *app_id, const char *id, const char *action, GVariant *params)
{
  g_debug ("Notification %s/%s: action %s as ActionInvoked", app_id, id, action);
  limen_dbus_impl_portal_notification_emit_action_invoked (notification_skeleton, app_id, id, action, params);
}

/* The object path org.freedesktop.Application gives @app_id ("/org/example/App", '-' as
 * '_'), or NULL when @app_id cannot be a bus name (a host app without an id). */
static char *
application_path (const char *app_id)
{
  char *path;

  if (!g_dbus_is_name (app_id) || g_dbus_is_unique_name (app_id))
    return NULL;
  path = g_strconcat ("/", app_id, NULL);
  for (char *p = path; *p; p++)
    if (*p == '.')
      *p = '/';
    else if (*p == '-')
      *p = '_';
  if (!g_variant_is_object_path (path))
    g_clear_pointer (&path, g_free);
  return path;
}

/* org.freedesktop.Application's platform data: the activation token of the click, under
 * both names apps read it by. */
static GVariant *
platform_data (const char *activation_token)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  if (activation_token)
    {
      g_variant_builder_add (&b, "{sv}", "activation-token", g_variant_new_string (activation_token));
      g_variant_builder_add (&b, "{sv}", "desktop-startup-id", g_variant_new_string (activation_token));
    }
  return g_variant_builder_end (&b);
}

static void
on_activate_action_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Delivery *d = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply == NULL)
    {
      g_debug ("Notification %s/%s: %s not taken through org.freedesktop.Application: %s", d->app_id, d->id,
               d->action, error->message);
      emit_invoked (d->app_id, d->id, d->action, d->params);
    }
  delivery_free (d);
}

/* ActionInvoked's parameter, as the specification's version 2 has it: the target (if any),
 * then the platform data with the activation token the app needs to raise its window on
 * Wayland (empty when the server gave none), then @reply, an inline reply's text. An app
 * reached through org.freedesktop.Application gets the target alone as the action's
 * parameter, the platform data beside it. */
static void
emit_action (Notification *n, const char *action, GVariant *target, const char *reply, const char *activation_token)
{
  GDBusConnection *bus = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (notification_skeleton));
  g_autofree char *path = application_path (n->app_id);
  g_autoptr(GVariant) params = NULL;
  g_autoptr(GVariant) action_params = NULL;
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("av"));
  if (target)
    g_variant_builder_add (&b, "v", target);
  action_params = g_variant_ref_sink (g_variant_builder_end (&b));
  g_variant_builder_init (&b, G_VARIANT_TYPE ("av"));
  if (target)
    g_variant_builder_add (&b, "v", target);
  g_variant_builder_add (&b, "v", platform_data (activation_token));
  if (reply)
    g_variant_builder_add (&b, "v", g_variant_new_string (reply));
  params = g_variant_ref_sink (g_variant_builder_end (&b));
  if (bus && path && !reply && g_str_has_prefix (action, "app.") && action[4])
    {
      Delivery *d = g_new0 (Delivery, 1);

      d->app_id = g_strdup (n->app_id);
      d->id = g_strdup (n->id);
      d->action = g_strdup (action);
      d->params = g_variant_ref (params);
      g_debug ("Notification %s/%s: activating %s in the app", n->app_id, n->id, action);
      /* The target is the action's parameter: the same av, target only. */
      g_dbus_connection_call (bus, n->app_id, path, "org.freedesktop.Application", "ActivateAction",
                              g_variant_new ("(s@av@a{sv})", action + 4, action_params, platform_data (activation_token)),
                              NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_activate_action_done, d);
      return;
    }
  /* Any other action: the app is raised (or started, if D-Bus can) as it is clicked, and
   * told the action. */
  if (bus && path)
    g_dbus_connection_call (bus, n->app_id, path, "org.freedesktop.Application", "Activate",
                            g_variant_new ("(@a{sv})", platform_data (activation_token)), NULL,
                            G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
  emit_invoked (n->app_id, n->id, action, params);
}

static void
on_action (LimenQtNotification *handle, int button, const char *reply, const char *activation_token,
           void *user_data)
{
  Notification *n = user_data;

  if (button < 0)
    {
      if (n->default_action)
        emit_action (n, n->default_action, n->default_target, NULL, activation_token);
      return;
    }
  if ((guint) button < n->actions->len)
    emit_action (n, g_ptr_array_index (n->actions, button), g_ptr_array_index (n->targets, button), reply,
                 activation_token);
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

/* Icon and sound data go to a private file, since a notification server takes a path. */
static char *
write_private_file (const char *subdir, GBytes *bytes, GError **error)
{
  g_autofree char *dir = g_build_filename (g_get_user_runtime_dir (), "limen", subdir, NULL);
  g_autofree char *name = NULL, *checksum = NULL;
  char *path;
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

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

/* The data of ("bytes", <ay>) or ("file-descriptor", <h>): a regular file (the frontend's
 * sealed memfd) of at most @max bytes, read once. */
static GBytes *
media_data (const char *key, const char *kind, GVariant *value, GUnixFDList *fd_list, gsize max, GError **error)
{
  g_autofd int fd = -1;
  g_autofree guint8 *data = NULL;
  struct stat st;
  gsize done = 0;

  if (g_str_equal (kind, "bytes"))
    return g_variant_get_data_as_bytes (value);
  fd = limen_fd_list_get (fd_list, g_variant_get_handle (value), key, error);
  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size <= 0 || (guint64) st.st_size > max)
    {
      limen_option_set_error (error, key, "the file descriptor is not a file of a fitting size");
      return NULL;
    }
  data = g_try_malloc (st.st_size);
  if (data == NULL)
    {
      limen_option_set_error (error, key, "too large to read now");
      return NULL;
    }
  while (done < (gsize) st.st_size)
    {
      ssize_t n = pread (fd, data + done, st.st_size - done, done);

      if (n <= 0)
        {
          limen_option_set_error (error, key, "the file descriptor could not be read");
          return NULL;
        }
      done += n;
    }
  return g_bytes_new_take (g_steal_pointer (&data), done);
}

/* A themed icon's name (borrowed from @icon), or NULL after writing image data to a
 * private file for the notification server. FALSE: a bad fd (an error for the caller). */
static gboolean
take_icon (Notification *n, GVariant *icon, GUnixFDList *fd_list, const char **name, GError **error)
{
  g_autoptr(GVariant) inner = g_variant_get_variant (icon);
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *kind;

  g_variant_get (inner, "(&sv)", &kind, &data);
  if (g_str_equal (kind, "themed"))
    {
      g_variant_get_child (data, 0, "&s", name);
      /* A name, never a path a server would load (a frontend may pass on what an app gave). */
      if (!limen_notification_name_is_valid (*name))
        {
          g_debug ("Notification icon dropped: not an icon name");
          *name = NULL;
        }
      return TRUE;
    }
  bytes = media_data ("icon", kind, data, fd_list, MAX_ICON_BYTES, error);
  if (bytes == NULL)
    return FALSE;
  n->icon_file = write_private_file ("notification-icons", bytes, &local_error);
  if (!n->icon_file)
    g_warning ("Notification icon dropped: %s", local_error->message);
  return TRUE;
}

/* *@silent for "silent"; sound data is written to a private file. */
static gboolean
take_sound (Notification *n, GVariant *sound, GUnixFDList *fd_list, int *silent, GError **error)
{
  g_autoptr(GVariant) inner = g_variant_get_variant (sound);
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *kind;

  if (g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING))
    {
      *silent = g_str_equal (g_variant_get_string (inner, NULL), "silent");
      return TRUE;
    }
  g_variant_get (inner, "(&sv)", &kind, &data);
  bytes = media_data ("sound", kind, data, fd_list, MAX_SOUND_BYTES, error);
  if (bytes == NULL)
    return FALSE;
  n->sound_file = write_private_file ("notification-sounds", bytes, &local_error);
  if (!n->sound_file)
    g_warning ("Notification sound dropped: %s", local_error->message);
  return TRUE;
}

/* Icon and sound each in a variant of its own, however the frontend passed them on (see
 * validate_impl_media), a plain icon name as a themed icon: the one form read below. */
static GVariant *
boxed_media (GVariant *media)
{
  GVariantBuilder b;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_iter_init (&iter, media);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;
      g_autoptr(GVariant) inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT) ? g_variant_get_variant (value)
                                                                                       : g_variant_ref (value);

      if (g_str_equal (key, "icon") && g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING))
        {
          const char *names[] = { g_variant_get_string (inner, NULL), NULL };

          g_variant_unref (inner);
          inner = g_variant_ref_sink (g_variant_new ("(sv)", "themed", g_variant_new_strv (names, -1)));
        }
      g_variant_builder_add (&b, "{sv}", key, g_variant_new_variant (inner));
    }
  g_variant_unref (g_variant_ref_sink (media));
  return g_variant_builder_end (&b);
}

/* The table's check, the normalised version 2 keys, and the frontend-only media keys. */
static GVariant *
check_notification (GVariant *notification, GError **error)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) media = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) fields = NULL, normal = NULL, extra = NULL;
  GVariantBuilder all;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  if (!limen_options_filter (notification, &filtered, error, limen_options_notification_add_notification, NULL) ||
      !limen_options_filter (notification, &media, error, limen_options_impl_notification_add_notification, NULL))
    return NULL;
  fields = g_variant_ref_sink (g_variant_builder_end (&filtered));
  extra = g_variant_ref_sink (boxed_media (g_variant_builder_end (&media)));
  normal = limen_notification_normalize (fields, TRUE, error);
  if (normal == NULL)
    return NULL;
  g_variant_ref_sink (normal);
  g_variant_builder_init (&all, G_VARIANT_TYPE_VARDICT);
  for (guint i = 0; i < 2; i++)
    {
      g_variant_iter_init (&iter, i ? extra : normal);
      while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
        {
          g_variant_builder_add (&all, "{sv}", key, value);
          g_variant_unref (value);
        }
    }
  return g_variant_ref_sink (g_variant_builder_end (&all));
}

/* Urgency from the priority, raised for categories that must not be missed; a tray-only
 * notification is low (Plasma then keeps it in its history without a popup). */
static int
urgency_of (const char *priority, const char *category, gboolean tray)
{
  int urgency = g_str_equal (priority, "low") ? 0 : g_str_equal (priority, "high") ? 2
              : g_str_equal (priority, "urgent") ? 3 : 1;
  static const char *const critical[] = { "alarm.ringing", "call.incoming", "weather.warning.extreme",
                                          "cellbroadcast.danger.presidential", "cellbroadcast.danger.extreme",
                                          "cellbroadcast.danger.severe", "cellbroadcast.amber-alert", NULL };
  static const char *const high[] = { "os.battery.low", "cellbroadcast.public-safety", NULL };

  if (category && g_strv_contains (critical, category))
    return 3;
  if (category && g_strv_contains (high, category))
    urgency = MAX (urgency, 2);
  if (tray && urgency <= 1)
    urgency = 0;
  return urgency;
}

/* The spec's display and category fields; @opts is checked. */
static void
fill_presentation (LimenQtNotificationSpec *spec, GVariant *opts)
{
  g_autofree const char **hints = NULL;
  const char *priority = "normal", *category = NULL;

  g_variant_lookup (opts, "priority", "&s", &priority);
  g_variant_lookup (opts, "category", "&s", &category);
  if (!g_variant_lookup (opts, "display-hint", "^a&s", &hints))
    hints = g_new0 (const char *, 1);
  spec->category = category;
  spec->transient = g_strv_contains (hints, "transient");
  /* Ringing alarms and incoming calls wait for the person as well. */
  spec->persistent = g_strv_contains (hints, "persistent") ||
                     (category && (g_str_equal (category, "alarm.ringing") || g_str_equal (category, "call.incoming")));
  spec->urgency = urgency_of (priority, category, g_strv_contains (hints, "tray"));
  spec->markup = g_variant_lookup (opts, "markup-body", "&s", &spec->body);
  if (!spec->markup && !g_variant_lookup (opts, "body", "&s", &spec->body))
    spec->body = "";
  if (!g_variant_lookup (opts, "title", "&s", &spec->title))
    spec->title = "";
}

/* Buttons into @n's actions and the spec's labels and purposes (borrowed from @buttons). */
static void
fill_buttons (LimenQtNotificationSpec *spec, Notification *n, GVariant *buttons, GPtrArray *labels,
              GPtrArray *purposes)
{
  spec->reply_button = -1;
  for (gsize i = 0; buttons && i < g_variant_n_children (buttons); i++)
    {
      g_autoptr(GVariant) b = g_variant_get_child_value (buttons, i);
      const char *label = NULL, *action = NULL, *purpose = NULL;

      g_variant_lookup (b, "label", "&s", &label);
      g_variant_lookup (b, "action", "&s", &action);
      g_variant_lookup (b, "purpose", "&s", &purpose);
      g_ptr_array_add (labels, (gpointer) label);
      g_ptr_array_add (purposes, (gpointer) purpose);
      g_ptr_array_add (n->actions, g_strdup (action));
      g_ptr_array_add (n->targets, g_variant_lookup_value (b, "target", NULL));
      /* KNotification has one reply field: the first such button gets it. */
      if (purpose && spec->reply_button < 0 && g_str_equal (purpose, "im.reply-with-text"))
        spec->reply_button = i;
    }
  spec->n_buttons = labels->len;
  spec->button_labels = (const char **) labels->pdata;
  spec->button_purposes = (const char **) purposes->pdata;
}

static Notification *
notification_new (const char *app_id, const char *id, GVariant *opts)
{
  Notification *n = g_new0 (Notification, 1);

  n->key = g_strconcat (app_id, "\n", id, NULL);
  n->app_id = g_strdup (app_id);
  n->id = g_strdup (id);
  n->actions = g_ptr_array_new_with_free_func (g_free);
  n->targets = g_ptr_array_new_with_free_func (maybe_unref);
  g_variant_lookup (opts, "default-action", "s", &n->default_action);
  n->default_target = g_variant_lookup_value (opts, "default-action-target", NULL);
  if (n->default_target && g_variant_is_of_type (n->default_target, G_VARIANT_TYPE_VARIANT))
    {
      GVariant *inner = g_variant_get_variant (n->default_target);

      g_variant_unref (n->default_target);
      n->default_target = inner;
    }
  return n;
}

/* @old takes over what @n holds (actions, targets, files), which then is freed. */
static void
move_into (Notification *old, Notification *n)
{
  if (old->icon_file)
    g_unlink (old->icon_file);
  if (old->sound_file)
    g_unlink (old->sound_file);
  g_free (old->icon_file);
  g_free (old->sound_file);
  g_free (old->default_action);
  g_clear_pointer (&old->default_target, g_variant_unref);
  g_ptr_array_unref (old->actions);
  g_ptr_array_unref (old->targets);
  old->icon_file = g_steal_pointer (&n->icon_file);
  old->sound_file = g_steal_pointer (&n->sound_file);
  old->default_action = g_steal_pointer (&n->default_action);
  old->default_target = g_steal_pointer (&n->default_target);
  old->actions = n->actions;
  old->targets = n->targets;
  n->actions = g_ptr_array_new ();
  n->targets = g_ptr_array_new ();
  notification_free (n);
}

/* The sink for this process (the shim is loaded for the first KNotification). */
static gboolean
get_sink (Sink *sink, GError **error)
{
  const LimenKdeShim *shim;

  if (direct)
    {
      static gsize initialized;

      if (g_once_init_enter (&initialized))
        {
          limen_kde_notify_direct_init (
            g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (notification_skeleton)));
          g_once_init_leave (&initialized, 1);
        }
      *sink = (Sink) { limen_kde_notify_direct_show, limen_kde_notify_direct_update, limen_kde_notify_direct_close };
      return TRUE;
    }
  shim = limen_kde_shim_get (error);
  if (!shim)
    return FALSE;
  *sink = (Sink) { shim->limen_qt_notification_show, shim->limen_qt_notification_update,
                   shim->limen_qt_notification_close };
  return TRUE;
}

/* Reusing an id updates the shown notification in place, as the specification has it;
 * with show-as-new the old one goes first and a new one is shown (its closed callback then
 * finds itself no longer current and leaves the new entry alone). FALSE if it could not
 * be sent (@n is freed). */
static gboolean
show (const Sink *sink, Notification *n, const LimenQtNotificationSpec *spec, gboolean as_new)
{
  Notification *old = g_hash_table_lookup (notifications, n->key);

  if (old && !as_new)
    {
      move_into (old, n);
      sink->update (old->handle, spec);
      return TRUE;
    }
  if (old)
    {
      g_hash_table_steal (notifications, old->key);
      sink->close (old->handle);
    }
  g_hash_table_insert (notifications, n->key, n);
  n->handle = sink->show (spec, on_action, on_closed, n);
  if (!n->handle)
    {
      g_hash_table_steal (notifications, n->key);
      notification_free (n);
      return FALSE;
    }
  return TRUE;
}

/* TRUE when @opts' display-hint has @hint. */
static gboolean
has_hint (GVariant *opts, const char *hint)
{
  g_autofree const char **hints = NULL;

  return g_variant_lookup (opts, "display-hint", "^a&s", &hints) && g_strv_contains (hints, hint);
}

static gboolean
on_add_notification (LimenDbusImplPortalNotification *skeleton,
                     GDBusMethodInvocation           *invocation,
                     GUnixFDList                     *fd_list,
                     const char                      *app_id,
                     const char                      *id,
                     GVariant                        *notification,
                     gpointer                         user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) opts = NULL, icon = NULL, buttons = NULL, sound = NULL;
  g_autoptr(GPtrArray) labels = g_ptr_array_new ();
  g_autoptr(GPtrArray) purposes = g_ptr_array_new ();
  Sink sink;
  LimenQtNotificationSpec spec = { 0 };
  Notification *n;

  if (!limen_kde_check_string_arg ("app_id", app_id, 255, &error) ||
      !limen_kde_check_string_arg ("id", id, 255, &error) ||
      (opts = check_notification (notification, &error)) == NULL)
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
  if (!get_sink (&sink, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  icon = g_variant_lookup_value (opts, "icon", G_VARIANT_TYPE_VARIANT);
  buttons = g_variant_lookup_value (opts, "buttons", G_VARIANT_TYPE ("aa{sv}"));
  sound = g_variant_lookup_value (opts, "sound", G_VARIANT_TYPE_VARIANT);

  n = notification_new (app_id, id, opts);
  fill_buttons (&spec, n, buttons, labels, purposes);
  fill_presentation (&spec, opts);
  if ((icon && !take_icon (n, icon, fd_list, &spec.icon_name, &error)) ||
      (sound && !take_sound (n, sound, fd_list, &spec.suppress_sound, &error)))
    {
      notification_free (n);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  spec.sound_file = n->sound_file;
  spec.app_id = app_id;
  spec.icon_file = n->icon_file;
  spec.has_default_action = n->default_action != NULL;
  if (!show (&sink, n, &spec, has_hint (opts, "show-as-new")))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "The notification could not be sent");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_notification_complete_add_notification (skeleton, invocation, NULL);
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

  Sink sink;

  /* Removing what is not there is not an error: it may have expired. */
  if (n && get_sink (&sink, NULL))
    {
      g_hash_table_steal (notifications, key);
      sink.close (n->handle);
    }
  limen_dbus_impl_portal_notification_complete_remove_notification (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Where KNotification looks for limen.notifyrc (QStandardPaths' GenericDataLocation: the
 * same XDG data dirs GLib reads), or NULL. */
static char *
find_notifyrc (void)
{
  g_autofree char *user = g_build_filename (g_get_user_data_dir (), "knotifications5", "limen.notifyrc", NULL);

  if (g_file_test (user, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer (&user);
  for (const char * const *dir = g_get_system_data_dirs (); *dir; dir++)
    {
      g_autofree char *path = g_build_filename (*dir, "knotifications5", "limen.notifyrc", NULL);

      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer (&path);
    }
  return NULL;
}

GDBusInterfaceSkeleton *
limen_kde_notification_new (void)
{
  g_autofree char *notifyrc = find_notifyrc ();

  /* KNotification drops, without a word, every event of a component it has no .notifyrc
   * for: the app would be told its notification was shown. */
  direct = notifyrc == NULL;
  if (direct)
    g_warning ("limen.notifyrc is in no knotifications5/ folder of the data dirs (%s:%s): notifications go "
               "to org.freedesktop.Notifications directly, without KDE's notification settings",
               g_get_user_data_dir (), g_getenv ("XDG_DATA_DIRS") ? g_getenv ("XDG_DATA_DIRS") : "/usr/local/share:/usr/share");
  else
    g_debug ("Notification events from %s", notifyrc);
  notifications = g_hash_table_new (g_str_hash, g_str_equal);
  notification_skeleton = limen_dbus_impl_portal_notification_skeleton_new ();
  /* Version 2's format (icons and sounds as fds or bytes, markup, hints, categories,
   * purposes): a frontend offers apps min(this, its own). */
  limen_dbus_impl_portal_notification_set_version (notification_skeleton, 2);
  limen_dbus_impl_portal_notification_set_supported_options (notification_skeleton, supported_options ());
  g_signal_connect (notification_skeleton, "handle-add-notification", G_CALLBACK (on_add_notification), NULL);
  g_signal_connect (notification_skeleton, "handle-remove-notification", G_CALLBACK (on_remove_notification), NULL);
  return G_DBUS_INTERFACE_SKELETON (notification_skeleton);
}
