/* Limen — notifications sent to org.freedesktop.Notifications over GDBus, for a limen-kde
 * whose limen.notifyrc is not where KNotification looks (an uninstalled build, a broken
 * package). KNotification drops every event of a component it has no .notifyrc for without
 * a word, and the app would be told its notification was shown; this path shows it.
 *
 * The contract is the shim's limen_qt_notification_show/update/close (limen-qt.h): the
 * same spec, the same action and closed callbacks. What KDE's own path adds is lost here:
 * the sound and popup settings of System Settings' notifications page, markup (the body is
 * sent as plain text, which any server shows as written), and an inline reply field (a
 * plain button, as KNotification does on a server without one).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "notification-direct.h"

#include <glib/gi18n.h>

#include "notification-options.h"

#define NOTIFY_NAME  "org.freedesktop.Notifications"
#define NOTIFY_PATH  "/org/freedesktop/Notifications"
#define NOTIFY_IFACE "org.freedesktop.Notifications"

typedef struct {
  guint32                   id;          /* the server's; 0 until Notify answers */
  guint                     pending;     /* Notify calls not answered yet */
  gboolean                  gone;        /* closed for the caller; freed once nothing is pending */
  LimenQtNotificationAction action;
  LimenQtNotificationClosed closed;
  void                     *user_data;
  char                     *token;       /* ActivationToken for the next action, or NULL */
} Direct;

static GDBusConnection *bus;
static GHashTable *by_id;   /* server id → Direct */

static void
direct_free (Direct *d)
{
  g_free (d->token);
  g_free (d);
}

/* The caller is told once; the entry stays until the last Notify reply is in. */
static void
direct_finish (Direct *d)
{
  if (d->gone)
    return;
  d->gone = TRUE;
  if (d->id)
    g_hash_table_remove (by_id, GUINT_TO_POINTER (d->id));
  d->closed ((LimenQtNotification *) d, d->user_data);
  if (d->pending == 0)
    direct_free (d);
}

static void
on_signal (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
           const char *signal, GVariant *params, gpointer user_data)
{
  guint32 id = 0;
  const char *text = NULL;
  Direct *d;

  if (g_variant_is_of_type (params, G_VARIANT_TYPE ("(us)")))
    g_variant_get (params, "(u&s)", &id, &text);
  else if (g_variant_is_of_type (params, G_VARIANT_TYPE ("(uu)")))
    g_variant_get (params, "(uu)", &id, NULL);
  d = id ? g_hash_table_lookup (by_id, GUINT_TO_POINTER (id)) : NULL;
  if (d == NULL)
    return;
  if (g_str_equal (signal, "ActivationToken") && text)
    {
      g_free (d->token);
      d->token = g_strdup (text);
    }
  else if (g_str_equal (signal, "ActionInvoked") && text)
    {
      g_autofree char *token = g_steal_pointer (&d->token);
      guint64 button;

      if (g_str_equal (text, "default"))
        d->action ((LimenQtNotification *) d, -1, NULL, token, d->user_data);
      else if (g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT, &button, NULL))
        d->action ((LimenQtNotification *) d, (int) button, NULL, token, d->user_data);
    }
  else if (g_str_equal (signal, "NotificationClosed"))
    direct_finish (d);
}

static void
on_notify_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Direct *d = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  guint32 id = 0;

  d->pending--;
  if (reply)
    g_variant_get (reply, "(u)", &id);
  else
    g_warning ("The notification server did not take a notification: %s", error->message);
  if (d->gone)
    {
      /* Withdrawn while Notify was on its way: withdraw it from the server too. */
      if (id)
        g_dbus_connection_call (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "CloseNotification",
                                g_variant_new ("(u)", id), NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
      if (d->pending == 0)
        direct_free (d);
      return;
    }
  if (id == 0)
    {
      if (d->id == 0)
        direct_finish (d);
      return;
    }
  if (d->id != id)
    {
      /* An update sent before the first Notify was answered made a second one: the
       * first goes. */
      if (d->id)
        {
          g_hash_table_remove (by_id, GUINT_TO_POINTER (d->id));
          g_dbus_connection_call (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "CloseNotification",
                                  g_variant_new ("(u)", d->id), NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
        }
      d->id = id;
      g_hash_table_insert (by_id, GUINT_TO_POINTER (id), d);
    }
}

static const char *
button_label (const LimenQtNotificationSpec *spec, gsize i)
{
  if (spec->button_labels[i] && *spec->button_labels[i])
    return spec->button_labels[i];
  if (spec->button_purposes && g_strcmp0 (spec->button_purposes[i], "im.reply-with-text") == 0)
    return C_("@action:button notification button that answers a message", "Reply");
  return C_("@action:button notification button with an app-defined meaning", "Open");
}

/* Notify's arguments for @spec, replacing the server's notification @replaces (0: none). */
static GVariant *
notify_args (const LimenQtNotificationSpec *spec, guint32 replaces)
{
  g_autofree char *body = spec->markup ? limen_notification_markup_to_plain (spec->body) : g_strdup (spec->body);
  const char *icon = spec->icon_name && *spec->icon_name ? spec->icon_name : "";
  GVariantBuilder actions, hints;

  g_variant_builder_init (&actions, G_VARIANT_TYPE_STRING_ARRAY);
  if (spec->has_default_action)
    {
      g_variant_builder_add (&actions, "s", "default");
      g_variant_builder_add (&actions, "s", C_("@action default action of a notification", "Open"));
    }
  for (gsize i = 0; i < spec->n_buttons; i++)
    {
      g_autofree char *key = g_strdup_printf ("%" G_GSIZE_FORMAT, i);

      g_variant_builder_add (&actions, "s", key);
      g_variant_builder_add (&actions, "s", button_label (spec, i));
    }
  g_variant_builder_init (&hints, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&hints, "{sv}", "urgency", g_variant_new_byte (CLAMP (spec->urgency, 0, 2)));
  if (spec->app_id && *spec->app_id)
    g_variant_builder_add (&hints, "{sv}", "desktop-entry", g_variant_new_string (spec->app_id));
  if (spec->category && *spec->category)
    g_variant_builder_add (&hints, "{sv}", "category", g_variant_new_string (spec->category));
  if (spec->transient)
    g_variant_builder_add (&hints, "{sv}", "transient", g_variant_new_boolean (TRUE));
  if (spec->icon_file && *spec->icon_file)
    g_variant_builder_add (&hints, "{sv}", "image-path", g_variant_new_string (spec->icon_file));
  if (spec->suppress_sound)
    g_variant_builder_add (&hints, "{sv}", "suppress-sound", g_variant_new_boolean (TRUE));
  else if (spec->sound_file && *spec->sound_file)
    g_variant_builder_add (&hints, "{sv}", "sound-file", g_variant_new_string (spec->sound_file));
  return g_variant_new ("(susssasa{sv}i)", "Limen", replaces, icon, spec->title, body, &actions, &hints,
                        spec->persistent ? 0 : -1);
}

static void
send_notify (Direct *d, const LimenQtNotificationSpec *spec)
{
  d->pending++;
  g_dbus_connection_call (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "Notify", notify_args (spec, d->id),
                          G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_notify_done, d);
}

void
limen_kde_notify_direct_init (GDBusConnection *connection)
{
  static const char *const signals[] = { "ActionInvoked", "NotificationClosed", "ActivationToken" };

  g_return_if_fail (bus == NULL);
  bus = g_object_ref (connection);
  by_id = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    g_dbus_connection_signal_subscribe (bus, NOTIFY_NAME, NOTIFY_IFACE, signals[i], NOTIFY_PATH, NULL,
                                        G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL, NULL);
}

LimenQtNotification *
limen_kde_notify_direct_show (const LimenQtNotificationSpec *spec, LimenQtNotificationAction action,
                              LimenQtNotificationClosed closed, void *user_data)
{
  Direct *d;

  if (bus == NULL)
    return NULL;
  d = g_new0 (Direct, 1);
  d->action = action;
  d->closed = closed;
  d->user_data = user_data;
  send_notify (d, spec);
  return (LimenQtNotification *) d;
}

void
limen_kde_notify_direct_update (LimenQtNotification *handle, const LimenQtNotificationSpec *spec)
{
  Direct *d = (Direct *) handle;

  if (d && !d->gone)
    send_notify (d, spec);
}

void
limen_kde_notify_direct_close (LimenQtNotification *handle)
{
  Direct *d = (Direct *) handle;

  if (d == NULL || d->gone)
    return;
  if (d->id)
    g_dbus_connection_call (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "CloseNotification",
                            g_variant_new ("(u)", d->id), NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
  direct_finish (d);
}
