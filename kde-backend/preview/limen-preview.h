/* Limen — liblimen-kde-preview.so: live previews for the screen-sharing picker, a small
 * PipeWire consumer of the streams KWin makes for it (one per screen or window shown).
 *
 * limen-kde opens this module only when a picker opens (../screencast-preview.c), so an
 * idle backend maps neither it nor libpipewire. It runs on the GLib main loop (PipeWire's
 * loop is polled as one GSource), takes shared-memory buffers only, and hands each stream's
 * picture, scaled down on the C side, at most every @interval_ms.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LIMEN_PREVIEW_EXPORT __attribute__ ((visibility ("default")))

typedef struct _LimenPreview LimenPreview;
typedef struct _LimenPreviewStream LimenPreviewStream;

/* A picture of @width × @height pixels, 4 bytes each in the order B, G, R, 255 (a
 * QImage::Format_RGB32 on little-endian machines), rows @stride bytes apart; valid only
 * during the call. The callback may not free its stream; it may defer that. */
typedef void (*LimenPreviewFrame) (int width, int height, int stride, const guint8 *pixels, gpointer user_data);

/* Connect to the session's PipeWire; NULL and *@error_message (g_free it) when there is
 * none or the module cannot work. */
LIMEN_PREVIEW_EXPORT LimenPreview *limen_preview_connect (char **error_message);
/* Consume PipeWire node @node: @frame gets pictures at most @max_width × @max_height (the
 * source's aspect kept), at most one per @interval_ms. NULL when the stream cannot be made. */
LIMEN_PREVIEW_EXPORT LimenPreviewStream *limen_preview_stream_new (LimenPreview *preview, guint32 node,
                                                                  int max_width, int max_height,
                                                                  guint interval_ms, LimenPreviewFrame frame,
                                                                  gpointer user_data);
/* Stop consuming and free @stream; @frame never runs after this. */
LIMEN_PREVIEW_EXPORT void limen_preview_stream_free (LimenPreviewStream *stream);
/* Disconnect (every stream of @preview must be freed first) and free @preview. */
LIMEN_PREVIEW_EXPORT void limen_preview_disconnect (LimenPreview *preview);

/* Entry points, for the loader (X-macro). */
#define LIMEN_PREVIEW_DLOPEN_FUNCTIONS(X) \
  X (limen_preview_connect)               \
  X (limen_preview_stream_new)            \
  X (limen_preview_stream_free)           \
  X (limen_preview_disconnect)

G_END_DECLS
