/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The user's picture is a file on the host: a sandboxed app can neither read its path nor
 * should learn it, so it gets the picture as a read-only document, named where its own
 * sandbox mounts the store, as upstream's newest frontend answers. */
#include "portal.h"

#include "backend.h"
#include "document-export.h"
#include "driver.h"
#include "option-tables.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Account"

typedef struct {
  LimenCall    *call;
  GVariantDict *answer;
} Picture;

static void
picture_free (Picture *p)
{
  g_variant_dict_unref (p->answer);
  g_free (p);
}

static void
on_picture_exported (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  Picture *p = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) uris = limen_document_export_finish (result, &error);

  /* A picture that cannot be handed over is left out; the rest of the answer stands. */
  if (uris && uris[0])
    g_variant_dict_insert (p->answer, "image", "s", uris[0]);
  else
    g_message ("Leaving the user's picture out of the answer for %s: %s",
               limen_app_info_get_id (limen_call_get_app_info (p->call)), error ? error->message : "no file");
  limen_call_set_results (p->call, LIMEN_RESPONSE_SUCCESS, g_variant_dict_end (p->answer));
  g_task_return_boolean (task, TRUE);
}

/* Post-step of GetUserInformation: id and name as the backend gave them, the picture as
 * the app can use it; nothing else the backend answered reaches the app. */
static void
answer_user (LimenCall *call, GTask *task)
{
  GVariant *results = limen_call_get_results (call);
  LimenAppInfo *info = limen_call_get_app_info (call);
  Picture *p = g_new0 (Picture, 1);
  const char *id = NULL, *name = NULL, *image = NULL;

  p->call = call;
  p->answer = g_variant_dict_new (NULL);
  if (results && g_variant_lookup (results, "id", "&s", &id))
    g_variant_dict_insert (p->answer, "id", "s", id);
  if (results && g_variant_lookup (results, "name", "&s", &name))
    g_variant_dict_insert (p->answer, "name", "s", name);
  if (results && g_variant_lookup (results, "image", "&s", &image) && limen_app_info_is_host (info))
    g_variant_dict_insert (p->answer, "image", "s", image);
  else if (image && g_str_has_prefix (image, "file:"))
    {
      g_task_set_task_data (task, p, (GDestroyNotify) picture_free);
      limen_document_export_async (limen_call_get_context (call)->connection, info,
                                   (const char * const[]) { image, NULL }, LIMEN_EXPORT_APP_VIEW,
                                   limen_request_get_cancellable (limen_call_get_request (call)),
                                   on_picture_exported, g_object_ref (task));
      return;
    }
  else if (image)
    g_message ("Leaving the user's picture out of the answer for %s: not a local file",
               limen_app_info_get_id (info));
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, g_variant_dict_end (p->answer));
  picture_free (p);
  g_task_return_boolean (task, TRUE);
}

static const LimenStep account_post[] = { { answer_user }, { NULL } };

static const LimenDriverMethod account_methods[] = {
  { .method = "GetUserInformation", .options = limen_options_account_get_user_information,
    .impl_interface = IMPL_IFACE, .impl_method = "GetUserInformation", .post = account_post },
  { NULL }
};

/* GetUserInformation, answered by the Account backend's dialog. */
GDBusInterfaceSkeleton *
limen_account_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  return limen_driver_offer (context, limen_dbus_portal_account_skeleton_new (), 1, account_methods);
}
