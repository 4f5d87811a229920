/* Limen — icon bytes from apps judged by limen-validate-icon, out of process.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Called once: @ok with the image's format ("png", "jpeg", "svg") and width. */
typedef void (*LimenIconValidateFunc) (gboolean ok, const char *format, guint width, gpointer user_data);

/* Run the validator (XDP_VALIDATE_ICON, else the build tree's when running from it, else the
 * installed one) on @bytes with a CPU, memory and time limit. */
void limen_icon_validate (GBytes *bytes, guint max_size, LimenIconValidateFunc func, gpointer user_data);

G_END_DECLS
