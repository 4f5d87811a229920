/* Limen — org.freedesktop.impl.portal.FileChooser: OpenFile, SaveFile, SaveFiles on
 * KDE's file widget.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include "option-tables.h"

#define TITLE_ARG 3

static void
on_done (LimenQtDialog *dialog, int response, const LimenQtFileChooserResult *result, void *user_data)
{
  GPtrArray *filters = limen_kde_call_get_data (user_data);   /* GVariant (sa(us)), in dialog order */
  GVariantBuilder results;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && result)
    {
      GVariantBuilder uris;

      g_variant_builder_init (&uris, G_VARIANT_TYPE_STRING_ARRAY);
      for (size_t i = 0; i < result->n_uris; i++)
        if (g_utf8_validate (result->uris[i], -1, NULL))
          g_variant_builder_add (&uris, "s", result->uris[i]);
      g_variant_builder_add (&results, "{sv}", "uris", g_variant_builder_end (&uris));
      if (result->n_choices > 0)
        g_variant_builder_add (&results, "{sv}", "choices",
                               limen_kde_choices_result (result->n_choices, result->choices));
      if (result->filter >= 0 && (guint) result->filter < filters->len)
        g_variant_builder_add (&results, "{sv}", "current_filter", g_ptr_array_index (filters, result->filter));
    }
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static char *
lookup_path (GVariant *opts, const char *key)
{
  g_autoptr(GVariant) v = g_variant_lookup_value (opts, key, G_VARIANT_TYPE_BYTESTRING);

  return v ? g_strdup (g_variant_get_bytestring (v)) : NULL;
}

/* The filter list as shown: the given filters, and current_filter appended when it is not
 * one of them (with no list it is the one filter that applies). @shown gets the variants
 * (the answer names the chosen one), @keep the pattern arrays the LimenQtFilters point into. */
static GArray *
build_filters (GPtrArray *shown, GVariant *filters_v, GVariant *current_v, GPtrArray *keep, int *current)
{
  GArray *qt_filters = g_array_new (FALSE, TRUE, sizeof (LimenQtFilter));

  *current = -1;
  for (gsize i = 0; filters_v && i < g_variant_n_children (filters_v); i++)
    g_ptr_array_add (shown, g_variant_get_child_value (filters_v, i));
  if (current_v)
    {
      for (guint i = 0; i < shown->len; i++)
        if (g_variant_equal (g_ptr_array_index (shown, i), current_v))
          *current = (int) i;
      if (*current < 0)
        {
          *current = (int) shown->len;
          g_ptr_array_add (shown, g_variant_ref (current_v));
        }
    }
  for (guint i = 0; i < shown->len; i++)
    {
      GVariant *f = g_ptr_array_index (shown, i);
      g_autoptr(GVariant) patterns = g_variant_get_child_value (f, 1);
      gsize n = g_variant_n_children (patterns);
      LimenQtFilterPattern *p = g_new0 (LimenQtFilterPattern, n + 1);
      LimenQtFilter qf = { 0 };

      g_ptr_array_add (keep, p);
      g_variant_get_child (f, 0, "&s", &qf.name);
      for (gsize j = 0; j < n; j++)
        {
          guint32 type;

          g_variant_get_child (patterns, j, "(u&s)", &type, &p[j].pattern);
          p[j].is_mime = type == 1;
        }
      qf.n_patterns = n;
      qf.patterns = p;
      g_array_append_val (qt_filters, qf);
    }
  return qt_filters;
}

/* SaveFiles' file names as C strings (owned by @keep); NULL without any. */
static const char **
build_files (GVariant *files_v, GPtrArray *keep, size_t *n_files)
{
  const char **files;
  gsize n;

  *n_files = 0;
  if (files_v == NULL)
    return NULL;
  n = g_variant_n_children (files_v);
  files = g_new0 (const char *, n + 1);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (files_v, i);
      char *name = g_strdup (g_variant_get_bytestring (child));

      g_ptr_array_add (keep, name);
      files[i] = name;
    }
  *n_files = n;
  return files;
}

static gboolean
check_title (LimenKdeCall *call, GError **error)
{
  return limen_kde_check_string_arg ("title", limen_kde_call_get_string (call, TITLE_ARG), 1024, error);
}

static gboolean
open_file_dialog (LimenKdeCall *call, LimenQtFileMode mode, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  g_autoptr(GVariant) filters_v = g_variant_lookup_value (opts, "filters", G_VARIANT_TYPE ("a(sa(us))"));
  g_autoptr(GVariant) current_v = g_variant_lookup_value (opts, "current_filter", G_VARIANT_TYPE ("(sa(us))"));
  g_autoptr(GVariant) choices_v = g_variant_lookup_value (opts, "choices", G_VARIANT_TYPE ("a(ssa(ss)s)"));
  g_autoptr(GVariant) files_v = g_variant_lookup_value (opts, "files", G_VARIANT_TYPE ("aay"));
  g_autofree char *current_folder = lookup_path (opts, "current_folder");
  g_autofree char *current_file = lookup_path (opts, "current_file");
  g_autofree char *state_file = g_build_filename (g_get_user_config_dir (), "limen-kderc", NULL);
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *filters = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_autoptr(GArray) qt_filters = NULL;
  g_autofree const char **files = NULL;
  gboolean multiple = FALSE, directory = FALSE, opened;
  LimenQtFileChooserSpec spec = { 0 };
  LimenKdeChoices choices;

  limen_kde_call_set_data (call, filters, (GDestroyNotify) g_ptr_array_unref);
  qt_filters = build_filters (filters, filters_v, current_v, keep, &spec.current_filter);
  files = build_files (files_v, keep, &spec.n_files);
  limen_kde_choices_init (&choices, choices_v);
  g_variant_lookup (opts, "accept_label", "&s", &spec.accept_label);
  g_variant_lookup (opts, "multiple", "b", &multiple);
  g_variant_lookup (opts, "directory", "b", &directory);
  g_variant_lookup (opts, "current_name", "&s", &spec.current_name);
  limen_kde_call_window (call, &spec.window);
  spec.mode = mode;
  spec.title = limen_kde_call_get_string (call, TITLE_ARG);
  spec.multiple = multiple;
  spec.directory = directory;
  spec.files = files;
  spec.n_filters = qt_filters->len;
  spec.filters = (const LimenQtFilter *) qt_filters->data;
  spec.n_choices = choices.choices->len;
  spec.choices = (const LimenQtChoice *) choices.choices->data;
  spec.current_folder = current_folder;
  spec.current_file = current_file;
  spec.state_file = state_file;
  opened = limen_kde_call_opened (call, shim->limen_qt_file_chooser_open (&spec, (LimenQtFileChooserDone) done,
                                                                         call));
  limen_kde_choices_clear (&choices);
  return opened;
}

static gboolean
open_open_file (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  return open_file_dialog (call, LIMEN_QT_FILE_OPEN, shim, done);
}

static gboolean
open_save_file (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  return open_file_dialog (call, LIMEN_QT_FILE_SAVE, shim, done);
}

static gboolean
open_save_files (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  return open_file_dialog (call, LIMEN_QT_FILE_SAVE_FILES, shim, done);
}

#define FILE_FAILED "The file dialog could not be shown"

static const LimenKdeMethod file_chooser_methods[] = {
  { .method = "OpenFile", .options = limen_options_file_chooser_open_file, .check = check_title,
    .open = open_open_file, .done = G_CALLBACK (on_done), .failed = FILE_FAILED },
  { .method = "SaveFile", .options = limen_options_file_chooser_save_file, .check = check_title,
    .open = open_save_file, .done = G_CALLBACK (on_done), .failed = FILE_FAILED },
  { .method = "SaveFiles", .options = limen_options_file_chooser_save_files, .check = check_title,
    .open = open_save_files, .done = G_CALLBACK (on_done), .failed = FILE_FAILED },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_file_chooser_new (void)
{
  return limen_kde_driver_offer (limen_dbus_impl_portal_file_chooser_skeleton_new (), file_chooser_methods);
}
