/* Fuzz target for limen-validate-sound's checks: any bytes must be refused, or accepted
 * with sane fields; never crash or read out of bounds. Each input is also checked with its
 * Ogg page checksums redone, so that mutations reach the parser's later stages, not only
 * the CRC test. Seeds: a structurally valid WAV and an Ogg Opus stream. See fuzz.h.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define LIMEN_VALIDATOR_NO_MAIN
#include "../../src/validators/limen-validate-sound.c"

#include "fuzz.h"

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

const char *const limen_fuzz_tokens[] = { "RIFF", "WAVE", "fmt ", "data", "OggS", "OpusHead", "OpusTags", NULL };

void
limen_fuzz_seeds (GPtrArray *out)
{
  GByteArray *wav, *opus;

  ogg_crc_init ();
  wav = seed_wav ();
  opus = seed_opus ();
  g_ptr_array_add (out, g_byte_array_free_to_bytes (wav));
  g_ptr_array_add (out, g_byte_array_free_to_bytes (opus));
}

static void
check (const guint8 *data, gsize len)
{
  SoundInfo info = { 0 };
  const char *why = NULL;
  gboolean ok = len >= 4 && memcmp (data, "RIFF", 4) == 0 ? check_wav (data, len, &info, &why)
                                                          : check_ogg (data, len, &info, &why);

  if (ok)
    {
      g_assert_true (info.channels >= 1 && info.channels <= 8);
      g_assert_true (info.rate >= 8000 && info.rate <= 192000);
      g_assert_nonnull (info.format);
    }
  else
    g_assert_nonnull (why);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static gboolean table_made;
  g_autofree guint8 *repaired = g_malloc (MAX (size, 1));

  if (!table_made)
    ogg_crc_init ();
  table_made = TRUE;
  memcpy (repaired, data, size);
  check (data, size);
  fix_crcs (repaired, size);
  check (repaired, size);
  return 0;
}
