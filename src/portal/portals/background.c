/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Running in the background is a standing grant, so it goes through the permission store:
 * a stored answer decides, else the user is asked once and the answer is kept. Autostart
 * is written by the backend (it knows the desktop's autostart conventions). */
#include "portal.h"

#include <glib/gi18n.h>
#include <string.h>

#include "access.h"
#include "backend.h"
#include "driver.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Background"
#define TABLE "background"
#define AUTOSTART_DBUS_ACTIVATABLE 1

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
  /* Refused: the answer is a regular "no", not a failure. */
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, answer (FALSE, FALSE));
  g_task_return_boolean (task, FALSE);
}

/* After the handle: the stored answer, else the user's (kept for next time). */
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
                            g_variant_get_string (window, NULL), TABLE, TABLE, LIMEN_ACCESS_ASK,
                            &(LimenAccessDialog) {
                              .title = title,
                              .subtitle = reason ? reason : _("The app asks to keep running when its windows are closed."),
                              .body = _("You can change this later in the system settings."),
                              .grant_label = _("Allow"),
                              .deny_label = _("Don't Allow"),
                            },
                            on_access, g_object_ref (task));
}

static void
on_autostart (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  gboolean wanted = FALSE;
  gboolean ok = FALSE;

  if (reply)
    g_variant_get (reply, "(b)", &ok);
  else
    g_message ("Autostart could not be changed: %s", error->message);
  g_variant_lookup (limen_call_get_options (call), "autostart", "b", &wanted);
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, answer (TRUE, wanted && ok));
  g_task_return_boolean (task, TRUE);
}

/* The in-process impl: allowed to run in the background; autostart is the backend's to write. */
static void
set_autostart (LimenCall *call, GTask *task)
{
  LimenPortalContext *context = limen_call_get_context (call);
  GVariant *options = limen_call_get_options (call);
  const char *backend = limen_backend_find (context, IMPL_IFACE, NULL);
  const char *app_id = limen_app_info_get_id (limen_call_get_app_info (call));
  g_autofree const char **commandline = NULL;
  const char *empty[] = { NULL };
  gboolean autostart = FALSE, dbus_activatable = FALSE;

  if (backend == NULL || *app_id == '\0')
    {
      /* Without an app id there is no desktop file to autostart. */
      limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, answer (TRUE, FALSE));
      g_task_return_boolean (task, TRUE);
      return;
    }
  g_variant_lookup (options, "autostart", "b", &autostart);
  g_variant_lookup (options, "dbus-activatable", "b", &dbus_activatable);
  g_variant_lookup (options, "commandline", "^a&s", &commandline);
  g_task_set_task_data (task, call, NULL);
  g_dbus_connection_call (context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE, "EnableAutostart",
                          g_variant_new ("(sb^asu)", app_id, autostart, commandline ? commandline : empty,
                                         dbus_activatable ? AUTOSTART_DBUS_ACTIVATABLE : 0),
                          G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK,
                          NULL, on_autostart, g_object_ref (task));
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
