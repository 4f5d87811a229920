/* Limen — icon and sound bytes from apps judged out of process by limen-validate-icon and
 * limen-validate-sound.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Called once: @ok with the image's format ("png", "jpeg", "svg") and width. */
typedef void (*LimenIconValidateFunc) (gboolean ok, const char *format, guint width, gpointer user_data);

/* Run the icon validator (XDP_VALIDATE_ICON, else the build tree's when running from it, else
 * the installed one) on @bytes with a CPU, memory and time limit. */
void limen_icon_validate (GBytes *bytes, guint max_size, LimenIconValidateFunc func, gpointer user_data);

/* Called once: @ok with the sound's format ("wav", "vorbis", "opus") and length. */
typedef void (*LimenSoundValidateFunc) (gboolean ok, const char *format, guint milliseconds, gpointer user_data);

/* Run the sound validator (XDP_VALIDATE_SOUND, else the build tree's, else the installed one)
 * on @bytes under the same limits; sounds longer than @max_seconds are refused. */
void limen_sound_validate (GBytes *bytes, guint max_seconds, LimenSoundValidateFunc func, gpointer user_data);

G_END_DECLS
