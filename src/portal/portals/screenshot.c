/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A non-interactive screenshot shows the user nothing, so a sandboxed app needs the
 * stored "screenshot" permission (or the user's yes in an Access dialog) first. The
 * picture the backend saved is handed to a sandboxed app as a read-only document. */
#include "screenshot.h"

#include <glib/gi18n.h>

#include "access.h"
#include "backend.h"
#include "document-export.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Screenshot"
#define TABLE "screenshot"

static const LimenOption screenshot_options[] = {
  { "modal", "b", limen_validate_bool, 0 },
  { "interactive", "b", limen_validate_bool, 0 },
  { NULL }
};

static const LimenOption pick_color_options[] = {
  { NULL }
};

typedef struct {
  LimenPortalContext *context;
  char               *method;
  char               *parent_window;
  GVariant           *options;   /* filtered */
} Shot;

static void
shot_free (Shot *s)
{
  g_free (s->method);
  g_free (s->parent_window);
  g_clear_pointer (&s->options, g_variant_unref);
  g_free (s);
}

static void
on_exported (char **uris, const GError *error, gpointer user_data)
{
  LimenRequest *request = user_data;

  if (error || uris == NULL || uris[0] == NULL)
    {
      g_message ("Could not hand over the screenshot: %s", error ? error->message : "no file");
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
    }
  else
    limen_request_respond (request, LIMEN_RESPONSE_SUCCESS,
                           g_variant_new_parsed ("{'uri': <%s>}", uris[0]));
  limen_request_unref (request);
}

static void
on_reply (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error, gpointer user_data)
{
  Shot *s = user_data;
  g_autoptr(GVariant) results = NULL;
  guint response = limen_backend_reply_response (reply, &results);
  const char *uri = NULL;
  double r, g, b;

  if (response != LIMEN_RESPONSE_SUCCESS)
    {
      limen_request_respond (request, response, NULL);
      return;
    }
  if (g_str_equal (s->method, "PickColor"))
    {
      if (!g_variant_lookup (results, "color", "(ddd)", &r, &g, &b) ||
          r < 0 || r > 1 || g < 0 || g > 1 || b < 0 || b > 1)
        {
          g_message ("Backend answered PickColor without a valid color");
          limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
          return;
        }
      limen_request_respond (request, LIMEN_RESPONSE_SUCCESS,
                             g_variant_new_parsed ("{'color': <(%d, %d, %d)>}", r, g, b));
      return;
    }
  if (!g_variant_lookup (results, "uri", "&s", &uri) || !g_str_has_prefix (uri, "file:"))
    {
      g_message ("Backend answered Screenshot without a file URI");
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      return;
    }
  limen_document_export (s->context->connection, limen_request_get_app_info (request),
                         (const char * const[]) { uri, NULL }, 0, limen_request_get_cancellable (request),
                         on_exported, limen_request_ref (request));
}

static void
on_access (LimenRequest *request, gboolean allowed, gpointer user_data)
{
  Shot *s = user_data;
  g_autoptr(GError) error = NULL;
  const char *backend;

  if (!allowed)
    {
      g_debug ("%s refused to '%s'", s->method, limen_app_info_get_id (limen_request_get_app_info (request)));
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      shot_free (s);
      return;
    }
  backend = limen_backend_find (s->context, IMPL_IFACE, &error);
  if (backend == NULL)
    {
      limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
      shot_free (s);
      return;
    }
  limen_backend_call (request, backend, IMPL_IFACE, s->method,
                      limen_backend_build_parameters (request, g_variant_new ("(s)", s->parent_window), s->options),
                      NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_reply, s, (GDestroyNotify) shot_free);
}

static gboolean
handle (LimenPortalContext *context, GDBusMethodInvocation *invocation, const char *method,
        const char *parent_window, GVariant *options, const LimenOption *table)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenRequest) request = NULL;
  const char *backend;
  gboolean interactive = FALSE;
  Shot *s;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, table, NULL) ||
      (backend = limen_backend_find (context, IMPL_IFACE, &error)) == NULL ||
      (request = limen_backend_start_request (invocation, info, options, backend, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_variant_lookup (options, "interactive", "b", &interactive);
  s = g_new0 (Shot, 1);
  s->context = context;
  s->method = g_strdup (method);
  s->parent_window = g_strdup (parent_window);
  s->options = g_variant_ref_sink (g_variant_builder_end (&b));
  if (interactive && g_str_equal (method, "Screenshot"))
    {
      /* The backend's dialog is the user's consent. */
      on_access (request, TRUE, s);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_access_check (context, request, parent_window, TABLE, TABLE,
                      &(LimenAccessDialog) {
                        .title = _("Allow this app to take screenshots?"),
                        .subtitle = limen_app_info_get_id (info),
                        .body = _("It will see everything on your screen whenever it asks, without showing you."),
                        .grant_label = _("Allow"),
                        .deny_label = _("Deny"),
                        .icon = "applets-screenshooter",
                      },
                      on_access, s);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_screenshot (LimenDbusPortalScreenshot *object, GDBusMethodInvocation *invocation,
                   const char *parent_window, GVariant *options, LimenPortalContext *context)
{
  return handle (context, invocation, "Screenshot", parent_window, options, screenshot_options);
}

static gboolean
handle_pick_color (LimenDbusPortalScreenshot *object, GDBusMethodInvocation *invocation,
                   const char *parent_window, GVariant *options, LimenPortalContext *context)
{
  return handle (context, invocation, "PickColor", parent_window, options, pick_color_options);
}

GDBusInterfaceSkeleton *
limen_screenshot_new (LimenPortalContext *context)
{
  LimenDbusPortalScreenshot *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  object = limen_dbus_portal_screenshot_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));
  limen_dbus_portal_screenshot_set_version (object, 2);
  g_signal_connect (object, "handle-screenshot", G_CALLBACK (handle_screenshot), context);
  g_signal_connect (object, "handle-pick-color", G_CALLBACK (handle_pick_color), context);
  return G_DBUS_INTERFACE_SKELETON (object);
}
