/* Limen — the backend's org.freedesktop.impl.portal.Lockdown switches.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* Called with TRUE when the Lockdown backend has @key ("disable-save-to-disk", ...) set. */
typedef void (*LimenLockdownFunc) (gboolean locked, gpointer user_data);

/* Read @key from the Lockdown backend now (none, or no answer: not locked). */
void limen_lockdown_query (LimenPortalContext *context, const char *key,
                           LimenLockdownFunc func, gpointer user_data);

G_END_DECLS
