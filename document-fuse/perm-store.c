/* limen-documents — org.freedesktop.impl.portal.PermissionStore (version 2).
 *
 * The model lives in memory (main thread only) and every change is written through to
 * SQLite inside one transaction before the reply, so a crash never loses an answered
 * write. Each entry caches its a{sas} so Lookup of an entry with 20,000 apps costs one
 * reference, and Set is linear in its input.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perm-store-private.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "app-info.h"
#include "import.h"
#include "errors.h"
#include "limen-dbus.h"

GVariant *
limen_perm_empty_data (void)
{
  return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
}

void
limen_perm_entry_free (PermEntry *entry)
{
  g_clear_pointer (&entry->data, g_variant_unref);
  g_clear_pointer (&entry->apps, g_hash_table_unref);
  g_clear_pointer (&entry->perms_cache, g_variant_unref);
  g_free (entry);
}

/* The app → permissions table, built from the a{sas} on first use: Set and Lookup of a
 * big entry never need it, GetPermission/SetPermission and sandboxed reads do. */
GHashTable *
limen_perm_entry_apps (PermEntry *entry)
{
  if (entry->apps == NULL)
    {
      GVariantIter iter;
      const char *app;
      char **strv;

      entry->apps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_strfreev);
      g_variant_iter_init (&iter, entry->perms_cache);
      while (g_variant_iter_next (&iter, "{&s^as}", &app, &strv))
        g_hash_table_replace (entry->apps, g_strdup (app), strv);
    }
  return entry->apps;
}

GVariant *
limen_perm_entry_get_perms (PermEntry *entry)
{
  return entry->perms_cache;
}

/* Read from SQLite at each call: nothing of an entry stays in memory between calls, so the
 * store starts at once and its size does not grow with the entries (a prepared statement
 * on the primary key costs a few microseconds). */
PermEntry *
limen_perm_store_read (LimenPermStore *store, const char *table, const char *id, gboolean with_perms)
{
  g_autoptr(GError) error = NULL;
  GVariant *data, *perms = NULL;
  GVariant **want = with_perms ? &perms : NULL;
  PermEntry *entry;
  gboolean found = limen_db_perm_get_entry (store->db, table, id, &data, want, &error);

  if (!found && error == NULL && store->import)
    {
      limen_import_job_ensure (store->import, table, id, NULL);
      found = limen_db_perm_get_entry (store->db, table, id, &data, want, &error);
    }
  if (!found)
    {
      if (error)
        g_warning ("Cannot read %s/%s: %s", table, id, error->message);
      return NULL;
    }
  entry = g_new0 (PermEntry, 1);
  entry->data = data ? data : limen_perm_empty_data ();
  entry->perms_cache = perms;
  return entry;
}

PermEntry *
limen_perm_store_entry (LimenPermStore *store, const char *table, const char *id)
{
  return limen_perm_store_read (store, table, id, TRUE);
}

/* A GDBus tree of 20,000 apps is ~80,000 nodes, ~10 ms to free: not on the main thread,
 * where the next request waits. */
static void
unref_value (gpointer value, gpointer unused)
{
  g_variant_unref (value);
}

static void
drop_value (LimenPermStore *store, GVariant *value)
{
  if (g_variant_n_children (value) < 1000)
    {
      g_variant_unref (value);
      return;
    }
  if (store->dropper == NULL)
    store->dropper = g_thread_pool_new (unref_value, NULL, 1, FALSE, NULL);
  g_thread_pool_push (store->dropper, value, NULL);
}

typedef struct {
  LimenPermStore *store;
  char           *table, *id;
  gboolean        deleted;
  GVariant       *data, *perms;
} PendingChanged;

/* Changed goes out after the method's reply (an idle keeps the order of changes):
 * serializing 20,000 apps once more must not delay the writer's answer. */
static gboolean
emit_changed_cb (gpointer user_data)
{
  PendingChanged *p = user_data;

  if (p->store->skeleton)
    limen_dbus_impl_portal_permission_store_emit_changed (p->store->skeleton, p->table, p->id, p->deleted,
                                                          g_variant_new_variant (p->data), p->perms);
  g_free (p->table);
  g_free (p->id);
  g_variant_unref (p->data);
  drop_value (p->store, p->perms);
  g_free (p);
  return G_SOURCE_REMOVE;
}

/* Changed for (@table, @id) with @data and @perms (new references, taken). */
void
limen_perm_store_emit_changed_values (LimenPermStore *store, const char *table, const char *id,
                                      gboolean deleted, GVariant *data, GVariant *perms)
{
  PendingChanged *p;

  p = g_new0 (PendingChanged, 1);
  p->store = store;
  p->table = g_strdup (table);
  p->id = g_strdup (id);
  p->deleted = deleted;
  p->data = data;
  p->perms = perms;
  g_idle_add_full (G_PRIORITY_DEFAULT, emit_changed_cb, p, NULL);
}

static GVariant *
empty_perms (void)
{
  return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sas}"), NULL, 0));
}

/* @perms: the entry's permissions as they came in, when the caller has them (GDBus writes
 * its own tree out fastest), else NULL for the entry's. */
void
limen_perm_store_emit_changed (LimenPermStore *store, const char *table, const char *id, gboolean deleted,
                               PermEntry *entry, GVariant *perms_in)
{
  if (store->skeleton == NULL)
    return;
  if (entry)
    limen_perm_store_emit_changed_values (store, table, id, deleted, g_variant_ref (entry->data),
                                          g_variant_ref (perms_in ? perms_in : limen_perm_entry_get_perms (entry)));
  else
    limen_perm_store_emit_changed_values (store, table, id, deleted, limen_perm_empty_data (), empty_perms ());
}

/* @apps as a{sas}, with @app set to @perms (or removed for NULL) on the way. */
GVariant *
limen_perm_perms_variant_with (GHashTable *apps, const char *app, const char * const *perms)
{
  GVariantBuilder b;
  GHashTableIter iter;
  gpointer key, value;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
  if (apps)
    {
      g_hash_table_iter_init (&iter, apps);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (app == NULL || strcmp (key, app) != 0)
          g_variant_builder_add (&b, "{s^as}", key, value);
    }
  if (app && perms)
    g_variant_builder_add (&b, "{s^as}", app, perms);
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

LimenPermStore *
limen_perm_store_new (LimenDb *db, GError **error)
{
  LimenPermStore *store = g_new0 (LimenPermStore, 1);

  store->db = db;
  return store;
}

void
limen_perm_store_set_import (LimenPermStore *store, LimenImportJob *job)
{
  store->import = job;
}

void
limen_perm_store_free (LimenPermStore *store)
{
  if (store->skeleton)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (store->skeleton));
  g_clear_object (&store->skeleton);
  if (store->dropper)
    g_thread_pool_free (store->dropper, FALSE, TRUE);
  g_free (store);
}

/* ---- writes (host only) ------------------------------------------------------------- */

/* Write the whole of (table, id) as given: data (NULL keeps the old data) and, when
 * @apps is not NULL, exactly those app rows. */
/* @apps without the apps given no permission at all: as in the reference, an empty list
 * is no row (a new reference; @apps itself when every app has some). */
static GVariant *
apps_with_permissions (GVariant *apps)
{
  GVariantIter iter;
  GVariantBuilder b;
  const char *app;
  GVariant *perms;
  gsize n = g_variant_n_children (apps), i;

  for (i = 0; i < n; i++)
    {
      g_autoptr(GVariant) row = g_variant_get_child_value (apps, i);
      g_autoptr(GVariant) list = g_variant_get_child_value (row, 1);

      if (g_variant_n_children (list) == 0)
        break;
    }
  if (i == n)
    return g_variant_ref (apps);
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
  g_variant_iter_init (&iter, apps);
  while (g_variant_iter_next (&iter, "{&s@as}", &app, &perms))
    {
      if (g_variant_n_children (perms) > 0)
        g_variant_builder_add (&b, "{s@as}", app, perms);
      g_variant_unref (perms);
    }
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static PermEntry *
perm_entry_new (void)
{
  PermEntry *entry = g_new0 (PermEntry, 1);

  entry->data = limen_perm_empty_data ();
  entry->perms_cache = empty_perms ();
  return entry;
}

/* The first entry of a table (before it is written): the flatpak CLI finds tables by their
 * files, so the table gets one. */
static void
note_new_entry (LimenPermStore *store, const char *table)
{
  if (store->skeleton && !limen_db_perm_has_table (store->db, table))
    limen_perm_publish_table (table);
}

/* @quiet: no Changed (the import: the entry was there before, read lazily; a signal for each
 * of 100,000 entries would tell every listener of changes that did not happen). */
static gboolean
store_set (LimenPermStore *store, const char *table, const char *id, gboolean create, GVariant *data,
           GVariant *apps_in, gboolean quiet, GError **error)
{
  /* Its rights are read only when they are kept (SetValue). */
  g_autoptr(PermEntry) entry = limen_perm_store_read (store, table, id, apps_in == NULL);
  gboolean is_new = (entry == NULL);
  g_autoptr(GVariant) empty = NULL;
  g_autoptr(GVariant) apps = apps_in ? apps_with_permissions (apps_in) : NULL;
  g_autoptr(GBytes) bytes = NULL;

  if (is_new && !create)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No entry for %s in table %s", id, table);
      return FALSE;
    }
  /* Checked and serialized in one walk (every row as given, empty ones too); the app
   * table is built when something needs it. */
  if (apps)
    {
      bytes = limen_perm_serialize_app_perms (apps_in, error);
      if (bytes && apps != apps_in)
        {
          g_bytes_unref (bytes);
          bytes = limen_perm_serialize_app_perms (apps, error);
        }
    }
  else
    bytes = limen_perm_serialize_app_perms (entry ? limen_perm_entry_get_perms (entry)
                                                  : (empty = limen_perm_perms_variant_with (NULL, NULL, NULL)), error);
  if (bytes == NULL)
    return FALSE;
  if (is_new)
    note_new_entry (store, table);
  if (!limen_db_begin (store->db, error))
    return FALSE;
  limen_db_perm_put_entry_bytes (store->db, table, id, data ? data : (entry ? entry->data : NULL), bytes, NULL);
  if (!limen_db_commit (store->db, error))
    return FALSE;

  if (is_new)
    entry = perm_entry_new ();
  if (data)
    {
      g_variant_unref (entry->data);
      entry->data = g_variant_ref (data);
    }
  if (apps)
    {
      g_clear_pointer (&entry->apps, g_hash_table_unref);
      g_clear_pointer (&entry->perms_cache, g_variant_unref);
      /* The bytes just stored: 0.8 MB for 20,000 apps, where GDBus's tree of the same value
       * holds ~11 MB. The tree still serves the Changed signal, then goes. */
      entry->perms_cache = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("a{sas}"), bytes, TRUE));
    }
  if (entry->perms_cache)
    limen_db_perm_keep_entry (store->db, table, id, entry->data, entry->perms_cache);
  if (!quiet)
    limen_perm_store_emit_changed (store, table, id, FALSE, entry, apps);
  return TRUE;
}

gboolean
limen_perm_store_set (LimenPermStore *store, const char *table, const char *id, gboolean create,
                      GVariant *data, GVariant *apps_in, GError **error)
{
  return store_set (store, table, id, create, data, apps_in, FALSE, error);
}

gboolean
limen_perm_store_has_entry (LimenPermStore *store, const char *table, const char *id)
{
  g_autoptr(PermEntry) entry = limen_perm_store_read (store, table, id, FALSE);

  return entry != NULL;
}

gboolean
limen_perm_store_import_entry (LimenPermStore *store, const char *table, const char *id,
                               GVariant *data, GVariant *permissions, GError **error)
{
  if (!limen_perm_check_table_id (table, id, error))
    return FALSE;
  return store_set (store, table, id, TRUE, data, permissions, TRUE, error);
}

gboolean
limen_perm_store_set_permission (LimenPermStore *store, const char *table, const char *id, gboolean create,
                                 const char *app, const char * const *perms, GError **error)
{
  g_autoptr(PermEntry) entry = limen_perm_store_entry (store, table, id);
  gboolean is_new = (entry == NULL);
  g_autoptr(GVariant) empty = NULL;
  g_autoptr(GBytes) bytes = NULL;

  if (is_new && !create)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No entry for %s in table %s", id, table);
      return FALSE;
    }
  g_autoptr(GVariant) all = NULL;

  if (!limen_perm_check_app_perms (app, perms, error))
    return FALSE;
  if (is_new)
    note_new_entry (store, table);
  if (!limen_db_begin (store->db, error))
    return FALSE;
  /* No permission at all is no row, as in the reference. */
  all = limen_perm_perms_variant_with (entry ? limen_perm_entry_apps (entry) : NULL, app, perms[0] ? perms : NULL);
  limen_db_perm_put_entry (store->db, table, id, entry ? entry->data : NULL, all, NULL);
  if (!limen_db_commit (store->db, error))
    return FALSE;
  if (is_new)
    entry = perm_entry_new ();
  if (perms[0])
    g_hash_table_replace (limen_perm_entry_apps (entry), g_strdup (app), g_strdupv ((char **) perms));
  else
    g_hash_table_remove (limen_perm_entry_apps (entry), app);
  g_clear_pointer (&entry->perms_cache, g_variant_unref);
  entry->perms_cache = g_steal_pointer (&all);
  limen_db_perm_keep_entry (store->db, table, id, entry->data, entry->perms_cache);
  limen_perm_store_emit_changed (store, table, id, FALSE, entry, NULL);
  return TRUE;
}

