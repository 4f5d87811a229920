/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The document to print arrives as an fd; the backend gets it only after we checked that
 * the caller could read that file itself, so printing is no way to read hidden files. */
#include "print.h"

#include "backend.h"
#include "fd-check.h"
#include "lockdown.h"

#include <string.h>

#define IMPL_IFACE "org.freedesktop.impl.portal.Print"
#define DICT_MAX 256
#define KEY_MAX 256

/* settings / page_setup: flat dicts of simple values, as GtkPrintSettings and friends use. */
static gboolean
validate_print_dict (const LimenOption *o, GVariant *v, GError **error)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;
  gsize n = 0;

  g_variant_iter_init (&iter, v);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;
      const char *type = g_variant_get_type_string (value);

      if (++n > DICT_MAX || strlen (key) > KEY_MAX)
        {
          limen_option_set_error (error, o->key, "too many or too long keys");
          return FALSE;
        }
      if (!g_variant_type_is_basic (g_variant_get_type (value)) || g_str_equal (type, "h"))
        {
          g_autofree char *reason = g_strdup_printf ("value of %s must be a plain value", key);
          limen_option_set_error (error, o->key, reason);
          return FALSE;
        }
      if (g_str_equal (type, "s") && strlen (g_variant_get_string (value, NULL)) > 4096)
        {
          limen_option_set_error (error, o->key, "a value is too long");
          return FALSE;
        }
    }
  return TRUE;
}

static const LimenOption print_options[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "token", "u", NULL, 0 },
  { NULL }
};

static const LimenOption prepare_print_options[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "accept_label", "s", limen_validate_string_length, 1024 },
  { NULL }
};

static const LimenOption dict_table[] = {
  { "settings", "a{sv}", validate_print_dict, 0 },
  { "page_setup", "a{sv}", validate_print_dict, 0 },
  { NULL }
};

typedef struct {
  LimenPortalContext    *context;
  GDBusMethodInvocation *invocation;
  gboolean               prepare;
  char                  *parent_window;
  char                  *title;
  GVariant              *settings, *page_setup, *options;
  GUnixFDList           *fd_list;
  gint32                 fd_index;
} PrintCall;

static void
print_call_free (PrintCall *p)
{
  g_clear_object (&p->invocation);
  g_free (p->parent_window);
  g_free (p->title);
  g_clear_pointer (&p->settings, g_variant_unref);
  g_clear_pointer (&p->page_setup, g_variant_unref);
  g_clear_pointer (&p->options, g_variant_unref);
  g_clear_object (&p->fd_list);
  g_free (p);
}

static void
start (PrintCall *p)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_invocation (p->invocation);
  g_autoptr(LimenRequest) request = NULL;
  g_autoptr(GError) error = NULL;

  if (info == NULL)
    return;
  if (p->prepare)
    {
      g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      GVariant *wrapped = g_variant_new_parsed ("{'settings': <%@a{sv}>, 'page_setup': <%@a{sv}>}",
                                                p->settings, p->page_setup);

      g_variant_ref_sink (wrapped);
      if (!limen_options_filter (wrapped, &b, &error, dict_table, NULL))
        {
          g_variant_unref (wrapped);
          limen_invocation_return_gerror (p->invocation, error);
          return;
        }
      g_variant_unref (wrapped);
      request = limen_backend_request_method (p->context, p->invocation, info, IMPL_IFACE, "PreparePrint",
                                              g_variant_new ("(ss@a{sv}@a{sv})", p->parent_window, p->title,
                                                             p->settings, p->page_setup),
                                              p->options, prepare_print_options, NULL, NULL, NULL, NULL, NULL);
      return;
    }
  else
    {
      g_autofd int fd = limen_fd_list_get (p->fd_list, p->fd_index, "fd", &error);
      LimenFdInfo fdinfo = { 0 };
      g_autoptr(GUnixFDList) out = g_unix_fd_list_new ();

      if (fd < 0 || !limen_fd_check (info, fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_READ, &fdinfo, &error) ||
          g_unix_fd_list_append (out, fd, &error) < 0)
        {
          limen_fd_info_clear (&fdinfo);
          limen_invocation_return_gerror (p->invocation, error);
          return;
        }
      limen_fd_info_clear (&fdinfo);
      request = limen_backend_request_method (p->context, p->invocation, info, IMPL_IFACE, "Print",
                                              g_variant_new ("(ssh)", p->parent_window, p->title, 0),
                                              p->options, print_options, NULL, out, NULL, NULL, NULL);
    }
}

static void
on_lockdown (GObject *source, GAsyncResult *result, gpointer user_data)
{
  gboolean locked = limen_lockdown_query_finish (result);
  PrintCall *p = user_data;

  if (locked)
    g_dbus_method_invocation_return_error_literal (p->invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                   "Printing is disabled");
  else
    start (p);
  print_call_free (p);
}

static PrintCall *
print_call_new (LimenPortalContext *context, GDBusMethodInvocation *invocation, const char *parent_window,
                const char *title, GVariant *options)
{
  PrintCall *p = g_new0 (PrintCall, 1);

  p->context = context;
  p->invocation = g_object_ref (invocation);
  p->parent_window = g_strdup (parent_window);
  p->title = g_strdup (title);
  p->options = g_variant_ref (options);
  return p;
}

static gboolean
handle_prepare_print (LimenDbusPortalPrint *object, GDBusMethodInvocation *invocation, const char *parent_window,
                      const char *title, GVariant *settings, GVariant *page_setup, GVariant *options,
                      LimenPortalContext *context)
{
  PrintCall *p = print_call_new (context, invocation, parent_window, title, options);

  p->prepare = TRUE;
  p->settings = g_variant_ref (settings);
  p->page_setup = g_variant_ref (page_setup);
  limen_lockdown_query_async (context, "disable-printing", on_lockdown, p);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_print (LimenDbusPortalPrint *object, GDBusMethodInvocation *invocation, GUnixFDList *fd_list,
              const char *parent_window, const char *title, GVariant *fd, GVariant *options,
              LimenPortalContext *context)
{
  PrintCall *p = print_call_new (context, invocation, parent_window, title, options);

  p->fd_list = fd_list ? g_object_ref (fd_list) : NULL;
  p->fd_index = g_variant_get_handle (fd);
  limen_lockdown_query_async (context, "disable-printing", on_lockdown, p);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_print_new (LimenPortalContext *context)
{
  LimenDbusPortalPrint *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_print_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_print_set_version (object, 2);
  g_signal_connect (object, "handle-prepare-print", G_CALLBACK (handle_prepare_print), context);
  g_signal_connect (object, "handle-print", G_CALLBACK (handle_print), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
