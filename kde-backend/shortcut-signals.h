/* Limen — GlobalShortcuts' Activated/Deactivated, in order, with activation tokens.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* How long a key event may wait for the compositor's activation token (Wayland). KWin
 * 5.27's first token of a session took up to 190 ms on a loaded 2-core machine (it loads
 * the app's icon for its launch feedback); later ones take 1-15 ms. On Wayland the key
 * events come from KWin itself, so this bounds a KWin that is busy, not one that hangs. */
#define LIMEN_KDE_TOKEN_TIMEOUT_MS 500

/* Send GlobalShortcuts' @signal ("Activated" or "Deactivated") for @action of the session
 * @handle to its owner @sender alone, after every key signal sent before it. With
 * @app_id (non-NULL) the signal carries an activation_token for that app: on X11 a
 * startup id with @timestamp at once, on Wayland a token of the compositor's, waited for
 * LIMEN_KDE_TOKEN_TIMEOUT_MS at most (then the signal goes without one). */
void limen_kde_shortcut_signal (GDBusConnection *connection, const char *sender, const char *handle,
                                const char *signal, const char *action, gint64 timestamp, const char *app_id);

/* A shortcut is bound: in a Wayland session, get ready to ask for tokens (the module and
 * its connection), so that the first key press does not wait on connecting. */
void limen_kde_shortcut_signals_prepare (void);

/* Drop the signals of session @handle still waiting for a token (the session ended). */
void limen_kde_shortcut_signals_forget (const char *handle);

G_END_DECLS
