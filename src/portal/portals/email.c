/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attachments come as fds and go to the backend as host paths: each fd must name a file
 * the caller could read itself, and the path we pass must still be that very file. */
#include "email.h"

#include <string.h>
#include <sys/stat.h>

#include "backend.h"
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

static gboolean
handle_compose_email (LimenDbusPortalEmail *object, GDBusMethodInvocation *invocation, GUnixFDList *fd_list,
                      const char *parent_window, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) fdb = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) fds = NULL;
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(LimenRequest) request = NULL;
  GVariantBuilder extra;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &fdb, &error, fd_options, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  fds = g_variant_lookup_value (options, "attachment_fds", G_VARIANT_TYPE ("ah"));
  for (gsize i = 0; fds && i < g_variant_n_children (fds); i++)
    {
      gint32 index;
      char *path;

      g_variant_get_child (fds, i, "h", &index);
      if ((path = attachment_path (info, fd_list, index, &error)) == NULL)
        {
          limen_invocation_return_gerror (invocation, error);
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
      g_ptr_array_add (paths, path);
    }
  g_ptr_array_add (paths, NULL);
  g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
  if (paths->len > 1)
    g_variant_builder_add (&extra, "{sv}", "attachments",
                           g_variant_new_strv ((const char * const *) paths->pdata, -1));
  request = limen_backend_request_method (context, invocation, info, IMPL_IFACE, "ComposeEmail",
                                          g_variant_new ("(s)", parent_window), options, email_options,
                                          g_variant_builder_end (&extra), NULL, NULL, NULL, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_email_new (LimenPortalContext *context)
{
  LimenDbusPortalEmail *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_email_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_email_set_version (object, 4);
  g_signal_connect (object, "handle-compose-email", G_CALLBACK (handle_compose_email), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
