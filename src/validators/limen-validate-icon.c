/* limen-validate-icon: decide whether bytes from an app are an icon we may show.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs as its own short-lived process (with tight resource limits set by the frontend),
 * so a malformed image can at worst crash this program, never limen-portal. Reads the
 * image from stdin, prints "FORMAT WIDTH HEIGHT" and exits 0 when it is a well-formed
 * PNG, JPEG or SVG within the size limit; exits 1 otherwise with the reason on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "validator-main.h"

#define DATA_MAX (4 * 1024 * 1024)

static guint32
be32 (const guchar *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

static guint32 crc_table[256];

static void
crc_init (void)
{
  for (guint32 n = 0; n < 256; n++)
    {
      guint32 c = n;

      for (int k = 0; k < 8; k++)
        c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      crc_table[n] = c;
    }
}

static guint32
crc32_of (const guchar *p, gsize len)
{
  guint32 c = 0xffffffffu;

  for (gsize i = 0; i < len; i++)
    c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

/* Every chunk in bounds with a correct CRC, IHDR first, IEND last. */
static gboolean
check_png (const guchar *d, gsize len, guint *w, guint *h, const char **why)
{
  gsize pos = 8;
  gboolean first = TRUE, end = FALSE;

  crc_init ();
  while (pos + 12 <= len && !end)
    {
      guint32 clen = be32 (d + pos);
      const guchar *type = d + pos + 4;

      if (clen > len - pos - 12)
        {
          *why = "PNG chunk runs past the end";
          return FALSE;
        }
      if (crc32_of (type, clen + 4) != be32 (type + 4 + clen))
        {
          *why = "PNG chunk with a bad CRC";
          return FALSE;
        }
      if (first)
        {
          if (memcmp (type, "IHDR", 4) != 0 || clen != 13)
            {
              *why = "PNG without IHDR";
              return FALSE;
            }
          *w = be32 (type + 4);
          *h = be32 (type + 8);
          first = FALSE;
        }
      end = memcmp (type, "IEND", 4) == 0;
      pos += 12 + clen;
    }
  if (!end)
    *why = "PNG without IEND";
  return end;
}

/* Walk the JPEG markers up to the frame header. */
static gboolean
check_jpeg (const guchar *d, gsize len, guint *w, guint *h, const char **why)
{
  gsize pos = 2;

  while (pos + 4 <= len)
    {
      guchar marker;
      gsize seg;

      if (d[pos] != 0xff)
        {
          *why = "JPEG marker expected";
          return FALSE;
        }
      marker = d[pos + 1];
      seg = ((gsize) d[pos + 2] << 8) | d[pos + 3];
      if (seg < 2 || pos + 2 + seg > len)
        {
          *why = "JPEG segment runs past the end";
          return FALSE;
        }
      if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc)
        {
          if (seg < 7)
            {
              *why = "JPEG frame header too short";
              return FALSE;
            }
          *h = ((guint) d[pos + 5] << 8) | d[pos + 6];
          *w = ((guint) d[pos + 7] << 8) | d[pos + 8];
          return TRUE;
        }
      pos += 2 + seg;
    }
  *why = "JPEG without a frame header";
  return FALSE;
}

typedef struct {
  gboolean root_seen;
  guint    width, height;
  const char *why;
} SvgState;

static guint
svg_length (const char *s)
{
  char *end = NULL;
  double v = g_ascii_strtod (s, &end);

  if (end == s || v <= 0 || v > 100000)
    return 0;
  return (guint) v;
}

static void
svg_start (GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
           gpointer user_data, GError **error)
{
  SvgState *st = user_data;

  for (guint i = 0; names[i]; i++)
    {
      /* An icon must be self-contained: no fetching of other files or URLs. */
      if ((g_str_equal (names[i], "href") || g_str_equal (names[i], "xlink:href")) &&
          !g_str_has_prefix (values[i], "#") && !g_str_has_prefix (values[i], "data:"))
        {
          g_set_error_literal (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "external reference");
          return;
        }
    }
  if (st->root_seen)
    return;
  st->root_seen = TRUE;
  if (!g_str_equal (element, "svg") && !g_str_has_suffix (element, ":svg"))
    {
      g_set_error_literal (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "root is not svg");
      return;
    }
  st->width = st->height = 16;
  for (guint i = 0; names[i]; i++)
    {
      if (g_str_equal (names[i], "width"))
        st->width = svg_length (values[i]);
      else if (g_str_equal (names[i], "height"))
        st->height = svg_length (values[i]);
    }
}

static void
svg_passthrough (GMarkupParseContext *ctx, const char *text, gsize len, gpointer user_data, GError **error)
{
  /* DOCTYPE and entity declarations could expand without bound or pull in files. */
  if (g_strstr_len (text, len, "<!DOCTYPE") || g_strstr_len (text, len, "<!ENTITY"))
    g_set_error_literal (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "DOCTYPE or ENTITY");
}

static gboolean
check_svg (const guchar *d, gsize len, guint *w, guint *h, const char **why)
{
  GMarkupParser parser = { .start_element = svg_start, .passthrough = svg_passthrough };
  SvgState st = { 0 };
  g_autoptr(GMarkupParseContext) ctx = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_utf8_validate ((const char *) d, len, NULL))
    {
      *why = "SVG is not UTF-8";
      return FALSE;
    }
  ctx = g_markup_parse_context_new (&parser, 0, &st, NULL);
  if (!g_markup_parse_context_parse (ctx, (const char *) d, len, &error) ||
      !g_markup_parse_context_end_parse (ctx, &error) || !st.root_seen)
    {
      *why = "not a well-formed SVG document";
      return FALSE;
    }
  *w = st.width;
  *h = st.height;
  return TRUE;
}

int
main (int argc, char **argv)
{
  int max_size = 512;
  g_autofree guchar *data = NULL;
  gsize len = 0;
  int status;
  guint w = 0, h = 0;
  const char *format = "", *why = "unknown format";
  gboolean ok = FALSE;

  status = limen_validator_start (argc, argv, "< IMAGE", "max-size", "Largest accepted width and height in pixels",
                                  &max_size, DATA_MAX, &data, &len);
  if (status >= 0)
    return status;
  if (len >= 8 && memcmp (data, "\x89PNG\r\n\x1a\n", 8) == 0)
    ok = check_png (data, len, &w, &h, &why), format = "png";
  else if (len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
    ok = check_jpeg (data, len, &w, &h, &why), format = "jpeg";
  else
    ok = check_svg (data, len, &w, &h, &why), format = "svg";
  /* A vector icon scales to any size; only bitmaps are held to the limit. */
  if (ok && (w == 0 || h == 0 || (strcmp (format, "svg") != 0 && (w > (guint) max_size || h > (guint) max_size))))
    {
      ok = FALSE;
      why = "size out of range";
    }
  if (!ok)
    {
      fprintf (stderr, "rejected: %s\n", why);
      return 1;
    }
  printf ("%s %u %u\n", format, w, h);
  return 0;
}
