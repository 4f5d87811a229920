/* Limen — live previews in the screen-sharing picker, for as long as it shows.
 *
 * For each screen and window the picker offers, KWin makes a stream of its own (cursor
 * hidden) and liblimen-kde-preview.so consumes it: every picture goes to the open dialog,
 * where it replaces the still. The module (and with it libpipewire) is opened with the
 * first picker, never at start, so an idle backend maps neither. Everything here is
 * best-effort: no module, no PipeWire, a stream KWin refuses or one that never sends a
 * frame (KWin records screens only on real outputs) leaves that source its still, and the
 * person sees no error. All of it ends when the picker does (limen_cast_preview_end), or
 * at the first picture after its dialog stopped showing (a region being drawn after Share).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <dlfcn.h>

#include "uninstalled.h"

#ifdef LIMEN_PREVIEW_MODULE_PATH
#include "preview/limen-preview.h"

/* Pictures up to twice the picker's icon (96 × 60) suit a 200% screen; ten a second. */
#define PREVIEW_WIDTH 192
#define PREVIEW_HEIGHT 120
#define PREVIEW_INTERVAL_MS 100

static struct {
#define LIMEN_PREVIEW_FIELD(name) __typeof__ (name) *name;
  LIMEN_PREVIEW_DLOPEN_FUNCTIONS (LIMEN_PREVIEW_FIELD)
#undef LIMEN_PREVIEW_FIELD
} module;
static gboolean module_tried, module_open;

typedef struct {
  LimenCastPreview   *owner;
  char               *id;
  LimenWlStream      *kwin;
  LimenPreviewStream *stream;
} PreviewSource;

struct _LimenCastPreview {
  LimenQtDialog *dialog;
  LimenPreview  *pipewire;
  GPtrArray     *sources;     /* PreviewSource */
  guint          end_source;  /* the dialog stopped showing: end from the main loop */
  gboolean       ending;      /* limen_cast_preview_end runs: no more pictures */
};

/* Open the module on the first picker; a failure is logged once and remembered. */
static gboolean
open_module (void)
{
  g_autofree char *path = NULL;
  void *handle;

  if (module_tried)
    return module_open;
  module_tried = TRUE;
  path = limen_uninstalled_path ("kde-backend/preview/liblimen-kde-preview.so", LIMEN_PREVIEW_MODULE_PATH);
  handle = dlopen (path, RTLD_LAZY | RTLD_LOCAL);
  if (!handle)
    {
      g_message ("The picker shows stills: %s", dlerror ());
      return FALSE;
    }
#define LIMEN_PREVIEW_RESOLVE(name)                           \
  module.name = (__typeof__ (name) *) dlsym (handle, #name); \
  if (!module.name)                                           \
    {                                                         \
      g_message ("The picker shows stills: %s lacks " #name, path); \
      dlclose (handle);                                       \
      return FALSE;                                           \
    }
  LIMEN_PREVIEW_DLOPEN_FUNCTIONS (LIMEN_PREVIEW_RESOLVE)
#undef LIMEN_PREVIEW_RESOLVE
  module_open = TRUE;
  return TRUE;
}

static void
source_free (gpointer data)
{
  PreviewSource *src = data;

  if (src->stream)
    module.limen_preview_stream_free (src->stream);
  if (src->kwin)
    {
      const LimenKdeWayland *w = limen_kde_wayland_get (NULL);

      if (w)
        w->limen_wl_stream_close (src->kwin);
    }
  g_free (src->id);
  g_free (src);
}

static gboolean
on_dialog_gone (gpointer user_data)
{
  LimenCastPreview *preview = user_data;

  preview->end_source = 0;
  g_debug ("ScreenCast: the picker no longer shows; its previews end");
  g_ptr_array_set_size (preview->sources, 0);
  return G_SOURCE_REMOVE;
}

static void
on_frame (int width, int height, int stride, const guint8 *pixels, gpointer user_data)
{
  PreviewSource *src = user_data;
  LimenCastPreview *preview = src->owner;
  const LimenKdeShim *shim = limen_kde_shim_get (NULL);

  if (preview->ending || preview->end_source)
    return;
  if (!shim || !shim->limen_qt_screencast_preview (preview->dialog, src->id, width, height, stride, pixels))
    /* Not from inside the stream's own callback. */
    preview->end_source = g_idle_add (on_dialog_gone, preview);
}

static void
on_kwin_ready (LimenWlStream *stream, guint32 node, const char *error, gpointer user_data)
{
  PreviewSource *src = user_data;

  if (error)
    {
      g_debug ("ScreenCast: no preview of %s: %s", src->id, error);
      return;
    }
  src->stream = module.limen_preview_stream_new (src->owner->pipewire, node, PREVIEW_WIDTH, PREVIEW_HEIGHT,
                                                 PREVIEW_INTERVAL_MS, on_frame, src);
  g_debug ("ScreenCast: previewing %s from node %u%s", src->id, node, src->stream ? "" : " failed");
}

static void
on_kwin_closed (LimenWlStream *stream, gpointer user_data)
{
  PreviewSource *src = user_data;

  /* The window closed: its item keeps the last picture. */
  if (src->stream)
    module.limen_preview_stream_free (g_steal_pointer (&src->stream));
}

LimenCastPreview *
limen_cast_preview_begin (LimenQtDialog *dialog, const char *const *ids)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  const LimenKdeShim *shim = limen_kde_shim_get (NULL);
  g_autofree char *message = NULL;
  LimenCastPreview *preview;

  if (!w || !shim || !shim->limen_qt_screencast_preview || !ids || !ids[0] || !open_module ())
    return NULL;
  preview = g_new0 (LimenCastPreview, 1);
  preview->dialog = dialog;
  preview->sources = g_ptr_array_new_with_free_func (source_free);
  preview->pipewire = module.limen_preview_connect (&message);
  if (!preview->pipewire)
    {
      g_debug ("ScreenCast: the picker shows stills: %s", message);
      limen_cast_preview_end (preview);
      return NULL;
    }
  for (gsize i = 0; ids[i]; i++)
    {
      PreviewSource *src = g_new0 (PreviewSource, 1);

      src->owner = preview;
      src->id = g_strdup (ids[i]);
      /* Hidden cursor: KWin 5.27 (--virtual) cannot move an embedded one in a screen's stream. */
      if (g_str_has_prefix (ids[i], "screen:"))
        src->kwin = w->limen_wl_stream_output (w->wl, ids[i] + 7, LIMEN_CURSOR_HIDDEN, on_kwin_ready,
                                               on_kwin_closed, src);
      else if (g_str_has_prefix (ids[i], "window:"))
        src->kwin = w->limen_wl_stream_window (w->wl, ids[i] + 7, LIMEN_CURSOR_HIDDEN, on_kwin_ready,
                                               on_kwin_closed, src);
      g_ptr_array_add (preview->sources, src);
    }
  return preview;
}

void
limen_cast_preview_end (LimenCastPreview *preview)
{
  if (!preview)
    return;
  /* Destroying one stream can run the frame callbacks of the others that PipeWire had
   * queued on this loop: they must not schedule an end on a preview about to be freed. */
  preview->ending = TRUE;
  if (preview->end_source)
    g_source_remove (preview->end_source);
  preview->end_source = 0;
  /* Streams before the connection they belong to. */
  g_ptr_array_unref (preview->sources);
  if (preview->pipewire)
    module.limen_preview_disconnect (preview->pipewire);
  g_free (preview);
}

#else /* built without LIMEN_CAST_PREVIEWS: the picker shows stills */

LimenCastPreview *
limen_cast_preview_begin (LimenQtDialog *dialog, const char *const *ids)
{
  return NULL;
}

void
limen_cast_preview_end (LimenCastPreview *preview)
{
}

#endif
