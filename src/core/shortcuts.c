/* Limen — GlobalShortcuts' shortcut lists.
 *
 * An id becomes a KGlobalAccel action name (a key in kglobalshortcutsrc) and a permission
 * store entry, and is shown to the person: so it is bounded and has no control characters,
 * and two entries with one id would make the answer ambiguous.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shortcuts.h"

#include <string.h>

#include "errors.h"

const LimenOption limen_shortcut_proposal_keys[] = {
  { "description", "s", limen_validate_string_length, LIMEN_SHORTCUT_DESCRIPTION_MAX },
  { "preferred_trigger", "s", limen_validate_string_length, LIMEN_SHORTCUT_TRIGGER_MAX },
  { NULL }
};

const LimenOption limen_shortcut_result_keys[] = {
  { "description", "s", limen_validate_string_length, LIMEN_SHORTCUT_DESCRIPTION_MAX },
  { "trigger_description", "s", limen_validate_string_length, LIMEN_SHORTCUT_TRIGGER_MAX * 4 },
  { NULL }
};

const LimenOption limen_options_global_shortcuts_configure[] = {
  { "activation_token", "s", limen_validate_string_length, LIMEN_SHORTCUT_TOKEN_MAX },
  { NULL }
};

const LimenOption limen_options_global_shortcuts_key_event[] = {
  { "activation_token", "s", limen_validate_string_length, LIMEN_SHORTCUT_TOKEN_MAX },
  { NULL }
};

gboolean
limen_shortcut_id_is_valid (const char *id)
{
  gsize len = strlen (id);

  if (len == 0 || len > LIMEN_SHORTCUT_ID_MAX || !g_utf8_validate (id, len, NULL))
    return FALSE;
  for (const char *p = id; *p; p = g_utf8_next_char (p))
    if (g_unichar_iscntrl (g_utf8_get_char (p)))
      return FALSE;
  return TRUE;
}

GVariant *
limen_shortcuts_filter (GVariant *shortcuts, const LimenOption *keys, GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_auto(GVariantBuilder) out = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));
  gsize n;

  if (!g_variant_is_of_type (shortcuts, G_VARIANT_TYPE ("a(sa{sv})")))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid shortcuts: expected a(sa{sv})");
      return NULL;
    }
  n = g_variant_n_children (shortcuts);
  if (n > LIMEN_SHORTCUTS_MAX)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid shortcuts: more than %d", LIMEN_SHORTCUTS_MAX);
      return NULL;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_auto(GVariantBuilder) entry = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      g_autoptr(GVariant) values = NULL;
      const char *id;

      g_variant_get_child (shortcuts, i, "(&s@a{sv})", &id, &values);
      if (!limen_shortcut_id_is_valid (id))
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid shortcut %" G_GSIZE_FORMAT ": its id must be 1 to %d bytes without control characters",
                       i, LIMEN_SHORTCUT_ID_MAX);
          return NULL;
        }
      if (!g_hash_table_add (seen, (gpointer) id))
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid shortcut %" G_GSIZE_FORMAT ": its id is used twice", i);
          return NULL;
        }
      if (!limen_options_filter (values, &entry, error, keys, NULL))
        {
          g_prefix_error (error, "Shortcut %" G_GSIZE_FORMAT ": ", i);
          return NULL;
        }
      g_variant_builder_add (&out, "(s@a{sv})", id, g_variant_builder_end (&entry));
    }
  return g_variant_builder_end (&out);
}
