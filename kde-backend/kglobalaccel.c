/* Limen — KDE's global shortcut daemon over GDBus (no KGlobalAccel C++, no Qt).
 *
 * kglobalaccel keeps every component's shortcuts in kglobalshortcutsrc, shows them in System
 * Settings under the component's friendly name, grabs the keys of the actions that are
 * "present", and tells each component's object when one is pressed or released. An action
 * is registered with doRegister and made present with setShortcutKeys; setInactive releases
 * the grab when its owner goes, while the keys stay saved for next time.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kglobalaccel.h"

#include "errors.h"

#define ACCEL_NAME "org.kde.kglobalaccel"
#define ACCEL_PATH "/kglobalaccel"
#define ACCEL_IFACE "org.kde.KGlobalAccel"
#define COMPONENT_IFACE "org.kde.kglobalaccel.Component"
/* The daemon may be started by the first call (D-Bus activation): give it time, not forever. */
#define ACCEL_TIMEOUT_MS 8000

/* setShortcutKeys flags (KGlobalAccel's SetShortcutFlag). */
#define FLAG_SET_PRESENT 2
#define FLAG_NO_AUTOLOADING 4

/* KGlobalAccel marshals a key sequence as a struct of four chords. */
#define CHORDS 4

static GDBusConnection *accel_connection;
static LimenKdeAccelListener accel_listener;
static gpointer accel_user_data;
static gboolean accel_seen;

static GVariant *
action_id (const LimenKdeAccelAction *action)
{
  const char *id[] = { action->component, action->action, action->component_name, action->action_name, NULL };

  return g_variant_new_strv (id, -1);
}

/* The first chord of each sequence of an a(ai) value. */
static GArray *
keys_from_sequences (GVariant *sequences)
{
  GArray *keys = g_array_new (FALSE, FALSE, sizeof (int));
  GVariantIter iter;
  GVariant *chords;

  g_variant_iter_init (&iter, sequences);
  while (g_variant_iter_next (&iter, "(@ai)", &chords))
    {
      gsize n = 0;
      const gint32 *c = g_variant_get_fixed_array (chords, &n, sizeof (gint32));

      if (n > 0 && c[0] != 0)
        g_array_append_val (keys, c[0]);
      g_variant_unref (chords);
    }
  return keys;
}

static GVariant *
sequences_from_keys (const int *keys, gsize n_keys)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ai)"));
  for (gsize i = 0; i < n_keys; i++)
    {
      gint32 chords[CHORDS] = { keys[i], 0, 0, 0 };

      if (keys[i] == 0)
        continue;
      g_variant_builder_add (&b, "(@ai)",
                             g_variant_new_fixed_array (G_VARIANT_TYPE_INT32, chords, CHORDS, sizeof (gint32)));
    }
  return g_variant_builder_end (&b);
}

/* Daemon errors become Error.Failed naming the service: the portal's callers know no kglobalaccel. */
static void
return_accel_error (GTask *task, GError *error)
{
  g_dbus_error_strip_remote_error (error);
  g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                           "KDE's global shortcut service (kglobalaccel) failed: %s", error->message);
  g_error_free (error);
}

typedef struct {
  GVariant *id;         /* as, floating refs sunk */
  GVariant *sequences;  /* a(ai) */
  guint     flags;
} BindData;

static void
bind_data_free (BindData *d)
{
  g_variant_unref (d->id);
  g_variant_unref (d->sequences);
  g_free (d);
}

static void
on_set_keys (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) sequences = NULL;
  GError *error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (!reply)
    {
      return_accel_error (task, error);
      return;
    }
  g_variant_get (reply, "(@a(ai))", &sequences);
  g_task_return_pointer (task, keys_from_sequences (sequences), (GDestroyNotify) g_array_unref);
}

static void
on_registered (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GVariant) reply = NULL;
  BindData *d = g_task_get_task_data (task);
  GError *error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (!reply)
    {
      return_accel_error (task, error);
      return;
    }
  g_dbus_connection_call (accel_connection, ACCEL_NAME, ACCEL_PATH, ACCEL_IFACE, "setShortcutKeys",
                          g_variant_new ("(@as@a(ai)u)", d->id, d->sequences, d->flags),
                          G_VARIANT_TYPE ("(a(ai))"), G_DBUS_CALL_FLAGS_NONE, ACCEL_TIMEOUT_MS,
                          g_task_get_cancellable (task), on_set_keys, g_object_ref (task));
}

void
limen_kde_accel_bind_async (const LimenKdeAccelAction *action, const int *keys, gsize n_keys,
                            gboolean keep_saved, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  BindData *d = g_new0 (BindData, 1);

  g_task_set_source_tag (task, limen_kde_accel_bind_async);
  d->id = g_variant_ref_sink (action_id (action));
  d->sequences = g_variant_ref_sink (sequences_from_keys (keys, n_keys));
  d->flags = FLAG_SET_PRESENT | (keep_saved ? 0 : FLAG_NO_AUTOLOADING);
  g_task_set_task_data (task, d, (GDestroyNotify) bind_data_free);
  if (!accel_connection)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Not connected to the session bus");
      return;
    }
  g_dbus_connection_call (accel_connection, ACCEL_NAME, ACCEL_PATH, ACCEL_IFACE, "doRegister",
                          g_variant_new ("(@as)", d->id), NULL, G_DBUS_CALL_FLAGS_NONE, ACCEL_TIMEOUT_MS,
                          cancellable, on_registered, g_steal_pointer (&task));
}

GArray *
limen_kde_accel_bind_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
on_infos (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) infos = NULL;
  GHashTable *known;
  GError *error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (!reply)
    {
      return_accel_error (task, error);
      return;
    }
  known = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  infos = g_variant_get_child_value (reply, 0);
  for (gsize i = 0; i < g_variant_n_children (infos); i++)
    {
      g_autoptr(GVariant) keys_v = NULL;
      const char *action;
      const gint32 *keys;
      gsize n = 0;
      GArray *keys_a = g_array_new (FALSE, FALSE, sizeof (int));

      g_variant_get_child (infos, i, "(&ssssss@aiai)", &action, NULL, NULL, NULL, NULL, NULL, &keys_v, NULL);
      keys = g_variant_get_fixed_array (keys_v, &n, sizeof (gint32));
      for (gsize k = 0; k < n; k++)
        if (keys[k] != 0)
          g_array_append_val (keys_a, keys[k]);
      g_hash_table_replace (known, g_strdup (action), keys_a);
    }
  g_task_return_pointer (task, known, (GDestroyNotify) g_hash_table_unref);
}

static void
on_component (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GVariant) reply = NULL;
  const char *path;
  GError *error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (!reply)
    {
      g_autofree char *remote = g_dbus_error_get_remote_error (error);

      /* A component the daemon never saw: nothing is known about it. */
      if (g_strcmp0 (remote, "org.kde.kglobalaccel.NoSuchComponent") == 0)
        {
          g_error_free (error);
          g_task_return_pointer (task, g_hash_table_new (g_str_hash, g_str_equal),
                                 (GDestroyNotify) g_hash_table_unref);
        }
      else
        return_accel_error (task, error);
      return;
    }
  g_variant_get (reply, "(&o)", &path);
  g_dbus_connection_call (accel_connection, ACCEL_NAME, path, COMPONENT_IFACE, "allShortcutInfos", NULL,
                          G_VARIANT_TYPE ("(a(ssssssaiai))"), G_DBUS_CALL_FLAGS_NONE, ACCEL_TIMEOUT_MS,
                          g_task_get_cancellable (task), on_infos, g_object_ref (task));
}

void
limen_kde_accel_list_async (const char *component, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, limen_kde_accel_list_async);
  if (!accel_connection)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Not connected to the session bus");
      g_object_unref (task);
      return;
    }
  g_dbus_connection_call (accel_connection, ACCEL_NAME, ACCEL_PATH, ACCEL_IFACE, "getComponent",
                          g_variant_new ("(s)", component), G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NONE,
                          ACCEL_TIMEOUT_MS, cancellable, on_component, task);
}

GHashTable *
limen_kde_accel_list_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
on_call_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (!reply)
    g_debug ("kglobalaccel %s: %s", (const char *) user_data, error->message);
}

void
limen_kde_accel_set_inactive (const LimenKdeAccelAction *action)
{
  if (!accel_connection)
    return;
  /* Never start the daemon just to release a grab it does not hold. */
  g_dbus_connection_call (accel_connection, ACCEL_NAME, ACCEL_PATH, ACCEL_IFACE, "setInactive",
                          g_variant_new ("(@as)", action_id (action)), NULL,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, ACCEL_TIMEOUT_MS, NULL, on_call_done,
                          "setInactive");
}

void
limen_kde_accel_unregister (const char *component, const char *action)
{
  if (!accel_connection)
    return;
  g_dbus_connection_call (accel_connection, ACCEL_NAME, ACCEL_PATH, ACCEL_IFACE, "unregister",
                          g_variant_new ("(ss)", component, action), G_VARIANT_TYPE ("(b)"),
                          G_DBUS_CALL_FLAGS_NONE, ACCEL_TIMEOUT_MS, NULL, on_call_done, "unregister");
}

static void
on_forget_listed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree char *component = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) known = limen_kde_accel_list_finish (result, &error);
  GHashTableIter iter;
  gpointer action;

  if (!known)
    {
      g_warning ("Shortcuts of %s not taken from kglobalaccel: %s", component, error->message);
      return;
    }
  g_hash_table_iter_init (&iter, known);
  while (g_hash_table_iter_next (&iter, &action, NULL))
    limen_kde_accel_unregister (component, action);
  g_debug ("%u shortcuts of %s forgotten", g_hash_table_size (known), component);
}

void
limen_kde_accel_forget_component (const char *component)
{
  limen_kde_accel_list_async (component, NULL, on_forget_listed, g_strdup (component));
}

static void
on_key_signal (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
               const char *signal, GVariant *params, gpointer user_data)
{
  const char *component, *action;
  gint64 timestamp;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(ssx)")))
    return;
  g_variant_get (params, "(&s&sx)", &component, &action, &timestamp);
  accel_listener.key (component, action, timestamp, g_str_equal (signal, "globalShortcutPressed"),
                      accel_user_data);
}

static void
on_changed_signal (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                   const char *signal, GVariant *params, gpointer user_data)
{
  g_autoptr(GVariant) id = NULL;
  g_autoptr(GVariant) sequences = NULL;
  g_autoptr(GArray) keys = NULL;
  g_autofree const char **parts = NULL;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(asa(ai))")))
    return;
  g_variant_get (params, "(@as@a(ai))", &id, &sequences);
  parts = g_variant_get_strv (id, NULL);
  if (g_strv_length ((char **) parts) < 2)
    return;
  keys = keys_from_sequences (sequences);
  accel_listener.changed (parts[0], parts[1], (const int *) keys->data, keys->len, accel_user_data);
}

static void
on_name_appeared (GDBusConnection *connection, const char *name, const char *owner, gpointer user_data)
{
  /* The first appearance is the one every session already registered with. */
  if (accel_seen)
    accel_listener.appeared (accel_user_data);
  accel_seen = TRUE;
}

static void
on_name_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  if (accel_seen)
    g_message ("kglobalaccel left the bus; global shortcuts are bound again when it returns");
}

void
limen_kde_accel_init (GDBusConnection *connection, const LimenKdeAccelListener *listener, gpointer user_data)
{
  if (accel_connection)
    return;
  accel_connection = g_object_ref (connection);
  accel_listener = *listener;
  accel_user_data = user_data;
  g_dbus_connection_signal_subscribe (connection, ACCEL_NAME, COMPONENT_IFACE, "globalShortcutPressed", NULL,
                                      NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_key_signal, NULL, NULL);
  g_dbus_connection_signal_subscribe (connection, ACCEL_NAME, COMPONENT_IFACE, "globalShortcutReleased", NULL,
                                      NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_key_signal, NULL, NULL);
  g_dbus_connection_signal_subscribe (connection, ACCEL_NAME, ACCEL_IFACE, "yourShortcutsChanged", ACCEL_PATH,
                                      NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_changed_signal, NULL, NULL);
  g_bus_watch_name_on_connection (connection, ACCEL_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE, on_name_appeared,
                                  on_name_vanished, NULL, NULL);
}
