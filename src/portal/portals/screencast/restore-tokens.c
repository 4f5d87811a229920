/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * As the reference does, a persistent token is an entry of the permission store (table
 * "screencast" or "remote-desktop", id = the token) whose only app is the one it was
 * issued to and whose data is the backend's restore data; so tokens survive a restart and
 * are gone when the person resets the app's permissions. Tokens of mode 1 ("as long as the
 * application is running") live only in this process and belong to the connection they were
 * issued to, as in the reference: usable by that connection alone and dropped when it leaves
 * the bus (an app that restarts is asked again). Every way a token can be unusable (not a
 * UUID, unknown, another app's, already used, the store not answering) ends the same way:
 * NULL, nothing told. */
#include "restore-tokens.h"

#include "app-info.h"
#include "permission-store.h"

#define STORE_TIMEOUT_MS 3000
#define RESTORE_DATA_TYPE "(suv)"
#define MAX_RESTORE_DATA 65536

static GDBusConnection *store;
/* Tokens of mode 1 kept at most; past it the oldest lapse (an app looping sessions must not
 * grow this daemon without limit). */
#define MAX_TRANSIENT 256

static GHashTable *transient;   /* "table/token" → (app_id, sender, data) as GVariant (ssv) */
static GQueue transient_order = G_QUEUE_INIT;   /* keys, oldest first (may name used ones) */

/* The tokens of mode 1 issued to @name go with it. */
static void
on_peer_vanished (const char *name, gpointer user_data)
{
  GHashTableIter iter;
  GVariant *entry;

  if (transient == NULL)
    return;
  g_hash_table_iter_init (&iter, transient);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      const char *sender;

      g_variant_get_child (entry, 1, "&s", &sender);
      if (g_str_equal (sender, name))
        g_hash_table_iter_remove (&iter);
    }
}

void
limen_restore_tokens_init (GDBusConnection *connection)
{
  g_set_object (&store, connection);
  limen_app_info_add_vanished_watch (on_peer_vanished, NULL);
}

static GVariant *
take_transient (const char *table, const char *app_id, const char *sender, const char *token)
{
  g_autofree char *key = g_strconcat (table, "/", token, NULL);
  g_autofree char *stored_key = NULL;
  g_autoptr(GVariant) entry = NULL;
  const char *owner, *owner_sender;
  GVariant *data;

  if (transient == NULL ||
      !g_hash_table_steal_extended (transient, key, (gpointer *) &stored_key, (gpointer *) &entry))
    return NULL;
  g_variant_get (entry, "(&s&sv)", &owner, &owner_sender, &data);
  if (!g_str_equal (owner, app_id) || !g_str_equal (owner_sender, sender))
    {
      /* Another app's or connection's token: it stays usable for its owner. */
      g_hash_table_insert (transient, g_steal_pointer (&key), g_steal_pointer (&entry));
      g_variant_unref (data);
      return NULL;
    }
  return data;
}

static GVariant *
take_stored (const char *table, const char *app_id, const char *token)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) data = NULL;
  g_autofree const char **app_perms = NULL;

  if (store == NULL)
    return NULL;
  reply = g_dbus_connection_call_sync (store, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                                       g_variant_new ("(ss)", table, token), G_VARIANT_TYPE ("(a{sas}v)"),
                                       G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, NULL);
  if (reply == NULL)
    return NULL;
  g_variant_get (reply, "(@a{sas}v)", &perms, &data);
  if (!g_variant_lookup (perms, app_id, "^a&s", &app_perms))
    return NULL;
  /* Single use: gone before it is used, whether or not the backend can use it. */
  g_dbus_connection_call (store, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Delete",
                          g_variant_new ("(ss)", table, token), NULL, G_DBUS_CALL_FLAGS_NONE,
                          STORE_TIMEOUT_MS, NULL, NULL, NULL);
  if (!g_variant_is_of_type (data, G_VARIANT_TYPE (RESTORE_DATA_TYPE)))
    return NULL;
  return g_steal_pointer (&data);
}

GVariant *
limen_restore_token_take (const char *table, const char *app_id, const char *sender, const char *token)
{
  GVariant *data;

  if (token == NULL || !g_uuid_string_is_valid (token))
    return NULL;
  data = take_transient (table, app_id, sender, token);
  if (data == NULL)
    data = take_stored (table, app_id, token);
  if (data && !g_variant_is_of_type (data, G_VARIANT_TYPE (RESTORE_DATA_TYPE)))
    g_clear_pointer (&data, g_variant_unref);
  return data;
}

/* The app's row of a kept token: "yes" (all the reference looks for), the devices, and
 * "since:" the time of the grant (seconds since the epoch), which the permissions page shows. */
static GVariant *
token_row (guint32 devices)
{
  static const char *const names[] = { "keyboard", "pointer", "touchscreen" };
  g_autofree char *since = g_strdup_printf ("since:%" G_GINT64_FORMAT, g_get_real_time () / G_USEC_PER_SEC);
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_STRING_ARRAY);
  g_variant_builder_add (&b, "s", "yes");
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (devices & (1u << i))
      g_variant_builder_add (&b, "s", names[i]);
  g_variant_builder_add (&b, "s", since);
  return g_variant_builder_end (&b);
}

char *
limen_restore_token_store (const char *table, const char *app_id, const char *sender, guint32 persist_mode,
                           GVariant *restore_data, guint32 devices)
{
  g_autofree char *token = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  GVariantBuilder perms;

  if (restore_data == NULL || !g_variant_is_of_type (restore_data, G_VARIANT_TYPE (RESTORE_DATA_TYPE)) ||
      g_variant_get_size (restore_data) > MAX_RESTORE_DATA || persist_mode == 0 || persist_mode > 2)
    return NULL;
  token = g_uuid_string_random ();
  if (persist_mode == 1)
    {
      char *key = g_strconcat (table, "/", token, NULL);

      if (transient == NULL)
        transient = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_variant_unref);
      while (g_queue_get_length (&transient_order) >= MAX_TRANSIENT)
        {
          g_autofree char *oldest = g_queue_pop_head (&transient_order);

          g_hash_table_remove (transient, oldest);
        }
      g_queue_push_tail (&transient_order, g_strdup (key));
      g_hash_table_insert (transient, key, g_variant_ref_sink (g_variant_new ("(ssv)", app_id, sender, restore_data)));
      return g_steal_pointer (&token);
    }
  if (store == NULL)
    return NULL;
  g_variant_builder_init (&perms, G_VARIANT_TYPE ("a{sas}"));
  g_variant_builder_add (&perms, "{s@as}", app_id, token_row (devices));
  reply = g_dbus_connection_call_sync (store, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Set",
                                       g_variant_new ("(sbs@a{sas}v)", table, TRUE, token,
                                                      g_variant_builder_end (&perms), restore_data),
                                       NULL, G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, &error);
  if (reply == NULL)
    {
      g_message ("Could not keep a restore token for '%s': %s", app_id, error->message);
      return NULL;
    }
  return g_steal_pointer (&token);
}
