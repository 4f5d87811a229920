/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend sees the host and answers host URIs; what the caller gets depends on who it
 * is: a host app the URIs themselves, a sandboxed app documents granted to it alone. */
#include "portal.h"

#include <string.h>

#include "backend.h"
#include "document-export.h"
#include "document-path.h"
#include "driver.h"
#include "option-tables.h"
#include "lockdown.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.FileChooser"

/* Pre-step of SaveFile/SaveFiles: an administrator may forbid saving. */
static void
check_save_allowed (LimenCall *call, GTask *task)
{
  limen_lockdown_step (call, task, "disable-save-to-disk", "Saving files is disabled");
}

static const char *doc_keys[] = { "current_folder", "current_file", NULL };

/* One document path being mapped: the GTask's data. */
typedef struct {
  LimenCall *call;
  guint      key;    /* index into doc_keys */
} Translate;

static void translate_next (GTask *task);

static void
on_host_path (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  Translate *t = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) apps = NULL;
  g_autoptr(GVariant) perms = NULL;
  g_autofree char *path = limen_document_host_path_finish (result, &apps, &error);

  if (path)
    perms = g_variant_lookup_value (apps, limen_app_info_get_id (limen_call_get_app_info (t->call)),
                                    G_VARIANT_TYPE_STRING_ARRAY);
  /* Only a document of this very app is translated; anything else stays as given. */
  if (perms)
    {
      g_debug ("%s: document path mapped to its host path", doc_keys[t->key]);
      limen_call_set_option (t->call, doc_keys[t->key], g_variant_new_bytestring (path));
    }
  else if (error)
    g_debug ("No document behind %s: %s", doc_keys[t->key], error->message);
  t->key++;
  translate_next (task);
}

static void
translate_next (GTask *task)
{
  Translate *t = g_task_get_task_data (task);
  LimenAppInfo *info = limen_call_get_app_info (t->call);

  for (; doc_keys[t->key]; t->key++)
    {
      const char *path = NULL;
      g_autofree char *doc_id = NULL;
      g_autofree char *rest = NULL;

      if (!g_variant_lookup (limen_call_get_options (t->call), doc_keys[t->key], "^&ay", &path) ||
          !limen_document_path_parse (path, (guint) limen_app_info_get_uid (info), &doc_id, &rest))
        continue;
      limen_document_host_path_async (limen_call_get_context (t->call)->connection, doc_id, rest, on_host_path,
                                      task);
      return;
    }
  g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

/* Pre-step: a sandboxed app names its documents by their path in its own view of the
 * document store; the dialog, outside, needs the real place. */
static void
translate_document_paths (LimenCall *call, GTask *task)
{
  Translate *t;

  if (limen_app_info_is_host (limen_call_get_app_info (call)))
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  t = g_new0 (Translate, 1);
  t->call = call;
  g_task_set_task_data (task, t, g_free);
  translate_next (g_object_ref (task));
}

/* The caller's results: exported uris plus the backend's choices and filter, if well-formed. */
static void
on_exported (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) uris = limen_document_export_finish (result, &error);
  GVariant *results = limen_call_get_results (call);
  g_autoptr(GVariant) choices = NULL;
  g_autoptr(GVariant) filter = NULL;
  GVariantBuilder b;

  if (uris == NULL)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Could not export the chosen files: %s",
                               error->message);
      return;
    }
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "uris", g_variant_new_strv ((const char * const *) uris, -1));
  choices = g_variant_lookup_value (results, "choices", G_VARIANT_TYPE ("a(ss)"));
  if (choices)
    g_variant_builder_add (&b, "{sv}", "choices", choices);
  filter = g_variant_lookup_value (results, "current_filter", G_VARIANT_TYPE ("(sa(us))"));
  if (filter)
    g_variant_builder_add (&b, "{sv}", "current_filter", filter);
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, g_variant_builder_end (&b));
  g_task_return_boolean (task, TRUE);
}

/* Post-step: the chosen files, as documents of this app for a sandboxed caller. */
static void
export_chosen (LimenCall *call, GTask *task)
{
  GVariant *results = limen_call_get_results (call);
  const char *method = limen_call_get_method (call)->method;
  g_autofree const char **uris = NULL;
  LimenExportFlags flags = 0;
  gboolean writable = TRUE;
  gboolean directory = FALSE;

  if (results == NULL || !g_variant_lookup (results, "uris", "^a&s", &uris))
    uris = g_new0 (const char *, 1);
  /* A save is one file: a sandboxed app is not given write access to more than the person
   * chose. A host app gets the backend's answer as it is, as from the reference (nothing is
   * exported for it). */
  if (g_str_equal (method, "SaveFile") && g_strv_length ((char **) uris) > 1 &&
      !limen_app_info_is_host (limen_call_get_app_info (call)))
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Backend answered SaveFile with %u files",
                               g_strv_length ((char **) uris));
      return;
    }
  if (g_str_equal (method, "OpenFile"))
    {
      /* A backend may offer "open read-only"; without an answer the file is for editing. */
      if (results)
        g_variant_lookup (results, "writable", "b", &writable);
      g_variant_lookup (limen_call_get_options (call), "directory", "b", &directory);
      if (directory)
        flags |= LIMEN_EXPORT_DIRECTORY;
    }
  else
    flags |= LIMEN_EXPORT_FOR_SAVE;
  if (writable)
    flags |= LIMEN_EXPORT_WRITABLE;
  /* A chosen file that is gone by now or that the store refuses is left out, as by the
   * reference; none left: 2. */
  flags |= LIMEN_EXPORT_LEAVE_OUT;
  g_task_set_task_data (task, call, NULL);
  limen_document_export_async (limen_call_get_context (call)->connection, limen_call_get_app_info (call), uris,
                               flags, limen_request_get_cancellable (limen_call_get_request (call)),
                               on_exported, g_object_ref (task));
}

/* Every choice and every option of one is shown by its label: an empty label is a broken
 * call from an app (the shared table lets a backend take them from other frontends). */
static gboolean
choices_labelled (GVariant *options)
{
  g_autoptr(GVariant) choices = g_variant_lookup_value (options, "choices", G_VARIANT_TYPE ("a(ssa(ss)s)"));
  GVariantIter iter;
  const char *label, *option_label;
  g_autoptr(GVariantIter) inner = NULL;

  if (choices == NULL)
    return TRUE;
  g_variant_iter_init (&iter, choices);
  while (g_variant_iter_next (&iter, "(&s&sa(ss)&s)", NULL, &label, &inner, NULL))
    {
      if (*label == '\0')
        return FALSE;
      while (g_variant_iter_next (inner, "(&s&s)", NULL, &option_label))
        if (*option_label == '\0')
          return FALSE;
      g_clear_pointer (&inner, g_variant_iter_free);
    }
  return TRUE;
}

/* Options that are each well formed but not as the specification allows together or in the
 * frontend: a current_filter that is not one of a non-empty filters list, a choice or option
 * without a label. InvalidArgument, as from the reference. */
static void
check_dialog_options (LimenCall *call, GTask *task)
{
  GVariant *options = limen_call_get_options (call);
  g_autoptr(GVariant) filters = g_variant_lookup_value (options, "filters", G_VARIANT_TYPE ("a(sa(us))"));
  g_autoptr(GVariant) current = g_variant_lookup_value (options, "current_filter", G_VARIANT_TYPE ("(sa(us))"));
  gsize n = filters ? g_variant_n_children (filters) : 0;

  for (gsize i = 0; current && i < n; i++)
    {
      g_autoptr(GVariant) filter = g_variant_get_child_value (filters, i);

      if (g_variant_equal (filter, current))
        n = 0;
    }
  if (current && n > 0)
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                             "Invalid value for option current_filter: not one of filters");
  else if (!choices_labelled (options))
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                             "Invalid value for option choices: a choice or option without a label");
  else
    g_task_return_boolean (task, TRUE);
}

static const LimenStep open_pre[] = {
  { check_dialog_options, LIMEN_STEP_BEFORE_HANDLE },
  { translate_document_paths, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

static const LimenStep save_pre[] = {
  { check_dialog_options, LIMEN_STEP_BEFORE_HANDLE },
  { check_save_allowed, LIMEN_STEP_BEFORE_HANDLE },
  { translate_document_paths, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

static const LimenStep chooser_post[] = { { export_chosen }, { NULL } };

static const LimenDriverMethod file_chooser_methods[] = {
  { .method = "OpenFile", .options = limen_options_file_chooser_open_file, .impl_interface = IMPL_IFACE,
    .impl_method = "OpenFile", .pre = open_pre, .post = chooser_post },
  { .method = "SaveFile", .options = limen_options_file_chooser_save_file, .impl_interface = IMPL_IFACE,
    .impl_method = "SaveFile", .pre = save_pre, .post = chooser_post },
  { .method = "SaveFiles", .options = limen_options_file_chooser_save_files, .impl_interface = IMPL_IFACE,
    .impl_method = "SaveFiles", .pre = save_pre, .post = chooser_post },
  { NULL }
};

/* OpenFile, SaveFile, SaveFiles: the backend's dialog, the chosen files exported to
 * sandboxed callers through the document store. */
GDBusInterfaceSkeleton *
limen_file_chooser_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_file_chooser_skeleton_new (), 4, file_chooser_methods);
}
