/* Limen — the desktop entry DynamicLauncher.Install writes, built from an app's untrusted one.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Whom an installed launcher starts, and what the person approved for it. */
typedef struct {
  const char *app_id;
  gboolean    flatpak;   /* every Exec becomes `flatpak run --command=… APP_ID …` */
  const char *name;      /* the approved name */
  const char *icon;      /* the icon file the portal wrote */
} LimenLauncherTarget;

/* Most [Desktop Action] groups a launcher may carry. */
#define LIMEN_LAUNCHER_ACTIONS_MAX 16

/* A new key file holding only the allow-listed groups and keys of @entry: [Desktop Entry]
 * with Type=Application, the approved Name and Icon, Exec (rewritten for a Flatpak app),
 * Comment, Keywords (and their translations), Categories, StartupNotify, StartupWMClass,
 * Actions; each listed [Desktop Action ID] with Name (and translations) and Exec, rewritten
 * alike. Every other key is left out. NULL + InvalidArgument naming what is wrong for any
 * other group, a Type other than Application, an Exec that cannot be kept exactly (field
 * codes inside an argument or in the command, control characters) or a bad allowed value. */
GKeyFile *limen_launcher_entry_build (const char *entry, const LimenLauncherTarget *target, GError **error);

/* A launcher an earlier install wrote to APP_ID.NAME.desktop (@desktop_id) for a sandboxed
 * app, brought under today's allow-list (a new string, equal to @data when nothing changes;
 * a host app's, without X-Flatpak, is left as it is). A Flatpak app's Icon must lie in
 * @icon_dir and every Exec must be that app's own `flatpak run --command=…`, as Install
 * writes it. NULL + error for a launcher that cannot be kept: a Snap app's, or a Flatpak
 * app's whose commands are not its app's own. */
char *limen_launcher_entry_recheck (const char *desktop_id, const char *data, const char *icon_dir, GError **error);

G_END_DECLS
