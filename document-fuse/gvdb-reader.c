/* limen-documents — a small read-only GVDB reader.
 *
 * Layout (all integers little-endian, or all big-endian when the signature is
 * byte-swapped): a 24-byte header {u32 sig[2] = "GVariant", u32 version, u32 options,
 * pointer root}; a pointer is {u32 start, u32 end} into the file. A hash table is
 * {u32 bloom_shift:5|n_bloom_words:27, u32 n_buckets} followed by the bloom words, the
 * buckets and then 24-byte items {u32 hash, u32 parent, u32 key_start, u16 key_size,
 * char type, char unused, pointer value} up to the end. An item's full key is its
 * parent item's key followed by its own bytes; type 'v' points at a serialized "v",
 * 'H' at a nested hash table, 'L' at a list of item indexes. We never need hashing:
 * tables are small and walked whole. Every offset is bounds-checked.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "gvdb-reader.h"

#include <string.h>

typedef struct {
  guint32 hash, parent, key_start;
  guint16 key_size;
  gchar   type, unused;
  guint32 start, end;
} Item;

struct _LimenGvdb {
  GBytes       *bytes;
  const guint8 *data;
  gsize         size;
  gboolean      swapped;
  const guint8 *items;  /* of this table */
  guint32       n_items;
};

static guint32
u32 (LimenGvdb *db, const guint8 *p)
{
  guint32 v;

  memcpy (&v, p, 4);
  v = GUINT32_FROM_LE (v);
  return db->swapped ? GUINT32_SWAP_LE_BE (v) : v;
}

static guint16
u16 (LimenGvdb *db, const guint8 *p)
{
  guint16 v;

  memcpy (&v, p, 2);
  v = GUINT16_FROM_LE (v);
  return db->swapped ? GUINT16_SWAP_LE_BE (v) : v;
}

static gboolean
read_item (LimenGvdb *db, guint32 i, Item *it)
{
  const guint8 *p;

  if (i >= db->n_items)
    return FALSE;
  p = db->items + (gsize) i * 24;
  it->hash = u32 (db, p);
  it->parent = u32 (db, p + 4);
  it->key_start = u32 (db, p + 8);
  it->key_size = u16 (db, p + 12);
  it->type = p[14];
  it->unused = p[15];
  it->start = u32 (db, p + 16);
  it->end = u32 (db, p + 20);
  return TRUE;
}

/* Point @db at the hash table in [start, end). */
static gboolean
set_table (LimenGvdb *db, guint32 start, guint32 end)
{
  guint32 n_bloom, n_buckets;
  gsize header;

  if (start > end || end > db->size || end - start < 8 || (start & 3))
    return FALSE;
  n_bloom = u32 (db, db->data + start) & ((1u << 27) - 1);
  n_buckets = u32 (db, db->data + start + 4);
  header = 8 + 4 * ((gsize) n_bloom + n_buckets);
  if (header > end - start)
    return FALSE;
  db->items = db->data + start + header;
  db->n_items = (end - start - header) / 24;
  return TRUE;
}

LimenGvdb *
limen_gvdb_open (const char *path, GError **error)
{
  g_autoptr(GMappedFile) file = g_mapped_file_new (path, FALSE, error);
  g_autoptr(LimenGvdb) db = NULL;
  guint32 sig0, sig1;

  if (file == NULL)
    return NULL;
  db = g_new0 (LimenGvdb, 1);
  db->bytes = g_bytes_new (g_mapped_file_get_contents (file), g_mapped_file_get_length (file));
  db->data = g_bytes_get_data (db->bytes, &db->size);
  if (db->size < 24)
    goto invalid;
  memcpy (&sig0, db->data, 4);
  memcpy (&sig1, db->data + 4, 4);
  if (GUINT32_FROM_LE (sig0) == 0x72615647 && GUINT32_FROM_LE (sig1) == 0x746e6169)
    db->swapped = FALSE;
  else if (GUINT32_FROM_LE (sig0) == 0x47566172 && GUINT32_FROM_LE (sig1) == 0x69616e74)
    db->swapped = TRUE;
  else
    goto invalid;
  if (u32 (db, db->data + 8) != 0 || !set_table (db, u32 (db, db->data + 16), u32 (db, db->data + 20)))
    goto invalid;
  return g_steal_pointer (&db);

invalid:
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s is not a GVDB file", path);
  return NULL;
}

void
limen_gvdb_free (LimenGvdb *db)
{
  g_clear_pointer (&db->bytes, g_bytes_unref);
  g_free (db);
}

/* The full key of item @i, or NULL if the file is inconsistent (including loops). */
static char *
item_key (LimenGvdb *db, guint32 i)
{
  GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);
  GString *key = g_string_new (NULL);
  guint depth = 0;
  Item it;

  while (i != 0xffffffff)
    {
      if (!read_item (db, i, &it) || ++depth > 64 || it.key_start > db->size ||
          it.key_size > db->size - it.key_start)
        {
          g_ptr_array_unref (parts);
          g_string_free (key, TRUE);
          return NULL;
        }
      g_ptr_array_add (parts, g_strndup ((const char *) db->data + it.key_start, it.key_size));
      i = it.parent;
    }
  for (guint j = parts->len; j > 0; j--)
    g_string_append (key, parts->pdata[j - 1]);
  g_ptr_array_unref (parts);
  return g_string_free (key, FALSE);
}

static gboolean
find (LimenGvdb *db, const char *key, Item *out)
{
  for (guint32 i = 0; i < db->n_items; i++)
    {
      g_autofree char *k = item_key (db, i);

      if (k && strcmp (k, key) == 0)
        return read_item (db, i, out);
    }
  return FALSE;
}

LimenGvdb *
limen_gvdb_get_table (LimenGvdb *db, const char *key)
{
  LimenGvdb *sub;
  Item it;

  if (!find (db, key, &it) || it.type != 'H')
    return NULL;
  sub = g_new0 (LimenGvdb, 1);
  sub->bytes = g_bytes_ref (db->bytes);
  sub->data = db->data;
  sub->size = db->size;
  sub->swapped = db->swapped;
  if (!set_table (sub, it.start, it.end))
    {
      limen_gvdb_free (sub);
      return NULL;
    }
  return sub;
}

char **
limen_gvdb_list_keys (LimenGvdb *db)
{
  GPtrArray *keys = g_ptr_array_new ();
  Item it;

  for (guint32 i = 0; i < db->n_items; i++)
    if (read_item (db, i, &it) && it.type == 'v')
      {
        char *k = item_key (db, i);

        if (k)
          g_ptr_array_add (keys, k);
      }
  g_ptr_array_add (keys, NULL);
  return (char **) g_ptr_array_free (keys, FALSE);
}

static GVariant *
item_value (LimenGvdb *db, const Item *it_in)
{
  g_autoptr(GVariant) boxed = NULL;
  g_autoptr(GBytes) slice = NULL;
  g_autoptr(GVariant) normal = NULL;
  Item it = *it_in;

  if (it.type != 'v' || it.start > it.end || it.end > db->size)
    return NULL;
  slice = g_bytes_new_from_bytes (db->bytes, it.start, it.end - it.start);
  boxed = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE_VARIANT, slice, FALSE));
  if (db->swapped)
    {
      GVariant *swapped = g_variant_byteswap (boxed);

      g_variant_unref (boxed);
      boxed = swapped;
    }
  /* Untrusted bytes: normal form before anything reads into it. */
  normal = g_variant_get_normal_form (boxed);
  return g_variant_get_variant (normal);
}

GVariant *
limen_gvdb_get_value (LimenGvdb *db, const char *key)
{
  Item it;

  if (!find (db, key, &it))
    return NULL;
  return item_value (db, &it);
}

guint
limen_gvdb_n_items (LimenGvdb *db)
{
  return db->n_items;
}

guint
limen_gvdb_foreach_range (LimenGvdb *db, guint from, guint to,
                          void (*func) (const char *key, GVariant *value, gpointer user_data), gpointer user_data)
{
  guint n_nameless = 0;
  Item it;

  for (guint32 i = from; i < to && i < db->n_items; i++)
    if (read_item (db, i, &it) && it.type == 'v')
      {
        g_autofree char *key = item_key (db, i);
        g_autoptr(GVariant) value = key ? item_value (db, &it) : NULL;

        /* A damaged value is reported by its key, so that the caller can say which entry
         * it could not read; an item without a readable key can only be counted. */
        if (key)
          func (key, value, user_data);
        else
          n_nameless++;
      }
  return n_nameless;
}

guint
limen_gvdb_foreach (LimenGvdb *db, void (*func) (const char *key, GVariant *value, gpointer user_data),
                    gpointer user_data)
{
  return limen_gvdb_foreach_range (db, 0, db->n_items, func, user_data);
}
