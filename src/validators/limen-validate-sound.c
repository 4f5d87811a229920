/* limen-validate-sound: decide whether bytes from an app are a notification sound we may
 * hand to the desktop's sound player.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs as its own short-lived process with tight resource limits set by the frontend, like
 * limen-validate-icon: audio decoders are where malformed input does damage, so the bytes
 * are checked for being exactly one of the formats the Notification specification names
 * (WAV with PCM samples, Ogg with one Vorbis or Opus stream) before any decoder sees them.
 * Reads the sound from stdin; prints "FORMAT CHANNELS RATE MILLISECONDS" and exits 0 when
 * it is well formed and no longer than --max-duration; exits 1 with the reason on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "validator-main.h"

#define DATA_MAX (16 * 1024 * 1024)

typedef struct {
  const char *format;
  guint       channels;
  guint       rate;
  guint64     milliseconds;
} SoundInfo;

static guint16
le16 (const guchar *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static guint32
le32 (const guchar *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

static guint64
le64 (const guchar *p)
{
  return (guint64) le32 (p) | ((guint64) le32 (p + 4) << 32);
}

/* RIFF/WAVE: a fmt chunk describing integer PCM, then a data chunk that holds whole frames,
 * every chunk inside the file. */
static gboolean
check_wav (const guchar *d, gsize len, SoundInfo *info, const char **why)
{
  gsize riff_end, pos = 12;
  gboolean have_fmt = FALSE;
  guint bits = 0, block_align = 0;
  guint32 byte_rate = 0;

  if (len < 12 || memcmp (d + 8, "WAVE", 4) != 0)
    return *why = "not a WAVE file", FALSE;
  riff_end = (gsize) le32 (d + 4) + 8;
  if (riff_end > len || riff_end < 12)
    return *why = "RIFF size does not match the data", FALSE;

  while (pos + 8 <= riff_end)
    {
      const guchar *c = d + pos;
      guint32 size = le32 (c + 4);

      if (size > riff_end - pos - 8)
        return *why = "chunk runs past the end", FALSE;
      if (memcmp (c, "fmt ", 4) == 0)
        {
          guint tag;

          if (have_fmt || size < 16)
            return *why = "bad fmt chunk", FALSE;
          tag = le16 (c + 8);
          info->channels = le16 (c + 10);
          info->rate = le32 (c + 12);
          byte_rate = le32 (c + 16);
          block_align = le16 (c + 20);
          bits = le16 (c + 22);
          /* WAVE_FORMAT_EXTENSIBLE names its real format in the sub-format GUID. */
          if (tag == 0xfffe)
            {
              if (size < 40)
                return *why = "bad extensible fmt chunk", FALSE;
              tag = le16 (c + 8 + 24);
            }
          if (tag != 1)
            return *why = "samples are not PCM", FALSE;
          if (info->channels < 1 || info->channels > 8)
            return *why = "channel count out of range", FALSE;
          if (info->rate < 8000 || info->rate > 192000)
            return *why = "sample rate out of range", FALSE;
          if (bits != 8 && bits != 16 && bits != 24 && bits != 32)
            return *why = "sample size out of range", FALSE;
          if (block_align != info->channels * bits / 8 || byte_rate != info->rate * block_align)
            return *why = "fmt fields contradict each other", FALSE;
          have_fmt = TRUE;
        }
      else if (memcmp (c, "data", 4) == 0)
        {
          if (!have_fmt)
            return *why = "data before fmt", FALSE;
          /* No frames at all is silence, and still a well-formed WAV: accepted. */
          if (size % block_align != 0)
            return *why = "data does not hold whole frames", FALSE;
          info->format = "wav";
          info->milliseconds = (guint64) size * 1000 / byte_rate;
          return TRUE;
        }
      pos += 8 + (gsize) size + (size & 1);
    }
  return *why = "no data chunk", FALSE;
}

static guint32 ogg_crc_table[256];

static void
ogg_crc_init (void)
{
  /* Ogg's CRC-32: polynomial 0x04c11db7, MSB first, no reflection, no final xor. */
  for (guint32 n = 0; n < 256; n++)
    {
      guint32 c = n << 24;

      for (int k = 0; k < 8; k++)
        c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
      ogg_crc_table[n] = c;
    }
}

static guint32
ogg_crc (const guchar *p, gsize len, gsize crc_at)
{
  guint32 crc = 0;

  for (gsize i = 0; i < len; i++)
    {
      guchar b = (i >= crc_at && i < crc_at + 4) ? 0 : p[i];

      crc = (crc << 8) ^ ogg_crc_table[((crc >> 24) & 0xff) ^ b];
    }
  return crc;
}

/* The identification header of the stream's codec: Opus or Vorbis, nothing else. */
static gboolean
check_ident (const guchar *p, gsize len, SoundInfo *info, guint *pre_skip, const char **why)
{
  if (len >= 19 && memcmp (p, "OpusHead", 8) == 0)
    {
      guint family = p[18];

      if ((p[8] & 0xf0) != 0)
        return *why = "unsupported Opus version", FALSE;
      info->channels = p[9];
      *pre_skip = le16 (p + 10);
      info->rate = 48000; /* Opus always decodes at 48 kHz */
      if (info->channels < 1 || (family == 0 && info->channels > 2) || info->channels > 8)
        return *why = "channel count out of range", FALSE;
      if (family != 0 && (family != 1 || len < 21u + info->channels))
        return *why = "unsupported Opus channel mapping", FALSE;
      info->format = "opus";
      return TRUE;
    }
  if (len >= 30 && memcmp (p, "\x01vorbis", 7) == 0)
    {
      guint bs0 = p[28] & 0x0f, bs1 = p[28] >> 4;

      info->channels = p[11];
      info->rate = le32 (p + 12);
      if (le32 (p + 7) != 0)
        return *why = "unsupported Vorbis version", FALSE;
      if (info->channels < 1 || info->channels > 8)
        return *why = "channel count out of range", FALSE;
      if (info->rate < 8000 || info->rate > 192000)
        return *why = "sample rate out of range", FALSE;
      if (bs0 < 6 || bs1 > 13 || bs0 > bs1 || (p[29] & 1) == 0)
        return *why = "bad Vorbis identification header", FALSE;
      info->format = "vorbis";
      return TRUE;
    }
  return *why = "Ogg stream is neither Opus nor Vorbis", FALSE;
}

/* Reassemble the first two packets of the stream (the codec headers) from one page's
 * segments (@lacing, @nsegs of them, data at @seg) and check each as it completes. */
static gboolean
take_codec_headers (const guchar *seg, const guchar *lacing, guint nsegs, GByteArray *packet, guint *packets,
                    SoundInfo *info, guint *pre_skip, const char **why)
{
  for (guint i = 0; i < nsegs && *packets < 2; i++)
    {
      guint n = lacing[i];

      g_byte_array_append (packet, seg, n);
      seg += n;
      if (packet->len > 1024 * 1024)
        {
          *why = "codec header too large";
          return FALSE;
        }
      if (n == 255)
        continue;
      if (*packets == 0 && !check_ident (packet->data, packet->len, info, pre_skip, why))
        return FALSE;
      if (*packets == 1 && !(strcmp (info->format, "opus") == 0
                             ? packet->len >= 16 && memcmp (packet->data, "OpusTags", 8) == 0
                             : packet->len >= 7 && memcmp (packet->data, "\x03vorbis", 7) == 0))
        {
          *why = "missing comment header";
          return FALSE;
        }
      (*packets)++;
      g_byte_array_set_size (packet, 0);
    }
  return TRUE;
}

/* Ogg: consecutive pages of one logical stream, each with a valid CRC, from a BOS page to
 * an EOS page; its first packet an Opus or Vorbis identification header, its second the
 * codec's comment header. */
static gboolean
check_ogg (const guchar *d, gsize len, SoundInfo *info, const char **why)
{
  gsize pos = 0;
  guint32 serial = 0, expect_seq = 0;
  gboolean eos = FALSE;
  guint pre_skip = 0, packets = 0;
  gint64 last_granule = -1;
  GByteArray *packet = g_byte_array_new ();
  gboolean ok = FALSE;

  ogg_crc_init ();
  while (pos < len)
    {
      const guchar *pg = d + pos;
      guint flags, nsegs;
      gsize header, body = 0;
      guint64 granule;

      if (eos)
        {
          *why = "data after the end of the stream";
          goto out;
        }
      if (len - pos < 27 || memcmp (pg, "OggS", 4) != 0 || pg[4] != 0)
        {
          *why = "bad Ogg page header";
          goto out;
        }
      flags = pg[5];
      nsegs = pg[26];
      header = 27 + nsegs;
      if (len - pos < header)
        {
          *why = "truncated Ogg page";
          goto out;
        }
      for (guint i = 0; i < nsegs; i++)
        body += pg[27 + i];
      if (len - pos - header < body)
        {
          *why = "truncated Ogg page";
          goto out;
        }
      if ((flags & ~0x07u) != 0 || ((flags & 0x02) != 0) != (pos == 0))
        {
          *why = "bad Ogg page flags";
          goto out;
        }
      if (pos == 0)
        serial = le32 (pg + 14);
      else if (le32 (pg + 14) != serial)
        {
          *why = "more than one logical stream";
          goto out;
        }
      if (le32 (pg + 18) != expect_seq++)
        {
          *why = "Ogg pages out of sequence";
          goto out;
        }
      if (ogg_crc (pg, header + body, 22) != le32 (pg + 22))
        {
          *why = "Ogg page checksum mismatch";
          goto out;
        }
      if (packets < 2 && ((flags & 0x01) != 0) != (packet->len > 0))
        {
          *why = "packet continuation does not match";
          goto out;
        }

      if (!take_codec_headers (pg + header, pg + 27, nsegs, packet, &packets, info, &pre_skip, why))
        goto out;

      granule = le64 (pg + 6);
      if (granule != G_MAXUINT64)
        {
          if (granule > (guint64) G_MAXINT64 || (gint64) granule < last_granule)
            {
              *why = "granule positions go backwards";
              goto out;
            }
          last_granule = (gint64) granule;
        }
      eos = (flags & 0x04) != 0;
      pos += header + body;
    }
  if (!eos || packets < 2)
    {
      *why = packets < 2 ? "missing codec headers" : "stream has no end";
      goto out;
    }
  if (last_granule <= (gint64) pre_skip)
    {
      *why = "no audio";
      goto out;
    }
  info->milliseconds = (guint64) (last_granule - pre_skip) * 1000 / info->rate;
  ok = TRUE;

out:
  g_byte_array_unref (packet);
  return ok;
}

#ifndef LIMEN_VALIDATOR_NO_MAIN /* the fuzz test includes this file for its checks */
int
main (int argc, char **argv)
{
  int max_duration = 30;
  g_autofree guchar *data = NULL;
  gsize len = 0;
  int status;
  SoundInfo info = { 0 };
  const char *why = "unknown format";
  gboolean ok = FALSE;

  status = limen_validator_start (argc, argv, "< SOUND", "max-duration", "Longest accepted sound in seconds",
                                  &max_duration, DATA_MAX, &data, &len);
  if (status >= 0)
    return status;
  if (len >= 4 && memcmp (data, "RIFF", 4) == 0)
    ok = check_wav (data, len, &info, &why);
  else if (len >= 4 && memcmp (data, "OggS", 4) == 0)
    ok = check_ogg (data, len, &info, &why);
  if (ok && info.milliseconds > (guint64) max_duration * 1000)
    {
      ok = FALSE;
      why = "longer than allowed";
    }
  if (!ok)
    {
      fprintf (stderr, "rejected: %s\n", why);
      return 1;
    }
  printf ("%s %u %u %" G_GUINT64_FORMAT "\n", info.format, info.channels, info.rate, info.milliseconds);
  return 0;
}
#endif
