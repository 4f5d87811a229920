/* Limen — xdg_activation_v1 tokens for limen-kde (GlobalShortcuts' Activated).
 *
 * An app whose global shortcut fires should be allowed to raise its window; on Wayland
 * that takes a token the compositor hands out. limen-kde has no surface and never has the
 * keyboard focus, so KWin 5.27 grants it one only because it is privileged: its .desktop
 * file lists org_kde_plasma_window_management in X-KDE-Wayland-Interfaces. Anyone else
 * gets a token named "not-granted-…" that KWin will refuse; we pass none on rather than
 * that one.
 *
 * The connection binds nothing but xdg_activation_v1 and is never waited on: requests
 * made before the compositor has listed its globals wait in a queue, and every request
 * ends by its own deadline, so a slow or stopped compositor delays a key event by that
 * deadline at most.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "wl-private.h"
#include "xdg-activation-v1-client-protocol.h"

#define NOT_GRANTED_PREFIX "not-granted-"

typedef struct _Request Request;

struct _LimenWlActivation {
  struct wl_display        *display;
  struct wl_registry       *registry;
  struct wl_callback       *listing;    /* until the globals are known */
  struct xdg_activation_v1 *manager;
  gint64                    connected;  /* monotonic µs */
  GSource                  *source;
  GList                    *requests;   /* Request, oldest first */
  gboolean                  broken;
};

struct _Request {
  LimenWlActivation              *activation;
  struct xdg_activation_token_v1 *token;    /* NULL until sent */
  char                           *app_id;
  guint                           deadline_id;
  LimenWlTokenReady               ready;
  gpointer                        user_data;
};

/* Forget @r, then report @token: @ready may well ask for the next token. */
static void
request_finish (Request *r, const char *token)
{
  LimenWlTokenReady ready = r->ready;
  gpointer user_data = r->user_data;

  r->activation->requests = g_list_remove (r->activation->requests, r);
  if (r->token)
    xdg_activation_token_v1_destroy (r->token);
  if (r->deadline_id)
    g_source_remove (r->deadline_id);
  g_free (r->app_id);
  g_free (r);
  ready (token, user_data);
}

static void
token_done (void *data, struct xdg_activation_token_v1 *token, const char *name)
{
  Request *r = data;

  if (!name || !*name || g_str_has_prefix (name, NOT_GRANTED_PREFIX))
    {
      g_debug ("The compositor refused an activation token (\"%s\")", name ? name : "");
      request_finish (r, NULL);
      return;
    }
  request_finish (r, name);
}

static const struct xdg_activation_token_v1_listener token_listener = { token_done };

static gboolean
request_deadline (gpointer data)
{
  Request *r = data;

  r->deadline_id = 0;
  if (r->token)
    g_debug ("The compositor gave no activation token in time");
  else if (r->activation->listing)
    g_debug ("The compositor did not list its globals in time for an activation token");
  request_finish (r, NULL);
  return G_SOURCE_REMOVE;
}

static void
request_send (Request *r)
{
  LimenWlActivation *a = r->activation;

  r->token = xdg_activation_v1_get_activation_token (a->manager);
  xdg_activation_token_v1_add_listener (r->token, &token_listener, r);
  /* No serial or seat: the key press went to KWin's own shortcut handling, never to us. */
  if (r->app_id && *r->app_id)
    xdg_activation_token_v1_set_app_id (r->token, r->app_id);
  xdg_activation_token_v1_commit (r->token);
  wl_display_flush (a->display);
}

/* ---- globals ---- */

static void
registry_global (void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version)
{
  LimenWlActivation *a = data;

  if (strcmp (interface, xdg_activation_v1_interface.name) == 0 && !a->manager)
    a->manager = wl_registry_bind (registry, name, &xdg_activation_v1_interface, 1);
}

static void
registry_global_remove (void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { registry_global, registry_global_remove };

/* The compositor has listed its globals: send what waited, or end it when it has no
 * xdg_activation_v1. */
static void
listing_done (void *data, struct wl_callback *callback, uint32_t serial)
{
  LimenWlActivation *a = data;
  GList *waiting = g_list_copy (a->requests);

  wl_callback_destroy (a->listing);
  a->listing = NULL;
  /* KWin looks the client's .desktop file up first: that can take longer than a key may wait. */
  g_debug ("The compositor listed its globals after %" G_GINT64_FORMAT " ms%s",
           (g_get_monotonic_time () - a->connected) / 1000,
           a->manager ? "" : "; it offers no xdg_activation_v1: no activation tokens");
  for (GList *l = waiting; l; l = l->next)
    {
      if (a->manager)
        request_send (l->data);
      else
        request_finish (l->data, NULL);
    }
  g_list_free (waiting);
}

static const struct wl_callback_listener listing_listener = { listing_done };

LimenWlActivation *
limen_wl_activation_new (char **error_message)
{
  const char *name = g_getenv ("WAYLAND_DISPLAY");
  LimenWlActivation *a;
  struct wl_display *display;

  if (!name || !*name)
    {
      *error_message = g_strdup ("This is not a Wayland session (no WAYLAND_DISPLAY)");
      return NULL;
    }
  display = wl_display_connect (NULL);
  if (!display)
    {
      *error_message = g_strdup_printf ("Cannot connect to the Wayland display %s: %s", name, g_strerror (errno));
      return NULL;
    }
  a = g_new0 (LimenWlActivation, 1);
  a->display = display;
  a->connected = g_get_monotonic_time ();
  a->registry = wl_display_get_registry (display);
  wl_registry_add_listener (a->registry, &registry_listener, a);
  a->listing = wl_display_sync (display);
  wl_callback_add_listener (a->listing, &listing_listener, a);
  wl_display_flush (display);
  a->source = limen_wl_source_attach (display, &a->broken);
  return a;
}

gboolean
limen_wl_activation_request (LimenWlActivation *a, const char *app_id, guint timeout_ms, LimenWlTokenReady ready,
                             gpointer user_data)
{
  Request *r;

  if (a->broken || wl_display_get_error (a->display) != 0)
    return FALSE;
  r = g_new0 (Request, 1);
  r->activation = a;
  r->app_id = g_strdup (app_id);
  r->ready = ready;
  r->user_data = user_data;
  a->requests = g_list_append (a->requests, r);
  /* Known to have no xdg_activation_v1: end it from the main loop, as promised. */
  r->deadline_id = g_timeout_add (a->listing || a->manager ? timeout_ms : 0, request_deadline, r);
  if (!a->listing && a->manager)
    request_send (r);
  return TRUE;
}

void
limen_wl_activation_free (LimenWlActivation *a)
{
  while (a->requests)
    request_finish (a->requests->data, NULL);
  g_source_destroy (a->source);
  g_source_unref (a->source);
  g_clear_pointer (&a->listing, wl_callback_destroy);
  g_clear_pointer (&a->manager, xdg_activation_v1_destroy);
  wl_registry_destroy (a->registry);
  wl_display_disconnect (a->display);
  g_free (a);
}
