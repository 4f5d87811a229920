/* limen-documents — what the PermissionStore accepts: table names, ids, apps and their
 * permissions within the store's limits, and an a{sas} serialized in one walk after the
 * checks (limen_perm_serialize_app_perms).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perm-store-private.h"

#include <string.h>

#include "errors.h"

#define TABLE_NAME_MAX 128
#define ID_MAX 4096
#define APP_MAX 1024
#define PERM_MAX 256
#define PERMS_PER_APP_MAX 256

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

gboolean
limen_perm_check_table_id (const char *table, const char *id, GError **error)
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

gboolean
limen_perm_check_app_perms (const char *app, const char * const *perms, GError **error)
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
