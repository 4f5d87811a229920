/* Limen — logging setup shared by the daemons.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Route GLib logging for @program; @verbose enables debug messages. */
void limen_log_init (const char *program, gboolean verbose);

G_END_DECLS
