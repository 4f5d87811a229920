/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Running in the background is a standing grant kept in the permission store, given on
 * first use as the reference does ("yes" is recorded; the backend's notification tells the
 * person). A stored "no" refuses (Response 1), a stored "ask" asks every time. Autostart is
 * written by the frontend itself (autostart.c): the backend's EnableAutostart is deprecated. */
#include "portal.h"

#include <glib/gi18n.h>
#include <string.h>

#include "access.h"
#include "autostart.h"
#include "backend.h"
#include "driver.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Background"
#define TABLE "background"

static gboolean
validate_commandline (const LimenOption *o, GVariant *v, GError **error)
{
  g_autofree const char **argv = g_variant_get_strv (v, NULL);

  if (argv[0] == NULL || *argv[0] == '\0')
    {
      limen_option_set_error (error, o->key, "needs a program");
      return FALSE;
    }
  return limen_validate_strv_length (o, v, error);
}

static const LimenOption background_options[] = {
  { "reason", "s", limen_validate_string_length, 256 },
  { "autostart", "b", limen_validate_bool, 0 },
  { "commandline", "as", validate_commandline, 256 },
  { "dbus-activatable", "b", limen_validate_bool, 0 },
  { NULL }
};

static GVariant *
answer (gboolean background, gboolean autostart)
{
  return g_variant_new_parsed ("{'background': <%b>, 'autostart': <%b>}", background, autostart);
}

static void
on_access (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);

  if (limen_access_check_finish (result, NULL))
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  /* Refused by the person (stored or just now): cancelled, as by the reference. */
  limen_call_set_results (call, LIMEN_RESPONSE_CANCELLED, NULL);
  g_task_return_boolean (task, FALSE);
}

/* After the handle: the stored answer; nothing stored: granted and recorded. */
static void
check_access (LimenCall *call, GTask *task)
{
  LimenAppInfo *info = limen_call_get_app_info (call);
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  g_autofree char *title = g_strdup_printf (_("Allow %s to run in the background?"), limen_app_info_get_id (info));
  const char *reason = NULL;

  g_variant_lookup (limen_call_get_options (call), "reason", "&s", &reason);
  g_task_set_task_data (task, call, NULL);
  limen_access_check_async (limen_call_get_context (call), limen_call_get_request (call),
                            g_variant_get_string (window, NULL), TABLE, TABLE, LIMEN_ACCESS_GRANT_FIRST,
                            &(LimenAccessDialog) {
                              .title = title,
                              .subtitle = reason ? reason : _("The app asks to keep running when its windows are closed."),
                              .body = _("You can change this later in the system settings."),
                              .grant_label = _("Allow"),
                              .deny_label = _("Don't Allow"),
                            },
                            on_access, g_object_ref (task));
}

/* The in-process impl: allowed to run in the background; the autostart entry as asked. */
static void
set_autostart (LimenCall *call, GTask *task)
{
  GVariant *options = limen_call_get_options (call);
  g_autoptr(GError) error = NULL;
  g_autofree const char **commandline = NULL;
  gboolean autostart = FALSE, dbus_activatable = FALSE, started;

  g_variant_lookup (options, "autostart", "b", &autostart);
  g_variant_lookup (options, "dbus-activatable", "b", &dbus_activatable);
  g_variant_lookup (options, "commandline", "^a&s", &commandline);
  started = limen_autostart_set (limen_call_get_app_info (call), autostart, commandline, dbus_activatable, &error);
  if (error)
    g_message ("Autostart of '%s' could not be written: %s",
               limen_app_info_get_id (limen_call_get_app_info (call)), error->message);
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, answer (TRUE, started));
  g_task_return_boolean (task, TRUE);
}

static const LimenStep background_pre[] = { { check_access, LIMEN_STEP_AFTER_HANDLE }, { NULL } };

static const LimenDriverMethod background_methods[] = {
  { .method = "RequestBackground", .options = background_options, .impl_interface = IMPL_IFACE,
    .pre = background_pre, .run = set_autostart },
  { NULL }
};

/* RequestBackground: permission (store, then the Access dialog) and autostart through the backend. */
GDBusInterfaceSkeleton *
limen_background_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_background_skeleton_new (), 1, background_methods);
}
