/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attachments come as fds and go to the backend as host paths: each fd must name a file
 * the caller could read itself, and the path we pass must still be that very file. */
#include "portal.h"

#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "host-file.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Email"
#define ATTACHMENTS_MAX 64

static gboolean
validate_fds (const LimenOption *o, GVariant *v, GError **error)
{
  if (g_variant_n_children (v) > ATTACHMENTS_MAX)
    {
      limen_option_set_error (error, o->key, "too many attachments");
      return FALSE;
    }
  return TRUE;
}

/* attachment_fds is ours to resolve; checked apart so the table above is what the backend gets. */
static const LimenOption fd_options[] = {
  { "attachment_fds", "ah", validate_fds, 0 },
  { NULL }
};

/* Pre-step: the attachments' host paths go to the backend as "attachments". */
static void
resolve_attachments (LimenCall *call, GTask *task)
{
  g_auto(GVariantBuilder) fdb = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) fds = NULL;
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  GVariant *options = limen_call_get_caller_options (call);

  if (!limen_options_filter (options, &fdb, &error, fd_options, NULL))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  fds = g_variant_lookup_value (options, "attachment_fds", G_VARIANT_TYPE ("ah"));
  for (gsize i = 0; fds && i < g_variant_n_children (fds); i++)
    {
      gint32 index;
      char *path;

      g_variant_get_child (fds, i, "h", &index);
      path = limen_fd_host_path (limen_call_get_app_info (call), limen_call_get_fd_list (call), index, "attachment_fds",
                                 LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ, NULL, &error);
      if (path == NULL)
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
      g_ptr_array_add (paths, path);
    }
  g_ptr_array_add (paths, NULL);
  if (paths->len > 1)
    limen_call_set_option (call, "attachments", g_variant_new_strv ((const char * const *) paths->pdata, -1));
  g_task_return_boolean (task, TRUE);
}

static const LimenStep compose_pre[] = { { resolve_attachments, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };

static const LimenDriverMethod email_methods[] = {
  { .method = "ComposeEmail", .options = limen_options_email_compose, .impl_interface = IMPL_IFACE,
    .impl_method = "ComposeEmail", .pre = compose_pre },
  { NULL }
};

/* ComposeEmail with checked addresses and attachment fds. */
GDBusInterfaceSkeleton *
limen_email_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_email_skeleton_new (), 4, email_methods);
}
