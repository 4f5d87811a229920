/* What an installed Flatpak app reaches of the host's files by its static permissions:
 * the [Context] filesystems of its metadata and of the `flatpak override` files that apply
 * to it. AddFull's as-needed-by-app uses it to hand out no document for a file the app
 * can already open by its own path.
 *
 * Conservative by construction: an app that is not installed, a file that does not parse,
 * a filesystem key that is not understood or a path flatpak would not share all answer
 * "no access", which only ever means that a document is made, as without the flag.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  LIMEN_APP_ACCESS_NONE = 0,
  LIMEN_APP_ACCESS_READ = 1,
  LIMEN_APP_ACCESS_WRITE = 2,   /* read and write */
} LimenAppAccess;

typedef struct _LimenAppAccessRules LimenAppAccessRules;

/* The rules of @app_id (a valid app id) as installed now, read from the user installation
 * ($FLATPAK_USER_DIR, else $XDG_DATA_HOME/flatpak) and the system one ($FLATPAK_SYSTEM_DIR,
 * else /var/lib/flatpak). Never NULL: an app found nowhere has rules that grant nothing. */
LimenAppAccessRules *limen_app_access_rules_load (const char *app_id);
void limen_app_access_rules_free (LimenAppAccessRules *rules);

/* @path: absolute and canonical (no symlinks, no `.`/`..`). When the app is installed in
 * both installations, the lesser of the two answers. */
LimenAppAccess limen_app_access_rules_check (LimenAppAccessRules *rules, const char *path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenAppAccessRules, limen_app_access_rules_free)

G_END_DECLS
