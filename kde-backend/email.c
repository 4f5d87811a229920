/* Limen — org.freedesktop.impl.portal.Email: ComposeEmail through KDE's mail launcher.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include <string.h>

#include "errors.h"

typedef struct {
  int                    refs;
  GDBusMethodInvocation *invocation;   /* NULL once answered */
  LimenKdeRequest       *request;
} EmailCall;

static void
email_call_unref (EmailCall *call)
{
  if (--call->refs > 0)
    return;
  g_clear_object (&call->invocation);
  g_free (call);
}

static void
on_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  EmailCall *call = user_data;

  /* The launcher cannot be stopped; the caller just stops waiting. */
  call->request = NULL;
  if (call->invocation)
    limen_kde_reply_response (g_steal_pointer (&call->invocation), 2, NULL);
  email_call_unref (call);
}

static void
on_done (int response, const char *error_message, void *user_data)
{
  EmailCall *call = user_data;

  if (error_message)
    g_warning ("Could not start the mail client: %s", error_message);
  if (call->invocation)
    limen_kde_reply_response (g_steal_pointer (&call->invocation), response, NULL);
  if (call->request)
    {
      limen_kde_request_finish (g_steal_pointer (&call->request));
      email_call_unref (call);   /* the request's reference */
    }
  email_call_unref (call);       /* the launcher's reference */
}

static char *
join_addresses (GVariant *opts, const char *list_key, const char *single_key)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new ();
  g_autofree const char **list = NULL;
  const char *single = NULL;

  if (single_key && g_variant_lookup (opts, single_key, "&s", &single))
    g_ptr_array_add (all, (gpointer) single);
  if (g_variant_lookup (opts, list_key, "^a&s", &list))
    for (const char **p = list; *p; p++)
      g_ptr_array_add (all, (gpointer) *p);
  g_ptr_array_add (all, NULL);
  return g_strjoinv (",", (char **) all->pdata);
}

static gboolean
on_compose_email (LimenDbusImplPortalEmail *skeleton,
                  GDBusMethodInvocation    *invocation,
                  const char               *handle,
                  const char               *app_id,
                  const char               *parent_window,
                  GVariant                 *options,
                  gpointer                  user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autofree char *to = NULL, *cc = NULL, *bcc = NULL;
  g_autofree const char **attachments = NULL;
  const char *subject = "", *body = "";
  const LimenKdeShim *shim;
  LimenQtEmailSpec spec = { 0 };
  EmailCall *call;

  if (!limen_kde_check_request_args (handle, app_id, parent_window, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_impl_email_compose, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  shim = limen_kde_shim_get (&error);
  if (!shim)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  to = join_addresses (opts, "addresses", "address");
  cc = join_addresses (opts, "cc", NULL);
  bcc = join_addresses (opts, "bcc", NULL);
  g_variant_lookup (opts, "subject", "&s", &subject);
  g_variant_lookup (opts, "body", "&s", &body);
  g_variant_lookup (opts, "attachments", "^a&s", &attachments);

  call = g_new0 (EmailCall, 1);
  call->refs = 2;   /* the request and the launcher */
  call->invocation = g_object_ref (invocation);
  call->request = limen_kde_request_new (invocation, handle, on_request_closed, call, &error);
  if (!call->request)
    {
      limen_invocation_return_gerror (invocation, error);
      call->refs = 1;
      email_call_unref (call);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  spec.window.parent_window = parent_window;
  spec.window.app_id = app_id;
  spec.to = to;
  spec.cc = cc;
  spec.bcc = bcc;
  spec.subject = subject;
  spec.body = body;
  spec.n_attachments = attachments ? g_strv_length ((char **) attachments) : 0;
  spec.attachments = attachments;
  shim->limen_qt_email_compose (&spec, on_done, call);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_email_new (void)
{
  LimenDbusImplPortalEmail *skeleton = limen_dbus_impl_portal_email_skeleton_new ();

  g_signal_connect (skeleton, "handle-compose-email", G_CALLBACK (on_compose_email), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
