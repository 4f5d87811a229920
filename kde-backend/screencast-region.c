/* Limen — "All screens": the whole workspace as one source.
 *
 * With more than one screen a person presenting across them wants one stream, not one per
 * screen that the app then lays out. KWin streams any rectangle of the workspace (its
 * screencast protocol's stream_region, version 3); the workspace's bounding box is offered
 * in the picker beside the screens, and restore data may name it ("all-screens"): it is
 * the bounding box of the screens there are at Start, however they changed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

/* The bounding box of every screen (logical), if there are two or more and KWin streams
 * regions; the pixel size at the largest scale any screen has. Any pair may be NULL. */
gboolean
limen_cast_all_screens_area (int *x, int *y, int *width, int *height, int *pixel_width, int *pixel_height)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  const LimenWlOutput *outputs;
  gsize n = 0;
  int x1 = G_MAXINT, y1 = G_MAXINT, x2 = G_MININT, y2 = G_MININT, scale = 1;

  if (!w || !(w->limen_wl_features (w->wl) & LIMEN_WL_HAS_REGION))
    return FALSE;
  outputs = w->limen_wl_outputs (w->wl, &n);
  if (n < 2)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    {
      x1 = MIN (x1, outputs[i].x);
      y1 = MIN (y1, outputs[i].y);
      x2 = MAX (x2, outputs[i].x + outputs[i].width);
      y2 = MAX (y2, outputs[i].y + outputs[i].height);
      scale = MAX (scale, outputs[i].scale);
    }
  if (x2 <= x1 || y2 <= y1)
    return FALSE;
  if (x && y && width && height)
    *x = x1, *y = y1, *width = x2 - x1, *height = y2 - y1;
  if (pixel_width && pixel_height)
    *pixel_width = (x2 - x1) * scale, *pixel_height = (y2 - y1) * scale;
  return TRUE;
}

/* Offer "All screens" after the screens of the picker (LimenQtCastSource in @screens). */
void
limen_cast_offer_all_screens (GArray *screens)
{
  LimenQtCastSource src = { 0 };
  int x, y, width, height;

  if (!limen_cast_all_screens_area (&x, &y, &width, &height, &src.width, &src.height))
    return;
  src.id = LIMEN_CAST_ALL_SCREENS;   /* the picker names it */
  src.name = "";
  src.description = "";
  g_array_prepend_val (screens, src);
}

/* Start the stream of "All screens" for @s of @cast; NULL when it is not available. */
LimenWlStream *
limen_cast_stream_all_screens (LimenCast *cast, LimenCastStream *s, LimenWlStreamReady ready,
                               LimenWlStreamClosed closed)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);

  s->source_type = LIMEN_CAST_MONITOR;
  if (!w || !limen_cast_all_screens_area (&s->x, &s->y, &s->width, &s->height, NULL, NULL))
    return NULL;
  return w->limen_wl_stream_region (w->wl, s->x, s->y, s->width, s->height, cast->cursor_mode, ready, closed, cast);
}
