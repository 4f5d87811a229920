/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "options.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "errors.h"

#define DEFAULT_STRING_MAX 4096
#define DEFAULT_STRV_MAX 1024

void
limen_option_set_error (GError **error, const char *key, const char *reason)
{
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
               "Invalid value for option %s: %s", key, reason);
}

gboolean
limen_token_is_valid (const char *token)
{
  gsize len = 0;

  if (token == NULL || *token == '\0')
    return FALSE;
  for (const char *p = token; *p; p++, len++)
    {
      if (!(g_ascii_isalnum (*p) || *p == '_'))
        return FALSE;
      if (len >= 64)
        return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_token (const LimenOption *o, GVariant *v, GError **e)
{
  if (!limen_token_is_valid (g_variant_get_string (v, NULL)))
    {
      g_set_error (e, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid token for option %s: must be 1 to 64 characters of [A-Za-z0-9_]", o->key);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_string (const char *key, const char *s, gsize len, gsize max, GError **e)
{
  if (len > max)
    {
      g_autofree char *reason = g_strdup_printf ("longer than %" G_GSIZE_FORMAT " bytes", max);
      limen_option_set_error (e, key, reason);
      return FALSE;
    }
  if (!g_utf8_validate (s, len, NULL))
    {
      limen_option_set_error (e, key, "not valid UTF-8");
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_string_length (const LimenOption *o, GVariant *v, GError **e)
{
  gsize len;
  const char *s = g_variant_get_string (v, &len);

  return check_string (o->key, s, len, o->max ? o->max : DEFAULT_STRING_MAX, e);
}

gboolean
limen_validate_string_or_drop (const LimenOption *o, GVariant *v, GError **e)
{
  return strlen (g_variant_get_string (v, NULL)) <= (o->max ? o->max : 4096);
}

gboolean
limen_validate_bool (const LimenOption *o, GVariant *v, GError **e)
{
  /* The type check already did the work; kept so tables read uniformly. */
  return TRUE;
}

gboolean
limen_validate_uint_max (const LimenOption *o, GVariant *v, GError **e)
{
  if (g_variant_get_uint32 (v) > o->max)
    {
      g_autofree char *reason = g_strdup_printf ("larger than %" G_GSIZE_FORMAT, o->max);
      limen_option_set_error (e, o->key, reason);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_strv_length (const LimenOption *o, GVariant *v, GError **e)
{
  gsize n = g_variant_n_children (v);
  gsize max = o->max ? o->max : DEFAULT_STRV_MAX;

  if (n > max)
    {
      g_autofree char *reason = g_strdup_printf ("more than %" G_GSIZE_FORMAT " entries", max);
      limen_option_set_error (e, o->key, reason);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      gsize len;
      g_autoptr(GVariant) child = g_variant_get_child_value (v, i);
      const char *s = g_variant_get_string (child, &len);

      if (!check_string (o->key, s, len, DEFAULT_STRING_MAX, e))
        return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_fd_index (const LimenOption *o, GVariant *v, GError **e)
{
  if (g_variant_get_handle (v) < 0)
    {
      limen_option_set_error (e, o->key, "negative file descriptor index");
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_byte_path (const LimenOption *o, GVariant *v, GError **e)
{
  gsize len;
  const char *s = g_variant_get_fixed_array (v, &len, 1);

  if (len == 0 || s[len - 1] != '\0')
    {
      limen_option_set_error (e, o->key, "not a NUL-terminated byte string");
      return FALSE;
    }
  if (memchr (s, '\0', len - 1) != NULL)
    {
      limen_option_set_error (e, o->key, "embedded NUL byte");
      return FALSE;
    }
  if (len > PATH_MAX)
    {
      limen_option_set_error (e, o->key, "path too long");
      return FALSE;
    }
  return TRUE;
}

/* The dialog-option validators that the frontend and the backend both apply, so one
 * accepts exactly what the other does. */
#define FILTERS_MAX 1024
#define PATTERNS_MAX 4096   /* Chromium sends an upper and a lower case pattern per extension */
#define CHOICES_MAX 64
#define CHOICE_OPTIONS_MAX 256
#define LABEL_MAX 1024
#define FILE_NAMES_MAX 16384

static gboolean
check_label (const char *key, const char *s, gboolean allow_empty, GError **e)
{
  if (strlen (s) > LABEL_MAX || !g_utf8_validate (s, -1, NULL))
    {
      limen_option_set_error (e, key, "a label is too long or not UTF-8");
      return FALSE;
    }
  if (!allow_empty && *s == '\0')
    {
      limen_option_set_error (e, key, "an id or pattern is empty");
      return FALSE;
    }
  return TRUE;
}

/* One filter (sa(us)): a name and glob (0) or MIME type (1) patterns. */
static gboolean
check_filter (const char *key, GVariant *filter, GError **e)
{
  const char *name, *pattern;
  g_autoptr(GVariantIter) patterns = NULL;
  guint32 kind;
  guint n = 0;

  g_variant_get (filter, "(&sa(us))", &name, &patterns);
  if (!check_label (key, name, TRUE, e))
    return FALSE;
  while (g_variant_iter_next (patterns, "(u&s)", &kind, &pattern))
    {
      if (kind > 1)
        {
          limen_option_set_error (e, key, "pattern kind must be 0 (glob) or 1 (MIME type)");
          return FALSE;
        }
      if (!check_label (key, pattern, FALSE, e))
        return FALSE;
      if (++n > PATTERNS_MAX)
        {
          limen_option_set_error (e, key, "too many patterns");
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
limen_validate_file_filters (const LimenOption *o, GVariant *v, GError **e)
{
  gsize n = g_variant_n_children (v);

  if (n > FILTERS_MAX)
    {
      limen_option_set_error (e, o->key, "too many filters");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) filter = g_variant_get_child_value (v, i);

      if (!check_filter (o->key, filter, e))
        return FALSE;
    }
  return TRUE;
}

gboolean
limen_validate_file_filter (const LimenOption *o, GVariant *v, GError **e)
{
  return check_filter (o->key, v, e);
}

gboolean
limen_validate_choices (const LimenOption *o, GVariant *v, GError **e)
{
  gsize n = g_variant_n_children (v);

  if (n > CHOICES_MAX)
    {
      limen_option_set_error (e, o->key, "too many choices");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      const char *id, *label, *def, *oid, *olabel;
      g_autoptr(GVariantIter) options = NULL;
      gboolean default_found = FALSE;
      guint count = 0;

      g_variant_get_child (v, i, "(&s&sa(ss)&s)", &id, &label, &options, &def);
      if (!check_label (o->key, id, FALSE, e) || !check_label (o->key, label, TRUE, e) ||
          !check_label (o->key, def, TRUE, e))
        return FALSE;
      for (gsize j = 0; j < i; j++)
        {
          const char *other;

          g_variant_get_child (v, j, "(&s&sa(ss)&s)", &other, NULL, NULL, NULL);
          if (g_str_equal (other, id))
            {
              limen_option_set_error (e, o->key, "duplicate choice id");
              return FALSE;
            }
        }
      while (g_variant_iter_next (options, "(&s&s)", &oid, &olabel))
        {
          if (!check_label (o->key, oid, FALSE, e) || !check_label (o->key, olabel, TRUE, e))
            return FALSE;
          if (++count > CHOICE_OPTIONS_MAX)
            {
              limen_option_set_error (e, o->key, "a choice has too many options");
              return FALSE;
            }
          default_found |= g_str_equal (oid, def);
        }
      /* A check box's default is "true"/"false"; a combo box's must be one of its options. */
      if (count == 0 && *def && !g_str_equal (def, "true") && !g_str_equal (def, "false"))
        {
          limen_option_set_error (e, o->key, "a boolean choice's default must be true or false");
          return FALSE;
        }
      if (count > 0 && *def && !default_found)
        {
          limen_option_set_error (e, o->key, "a choice's default is not among its options");
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
limen_validate_file_names (const LimenOption *o, GVariant *v, GError **e)
{
  gsize n = g_variant_n_children (v);

  if (n > FILE_NAMES_MAX)
    {
      limen_option_set_error (e, o->key, "too many files");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) name = g_variant_get_child_value (v, i);
      const char *s;

      if (!limen_validate_byte_path (o, name, e))
        return FALSE;
      s = g_variant_get_bytestring (name);
      if (*s == '\0' || strlen (s) > 255 || strchr (s, '/') != NULL || g_str_equal (s, ".") ||
          g_str_equal (s, ".."))
        {
          limen_option_set_error (e, o->key, "entries must be file names without a directory");
          return FALSE;
        }
    }
  return TRUE;
}

static const LimenOption *
find_option (GPtrArray *tables, const char *key)
{
  for (guint t = 0; t < tables->len; t++)
    for (const LimenOption *o = g_ptr_array_index (tables, t); o->key; o++)
      if (strcmp (o->key, key) == 0)
        return o;
  return NULL;
}

gboolean
limen_options_filter (GVariant        *options,
                      GVariantBuilder *builder,
                      GError         **error,
                      const LimenOption *table,
                      ...)
{
  g_autoptr(GPtrArray) tables = g_ptr_array_new ();
  GVariantIter iter;
  const char *key;
  GVariant *value;
  va_list args;

  g_return_val_if_fail (g_variant_is_of_type (options, G_VARIANT_TYPE_VARDICT), FALSE);

  va_start (args, table);
  for (const LimenOption *t = table; t; t = va_arg (args, const LimenOption *))
    g_ptr_array_add (tables, (gpointer) t);
  va_end (args);

  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;
      const LimenOption *o = find_option (tables, key);

      if (o == NULL)
        {
          /* Unknown keys never travel further: a backend only sees what we checked. A
           * check without a builder (of a few keys only) drops nothing, so says nothing. */
          if (builder)
            g_debug ("Dropping unknown option %s", key);
          continue;
        }
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE (o->type)))
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid type for option %s: expected %s, got %s",
                       key, o->type, g_variant_get_type_string (value));
          return FALSE;
        }
      if (o->validate)
        {
          g_autoptr(GError) local_error = NULL;

          if (!o->validate (o, value, &local_error))
            {
              if (local_error != NULL)
                {
                  g_propagate_error (error, g_steal_pointer (&local_error));
                  return FALSE;
                }
              g_debug ("Dropping option %s: not usable, and not worth refusing the call", key);
              continue;
            }
        }
      if (builder)
        g_variant_builder_add (builder, "{sv}", key, value);
    }
  return TRUE;
}

void
limen_options_filter_lenient (GVariant *options, GVariantBuilder *builder, const char *what,
                              const LimenOption *table)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_return_if_fail (g_variant_is_of_type (options, G_VARIANT_TYPE_VARDICT));
  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;
      GVariant *entry = g_variant_new_dict_entry (g_variant_new_string (key), g_variant_new_variant (value));
      g_autoptr(GVariant) single = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), &entry, 1));
      g_autoptr(GError) error = NULL;

      /* One key at a time through the table's checks, so a bad one costs only itself. */
      if (!limen_options_filter (single, builder, &error, table, NULL))
        g_message ("%s: option left out: %s", what, error->message);
    }
}

#define PARENT_WINDOW_MAX 256

/* The one parent_window check of both daemons: what the frontend lets through is exactly
 * what a backend takes, so a window id never passes one daemon to be refused by the next. */
static gboolean
parent_window_is_valid (const char *window)
{
  if (*window == '\0')
    return TRUE;
  if (strlen (window) > PARENT_WINDOW_MAX || !g_utf8_validate (window, -1, NULL))
    return FALSE;
  if (g_str_has_prefix (window, "x11:"))
    {
      const char *hex = window + 4;
      gsize len;

      /* An XID is 32 bits of hex, with or without "0x" (Chromium sends "x11:%#x"): no sign,
       * no spaces, none of the rest strtoull would take. */
      if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
        hex += 2;
      len = strlen (hex);
      for (const char *p = hex; *p; p++)
        if (!g_ascii_isxdigit (*p))
          return FALSE;
      while (len > 8 && *hex == '0')
        hex++, len--;
      return len > 0 && len <= 8;
    }
  return g_str_has_prefix (window, "wayland:");
}

gboolean
limen_check_parent_window (const char *window, GError **error)
{
  if (!parent_window_is_valid (window))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for parent_window: \"\", \"x11:XID\" or \"wayland:HANDLE\", at most %d bytes",
                   PARENT_WINDOW_MAX);
      return FALSE;
    }
  return TRUE;
}
