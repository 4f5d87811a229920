/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Running in the background is a standing grant, so it goes through the permission store:
 * a stored answer decides, else the user is asked once and the answer is kept. Autostart
 * is written by the backend (it knows the desktop's autostart conventions). */
#include "background.h"

#include <glib/gi18n.h>
#include <string.h>

#include "access.h"
#include "backend.h"

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

typedef struct {
  LimenPortalContext *context;
  gboolean            autostart;
  gboolean            dbus_activatable;
  char              **commandline;
} Background;

static void
background_free (Background *bg)
{
  g_strfreev (bg->commandline);
  g_free (bg);
}

static void
respond (LimenRequest *request, gboolean background, gboolean autostart)
{
  limen_request_respond (request, LIMEN_RESPONSE_SUCCESS,
                         g_variant_new_parsed ("{'background': <%b>, 'autostart': <%b>}", background, autostart));
}

typedef struct {
  LimenRequest *request;
  gboolean      wanted;
} AutostartCall;

static void
on_autostart (GObject *source, GAsyncResult *result, gpointer user_data)
{
  AutostartCall *ac = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  gboolean ok = FALSE;

  if (reply)
    g_variant_get (reply, "(b)", &ok);
  else
    g_message ("Autostart could not be changed: %s", error->message);
  respond (ac->request, TRUE, ac->wanted && ok);
  limen_request_unref (ac->request);
  g_free (ac);
}

static void
on_access (LimenRequest *request, gboolean allowed, gpointer user_data)
{
  Background *bg = user_data;
  LimenAppInfo *info = limen_request_get_app_info (request);
  const char *backend = limen_backend_find (bg->context, IMPL_IFACE, NULL);
  const char *app_id = limen_app_info_get_id (info);
  const char *empty[] = { NULL };
  AutostartCall *ac;

  if (!allowed)
    {
      /* Refused: the answer is a regular "no", not a failure. */
      respond (request, FALSE, FALSE);
      background_free (bg);
      return;
    }
  if (backend == NULL || *app_id == '\0')
    {
      /* Without an app id there is no desktop file to autostart. */
      respond (request, TRUE, FALSE);
      background_free (bg);
      return;
    }
  ac = g_new0 (AutostartCall, 1);
  ac->request = limen_request_ref (request);
  ac->wanted = bg->autostart;
  g_dbus_connection_call (bg->context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE, "EnableAutostart",
                          g_variant_new ("(sb^asu)", app_id, bg->autostart,
                                         bg->commandline ? (const char * const *) bg->commandline : empty,
                                         bg->dbus_activatable ? AUTOSTART_DBUS_ACTIVATABLE : 0),
                          G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK,
                          NULL, on_autostart, ac);
  background_free (bg);
}

static gboolean
handle_request_background (LimenDbusPortalBackground *object, GDBusMethodInvocation *invocation,
                           const char *parent_window, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenRequest) request = NULL;
  g_autofree char *reason = NULL;
  g_autofree char *title = NULL;
  const char *backend;
  Background *bg;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, background_options, NULL) ||
      (backend = limen_backend_find (context, IMPL_IFACE, &error)) == NULL ||
      (request = limen_backend_start_request (invocation, info, options, backend, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  bg = g_new0 (Background, 1);
  bg->context = context;
  g_variant_lookup (options, "autostart", "b", &bg->autostart);
  g_variant_lookup (options, "dbus-activatable", "b", &bg->dbus_activatable);
  g_variant_lookup (options, "commandline", "^as", &bg->commandline);
  g_variant_lookup (options, "reason", "s", &reason);
  title = g_strdup_printf (_("Allow %s to run in the background?"), limen_app_info_get_id (info));
  limen_access_check (context, request, parent_window, TABLE, TABLE,
                      &(LimenAccessDialog) {
                        .title = title,
                        .subtitle = reason ? reason : _("The app asks to keep running when its windows are closed."),
                        .body = _("You can change this later in the system settings."),
                        .grant_label = _("Allow"),
                        .deny_label = _("Don't Allow"),
                      },
                      on_access, bg);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_background_new (LimenPortalContext *context)
{
  LimenDbusPortalBackground *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_background_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_background_set_version (object, 1);
  g_signal_connect (object, "handle-request-background", G_CALLBACK (handle_request_background), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
