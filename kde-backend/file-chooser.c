/* Limen — org.freedesktop.impl.portal.FileChooser: OpenFile, SaveFile, SaveFiles on
 * KDE's file widget.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include <string.h>

#include "errors.h"


typedef struct {
  GDBusMethodInvocation *invocation;
  LimenKdeRequest       *request;
  LimenQtDialog         *dialog;
  GPtrArray             *filters;   /* GVariant (sa(us)), in dialog order */
} FileCall;

static void
file_call_free (FileCall *call)
{
  g_clear_object (&call->invocation);
  g_clear_pointer (&call->filters, g_ptr_array_unref);
  g_free (call);
}

static void
on_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  FileCall *call = user_data;

  limen_kde_shim_get (NULL)->limen_qt_close (call->dialog);
  limen_kde_reply_response (call->invocation, 2, NULL);
  file_call_free (call);
}

static void
on_done (LimenQtDialog *dialog, int response, const LimenQtFileChooserResult *result, void *user_data)
{
  FileCall *call = user_data;
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
      if (result->filter >= 0 && (guint) result->filter < call->filters->len)
        g_variant_builder_add (&results, "{sv}", "current_filter",
                               g_ptr_array_index (call->filters, result->filter));
    }
  g_debug ("File dialog answered %d", response);
  limen_kde_reply_response (call->invocation, response, g_variant_builder_end (&results));
  limen_kde_request_finish (call->request);
  file_call_free (call);
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
handle_file_call (GDBusMethodInvocation *invocation,
                  LimenQtFileMode        mode,
                  const char            *handle,
                  const char            *app_id,
                  const char            *parent_window,
                  const char            *title,
                  GVariant              *options)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GVariant) filters_v = NULL, current_v = NULL, choices_v = NULL, files_v = NULL;
  g_autofree char *current_folder = NULL, *current_file = NULL;
  g_autoptr(GArray) qt_filters = NULL;
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
  g_autofree const char **files = NULL;
  const char *accept_label = NULL, *current_name = NULL;
  gboolean ok, modal = TRUE, multiple = FALSE, directory = FALSE;
  const LimenKdeShim *shim;
  LimenKdeChoices choices;
  LimenQtFileChooserSpec spec = { 0 };
  g_autofree char *state_file = NULL;
  FileCall *call;

  switch (mode)
    {
    case LIMEN_QT_FILE_OPEN:
      ok = limen_options_filter (options, &filtered, &error, limen_options_file_chooser_open_file, NULL);
      break;
    case LIMEN_QT_FILE_SAVE:
      ok = limen_options_filter (options, &filtered, &error, limen_options_file_chooser_save_file, NULL);
      break;
    default:
      ok = limen_options_filter (options, &filtered, &error, limen_options_file_chooser_save_files, NULL);
      break;
    }
  if (!ok || !limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_kde_check_string_arg ("title", title, 1024, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "accept_label", "&s", &accept_label);
  g_variant_lookup (opts, "modal", "b", &modal);
  g_variant_lookup (opts, "multiple", "b", &multiple);
  g_variant_lookup (opts, "directory", "b", &directory);
  g_variant_lookup (opts, "current_name", "&s", &current_name);
  filters_v = g_variant_lookup_value (opts, "filters", G_VARIANT_TYPE ("a(sa(us))"));
  current_v = g_variant_lookup_value (opts, "current_filter", G_VARIANT_TYPE ("(sa(us))"));
  choices_v = g_variant_lookup_value (opts, "choices", G_VARIANT_TYPE ("a(ssa(ss)s)"));
  files_v = g_variant_lookup_value (opts, "files", G_VARIANT_TYPE ("aay"));
  current_folder = lookup_path (opts, "current_folder");
  current_file = lookup_path (opts, "current_file");

  shim = limen_kde_shim_get_for_dialog (&error);
  if (!shim)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  call = g_new0 (FileCall, 1);
  call->invocation = g_object_ref (invocation);
  call->filters = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  call->request = limen_kde_request_new (invocation, handle, on_request_closed, call, &error);
  if (!call->request)
    {
      limen_invocation_return_gerror (invocation, error);
      file_call_free (call);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  qt_filters = build_filters (call->filters, filters_v, current_v, keep, &spec.current_filter);
  files = build_files (files_v, keep, &spec.n_files);
  spec.files = files;

  limen_kde_choices_init (&choices, choices_v);
  state_file = g_build_filename (g_get_user_config_dir (), "limen-kderc", NULL);
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.window.modal = modal;
  spec.mode = mode;
  spec.title = title;
  spec.accept_label = accept_label;
  spec.multiple = multiple;
  spec.directory = directory;
  spec.n_filters = qt_filters->len;
  spec.filters = (const LimenQtFilter *) qt_filters->data;
  spec.n_choices = choices.choices->len;
  spec.choices = (const LimenQtChoice *) choices.choices->data;
  spec.current_folder = current_folder;
  spec.current_name = current_name;
  spec.current_file = current_file;
  spec.state_file = state_file;
  call->dialog = shim->limen_qt_file_chooser_open (&spec, on_done, call);
  limen_kde_choices_clear (&choices);
  if (!call->dialog)
    {
      limen_kde_fail_dialog (invocation, call->request, "The file dialog could not be shown");
      file_call_free (call);
    }
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_open_file (LimenDbusImplPortalFileChooser *skeleton, GDBusMethodInvocation *invocation,
              const char *handle, const char *app_id, const char *parent_window, const char *title,
              GVariant *options, gpointer user_data)
{
  return handle_file_call (invocation, LIMEN_QT_FILE_OPEN, handle, app_id, parent_window, title, options);
}

static gboolean
on_save_file (LimenDbusImplPortalFileChooser *skeleton, GDBusMethodInvocation *invocation,
              const char *handle, const char *app_id, const char *parent_window, const char *title,
              GVariant *options, gpointer user_data)
{
  return handle_file_call (invocation, LIMEN_QT_FILE_SAVE, handle, app_id, parent_window, title, options);
}

static gboolean
on_save_files (LimenDbusImplPortalFileChooser *skeleton, GDBusMethodInvocation *invocation,
               const char *handle, const char *app_id, const char *parent_window, const char *title,
               GVariant *options, gpointer user_data)
{
  return handle_file_call (invocation, LIMEN_QT_FILE_SAVE_FILES, handle, app_id, parent_window, title, options);
}

GDBusInterfaceSkeleton *
limen_kde_file_chooser_new (void)
{
  LimenDbusImplPortalFileChooser *skeleton = limen_dbus_impl_portal_file_chooser_skeleton_new ();

  g_signal_connect (skeleton, "handle-open-file", G_CALLBACK (on_open_file), NULL);
  g_signal_connect (skeleton, "handle-save-file", G_CALLBACK (on_save_file), NULL);
  g_signal_connect (skeleton, "handle-save-files", G_CALLBACK (on_save_files), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
