/* Limen — org.freedesktop.impl.portal.Email: ComposeEmail through KDE's mail launcher.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include "option-tables.h"

static void
on_done (int response, const char *error_message, void *user_data)
{
  if (error_message)
    g_warning ("Could not start the mail client: %s", error_message);
  limen_kde_call_finish (user_data, response, NULL);
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
open_composer (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  GVariant *opts = limen_kde_call_get_options (call);
  g_autofree char *to = join_addresses (opts, "addresses", "address");
  g_autofree char *cc = join_addresses (opts, "cc", NULL);
  g_autofree char *bcc = join_addresses (opts, "bcc", NULL);
  g_autofree const char **attachments = NULL;
  LimenQtEmailSpec spec = { .subject = "", .body = "" };

  g_variant_lookup (opts, "subject", "&s", &spec.subject);
  g_variant_lookup (opts, "body", "&s", &spec.body);
  g_variant_lookup (opts, "attachments", "^a&s", &attachments);
  spec.window.parent_window = limen_kde_call_get_parent_window (call);
  spec.window.app_id = limen_kde_call_get_app_id (call);
  spec.to = to;
  spec.cc = cc;
  spec.bcc = bcc;
  spec.n_attachments = attachments ? g_strv_length ((char **) attachments) : 0;
  spec.attachments = attachments;
  /* The launcher always reports, also when it fails to start the mail client. */
  shim->limen_qt_email_compose (&spec, (LimenQtEmailDone) done, call);
  return TRUE;
}

/* The mail client cannot be stopped: Close only stops the caller's wait. */
static const LimenKdeMethod email_methods[] = {
  { .method = "ComposeEmail", .options = limen_options_impl_email_compose, .open = open_composer,
    .done = G_CALLBACK (on_done), .failed = "The mail client could not be started",
    .flags = LIMEN_KDE_METHOD_NO_DIALOG },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_email_new (void)
{
  return limen_kde_driver_offer (limen_dbus_impl_portal_email_skeleton_new (), email_methods);
}
