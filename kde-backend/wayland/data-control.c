/* Limen — the clipboard through zwlr_data_control_manager_v1: read the selection of the
 * seat and own it, without a window or keyboard focus.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <unistd.h>

#include "wl-private.h"

/* A hostile client can offer endless types; a session never needs more than these. */
#define MAX_OFFER_TYPES 64

struct _LimenWlOffer {
  struct zwlr_data_control_offer_v1 *proxy;
  GPtrArray                         *types;   /* NULL-terminated char* */
};

static void
offer_free (LimenWlOffer *offer)
{
  if (!offer)
    return;
  zwlr_data_control_offer_v1_destroy (offer->proxy);
  g_ptr_array_unref (offer->types);
  g_free (offer);
}

static void
offer_offer (void *data, struct zwlr_data_control_offer_v1 *proxy, const char *mime_type)
{
  LimenWlOffer *offer = data;

  if (offer->types->len - 1 >= MAX_OFFER_TYPES || !g_utf8_validate (mime_type, -1, NULL) ||
      strlen (mime_type) > 255)
    return;
  g_ptr_array_insert (offer->types, offer->types->len - 1, g_strdup (mime_type));
}

static const struct zwlr_data_control_offer_v1_listener offer_listener = { offer_offer };

static void
device_data_offer (void *data, struct zwlr_data_control_device_v1 *device, struct zwlr_data_control_offer_v1 *id)
{
  LimenWl *wl = data;
  LimenWlOffer *offer = g_new0 (LimenWlOffer, 1);

  offer->proxy = id;
  offer->types = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (offer->types, NULL);
  zwlr_data_control_offer_v1_add_listener (id, &offer_listener, offer);
  offer_free (wl->pending_offer);
  wl->pending_offer = offer;
}

static void
device_selection (void *data, struct zwlr_data_control_device_v1 *device, struct zwlr_data_control_offer_v1 *id)
{
  LimenWl *wl = data;
  static const char *const none[] = { NULL };

  offer_free (wl->selection);
  wl->selection = NULL;
  if (id && wl->pending_offer && wl->pending_offer->proxy == id)
    wl->selection = g_steal_pointer (&wl->pending_offer);
  g_debug ("Wayland: the clipboard changed (%u types%s)", wl->selection ? wl->selection->types->len - 1 : 0,
           wl->our_source ? ", ours" : "");
  if (wl->changed)
    wl->changed (wl->selection ? (const char *const *) wl->selection->types->pdata : none,
                 wl->our_source != NULL, wl->changed_data);
}

static void
device_finished (void *data, struct zwlr_data_control_device_v1 *device)
{
  LimenWl *wl = data;

  zwlr_data_control_device_v1_destroy (wl->data_device);
  wl->data_device = NULL;
}

static void
device_primary_selection (void *data, struct zwlr_data_control_device_v1 *device,
                          struct zwlr_data_control_offer_v1 *id)
{
  LimenWl *wl = data;

  /* Bound at version 1, so KWin never sends this; an offer announced for it is dropped. */
  if (id && wl->pending_offer && wl->pending_offer->proxy == id)
    g_clear_pointer (&wl->pending_offer, offer_free);
}

static const struct zwlr_data_control_device_v1_listener device_listener = {
  device_data_offer, device_selection, device_finished, device_primary_selection
};

void
limen_wl_data_control_start (LimenWl *wl)
{
  wl->data_device = zwlr_data_control_manager_v1_get_data_device (wl->data_control, wl->seat);
  zwlr_data_control_device_v1_add_listener (wl->data_device, &device_listener, wl);
}

void
limen_wl_selection_watch (LimenWl *wl, LimenWlSelectionChanged changed, gpointer user_data)
{
  wl->changed = changed;
  wl->changed_data = user_data;
}

static void
source_send (void *data, struct zwlr_data_control_source_v1 *source, const char *mime_type, int32_t fd)
{
  LimenWl *wl = data;

  if (wl->send && source == wl->our_source)
    wl->send (mime_type, fd, wl->send_data);
  else
    close (fd);
}

static void
source_cancelled (void *data, struct zwlr_data_control_source_v1 *source)
{
  LimenWl *wl = data;

  if (source == wl->our_source)
    wl->our_source = NULL;
  zwlr_data_control_source_v1_destroy (source);
}

static const struct zwlr_data_control_source_v1_listener source_listener = { source_send, source_cancelled };

gboolean
limen_wl_selection_set (LimenWl *wl, const char *const *mime_types, LimenWlSelectionSend send, gpointer user_data)
{
  struct zwlr_data_control_source_v1 *source;

  if (!wl->data_device || wl->broken)
    return FALSE;
  source = zwlr_data_control_manager_v1_create_data_source (wl->data_control);
  zwlr_data_control_source_v1_add_listener (source, &source_listener, wl);
  for (gsize i = 0; mime_types && mime_types[i]; i++)
    zwlr_data_control_source_v1_offer (source, mime_types[i]);
  /* The old source is cancelled by the compositor; until then it serves no one. */
  wl->our_source = source;
  wl->send = send;
  wl->send_data = user_data;
  zwlr_data_control_device_v1_set_selection (wl->data_device, source);
  limen_wl_flush (wl);
  return TRUE;
}

void
limen_wl_selection_clear (LimenWl *wl)
{
  wl->send = NULL;
  wl->send_data = NULL;
  if (wl->our_source && wl->data_device && !wl->broken)
    {
      zwlr_data_control_device_v1_set_selection (wl->data_device, NULL);
      limen_wl_flush (wl);
    }
}

gboolean
limen_wl_selection_receive (LimenWl *wl, const char *mime_type, int fd)
{
  gboolean offered = FALSE;

  for (guint i = 0; wl->selection && i + 1 < wl->selection->types->len; i++)
    if (g_str_equal (g_ptr_array_index (wl->selection->types, i), mime_type))
      offered = TRUE;
  if (offered && !wl->broken)
    {
      zwlr_data_control_offer_v1_receive (wl->selection->proxy, mime_type, fd);
      limen_wl_flush (wl);
    }
  close (fd);
  return offered;
}
