/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Running in the background is a standing grant kept in the permission store, given on
 * first use as the reference does ("yes" is recorded; the backend's notification tells the
 * person). A stored "no" refuses (Response 1), a stored "ask" asks every time. Autostart is
 * written by the frontend itself (autostart.c): the backend's EnableAutostart is deprecated.
 * SetStatus keeps a sandboxed instance's status line for the background monitor
 * (background-monitor.c). */
#include "portal.h"

#include <glib/gi18n.h>
#include <string.h>

#include "access.h"
#include "autostart.h"
#include "backend.h"
#include "background-monitor.h"
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

/* A status line for a list: upstream's limit, counted in characters. */
static gboolean
validate_message (const LimenOption *o, GVariant *v, GError **error)
{
  const char *message = g_variant_get_string (v, NULL);

  if (!g_utf8_validate (message, -1, NULL))
    {
      limen_option_set_error (error, o->key, "not valid UTF-8");
      return FALSE;
    }
  if (g_utf8_strlen (message, -1) > (glong) o->max)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for option message: longer than %zu characters", o->max);
      return FALSE;
    }
  if (strpbrk (message, "\n\r"))
    {
      limen_option_set_error (error, o->key, "a status message is one line, without newlines");
      return FALSE;
    }
  return TRUE;
}

static const LimenOption set_status_options[] = {
  { "message", "s", validate_message, 96 },
  { NULL }
};

/* SetStatus (version 2): answered at once, in-process; the line shows in the monitor's list. */
static gboolean
handle_set_status (LimenDbusPortalBackground *object, GDBusMethodInvocation *invocation,
                   GVariant *options, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) checked = NULL;
  const char *message = NULL;
  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);

  /* As the reference: the status of a host app is not ours to list. */
  if (limen_app_info_is_host (info))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Only sandboxed applications can set background status");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!limen_options_filter (options, &filtered, &error, set_status_options, NULL))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  checked = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (checked, "message", "&s", &message);
  limen_background_monitor_set_status (info, message, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The person (on Limen's page, GNOME's or Plasma 6's, or with flatpak permission-set) said
 * "no" to running in the background: the app no longer starts with the session. */
static void
on_store_changed (const char *table, const char *id, GVariant *perms, gpointer user_data)
{
  GVariantIter iter;
  const char *app;
  GVariant *row;

  if (perms == NULL || !g_str_equal (id, TABLE))
    return;
  g_variant_iter_init (&iter, perms);
  while (g_variant_iter_next (&iter, "{&s@as}", &app, &row))
    {
      g_autofree const char **stored = g_variant_get_strv (row, NULL);

      if (g_strv_contains (stored, "no") && limen_autostart_remove_written (app))
        g_debug ("Background denied to %s: its autostart entry is removed", app);
      g_variant_unref (row);
    }
}

/* RequestBackground: permission (store, then the Access dialog) and autostart through the
 * backend; SetStatus and the org.freedesktop.background.Monitor listing (version 2). */
GDBusInterfaceSkeleton *
limen_background_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *skeleton;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  skeleton = limen_driver_offer (context, limen_dbus_portal_background_skeleton_new (), 2, background_methods);
  g_signal_connect (skeleton, "handle-set-status", G_CALLBACK (handle_set_status), NULL);
  limen_permission_store_watch (context->connection, TABLE, on_store_changed, NULL);
  limen_background_monitor_start (context, IMPL_IFACE);
  return skeleton;
}
