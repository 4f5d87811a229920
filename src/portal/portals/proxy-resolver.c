/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include <string.h>

#include "network-monitor.h"

#define URI_MAX 8192

typedef struct {
  LimenDbusPortalProxyResolver *object;
  GDBusMethodInvocation        *invocation;
} LookupData;

static void
on_lookup_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LookupData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) proxies = g_proxy_resolver_lookup_finish (G_PROXY_RESOLVER (source), result, &error);

  if (proxies == NULL)
    g_dbus_method_invocation_return_error (data->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                           "Proxy lookup failed: %s", error->message);
  else
    limen_dbus_portal_proxy_resolver_complete_lookup (data->object, data->invocation,
                                                      (const char * const *) proxies);
  g_object_unref (data->object);
  g_free (data);
}

static gboolean
handle_lookup (LimenDbusPortalProxyResolver *object, GDBusMethodInvocation *invocation, const char *uri)
{
  LookupData *data;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_network_check_access (invocation, info))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (strlen (uri) > URI_MAX || !g_uri_is_valid (uri, G_URI_FLAGS_PARSE_RELAXED, NULL))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid URI");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  data = g_new0 (LookupData, 1);
  data->object = g_object_ref (object);
  data->invocation = invocation;
  g_proxy_resolver_lookup_async (g_proxy_resolver_get_default (), uri, NULL, on_lookup_done, data);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* org.freedesktop.portal.ProxyResolver on GProxyResolver (libproxy / glib-networking). */
GDBusInterfaceSkeleton *
limen_proxy_resolver_new (LimenPortalContext *context)
{
  LimenDbusPortalProxyResolver *object = limen_dbus_portal_proxy_resolver_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));

  limen_dbus_portal_proxy_resolver_set_version (object, 1);
  g_signal_connect (object, "handle-lookup", G_CALLBACK (handle_lookup), NULL);
  return G_DBUS_INTERFACE_SKELETON (object);
}
