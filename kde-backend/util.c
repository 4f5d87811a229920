/* Limen — small helpers the limen-kde dialogs share: choices, argument checks, replies
 * (the call that waits on a dialog is the driver's, driver.c).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>
#include <glib/gi18n.h>
#include <gio/gdesktopappinfo.h>

#include "errors.h"

static const char *
keep (LimenKdeChoices *c, const char *s)
{
  char *copy = g_strdup (s);

  g_ptr_array_add (c->strings, copy);
  return copy;
}

void
limen_kde_choices_init (LimenKdeChoices *out, GVariant *choices)
{
  out->strings = g_ptr_array_new_with_free_func (g_free);
  out->arrays = g_ptr_array_new_with_free_func (g_free);
  out->choices = g_array_new (FALSE, TRUE, sizeof (LimenQtChoice));
  if (!choices)
    return;
  for (gsize i = 0; i < g_variant_n_children (choices); i++)
    {
      const char *id, *label, *initial;
      g_autoptr(GVariant) options = NULL;
      LimenQtChoice c = { 0 };
      const char **ids, **labels;

      g_variant_get_child (choices, i, "(&s&s@a(ss)&s)", &id, &label, &options, &initial);
      c.id = keep (out, id);
      c.label = keep (out, label);
      c.initial = keep (out, initial);
      c.n_options = g_variant_n_children (options);
      ids = g_new0 (const char *, c.n_options + 1);
      labels = g_new0 (const char *, c.n_options + 1);
      g_ptr_array_add (out->arrays, ids);
      g_ptr_array_add (out->arrays, labels);
      for (gsize j = 0; j < c.n_options; j++)
        {
          const char *oid, *olabel;

          g_variant_get_child (options, j, "(&s&s)", &oid, &olabel);
          ids[j] = keep (out, oid);
          labels[j] = keep (out, olabel);
        }
      c.option_ids = ids;
      c.option_labels = labels;
      g_array_append_val (out->choices, c);
    }
}

void
limen_kde_choices_clear (LimenKdeChoices *choices)
{
  g_clear_pointer (&choices->strings, g_ptr_array_unref);
  g_clear_pointer (&choices->arrays, g_ptr_array_unref);
  g_clear_pointer (&choices->choices, g_array_unref);
}

GVariant *
limen_kde_choices_result (size_t n, const LimenQtChoiceResult *results)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ss)"));
  for (size_t i = 0; i < n; i++)
    g_variant_builder_add (&b, "(ss)", results[i].id, results[i].value);
  return g_variant_builder_end (&b);
}

gboolean
limen_kde_check_string_arg (const char *name, const char *value, gsize max, GError **error)
{
  if (strlen (value) > max || !g_utf8_validate (value, -1, NULL))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid %s: longer than %" G_GSIZE_FORMAT " bytes or not UTF-8", name, max);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_kde_check_request_args (const char *handle, const char *app_id, const char *parent_window, GError **error)
{
  return limen_kde_request_check_handle (handle, error) &&
         limen_kde_check_string_arg ("app_id", app_id, 255, error) &&
         limen_check_parent_window (parent_window, error);
}

void
limen_kde_reply_response (GDBusMethodInvocation *invocation, guint response, GVariant *results)
{
  if (!results)
    results = g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0);
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(u@a{sv})", response, results));
}

char *
limen_kde_app_display_name (const char *app_id)
{
  g_autofree char *desktop_id = NULL;
  g_autoptr(GDesktopAppInfo) info = NULL;

  if (!*app_id)
    return g_strdup (_("Unidentified application"));
  desktop_id = g_strconcat (app_id, ".desktop", NULL);
  info = g_desktop_app_info_new (desktop_id);
  if (info && g_app_info_get_display_name (G_APP_INFO (info)))
    return g_strdup (g_app_info_get_display_name (G_APP_INFO (info)));
  return g_strdup (app_id);
}
