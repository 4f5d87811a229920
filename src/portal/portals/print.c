/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The document to print arrives as an fd; the backend gets it only after we checked that
 * the caller could read that file itself, so printing is no way to read hidden files. */
#include "portal.h"

#include "backend.h"
#include "fd-check.h"
#include "lockdown.h"
#include "option-tables.h"

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

static const LimenOption dict_table[] = {
  { "settings", "a{sv}", validate_print_dict, 0 },
  { "page_setup", "a{sv}", validate_print_dict, 0 },
  { NULL }
};

/* Pre-step: an administrator may forbid printing. */
static void
check_printing_allowed (LimenCall *call, GTask *task)
{
  limen_lockdown_step (call, task, "disable-printing", "Printing is disabled");
}

/* Pre-step of PreparePrint: settings and page_setup hold plain values only. */
static void
check_dicts (LimenCall *call, GTask *task)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) settings = limen_call_get_arg (call, 2);
  g_autoptr(GVariant) page_setup = limen_call_get_arg (call, 3);
  g_autoptr(GVariant) wrapped = g_variant_ref_sink (g_variant_new_parsed ("{'settings': <%@a{sv}>, 'page_setup': <%@a{sv}>}",
                                                                          settings, page_setup));

  if (!limen_options_filter (wrapped, &b, &error, dict_table, NULL))
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_boolean (task, TRUE);
}

/* Pre-step of Print: a readable regular file of the caller's, handed on as handle 0. */
static void
check_document_fd (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  g_autoptr(GVariant) title = limen_call_get_arg (call, 1);
  g_autoptr(GVariant) handle = limen_call_get_arg (call, 2);
  g_autofd int fd = limen_fd_list_get (limen_call_get_fd_list (call), g_variant_get_handle (handle), "fd", &error);
  LimenFdInfo fdinfo = { 0 };
  g_autoptr(GUnixFDList) out = g_unix_fd_list_new ();

  if (fd < 0 || !limen_fd_check (limen_call_get_app_info (call), fd, LIMEN_FD_ALLOW_REGULAR | LIMEN_FD_NEED_READ,
                                 &fdinfo, &error) ||
      g_unix_fd_list_append (out, fd, &error) < 0)
    {
      limen_fd_info_clear (&fdinfo);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  limen_fd_info_clear (&fdinfo);
  limen_call_set_impl_args (call, g_variant_new ("(@s@sh)", window, title, 0), out);
  g_task_return_boolean (task, TRUE);
}

static const LimenStep prepare_pre[] = {
  { check_printing_allowed, LIMEN_STEP_BEFORE_HANDLE },
  { check_dicts, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

static const LimenStep print_pre[] = {
  { check_printing_allowed, LIMEN_STEP_BEFORE_HANDLE },
  { check_document_fd, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

/* Options as upstream takes them for Print: one of the wrong type or an unknown format
 * is left out and the person still gets the dialog (a token that is not a u prints nothing
 * unasked). The settings, page setup and document are still checked strictly (the pre-steps). */
static const LimenDriverMethod print_methods[] = {
  { .method = "PreparePrint", .options = limen_options_print_prepare_print, .impl_interface = IMPL_IFACE,
    .impl_method = "PreparePrint", .pre = prepare_pre, .flags = LIMEN_DRIVER_LENIENT_OPTIONS },
  { .method = "Print", .options = limen_options_print_print, .impl_interface = IMPL_IFACE,
    .impl_method = "Print", .pre = print_pre, .flags = LIMEN_DRIVER_LENIENT_OPTIONS },
  { NULL }
};

/* PreparePrint and Print (the document as an fd checked for the caller). */
GDBusInterfaceSkeleton *
limen_print_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_print_skeleton_new (), 4, print_methods);
}
