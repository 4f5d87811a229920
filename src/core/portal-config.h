/* Limen — which backend serves which impl interface: *.portal files and portals.conf.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char  *source;       /* file name without ".portal": "kde", "limen", "gtk" */
  char  *dbus_name;    /* DBusName= */
  char **interfaces;   /* Interfaces= */
  char **use_in;       /* UseIn= (deprecated), may be NULL */
} LimenPortalImpl;

typedef struct _LimenPortalConfig LimenPortalConfig;

/* Load from the environment: XDG_DESKTOP_PORTAL_DIR (only dir when set) or
 * $XDG_DATA_HOME, $XDG_DATA_DIRS /xdg-desktop-portal/portals; portals.conf and
 * <desktop>-portals.conf for XDG_CURRENT_DESKTOP in XDG_DESKTOP_PORTAL_DIR (when set),
 * then the config/data search order. */
LimenPortalConfig *limen_portal_config_load (void);

/* Load from explicit directories (unit tests): @portal_dirs with *.portal files,
 * @conf_dirs searched in order for the conf files, @desktops = XDG_CURRENT_DESKTOP entries. */
LimenPortalConfig *limen_portal_config_load_from (const char * const *portal_dirs,
                                                  const char * const *conf_dirs,
                                                  const char * const *desktops);

/* Free. */
void limen_portal_config_free (LimenPortalConfig *config);

/* The preferred backend for @interface ("org.freedesktop.impl.portal.X"), or NULL. */
const LimenPortalImpl *limen_portal_config_find (LimenPortalConfig *config, const char *interface);

/* Every backend for @interface in preference order (Settings merges them); free the array only. */
GPtrArray *limen_portal_config_find_all (LimenPortalConfig *config, const char *interface);

/* Like limen_portal_config_find_all(), without the last resort of any backend offering
 * @interface: with no conf file, only those whose UseIn= names a current desktop. For
 * Settings, where merging a stray backend's values would change what every app sees. */
GPtrArray *limen_portal_config_find_all_for_desktop (LimenPortalConfig *config, const char *interface);

/* The conf file that decided (for logs), or NULL when only UseIn= was used. */
const char *limen_portal_config_get_conf_path (LimenPortalConfig *config);

/* All loaded *.portal entries. */
GPtrArray *limen_portal_config_get_impls (LimenPortalConfig *config);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenPortalConfig, limen_portal_config_free)

G_END_DECLS
