/* Limen — icon and sound bytes from apps judged out of process by limen-validate-icon and
 * limen-validate-sound.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Run the icon validator (XDP_VALIDATE_ICON, else the build tree's when running from it, else
 * the installed one) on @bytes with a CPU, memory and time limit. */
void limen_icon_validate_async (GBytes *bytes, guint max_size, GAsyncReadyCallback callback, gpointer user_data);

/* TRUE when the bytes are an image of at most the size asked for; then @format ("png",
 * "jpeg", "svg"; new string) and @width (both may be NULL). */
gboolean limen_icon_validate_finish (GAsyncResult *result, char **format, guint *width);

/* Run the sound validator (XDP_VALIDATE_SOUND, else the build tree's, else the installed one)
 * on @bytes under the same limits; sounds longer than @max_seconds are refused. */
void limen_sound_validate_async (GBytes *bytes, guint max_seconds, GAsyncReadyCallback callback, gpointer user_data);

/* TRUE when the bytes are an accepted sound; then @format ("wav", "vorbis", "opus"; new
 * string) and its length (both may be NULL). */
gboolean limen_sound_validate_finish (GAsyncResult *result, char **format, guint *milliseconds);

G_END_DECLS
