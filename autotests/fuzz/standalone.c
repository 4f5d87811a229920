/* The driver of a fuzz target when no fuzzing engine is built in (see fuzz.h):
 *   NAME ROUNDS [SEED]     every seed, then ROUNDS inputs mutated from the seeds
 *   NAME --write-seeds DIR the seeds as files, the starting corpus for a libFuzzer run
 * Each input is handed over in a buffer of exactly its size, so ASan sees a read past it.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

static void
run (const guint8 *data, gsize len)
{
  g_autofree guint8 *exact = g_malloc (MAX (len, 1));   /* never NULL, as from libFuzzer */

  memcpy (exact, data, len);
  LLVMFuzzerTestOneInput (exact, len);
}

static void
insert (GByteArray *s, guint at, const guint8 *data, guint len)
{
  g_array_insert_vals ((GArray *) s, at, data, len);   /* a GByteArray is a GArray of bytes */
}

/* One of libFuzzer's simple mutations, on @s in place. */
static void
mutate (GByteArray *s, GPtrArray *seeds, GRand *rand)
{
  static const guint8 interesting[] = { 0, 1, 0x7f, 0x80, 0xff };
  guint at = s->len ? g_rand_int_range (rand, 0, s->len) : 0;
  guint n_tokens = g_strv_length ((char **) limen_fuzz_tokens);

  switch (g_rand_int_range (rand, 0, 8))
    {
    case 0:
      if (s->len)
        s->data[at] ^= 1u << g_rand_int_range (rand, 0, 8);
      break;
    case 1:
      if (s->len)
        s->data[at] = g_rand_int_range (rand, 0, 256);
      break;
    case 2:
      if (s->len)
        s->data[at] = interesting[g_rand_int_range (rand, 0, G_N_ELEMENTS (interesting))];
      break;
    case 3:
      if (n_tokens)
        {
          const char *t = limen_fuzz_tokens[g_rand_int_range (rand, 0, n_tokens)];

          insert (s, at, (const guint8 *) t, strlen (t));
        }
      break;
    case 4:
      if (s->len)
        g_byte_array_remove_range (s, at, g_rand_int_range (rand, 1, MIN (s->len - at, 16u) + 1));
      break;
    case 5:
      if (s->len)
        {
          guint n = g_rand_int_range (rand, 1, MIN (s->len - at, 64u) + 1);
          g_autofree guint8 *chunk = g_memdup2 (s->data + at, n);

          insert (s, g_rand_int_range (rand, 0, s->len + 1), chunk, n);
        }
      break;
    case 6:
      g_byte_array_set_size (s, at);   /* truncate */
      break;
    default:
      {
        GBytes *other = g_ptr_array_index (seeds, g_rand_int_range (rand, 0, seeds->len));
        gsize olen;
        const guint8 *o = g_bytes_get_data (other, &olen);
        guint from = olen ? g_rand_int_range (rand, 0, olen) : 0;

        insert (s, at, o + from, MIN (olen - from, 64u));
      }
      break;
    }
}

static int
write_seeds (const char *dir, GPtrArray *seeds)
{
  if (g_mkdir_with_parents (dir, 0755) != 0)
    g_error ("cannot make %s", dir);
  for (guint i = 0; i < seeds->len; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/seed-%u", dir, i);
      gsize len;
      const char *data = g_bytes_get_data (g_ptr_array_index (seeds, i), &len);
      g_autoptr(GError) error = NULL;

      if (!g_file_set_contents (path, data, len, &error))
        g_error ("%s", error->message);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  g_autoptr(GPtrArray) seeds = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  guint rounds;
  g_autoptr(GRand) rand = NULL;

  limen_fuzz_seeds (seeds);
  g_assert_cmpuint (seeds->len, >, 0);
  if (argc == 3 && strcmp (argv[1], "--write-seeds") == 0)
    return write_seeds (argv[2], seeds);
  rounds = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 20000;
  rand = g_rand_new_with_seed (argc > 2 ? (guint32) g_ascii_strtoull (argv[2], NULL, 10) : 1);

  for (guint i = 0; i < seeds->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (g_ptr_array_index (seeds, i), &len);

      run (data, len);
    }
  for (guint r = 0; r < rounds; r++)
    {
      GBytes *seed = g_ptr_array_index (seeds, g_rand_int_range (rand, 0, seeds->len));
      gsize len;
      const guint8 *data = g_bytes_get_data (seed, &len);
      g_autoptr(GByteArray) s = g_byte_array_new ();

      g_byte_array_append (s, data, len);
      for (int m = g_rand_int_range (rand, 1, 8); m > 0; m--)
        mutate (s, seeds, rand);
      run (s->data, s->len);
    }
  printf ("%u seeds and %u mutated inputs checked\n", seeds->len, rounds);
  return 0;
}
