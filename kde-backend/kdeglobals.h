/* Limen — kdeglobals read without Qt, for Settings and Lockdown.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Called once per entry of the merged kdeglobals cascade. Nested groups ("[A][B]")
 * are joined with '.', so @group is "A.B". */
typedef void (*LimenKdeglobalsEntryFunc) (const char *group, const char *key,
                                          const char *value, gpointer user_data);

/* Walk every entry of kdeglobals ($XDG_CONFIG_DIRS, then $XDG_CONFIG_HOME; later files
 * win, "[$i]" immutable groups stop the cascade), groups and keys in byte order.
 * Returns the number of entries. */
gsize limen_kdeglobals_foreach (LimenKdeglobalsEntryFunc func, gpointer user_data);

typedef enum {
  LIMEN_COLOR_SCHEME_DEFAULT = 0, /* no preference known */
  LIMEN_COLOR_SCHEME_DARK = 1,
  LIMEN_COLOR_SCHEME_LIGHT = 2,
} LimenColorScheme;

typedef struct {
  LimenColorScheme color_scheme;
  gboolean has_accent;                   /* accent_* valid */
  double   accent_r, accent_g, accent_b; /* 0..1 */
  gboolean high_contrast;                /* the scheme's text/background contrast is high */
  gboolean reduced_motion;               /* animations are off ([KDE] AnimationDurationFactor=0) */
} LimenAppearance;

/* Derive org.freedesktop.appearance from kdeglobals: the window background luminance of
 * [Colors:Window] first, then the colour scheme file named by [General] ColorScheme,
 * then the scheme's name. */
void limen_kdeglobals_read_appearance (LimenAppearance *out);

/* The kdeglobals files of the cascade, most important last (free with g_strfreev). */
GStrv limen_kdeglobals_get_paths (void);

/* Watch every file of the cascade: @on_changed is connected to each GFileMonitor's
 * "changed" signal. Returns the monitors (unref the array to stop watching). */
GPtrArray *limen_kdeglobals_watch (GCallback on_changed, gpointer user_data);

G_END_DECLS
