/* Limen — the backend's org.freedesktop.impl.portal.Lockdown switches.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "driver.h"
#include "portal.h"

G_BEGIN_DECLS

/* Read @key ("disable-save-to-disk", ...) from the Lockdown backend now. */
void limen_lockdown_query_async (LimenPortalContext *context,
                                 const char         *key,
                                 GAsyncReadyCallback callback,
                                 gpointer            user_data);

/* TRUE when the key is set; no backend, or no answer: FALSE (not locked). */
gboolean limen_lockdown_query_finish (GAsyncResult *result);

/* A driver pre-step body (LIMEN_STEP_BEFORE_HANDLE): completes @task TRUE when @key is not
 * set, else with Error.NotAllowed and @message. */
void limen_lockdown_step (LimenCall *call, GTask *task, const char *key, const char *message);

G_END_DECLS
