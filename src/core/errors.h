/* Limen — org.freedesktop.portal.Error.* as a GError domain.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "compat.h"

G_BEGIN_DECLS

typedef enum {
  LIMEN_ERROR_FAILED,
  LIMEN_ERROR_INVALID_ARGUMENT,
  LIMEN_ERROR_NOT_FOUND,
  LIMEN_ERROR_EXISTS,
  LIMEN_ERROR_NOT_ALLOWED,
  LIMEN_ERROR_CANCELLED,
  LIMEN_ERROR_WINDOW_DESTROYED,
} LimenError;

#define LIMEN_ERROR (limen_error_quark ())

/* The error domain whose codes map to org.freedesktop.portal.Error.* on the bus. */
GQuark limen_error_quark (void);

/* Return @error to @invocation; any non-Limen, non-D-Bus error becomes Error.Failed. */
void limen_invocation_return_gerror (GDBusMethodInvocation *invocation,
                                     const GError          *error);

G_END_DECLS
