/* limen-documents — org.freedesktop.impl.portal.PermissionStore (version 2).
 *
 * The model lives in memory (main thread only) and every change is written through to
 * SQLite inside one transaction before the reply, so a crash never loses an answered
 * write. Each entry caches its a{sas} so Lookup of an entry with 20,000 apps costs one
 * reference, and Set is linear in its input.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perm-store.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "app-info.h"
#include "errors.h"
#include "limen-dbus.h"

#define TABLE_NAME_MAX 128
#define ID_MAX 4096
#define APP_MAX 1024
#define PERM_MAX 256
#define PERMS_PER_APP_MAX 256
#define DOCUMENTS_TABLE "documents"

typedef struct {
  GVariant   *data;        /* never NULL: an empty a{sv} stands for "no data" */
  GHashTable *apps;        /* app → GStrv */
  GVariant   *perms_cache; /* a{sas} of apps, built on demand */
} PermEntry;

struct _LimenPermStore {
  GThreadPool *dropper;    /* frees big GDBus trees off the main thread */
  LimenDb    *db;
  GHashTable *tables;      /* name → (id → PermEntry) */
  LimenDbusImplPortalPermissionStore *skeleton;
  const LimenPermDocuments *docs;   /* serves the "documents" table, when set */
  gpointer    docs_data;
};

static GVariant *
empty_data (void)
{
  return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
}

static void
perm_entry_free (PermEntry *entry)
{
  g_clear_pointer (&entry->data, g_variant_unref);
  g_clear_pointer (&entry->apps, g_hash_table_unref);
  g_clear_pointer (&entry->perms_cache, g_variant_unref);
  g_free (entry);
}

static PermEntry *
perm_entry_new (void)
{
  PermEntry *entry = g_new0 (PermEntry, 1);

  entry->data = empty_data ();
  entry->apps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_strfreev);
  return entry;
}

/* The app → permissions table, built from the a{sas} on first use: Set and Lookup of a
 * big entry never need it, GetPermission/SetPermission and sandboxed reads do. */
static GHashTable *
entry_apps (PermEntry *entry)
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

static GVariant *
perm_entry_get_perms (PermEntry *entry)
{
  if (entry->perms_cache == NULL)
    {
      GVariantBuilder b;
      GHashTableIter iter;
      gpointer key, value;

      g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
      g_hash_table_iter_init (&iter, entry->apps);
      while (g_hash_table_iter_next (&iter, &key, &value))
        g_variant_builder_add (&b, "{s^as}", key, value);
      entry->perms_cache = g_variant_ref_sink (g_variant_builder_end (&b));
    }
  return entry->perms_cache;
}

/* GVDB's key hash (djb2 over signed chars). */
static guint32
gvdb_hash (const char *key)
{
  guint32 h = 5381;

  for (; *key; key++)
    h = h * 33 + *(const signed char *) key;
  return h;
}

/* The flatpak CLI finds tables by listing $XDG_DATA_HOME/flatpak/db (permission-show,
 * permissions without arguments). For a table that has no file there we add an empty
 * GVDB table file in the reference's format ("main" and "apps", both empty), so the CLI
 * lists it and the reference implementation, if the user goes back, reads an empty
 * table. Existing files are never touched. */
static void
publish_table (const char *table)
{
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "flatpak", "db", NULL);
  g_autofree char *path = g_build_filename (dir, table, NULL);
  g_autoptr(GError) error = NULL;
  guint32 words[27] = { 0 };
  struct stat st;
  guint8 *b = (guint8 *) words;
  const struct { const char *key; guint32 key_start, start; } items[2] = {
    { "main", 84, 92 }, { "apps", 88, 100 } };

  if (lstat (path, &st) == 0 || errno != ENOENT)
    return;
  if (g_mkdir_with_parents (dir, 0700) != 0)
    return;
  /* header: signature, version 0, options 0, root pointer */
  words[0] = GUINT32_TO_LE (0x72615647);
  words[1] = GUINT32_TO_LE (0x746e6169);
  words[4] = GUINT32_TO_LE (24);
  words[5] = GUINT32_TO_LE (84);
  /* root table: no bloom words, one bucket starting at item 0, two 'H' items */
  words[6] = 0;
  words[7] = GUINT32_TO_LE (1);
  words[8] = 0;
  for (int i = 0; i < 2; i++)
    {
      guint32 *it = &words[9 + 6 * i];
      guint16 key_size = GUINT16_TO_LE (4);

      it[0] = GUINT32_TO_LE (gvdb_hash (items[i].key));
      it[1] = 0xffffffff;
      it[2] = GUINT32_TO_LE (items[i].key_start);
      memcpy (&it[3], &key_size, 2);
      ((guint8 *) &it[3])[2] = 'H';
      it[4] = GUINT32_TO_LE (items[i].start);
      it[5] = GUINT32_TO_LE (items[i].start + 8);
    }
  memcpy (b + 84, "mainapps", 8);
  /* the two nested tables at 92 and 100: no bloom words, no buckets, no items */
  if (!g_file_set_contents (path, (const char *) b, sizeof words, &error))
    g_debug ("Cannot publish table %s for the flatpak CLI: %s", table, error->message);
}

static GHashTable *
get_table (LimenPermStore *store, const char *table, gboolean create)
{
  GHashTable *t = g_hash_table_lookup (store->tables, table);

  if (t == NULL && create)
    {
      if (store->skeleton)
        publish_table (table);
      t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) perm_entry_free);
      g_hash_table_insert (store->tables, g_strdup (table), t);
    }
  return t;
}

static PermEntry *
get_entry (LimenPermStore *store, const char *table, const char *id)
{
  GHashTable *t = get_table (store, table, FALSE);

  return t ? g_hash_table_lookup (t, id) : NULL;
}

gboolean
limen_perm_table_name_is_valid (const char *table)
{
  gsize len = strlen (table);

  if (len == 0 || len > TABLE_NAME_MAX || strchr (table, '/') || strstr (table, "..") ||
      !g_utf8_validate (table, len, NULL))
    return FALSE;
  for (const char *p = table; *p; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      return FALSE;
  return TRUE;
}

gboolean
limen_perm_id_is_valid (const char *id)
{
  gsize len = strlen (id);
  g_auto(GStrv) parts = NULL;

  /* Ids may hold '/' (content types such as "text/plain" in desktop-used-apps), but
   * nothing that reads as a path climbing out of somewhere. */
  if (len == 0 || len > ID_MAX || id[0] == '/' || !g_utf8_validate (id, len, NULL))
    return FALSE;
  parts = g_strsplit (id, "/", -1);
  for (guint i = 0; parts[i]; i++)
    if (strcmp (parts[i], "..") == 0 || strcmp (parts[i], ".") == 0)
      return FALSE;
  return TRUE;
}

static gboolean
check_table_id (const char *table, const char *id, GError **error)
{
  if (!limen_perm_table_name_is_valid (table))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid table name (empty, too long, or containing '/', '..' or control characters)");
      return FALSE;
    }
  if (id && !limen_perm_id_is_valid (id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid id (empty, too long, absolute, or with a '.' or '..' component)");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_app_perms (const char *app, const char * const *perms, GError **error)
{
  guint n = 0;

  if (strlen (app) > APP_MAX)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app: too long");
      return FALSE;
    }
  for (; perms[n]; n++)
    if (strlen (perms[n]) > PERM_MAX)
      {
        g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid permissions: too long");
        return FALSE;
      }
  if (n > PERMS_PER_APP_MAX)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid permissions: too many");
      return FALSE;
    }
  return TRUE;
}

/* ---- a{sas} in one walk ------------------------------------------------------------ */

typedef struct {
  const char *str;
  gsize       len;
} Str;

/* GVariant's size for a container of @body bytes and @n framing offsets: the offsets are
 * as wide as the whole container needs (gvariant-serialiser's rule). */
static gsize
framed_size (gsize body, gsize n, guint *offset_size)
{
  if (body + n == 0)
    *offset_size = 0;
  else if (body + n <= G_MAXUINT8)
    *offset_size = 1;
  else if (body + 2 * n <= G_MAXUINT16)
    *offset_size = 2;
  else if (body + 4 * n <= G_MAXUINT32)
    *offset_size = 4;
  else
    *offset_size = 8;
  return body + n * *offset_size;
}

static guint8 *
put_offset (guint8 *out, gsize value, guint offset_size)
{
  for (guint i = 0; i < offset_size; i++)
    *out++ = (value >> (8 * i)) & 0xff;
  return out;
}

/* The app and permission strings of an a{sas}, read once with their lengths, and each
 * checked against the store's limits. A value GDBus hands us is in tree form: every
 * child access locks and references a node, so the tree is walked here once and the
 * bytes are then written from this flat list. */
static gboolean
collect_app_perms (GVariant *apps, GArray *strs, GArray *counts, GError **error)
{
  gsize n = g_variant_n_children (apps);

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (apps, i);
      g_autoptr(GVariant) key = g_variant_get_child_value (entry, 0);
      g_autoptr(GVariant) perms = g_variant_get_child_value (entry, 1);
      gsize n_perms = g_variant_n_children (perms);
      Str s;

      s.str = g_variant_get_string (key, &s.len);
      if (s.len > APP_MAX)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app: too long");
          return FALSE;
        }
      if (n_perms > PERMS_PER_APP_MAX)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid permissions: too many");
          return FALSE;
        }
      g_array_append_val (strs, s);
      for (gsize j = 0; j < n_perms; j++)
        {
          g_autoptr(GVariant) perm = g_variant_get_child_value (perms, j);

          s.str = g_variant_get_string (perm, &s.len);
          if (s.len > PERM_MAX)
            {
              g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid permissions: too long");
              return FALSE;
            }
          g_array_append_val (strs, s);
        }
      g_array_append_val (counts, n_perms);
    }
  return TRUE;
}

GBytes *
limen_perm_serialize_app_perms (GVariant *apps, GError **error)
{
  g_autoptr(GArray) strs = g_array_new (FALSE, FALSE, sizeof (Str));
  g_autoptr(GArray) counts = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GArray) sizes = NULL;
  gsize body = 0, total;
  guint array_offset;
  guint8 *bytes, *out;
  const Str *s;

  g_return_val_if_fail (g_variant_is_of_type (apps, G_VARIANT_TYPE ("a{sas}")), NULL);
  if (!collect_app_perms (apps, strs, counts, error))
    return NULL;

  /* Sizes first: each entry is key NUL, the as (strings, their end offsets), and the end
   * offset of the key; the array is the entries and their end offsets. */
  sizes = g_array_sized_new (FALSE, FALSE, sizeof (gsize), counts->len);
  s = (const Str *) strs->data;
  for (guint i = 0; i < counts->len; i++)
    {
      gsize n_perms = g_array_index (counts, gsize, i), as_body = 0, entry;
      guint o;

      for (gsize j = 1; j <= n_perms; j++)
        as_body += s[j].len + 1;
      entry = framed_size (s[0].len + 1 + framed_size (as_body, n_perms, &o), 1, &o);
      g_array_append_val (sizes, entry);
      body += entry;
      s += 1 + n_perms;
    }
  total = framed_size (body, counts->len, &array_offset);

  out = bytes = g_malloc (MAX (total, 1));
  s = (const Str *) strs->data;
  for (guint i = 0; i < counts->len; i++)
    {
      gsize n_perms = g_array_index (counts, gsize, i), entry = g_array_index (sizes, gsize, i);
      guint8 *entry_start = out;
      gsize as_body = 0;
      guint as_offset, entry_offset;

      memcpy (out, s[0].str, s[0].len + 1);
      out += s[0].len + 1;
      for (gsize j = 1; j <= n_perms; j++)
        {
          memcpy (out, s[j].str, s[j].len + 1);
          out += s[j].len + 1;
          as_body += s[j].len + 1;
        }
      framed_size (as_body, n_perms, &as_offset);
      for (gsize j = 1, end = 0; j <= n_perms; j++)
        {
          end += s[j].len + 1;
          out = put_offset (out, end, as_offset);
        }
      framed_size ((gsize) (out - entry_start), 1, &entry_offset);
      out = put_offset (out, s[0].len + 1, entry_offset);
      g_assert ((gsize) (out - entry_start) == entry);
      s += 1 + n_perms;
    }
  {
    gsize end = 0;

    for (guint i = 0; i < counts->len; i++)
      {
        end += g_array_index (sizes, gsize, i);
        out = put_offset (out, end, array_offset);
      }
  }
  g_assert ((gsize) (out - bytes) == total);
  return g_bytes_new_take (bytes, total);
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
static void
emit_changed_values (LimenPermStore *store, const char *table, const char *id, gboolean deleted,
                     GVariant *data, GVariant *perms)
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
static void
emit_changed (LimenPermStore *store, const char *table, const char *id, gboolean deleted, PermEntry *entry,
              GVariant *perms_in)
{
  if (store->skeleton == NULL)
    return;
  if (entry)
    emit_changed_values (store, table, id, deleted, g_variant_ref (entry->data),
                         g_variant_ref (perms_in ? perms_in : perm_entry_get_perms (entry)));
  else
    emit_changed_values (store, table, id, deleted, empty_data (), empty_perms ());
}

/* ---- loading ---------------------------------------------------------------------- */

static void
load_entry (const char *table, const char *id, GVariant *data, GVariant *perms, gpointer user_data)
{
  LimenPermStore *store = user_data;
  PermEntry *entry = perm_entry_new ();

  if (data)
    {
      g_variant_unref (entry->data);
      entry->data = g_variant_ref (data);
    }
  if (perms)
    {
      g_clear_pointer (&entry->apps, g_hash_table_unref);
      entry->perms_cache = g_variant_ref (perms);
    }
  g_hash_table_replace (get_table (store, table, TRUE), g_strdup (id), entry);
}

/* @apps as a{sas}, with @app set to @perms (or removed for NULL) on the way. */
static GVariant *
perms_variant_with (GHashTable *apps, const char *app, const char * const *perms)
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
  store->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_hash_table_unref);
  if (!limen_db_perm_load (db, load_entry, store, error))
    {
      limen_perm_store_free (store);
      return NULL;
    }
  return store;
}

void
limen_perm_store_free (LimenPermStore *store)
{
  if (store->skeleton)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (store->skeleton));
  g_clear_object (&store->skeleton);
  g_clear_pointer (&store->tables, g_hash_table_unref);
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

static gboolean
store_set (LimenPermStore *store, const char *table, const char *id, gboolean create,
           GVariant *data, GVariant *apps_in, GError **error)
{
  PermEntry *entry = get_entry (store, table, id);
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
    bytes = limen_perm_serialize_app_perms (entry ? perm_entry_get_perms (entry)
                                                  : (empty = perms_variant_with (NULL, NULL, NULL)), error);
  if (bytes == NULL || !limen_db_begin (store->db, error))
    return FALSE;
  limen_db_perm_put_entry_bytes (store->db, table, id, data ? data : (entry ? entry->data : NULL), bytes, NULL);
  if (!limen_db_commit (store->db, error))
    return FALSE;

  if (is_new)
    {
      entry = perm_entry_new ();
      g_hash_table_insert (get_table (store, table, TRUE), g_strdup (id), entry);
    }
  if (data)
    {
      g_variant_unref (entry->data);
      entry->data = g_variant_ref (data);
    }
  if (apps)
    {
      g_clear_pointer (&entry->apps, g_hash_table_unref);
      g_clear_pointer (&entry->perms_cache, g_variant_unref);
      /* Kept as the bytes just stored: 0.8 MB for 20,000 apps, where GDBus's tree of the
       * same value holds ~11 MB. The tree still serves the Changed signal, then goes. */
      entry->perms_cache = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("a{sas}"), bytes, TRUE));
    }
  emit_changed (store, table, id, FALSE, entry, apps);
  return TRUE;
}

gboolean
limen_perm_store_has_entry (LimenPermStore *store, const char *table, const char *id)
{
  return get_entry (store, table, id) != NULL;
}

gboolean
limen_perm_store_import_entry (LimenPermStore *store, const char *table, const char *id,
                               GVariant *data, GVariant *permissions, GError **error)
{
  if (!check_table_id (table, id, error))
    return FALSE;
  return store_set (store, table, id, TRUE, data, permissions, error);
}

static gboolean
store_set_permission (LimenPermStore *store, const char *table, const char *id, gboolean create,
                      const char *app, const char * const *perms, GError **error)
{
  PermEntry *entry = get_entry (store, table, id);
  gboolean is_new = (entry == NULL);
  g_autoptr(GVariant) empty = NULL;
  g_autoptr(GBytes) bytes = NULL;

  if (is_new && !create)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No entry for %s in table %s", id, table);
      return FALSE;
    }
  g_autoptr(GVariant) all = NULL;

  if (!check_app_perms (app, perms, error) || !limen_db_begin (store->db, error))
    return FALSE;
  /* No permission at all is no row, as in the reference. */
  all = perms_variant_with (entry ? entry_apps (entry) : NULL, app, perms[0] ? perms : NULL);
  limen_db_perm_put_entry (store->db, table, id, entry ? entry->data : NULL, all, NULL);
  if (!limen_db_commit (store->db, error))
    return FALSE;
  if (is_new)
    {
      entry = perm_entry_new ();
      g_hash_table_insert (get_table (store, table, TRUE), g_strdup (id), entry);
    }
  if (perms[0])
    g_hash_table_replace (entry_apps (entry), g_strdup (app), g_strdupv ((char **) perms));
  else
    g_hash_table_remove (entry_apps (entry), app);
  g_clear_pointer (&entry->perms_cache, g_variant_unref);
  entry->perms_cache = g_steal_pointer (&all);
  emit_changed (store, table, id, FALSE, entry, NULL);
  return TRUE;
}

/* ---- D-Bus ---------------------------------------------------------------------------- */

/* Identify the caller; FALSE when the invocation was answered already. Writes are for
 * host callers only. *@out_app is the caller's app id for a sandboxed reader. */
static gboolean
caller_check (GDBusMethodInvocation *invocation, gboolean write, char **out_app)
{
  g_autoptr(LimenAppInfo) info = NULL;

#ifdef LIMEN_TEST_HOOKS
  /* Harnesses set the identity hook for the frontend and start the permission store with
   * the same environment; the reference's store checks no caller, so here the hook does not
   * make every caller the sandboxed app (the test's own writes would be refused). */
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND"))
    {
      if (out_app)
        *out_app = NULL;
      return TRUE;
    }
#endif
  info = limen_app_info_get_for_invocation (invocation);
  if (info == NULL)
    return FALSE;
  if (limen_app_info_is_host (info))
    {
      if (out_app)
        *out_app = NULL;
      return TRUE;
    }
  if (write)
    {
      g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                             "Only host applications may change the permission store");
      return FALSE;
    }
  if (out_app)
    *out_app = g_strdup (limen_app_info_get_id (info));
  return TRUE;
}

static gboolean
return_error (GDBusMethodInvocation *invocation, GError *error)
{
  limen_invocation_return_gerror (invocation, error);
  g_error_free (error);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- the documents table ------------------------------------------------------------
 *
 * Served by the document store: what the flatpak CLI lists, shows and resets there
 * (permission-show, permission-remove, permission-reset, and uninstall --delete-data)
 * takes effect on the documents at once. A document's data is the document store's own:
 * SetValue is refused, and so are a Set that would change it and a SetPermission or Set
 * that would make a document. */

static gboolean
is_documents (LimenPermStore *store, const char *table)
{
  return store->docs != NULL && strcmp (table, DOCUMENTS_TABLE) == 0;
}

static GError *
no_document (const char *id)
{
  return g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No entry for %s in table " DOCUMENTS_TABLE, id);
}

/* A sandboxed reader's view of @perms: only its own row, if any. */
static GVariant *
own_row (GVariant *perms, const char *app)
{
  g_autofree const char **mine = NULL;
  GVariantBuilder b;

  if (!g_variant_lookup (perms, app, "^a&s", &mine))
    return NULL;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
  g_variant_builder_add (&b, "{s^as}", app, mine);
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static gboolean
documents_lookup (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                  LimenPermStore *store, const char *id, const char *app)
{
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) value = NULL;

  if (!store->docs->lookup (store->docs_data, id, &perms, &value))
    return return_error (invocation, no_document (id));
  if (app)
    {
      /* As for every table: a sandboxed reader sees its own row and none of the data. */
      g_autoptr(GVariant) mine = own_row (perms, app);

      if (mine == NULL)
        return return_error (invocation, no_document (id));
      g_clear_pointer (&perms, g_variant_unref);
      g_clear_pointer (&value, g_variant_unref);
      perms = g_steal_pointer (&mine);
      value = empty_data ();
    }
  limen_dbus_impl_portal_permission_store_complete_lookup (object, invocation, perms,
                                                           g_variant_new_variant (value));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
no_document_made (const char *id, gboolean create, GError **error)
{
  if (create)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                 "No document %s: documents are made through org.freedesktop.portal.Documents", id);
  else
    g_propagate_error (error, no_document (id));
  return FALSE;
}

static void
documents_changed (LimenPermStore *store, const char *id)
{
  GVariant *perms, *value;

  if (store->skeleton && store->docs->lookup (store->docs_data, id, &perms, &value))
    emit_changed_values (store, DOCUMENTS_TABLE, id, FALSE, value, perms);
}

/* Set (@apps, with the data Lookup gave: how the flatpak CLI resets an app) gives the
 * document exactly those rights; its data stays the document store's, and SetValue
 * (@apps NULL) has nothing to change. */
static gboolean
documents_set (LimenPermStore *store, const char *id, gboolean create, GVariant *apps, GVariant *data,
               GError **error)
{
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) value = NULL;

  if (!store->docs->lookup (store->docs_data, id, &perms, &value))
    return no_document_made (id, create, error);
  if (apps == NULL || !g_variant_equal (data, value))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "A document's data (its file) is the document store's: it cannot be set");
      return FALSE;
    }
  if (!store->docs->set_all (store->docs_data, id, apps, error))
    return FALSE;
  documents_changed (store, id);
  return TRUE;
}

/* @app's rights on document @id become @perms (NULL: none); Changed follows. */
static gboolean
documents_set_perms (LimenPermStore *store, const char *id, gboolean create, const char *app,
                     const char * const *perms, GError **error)
{
  g_autoptr(GVariant) old_perms = NULL;
  g_autoptr(GVariant) value = NULL;

  if (!store->docs->lookup (store->docs_data, id, &old_perms, &value))
    return no_document_made (id, create, error);
  if (!store->docs->set_perms (store->docs_data, id, app, perms, error))
    return FALSE;
  documents_changed (store, id);
  return TRUE;
}

static gboolean
handle_lookup (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
               const char *table, const char *id, LimenPermStore *store)
{
  g_autofree char *app = NULL;
  GError *error = NULL;
  PermEntry *entry;

  if (!check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, FALSE, &app))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    return documents_lookup (object, invocation, store, id, app);
  entry = get_entry (store, table, id);
  if (entry && app)
    {
      /* A sandboxed reader sees only its own row, never the shared data. */
      const char * const *mine = g_hash_table_lookup (entry_apps (entry), app);
      GVariantBuilder b;

      if (mine == NULL)
        entry = NULL;
      else
        {
          g_autoptr(GVariant) data = empty_data ();

          g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
          g_variant_builder_add (&b, "{s^as}", app, mine);
          limen_dbus_impl_portal_permission_store_complete_lookup (object, invocation,
                                                                   g_variant_builder_end (&b),
                                                                   g_variant_new_variant (data));
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
    }
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  limen_dbus_impl_portal_permission_store_complete_lookup (object, invocation, perm_entry_get_perms (entry),
                                                           g_variant_new_variant (entry->data));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Set and SetValue: checks, then the write. FALSE: the invocation has been answered with
 * an error; TRUE: written, the caller sends its own reply. */
static gboolean
set_checked (GDBusMethodInvocation *invocation, const char *table, gboolean create, const char *id,
             GVariant *app_permissions, GVariant *data, LimenPermStore *store)
{
  GError *error = NULL;

  if (!check_table_id (table, id, &error))
    {
      return_error (invocation, error);
      return FALSE;
    }
  if (!caller_check (invocation, TRUE, NULL))
    return FALSE;
  g_autoptr(GVariant) inner = g_variant_get_variant (data);
  if (is_documents (store, table))
    {
      if (!documents_set (store, id, create, app_permissions, inner, &error))
        {
          return_error (invocation, error);
          return FALSE;
        }
      return TRUE;
    }
  if (!store_set (store, table, id, create, inner, app_permissions, &error))
    {
      return_error (invocation, error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
handle_set (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
            const char *table, gboolean create, const char *id, GVariant *app_permissions,
            GVariant *data, LimenPermStore *store)
{
  if (set_checked (invocation, table, create, id, app_permissions, data, store))
    limen_dbus_impl_portal_permission_store_complete_set (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_value (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                  const char *table, gboolean create, const char *id, GVariant *data, LimenPermStore *store)
{
  if (set_checked (invocation, table, create, id, NULL, data, store))
    limen_dbus_impl_portal_permission_store_complete_set_value (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_permission (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                       const char *table, gboolean create, const char *id, const char *app,
                       const char * const *permissions, LimenPermStore *store)
{
  GError *error = NULL;

  if (!check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, TRUE, NULL))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table) ? !documents_set_perms (store, id, create, app, permissions, &error)
                                  : !store_set_permission (store, table, id, create, app, permissions, &error))
    return return_error (invocation, error);
  limen_dbus_impl_portal_permission_store_complete_set_permission (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_delete_permission (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                          const char *table, const char *id, const char *app, LimenPermStore *store)
{
  GError *error = NULL;
  PermEntry *entry;

  if (!check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, TRUE, NULL))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    {
      if (!documents_set_perms (store, id, FALSE, app, NULL, &error))
        return return_error (invocation, error);
      limen_dbus_impl_portal_permission_store_complete_delete_permission (object, invocation);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  entry = get_entry (store, table, id);
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  if (g_hash_table_contains (entry_apps (entry), app))
    {
      g_autoptr(GVariant) all = perms_variant_with (entry_apps (entry), app, NULL);

      if (!limen_db_begin (store->db, &error))
        return return_error (invocation, error);
      limen_db_perm_put_entry (store->db, table, id, entry->data, all, NULL);
      if (!limen_db_commit (store->db, &error))
        return return_error (invocation, error);
      g_hash_table_remove (entry_apps (entry), app);
      g_clear_pointer (&entry->perms_cache, g_variant_unref);
      entry->perms_cache = g_steal_pointer (&all);
      emit_changed (store, table, id, FALSE, entry, NULL);
    }
  limen_dbus_impl_portal_permission_store_complete_delete_permission (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_permission (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                       const char *table, const char *id, const char *app, LimenPermStore *store)
{
  g_autofree char *caller_app = NULL;
  static const char * const none[] = { NULL };
  GError *error = NULL;
  const char * const *perms;
  PermEntry *entry;

  if (!check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, FALSE, &caller_app))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (caller_app && strcmp (caller_app, app) != 0)
    return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                          "A sandboxed application may only read its own permissions"));
  if (is_documents (store, table))
    {
      g_autoptr(GVariant) all = NULL;
      g_autoptr(GVariant) value = NULL;
      g_autofree const char **mine = NULL;

      if (!store->docs->lookup (store->docs_data, id, &all, &value))
        return return_error (invocation, no_document (id));
      g_variant_lookup (all, app, "^a&s", &mine);
      limen_dbus_impl_portal_permission_store_complete_get_permission (object, invocation, mine ? mine : none);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  entry = get_entry (store, table, id);
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  perms = g_hash_table_lookup (entry_apps (entry), app);
  limen_dbus_impl_portal_permission_store_complete_get_permission (object, invocation, perms ? perms : none);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_delete (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
               const char *table, const char *id, LimenPermStore *store)
{
  GError *error = NULL;
  GHashTable *t;

  if (!check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, TRUE, NULL))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    {
      g_autoptr(GVariant) perms = NULL;
      g_autoptr(GVariant) value = NULL;

      if (!store->docs->lookup (store->docs_data, id, &perms, &value))
        return return_error (invocation, no_document (id));
      if (!store->docs->remove (store->docs_data, id, &error))
        return return_error (invocation, error);
      emit_changed (store, table, id, TRUE, NULL, NULL);
      limen_dbus_impl_portal_permission_store_complete_delete (object, invocation);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  t = get_table (store, table, FALSE);
  if (t == NULL || !g_hash_table_contains (t, id))
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  if (!limen_db_begin (store->db, &error))
    return return_error (invocation, error);
  limen_db_perm_delete_entry (store->db, table, id, NULL);
  if (!limen_db_commit (store->db, &error))
    return return_error (invocation, error);
  g_hash_table_remove (t, id);
  emit_changed (store, table, id, TRUE, NULL, NULL);
  limen_dbus_impl_portal_permission_store_complete_delete (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_list (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
             const char *table, LimenPermStore *store)
{
  g_autofree char *app = NULL;
  g_autoptr(GPtrArray) ids = g_ptr_array_new ();
  GError *error = NULL;
  GHashTableIter iter;
  gpointer key, value;
  GHashTable *t;

  if (!check_table_id (table, NULL, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, FALSE, &app))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    {
      g_auto(GStrv) doc_ids = store->docs->list (store->docs_data, app);

      limen_dbus_impl_portal_permission_store_complete_list (object, invocation, (const char * const *) doc_ids);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  t = get_table (store, table, FALSE);
  if (t)
    {
      g_hash_table_iter_init (&iter, t);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (app == NULL || g_hash_table_contains (entry_apps (value), app))
          g_ptr_array_add (ids, key);
    }
  g_ptr_array_add (ids, NULL);
  limen_dbus_impl_portal_permission_store_complete_list (object, invocation, (const char * const *) ids->pdata);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

void
limen_perm_store_set_documents (LimenPermStore *store, const LimenPermDocuments *docs, gpointer data)
{
  store->docs = docs;
  store->docs_data = data;
}

gboolean
limen_perm_store_export (LimenPermStore *store, GDBusConnection *connection, GError **error)
{
  if (store->docs)
    publish_table (DOCUMENTS_TABLE);     /* where the flatpak CLI looks for tables */
  store->skeleton = limen_dbus_impl_portal_permission_store_skeleton_new ();
  limen_dbus_impl_portal_permission_store_set_version (store->skeleton, 2);
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (store->skeleton));
  g_signal_connect (store->skeleton, "handle-lookup", G_CALLBACK (handle_lookup), store);
  g_signal_connect (store->skeleton, "handle-set", G_CALLBACK (handle_set), store);
  g_signal_connect (store->skeleton, "handle-set-value", G_CALLBACK (handle_set_value), store);
  g_signal_connect (store->skeleton, "handle-set-permission", G_CALLBACK (handle_set_permission), store);
  g_signal_connect (store->skeleton, "handle-delete-permission", G_CALLBACK (handle_delete_permission), store);
  g_signal_connect (store->skeleton, "handle-get-permission", G_CALLBACK (handle_get_permission), store);
  g_signal_connect (store->skeleton, "handle-delete", G_CALLBACK (handle_delete), store);
  g_signal_connect (store->skeleton, "handle-list", G_CALLBACK (handle_list), store);
  return g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (store->skeleton), connection,
                                           "/org/freedesktop/impl/portal/PermissionStore", error);
}
