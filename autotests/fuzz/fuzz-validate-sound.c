/* Short fuzz run of limen-validate-sound's checks: mutations of a structurally valid WAV
 * and of an Ogg Opus stream (with the page checksums redone after each mutation, so the
 * parser's later stages are reached, not only the CRC test) must be refused or accepted
 * with sane fields, never crash or read out of bounds (run under ASan in CI).
 * Runs ITERATIONS rounds (argv[1], default 20000) with a fixed seed (argv[2]).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define LIMEN_VALIDATOR_NO_MAIN
#include "../../src/validators/limen-validate-sound.c"

static void
put_le16 (guchar *p, guint v)
{
  p[0] = v & 0xff;
  p[1] = (v >> 8) & 0xff;
}

static void
put_le32 (guchar *p, guint32 v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (v >> (8 * i)) & 0xff;
}

static GByteArray *
seed_wav (void)
{
  GByteArray *b = g_byte_array_new ();
  guchar h[44] = { 0 };
  guint frames = 800;

  memcpy (h, "RIFF", 4);
  put_le32 (h + 4, 36 + frames * 2);
  memcpy (h + 8, "WAVEfmt ", 8);
  put_le32 (h + 16, 16);
  put_le16 (h + 20, 1);
  put_le16 (h + 22, 1);
  put_le32 (h + 24, 8000);
  put_le32 (h + 28, 16000);
  put_le16 (h + 32, 2);
  put_le16 (h + 34, 16);
  memcpy (h + 36, "data", 4);
  put_le32 (h + 40, frames * 2);
  g_byte_array_append (b, h, sizeof h);
  for (guint i = 0; i < frames * 2; i++)
    g_byte_array_append (b, (guchar[]) { (guchar) (i * 7) }, 1);
  return b;
}

/* One Ogg page holding one packet of @len bytes (< 255 × 255). */
static void
add_page (GByteArray *b, guint flags, guint64 granule, guint32 seq, const guchar *data, gsize len)
{
  guchar h[27 + 255];
  guint nsegs = len / 255 + 1;

  memset (h, 0, sizeof h);
  memcpy (h, "OggS", 4);
  h[5] = flags;
  put_le32 (h + 6, granule & 0xffffffff);
  put_le32 (h + 10, granule >> 32);
  put_le32 (h + 14, 0x1234);
  put_le32 (h + 18, seq);
  h[26] = nsegs;
  for (guint i = 0; i < nsegs; i++)
    h[27 + i] = i + 1 < nsegs ? 255 : len % 255;
  g_byte_array_append (b, h, 27 + nsegs);
  g_byte_array_append (b, data, len);
}

/* Redo every CRC the page headers still allow us to find. */
static void
fix_crcs (guchar *d, gsize len)
{
  gsize pos = 0;

  while (pos + 27 <= len && memcmp (d + pos, "OggS", 4) == 0)
    {
      gsize header = 27 + d[pos + 26], body = 0;

      if (pos + header > len)
        return;
      for (gsize i = 0; i < d[pos + 26]; i++)
        body += d[pos + 27 + i];
      if (pos + header + body > len)
        return;
      put_le32 (d + pos + 22, ogg_crc (d + pos, header + body, 22));
      pos += header + body;
    }
}

static GByteArray *
seed_opus (void)
{
  GByteArray *b = g_byte_array_new ();
  guchar head[19] = "OpusHead";
  guchar tags[24] = "OpusTags";
  guchar audio[600];

  head[8] = 1;
  head[9] = 2;
  put_le16 (head + 10, 312);
  put_le32 (head + 12, 48000);
  for (gsize i = 0; i < sizeof audio; i++)
    audio[i] = (guchar) (i * 13);
  add_page (b, 0x02, 0, 0, head, sizeof head);
  add_page (b, 0x00, 0, 1, tags, sizeof tags);
  add_page (b, 0x04, 48000 + 312, 2, audio, sizeof audio);
  fix_crcs (b->data, b->len);
  return b;
}

int
main (int argc, char **argv)
{
  guint iterations = argc > 1 ? (guint) atoi (argv[1]) : 20000;
  GRand *rand = g_rand_new_with_seed (argc > 2 ? (guint32) atoi (argv[2]) : 1);
  GByteArray *seeds[2];
  guint accepted = 0;

  ogg_crc_init ();
  seeds[0] = seed_wav ();
  seeds[1] = seed_opus ();

  for (int i = 0; i < 2; i++)
    {
      SoundInfo info = { 0 };
      const char *why = NULL;
      gboolean ok = i == 0 ? check_wav (seeds[i]->data, seeds[i]->len, &info, &why)
                           : check_ogg (seeds[i]->data, seeds[i]->len, &info, &why);

      if (!ok)
        g_error ("seed %d refused: %s", i, why);
    }
  for (guint n = 0; n < iterations; n++)
    {
      GByteArray *seed = seeds[n % 2];
      gsize len = seed->len;
      g_autofree guchar *d = g_memdup2 (seed->data, len);
      guint flips = g_rand_int_range (rand, 1, 8);
      SoundInfo info = { 0 };
      const char *why = NULL;
      gboolean ok;

      for (guint f = 0; f < flips; f++)
        {
          gsize at = g_rand_int_range (rand, 0, (gint32) len);

          switch (g_rand_int_range (rand, 0, 4))
            {
            case 0: d[at] ^= 1u << g_rand_int_range (rand, 0, 8); break;
            case 1: d[at] = g_rand_int_range (rand, 0, 256); break;
            case 2: d[at] = (guchar[]) { 0, 0xff, 0x7f, 0x80, 1 }[g_rand_int_range (rand, 0, 5)]; break;
            default: len = at + 1; break; /* truncate */
            }
        }
      if (n % 2 == 1)
        fix_crcs (d, len);
      /* A copy of exactly @len bytes, so ASan sees any read past the end. */
      {
        g_autofree guchar *exact = g_memdup2 (d, len);

        ok = len >= 4 && memcmp (exact, "RIFF", 4) == 0 ? check_wav (exact, len, &info, &why)
                                             : check_ogg (exact, len, &info, &why);
      }
      if (ok)
        {
          accepted++;
          g_assert_true (info.channels >= 1 && info.channels <= 8);
          g_assert_true (info.rate >= 8000 && info.rate <= 192000);
          g_assert_nonnull (info.format);
        }
      else
        g_assert_nonnull (why);
    }
  printf ("%u of %u mutated inputs accepted\n", accepted, iterations);
  g_byte_array_unref (seeds[0]);
  g_byte_array_unref (seeds[1]);
  g_rand_free (rand);
  return 0;
}
