/* limen-documents — the empty table files the flatpak CLI lists: for a table the store
 * has and $XDG_DATA_HOME/flatpak/db lacks, a GVDB file in the reference's format.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perm-store-private.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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
void
limen_perm_publish_table (const char *table)
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
