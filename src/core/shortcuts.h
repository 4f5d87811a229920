/* Limen — GlobalShortcuts' lists of shortcuts, a(sa{sv}), checked the same way by the
 * frontend and the backend.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "options.h"

G_BEGIN_DECLS

#define LIMEN_SHORTCUTS_MAX 128              /* shortcuts in one list */
#define LIMEN_SHORTCUT_ID_MAX 256            /* bytes of an id */
#define LIMEN_SHORTCUT_DESCRIPTION_MAX 1024  /* bytes of a description */
#define LIMEN_SHORTCUT_TRIGGER_MAX 128       /* bytes of a trigger */
#define LIMEN_SHORTCUT_TOKEN_MAX 256         /* bytes of an activation token */

/* What an app proposes in BindShortcuts: description, preferred_trigger. */
extern const LimenOption limen_shortcut_proposal_keys[];
/* What a backend answers for a bound shortcut: description, trigger_description. */
extern const LimenOption limen_shortcut_result_keys[];

/* GlobalShortcuts.ConfigureShortcuts (app and impl alike): activation_token. */
extern const LimenOption limen_options_global_shortcuts_configure[];
/* The options of an Activated / Deactivated signal: activation_token. */
extern const LimenOption limen_options_global_shortcuts_key_event[];

/* Check @shortcuts (a(sa{sv})) and return a new floating copy with only the keys of @keys:
 * at most LIMEN_SHORTCUTS_MAX entries, ids non-empty, bounded, without control characters
 * and unique. NULL + InvalidArgument naming the shortcut on the first bad entry. */
GVariant *limen_shortcuts_filter (GVariant *shortcuts, const LimenOption *keys, GError **error);

/* TRUE when @id may name a shortcut (the checks above, for one id). */
gboolean limen_shortcut_id_is_valid (const char *id);

G_END_DECLS
