/* Fuzz target for the GVDB reader and the document-entry reader of the one-time import
 * (they parse files Limen did not write): any file must be refused or read safely, every
 * table, key and value of it. Seed: a valid reference-format table (the empty table the
 * permission store publishes for the flatpak CLI plus a document in upstream's layout with a
 * file handle). See fuzz.h for how it runs.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gvdb-reader.h"
#include "import-private.h"

static void
consume (const char *key, GVariant *value, gpointer user_data)
{
  g_autofree char *s = value ? g_variant_print (value, TRUE) : NULL;
  g_auto(LimenRefDoc) doc = { 0 };
  g_autoptr(GVariant) perms = NULL;
  g_autofree char *why = NULL;

  /* A NULL value is an item the reader could not read: its key is all there is. */
  (*(gsize *) user_data) += strlen (key) + (s ? strlen (s) : 0);
  /* The import's reader of document entries takes whatever the file holds. */
  if (limen_import_parse_document (value, &doc, &perms, &why) == LIMEN_IMPORT_IMPORTED)
    (*(gsize *) user_data) += strlen (doc.path) + g_variant_n_children (perms);
}

/* A table {"main": H {"a": v <(va{sas})>}, "apps": H {}} in the on-disk format, the value a
 * document entry in upstream's layout with a file handle. */
static GByteArray *
seed_file (void)
{
  g_autoptr(GVariant) value = g_variant_ref_sink (g_variant_new_variant (g_variant_new_parsed (
    "(<(b'/home/u/a.txt', @t 2049, @t 1234, @u 1, @ay [1, 0, 0, 0, 9, 0, 0, 0])>, {'org.a.App': ['read']})")));
  GByteArray *b = g_byte_array_new ();
  guint32 hdr[6] = { GUINT32_TO_LE (0x72615647), GUINT32_TO_LE (0x746e6169), 0, 0, GUINT32_TO_LE (24), 0 };
  guint32 root[3 + 12], main_t[3 + 6], apps_t[2];
  guint32 keys_at, main_at, apps_at, value_at;
  gsize vsize = g_variant_get_size (value);
  guint16 four = GUINT16_TO_LE (4), one = GUINT16_TO_LE (1);

  /* offsets: header 24, root 8+4+48=60 → 84, main 8+4+24=36 → 120, apps 8 → 128, keys 9 → 137, pad → 140 */
  main_at = 84;
  apps_at = 120;
  keys_at = 128;
  value_at = 140;
  hdr[5] = GUINT32_TO_LE (84);
  memset (root, 0, sizeof root);
  root[1] = GUINT32_TO_LE (1);
  for (int i = 0; i < 2; i++)
    {
      guint32 *it = &root[3 + 6 * i];

      it[1] = 0xffffffff;
      it[2] = GUINT32_TO_LE (keys_at + 4 * i);
      memcpy (&it[3], &four, 2);
      ((guint8 *) &it[3])[2] = 'H';
      it[4] = GUINT32_TO_LE (i == 0 ? main_at : apps_at);
      it[5] = GUINT32_TO_LE (i == 0 ? apps_at : keys_at);
    }
  memset (main_t, 0, sizeof main_t);
  main_t[1] = GUINT32_TO_LE (1);
  main_t[3 + 1] = 0xffffffff;
  main_t[3 + 2] = GUINT32_TO_LE (keys_at + 8);
  memcpy (&main_t[3 + 3], &one, 2);
  ((guint8 *) &main_t[3 + 3])[2] = 'v';
  main_t[3 + 4] = GUINT32_TO_LE (value_at);
  main_t[3 + 5] = GUINT32_TO_LE (value_at + vsize);
  memset (apps_t, 0, sizeof apps_t);
  g_byte_array_append (b, (guint8 *) hdr, sizeof hdr);
  g_byte_array_append (b, (guint8 *) root, sizeof root);
  g_byte_array_append (b, (guint8 *) main_t, sizeof main_t);
  g_byte_array_append (b, (guint8 *) apps_t, sizeof apps_t);
  g_byte_array_append (b, (const guint8 *) "mainappsa\0\0\0", 12);
  g_byte_array_append (b, g_variant_get_data (value), vsize);
  return b;
}

/* Plain write: g_file_set_contents() would fsync every round. */
static void
put (const char *path, const guint8 *data, gsize len)
{
  FILE *f = fopen (path, "wb");

  g_assert_nonnull (f);
  g_assert_cmpuint (fwrite (data, 1, len, f), ==, len);
  fclose (f);
}

static gsize
read_all (const char *path)
{
  g_autoptr(LimenGvdb) db = limen_gvdb_open (path, NULL);
  gsize total = 0;

  if (db)
    for (const char *t = "main"; t; t = (strcmp (t, "main") == 0 ? "apps" : NULL))
      {
        g_autoptr(LimenGvdb) table = limen_gvdb_get_table (db, t);
        g_auto(GStrv) keys = NULL;

        if (table == NULL)
          continue;
        limen_gvdb_foreach (table, consume, &total);
        keys = limen_gvdb_list_keys (table);
        for (guint i = 0; keys[i]; i++)
          {
            g_autoptr(GVariant) v = limen_gvdb_get_value (table, keys[i]);
            total += v != NULL;
          }
      }
  return total;
}

const char *const limen_fuzz_tokens[] = { "GVariant", "H", "v", "L", "main", "apps", NULL };

void
limen_fuzz_seeds (GPtrArray *out)
{
  g_ptr_array_add (out, g_byte_array_free_to_bytes (seed_file ()));
}

static char *path;

static void
remove_file (void)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
}

/* The reader opens files: each input goes to one file of this process's own. */
int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (path == NULL)
    {
      g_autofree char *dir = g_dir_make_tmp ("limen-fuzz-XXXXXX", NULL);

      g_assert_nonnull (dir);
      path = g_build_filename (dir, "table", NULL);
      atexit (remove_file);
    }
  put (path, data, size);
  read_all (path);
  return 0;
}
