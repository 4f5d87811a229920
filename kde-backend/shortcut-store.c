/* Limen — what an app holds of global shortcuts, kept in the permission store.
 *
 * Table "global-shortcuts", one entry per app (id = the app id). The app's row lists the ids
 * of the shortcuts the person refused (never asked again) and ends with an empty word, which
 * keeps the row when nothing is refused: both stores drop a row without words, and an empty
 * id is no valid shortcut id. The entry's data, a{sv} with "shortcuts" → a(sss) (id,
 * description, keys in Qt's portable text), names what kglobalaccel holds for the app, so the
 * permissions page can show the keys without talking to kglobalaccel.
 *
 * The row taken away — the permissions page, limen-permissions, flatpak permission-reset, a
 * raw Delete — is a revocation: global-shortcuts.c ends the app's sessions and has
 * kglobalaccel forget its keys; a refused id added by someone else unbinds that shortcut.
 * A bind that finds the entry without the app's row asks the person again, whatever keys
 * kglobalaccel kept, so a revocation made while limen-kde was not running counts too (a
 * DeletePermission keeps the entry; a raw Delete does not, and counts only while limen-kde
 * runs: no entry at all is how shortcuts bound before this record look).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shortcut-store.h"

#include "kglobalaccel.h"
#include "permission-store.h"
#include "shortcut-keys.h"

#define STORE_TIMEOUT_MS 5000
/* Shortcuts recorded for one app at most: the data stays small whatever an app proposes. */
#define MAX_RECORDED 256

GHashTable *
limen_kde_shortcut_store_refused (GVariant *reply, const char *app_id, gboolean *has_row)
{
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **ids = NULL;

  if (reply)
    perms = g_variant_get_child_value (reply, 0);
  ids = limen_permission_row (perms, app_id);
  for (guint i = 0; ids && ids[i]; i++)
    if (*ids[i])
      g_hash_table_add (set, g_strdup (ids[i]));
  if (has_row)
    *has_row = ids != NULL;
  return set;
}

void
limen_kde_shortcut_store_lookup (GDBusConnection *connection, const char *app_id, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_dbus_connection_call (connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", LIMEN_KDE_SHORTCUT_TABLE, app_id), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, cancellable, callback, user_data);
}

typedef struct {
  char       *app_id;
  GStrv       refused;
  GVariant   *descriptions;   /* a{ss} */
  GVariant   *held;           /* a(sss), once kglobalaccel answered */
} Record;

static void
record_free (Record *r)
{
  g_free (r->app_id);
  g_strfreev (r->refused);
  g_variant_unref (r->descriptions);
  g_clear_pointer (&r->held, g_variant_unref);
  g_free (r);
}

/* The stored description of each shortcut id in the entry's data (a{sv}, "shortcuts"). */
static GHashTable *
stored_descriptions (GVariant *data)
{
  GHashTable *out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GVariant) list = NULL;
  GVariantIter iter;
  const char *id, *description;

  if (data && g_variant_is_of_type (data, G_VARIANT_TYPE_VARDICT))
    list = g_variant_lookup_value (data, "shortcuts", G_VARIANT_TYPE ("a(sss)"));
  if (list == NULL)
    return out;
  g_variant_iter_init (&iter, list);
  while (g_variant_iter_next (&iter, "(&s&s&s)", &id, &description, NULL))
    g_hash_table_replace (out, g_strdup (id), g_strdup (description));
  return out;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

/* The keys of @table (borrowed), sorted. */
static GPtrArray *
sorted_keys (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (keys, key);
  g_ptr_array_sort (keys, compare_strings);
  return keys;
}

/* The app's words: what it refused, the empty word last. */
static GVariant *
row_words (GHashTable *refused)
{
  g_autoptr(GPtrArray) ids = sorted_keys (refused);
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_STRING_ARRAY);
  for (guint i = 0; i < ids->len; i++)
    g_variant_builder_add (&b, "s", g_ptr_array_index (ids, i));
  g_variant_builder_add (&b, "s", "");
  return g_variant_builder_end (&b);
}

/* The data: @held, with the stored description where it has none. */
static GVariant *
entry_data (GVariant *held, GVariant *old_data)
{
  g_autoptr(GHashTable) described = stored_descriptions (old_data);
  GVariantBuilder list, data;
  GVariantIter iter;
  const char *id, *description, *keys;
  guint n = 0;

  g_variant_builder_init (&list, G_VARIANT_TYPE ("a(sss)"));
  g_variant_iter_init (&iter, held);
  while (n < MAX_RECORDED && g_variant_iter_next (&iter, "(&s&s&s)", &id, &description, &keys))
    {
      const char *old = g_hash_table_lookup (described, id);

      g_variant_builder_add (&list, "(sss)", id, *description || !old ? description : old, keys);
      n++;
    }
  g_variant_builder_init (&data, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&data, "{sv}", "shortcuts", g_variant_builder_end (&list));
  return g_variant_builder_end (&data);
}

static void
on_recorded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* The entry as it is: merge and write it back, other apps' rows (if any) kept. */
static void
on_entry_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  Record *r = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) old_data = NULL;
  g_autoptr(GVariant) old_row = NULL;
  g_autoptr(GVariant) row = NULL;
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GHashTable) refused = NULL;
  GVariantBuilder perms;
  GVariantIter iter;
  const char *app, *id;
  GVariant *words;
  gboolean has_row;

  if (!reply && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* NotFound: a first entry. Any other failure: write what this change knows. */
  refused = limen_kde_shortcut_store_refused (reply, r->app_id, &has_row);
  for (guint i = 0; r->refused[i]; i++)
    g_hash_table_add (refused, g_strdup (r->refused[i]));
  g_variant_iter_init (&iter, r->held);
  while (g_variant_iter_next (&iter, "(&s&s&s)", &id, NULL, NULL))
    g_hash_table_remove (refused, id);
  if (!has_row && g_hash_table_size (refused) == 0 && g_variant_n_children (r->held) == 0)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  g_variant_builder_init (&perms, G_VARIANT_TYPE ("a{sas}"));
  if (reply)
    {
      g_autoptr(GVariant) old_perms = g_variant_get_child_value (reply, 0);

      g_variant_get_child (reply, 1, "v", &old_data);
      old_row = g_variant_lookup_value (old_perms, r->app_id, G_VARIANT_TYPE_STRING_ARRAY);
      g_variant_iter_init (&iter, old_perms);
      while (g_variant_iter_next (&iter, "{&s@as}", &app, &words))
        {
          if (!g_str_equal (app, r->app_id))
            g_variant_builder_add (&perms, "{s@as}", app, words);
          g_variant_unref (words);
        }
    }
  row = g_variant_ref_sink (row_words (refused));
  data = g_variant_ref_sink (entry_data (r->held, old_data));
  /* An app binding the same shortcuts at each start changes nothing: no write, no Changed
   * for every watcher (the frontend, an open permissions page). */
  if (old_row && old_data && g_variant_equal (old_row, row) && g_variant_equal (old_data, data))
    {
      g_variant_builder_clear (&perms);
      g_task_return_boolean (task, TRUE);
      return;
    }
  g_variant_builder_add (&perms, "{s@as}", r->app_id, row);
  g_dbus_connection_call (G_DBUS_CONNECTION (source), LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Set",
                          g_variant_new ("(sbs@a{sas}v)", LIMEN_KDE_SHORTCUT_TABLE, TRUE, r->app_id,
                                         g_variant_builder_end (&perms), data),
                          NULL, G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, g_task_get_cancellable (task), on_recorded,
                          g_object_ref (task));
}

/* What kglobalaccel holds for the component, as (id, description, keys) sorted by id. */
static GVariant *
held_from_known (GHashTable *known, GVariant *descriptions)
{
  g_autoptr(GPtrArray) ids = sorted_keys (known);
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(sss)"));
  for (guint i = 0; i < ids->len; i++)
    {
      const char *id = g_ptr_array_index (ids, i), *description = "";
      GArray *keys = g_hash_table_lookup (known, id);
      g_autofree char *text = limen_kde_shortcut_describe_portable ((const int *) keys->data, keys->len);

      g_variant_lookup (descriptions, id, "&s", &description);
      g_variant_builder_add (&b, "(sss)", id, description, text);
    }
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static void
on_known (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  Record *r = g_task_get_task_data (task);
  GError *error = NULL;
  g_autoptr(GHashTable) known = limen_kde_accel_list_finish (result, &error);
  GDBusConnection *connection = g_task_get_source_object (task);

  if (!known)
    {
      g_task_return_error (task, error);
      return;
    }
  r->held = held_from_known (known, r->descriptions);
  limen_kde_shortcut_store_lookup (connection, r->app_id, g_task_get_cancellable (task), on_entry_read,
                                   g_object_ref (task));
}

void
limen_kde_shortcut_store_record_async (GDBusConnection *connection, const char *app_id, const char *component,
                                       const char *const *refused, GVariant *descriptions,
                                       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (connection, cancellable, callback, user_data);
  Record *r = g_new0 (Record, 1);

  r->app_id = g_strdup (app_id);
  r->refused = g_strdupv ((char **) refused);
  r->descriptions = g_variant_ref_sink (descriptions);
  g_task_set_task_data (task, r, (GDestroyNotify) record_free);
  /* Asked after this change's binds and unregistrations, on the same connection: its answer
   * has them. */
  limen_kde_accel_list_async (component, cancellable, on_known, task);
}

gboolean
limen_kde_shortcut_store_record_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

typedef struct {
  LimenKdeShortcutStoreFunc func;
  gpointer                  user_data;
} Watch;

/* The entry of an app is its own: only the row named like the entry counts. */
static void
on_changed (const char *table, const char *id, GVariant *perms, gpointer user_data)
{
  Watch *w = user_data;
  g_autofree const char **row = limen_permission_row (perms, id);
  g_autoptr(GPtrArray) refused = g_ptr_array_new ();

  if (row == NULL)
    {
      w->func (id, NULL, w->user_data);
      return;
    }
  for (guint i = 0; row[i]; i++)
    if (*row[i])
      g_ptr_array_add (refused, (gpointer) row[i]);
  g_ptr_array_add (refused, NULL);
  w->func (id, (const char *const *) refused->pdata, w->user_data);
}

void
limen_kde_shortcut_store_watch (GDBusConnection *connection, LimenKdeShortcutStoreFunc func, gpointer user_data)
{
  Watch *w = g_new0 (Watch, 1);

  w->func = func;
  w->user_data = user_data;
  limen_permission_store_watch (connection, LIMEN_KDE_SHORTCUT_TABLE, on_changed, w);
}
