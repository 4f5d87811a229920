/* Limen — shortcut triggers between the XDG shortcuts specification, Qt key codes and text.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Longest trigger string accepted (the frontend bounds preferred_trigger the same way). */
#define LIMEN_KDE_TRIGGER_MAX 128

/* Parse a trigger of the shortcuts specification ("CTRL+ALT+p", "LOGO+Return"; modifier
 * names without case) into one Qt key code (modifier bits | key). FALSE when a modifier or
 * the key is unknown, or the key has no Qt code. */
gboolean limen_kde_shortcut_parse (const char *trigger, int *qt_key);

/* The specification's trigger for one Qt key code, or NULL when its key has no keysym. */
char *limen_kde_shortcut_to_trigger (int qt_key);

/* What a person reads for @keys (Qt key codes, 0 entries skipped), "Ctrl+Alt+P, Meta+F5";
 * translated; "" for none. */
char *limen_kde_shortcut_describe (const int *keys, gsize n_keys);

/* The same in Qt's portable text, untranslated ("Ctrl+Alt+P, Meta+F5"), as kglobalshortcutsrc
 * keeps it: what the permission store records for the permissions page. */
char *limen_kde_shortcut_describe_portable (const int *keys, gsize n_keys);

G_END_DECLS
