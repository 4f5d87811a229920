/* Limen — opening liblimen-kde-wayland on the first screen-sharing request.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "limen-wayland.h"

G_BEGIN_DECLS

typedef struct {
#define LIMEN_KDE_WL_FIELD(name) __typeof__ (name) *name;
  LIMEN_WL_DLOPEN_FUNCTIONS (LIMEN_KDE_WL_FIELD)
#undef LIMEN_KDE_WL_FIELD
  LimenWl *wl;   /* the one connection */
} LimenKdeWayland;

/* The module and its connection to the compositor, made on the first call; NULL and
 * Error.Failed saying why (no Wayland session, module missing, compositor silent). A
 * failure is remembered: later calls fail at once. */
const LimenKdeWayland *limen_kde_wayland_get (GError **error);

/* The LIMEN_WL_HAS_* bits: the live connection's once the module is loaded; before, what
 * a look at the compositor's globals found (the module is not kept); 0 without a
 * Wayland session. */
guint limen_kde_wayland_features (void);

/* Load the module and open the activation-token connection now (without waiting), so that
 * the compositor has taken it in before the first token is asked for: KWin 5.27 answers a
 * new client only after looking up its .desktop file, which can outlast a key's wait. */
void limen_kde_wayland_activation_prepare (void);

/* Ask the compositor for an xdg_activation_v1 token naming @app_id (loading the module, and
 * connecting without waiting, on first use). TRUE: @ready runs once from the main loop,
 * within @timeout_ms, with the token or NULL. FALSE (not Wayland, no module, no display):
 * @ready never runs. */
gboolean limen_kde_wayland_activation_token (const char *app_id, guint timeout_ms, LimenWlTokenReady ready,
                                             gpointer user_data);

G_END_DECLS
