/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attachments come as fds and go to the backend as host paths: each fd must name a file
 * the caller could read itself, and the path we pass must still be that very file. */
#include "email.h"

#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "driver.h"
#include "fd-check.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Email"
#define ATTACHMENTS_MAX 64

static gboolean
address_ok (const char *s)
{
  const char *at = strchr (s, '@');

  if (strlen (s) > 254 || at == NULL || at == s || at[1] == '\0' || strchr (at + 1, '@') != NULL)
    return FALSE;
  for (const char *p = s; *p; p++)
    if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p) || *p == ',' || *p == '<' || *p == '>')
      return FALSE;
  return TRUE;
}

static gboolean
validate_address (const LimenOption *o, GVariant *v, GError **error)
{
  if (!address_ok (g_variant_get_string (v, NULL)))
    {
      limen_option_set_error (error, o->key, "not an email address");
      return FALSE;
    }
  return TRUE;
}

static gboolean
validate_addresses (const LimenOption *o, GVariant *v, GError **error)
{
  g_autofree const char **list = g_variant_get_strv (v, NULL);

  if (g_strv_length ((char **) list) > 256)
    {
      limen_option_set_error (error, o->key, "too many addresses");
      return FALSE;
    }
  for (guint i = 0; list[i]; i++)
    if (!address_ok (list[i]))
      {
        limen_option_set_error (error, o->key, "not an email address");
        return FALSE;
      }
  return TRUE;
}

static gboolean
validate_subject (const LimenOption *o, GVariant *v, GError **error)
{
  const char *s = g_variant_get_string (v, NULL);

  /* A line break would let the caller forge headers. */
  if (strpbrk (s, "\r\n") != NULL)
    {
      limen_option_set_error (error, o->key, "must be a single line");
      return FALSE;
    }
  return limen_validate_string_length (o, v, error);
}

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

static const LimenOption email_options[] = {
  { "address", "s", validate_address, 0 },
  { "addresses", "as", validate_addresses, 0 },
  { "cc", "as", validate_addresses, 0 },
  { "bcc", "as", validate_addresses, 0 },
  { "subject", "s", validate_subject, 1024 },
  { "body", "s", limen_validate_string_length, 1 << 20 },
  { "activation_token", "s", limen_validate_string_length, 1024 },
  { NULL }
};

/* attachment_fds is ours to resolve; checked apart so the table above is what the backend gets. */
static const LimenOption fd_options[] = {
  { "attachment_fds", "ah", validate_fds, 0 },
  { NULL }
};

/* The host path behind an attachment fd; NULL + error when it is not a readable regular
 * file of the caller's, or not at that place outside the sandbox. */
static char *
attachment_path (LimenAppInfo *info, GUnixFDList *fd_list, gint32 index, GError **error)
{
  g_autofd int fd = limen_fd_list_get (fd_list, index, "attachment_fds", error);
  LimenFdInfo fdinfo = { 0 };
  g_autofree char *proc = NULL;
  g_autofree char *path = NULL;
  struct stat st;

  if (fd < 0 || !limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_ALLOW_O_PATH | LIMEN_FD_NEED_READ,
                                 &fdinfo, error))
    return NULL;
  proc = g_strdup_printf ("/proc/self/fd/%d", fd);
  path = g_file_read_link (proc, NULL);
  if (path == NULL || stat (path, &st) != 0 || st.st_dev != fdinfo.dev || st.st_ino != fdinfo.ino)
    {
      limen_fd_info_clear (&fdinfo);
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "Invalid value for attachment_fds: a file is not reachable outside the sandbox");
      return NULL;
    }
  limen_fd_info_clear (&fdinfo);
  return g_steal_pointer (&path);
}

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
      if ((path = attachment_path (limen_call_get_app_info (call), limen_call_get_fd_list (call), index, &error)) == NULL)
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
  { .method = "ComposeEmail", .options = email_options, .impl_interface = IMPL_IFACE,
    .impl_method = "ComposeEmail", .pre = compose_pre },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_email_new (LimenPortalContext *context)
{
  LimenDbusPortalEmail *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_email_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_email_set_version (object, 4);
  limen_driver_export (G_DBUS_INTERFACE_SKELETON (object), context, email_methods);
  return G_DBUS_INTERFACE_SKELETON (object);
}
