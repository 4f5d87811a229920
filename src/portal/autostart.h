/* Limen — the autostart entries the frontend writes for Background.RequestBackground.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "app-info.h"

G_BEGIN_DECLS

/* Write (@enable) or remove $XDG_CONFIG_HOME/autostart/APPID.desktop for the app @info:
 * Exec runs @commandline (through `flatpak run --command=` for a Flatpak app; never for a
 * Snap, which starts as its snapd desktop file says, confined), the entry names the app in
 * X-Flatpak (Flatpak apps) and X-XDP-Autostart, and says DBusActivatable when
 * @dbus_activatable. TRUE when the app now starts with the session; FALSE + @error when it
 * could not be written, or when there is nothing to start (no id, no command and no desktop
 * file for a host app or a Snap). Removing an entry that is not there is fine (FALSE, no
 * error). */
gboolean limen_autostart_set (LimenAppInfo       *info,
                              gboolean            enable,
                              const char * const *commandline,
                              gboolean            dbus_activatable,
                              GError            **error);

/* Remove $XDG_CONFIG_HOME/autostart/@app_id.desktop if this frontend (or the reference)
 * wrote it for @app_id (X-XDP-Autostart names it); an entry the person made stays. TRUE when
 * one was removed. */
gboolean limen_autostart_remove_written (const char *app_id);

/* One argument quoted for a desktop entry's Exec= (before key-file escaping): as it is when
 * it holds no reserved character, else in double quotes; '%' doubled. */
char *limen_autostart_quote_exec_arg (const char *arg);

G_END_DECLS
