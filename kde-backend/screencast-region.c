/* Limen — regions of the workspace as sources: "All screens", and a region the person draws.
 *
 * With more than one screen a person presenting across them wants one stream, not one per
 * screen that the app then lays out. KWin streams any rectangle of the workspace (its
 * screencast protocol's stream_region, version 3); the workspace's bounding box is offered
 * in the picker beside the screens, and restore data may name it ("all-screens"): it is
 * the bounding box of the screens there are at Start, however they changed.
 *
 * A region the person draws: the picker offers "region"; when it is chosen, the picker lets
 * the person drag a rectangle over the screens and answers "region:SCREEN:X,Y,W,H" (device
 * pixels from that screen's corner: only the C side knows where screens lie and how they
 * scale), made "region:X,Y,W,H" in the workspace's logical coordinates for the stream and
 * its restore data; restored as it is, if it still lies on the workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <stdio.h>
#include <string.h>

/* The bounding box of every screen (logical), if there are two or more and KWin streams
 * regions; the pixel size at the largest scale any screen has. Any pair may be NULL. */
gboolean
limen_cast_all_screens_area (int *x, int *y, int *width, int *height, int *pixel_width, int *pixel_height)
{
  return limen_cast_workspace_area (2, x, y, width, height, pixel_width, pixel_height);
}

/* As limen_cast_all_screens_area(), with at least @min_screens screens. */
gboolean
limen_cast_workspace_area (gsize min_screens, int *x, int *y, int *width, int *height, int *pixel_width,
                           int *pixel_height)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  const LimenWlOutput *outputs;
  gsize n = 0;
  int x1 = G_MAXINT, y1 = G_MAXINT, x2 = G_MININT, y2 = G_MININT, scale = 1;

  if (!w || !(w->limen_wl_features (w->wl) & LIMEN_WL_HAS_REGION))
    return FALSE;
  outputs = w->limen_wl_outputs (w->wl, &n);
  if (n < min_screens || n == 0)
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

/* Offer "a region you draw" after the screens of the picker. */
void
limen_cast_offer_region (GArray *screens)
{
  LimenQtCastSource src = { 0 };

  if (!limen_cast_workspace_area (1, NULL, NULL, NULL, NULL, NULL, NULL))
    return;
  src.id = LIMEN_CAST_REGION;   /* the picker names it, and asks for the rectangle */
  src.name = "";
  src.description = "";
  g_array_append_val (screens, src);
}

/* Parse "region:X,Y,W,H" into a rectangle that lies on the workspace; FALSE otherwise. */
gboolean
limen_cast_parse_region (const char *id, int *x, int *y, int *width, int *height)
{
  int wx, wy, ww, wh, n = 0;

  if (!g_str_has_prefix (id, LIMEN_CAST_REGION ":") ||
      sscanf (id + strlen (LIMEN_CAST_REGION ":"), "%d,%d,%d,%d%n", x, y, width, height, &n) != 4 ||
      id[strlen (LIMEN_CAST_REGION ":") + n] != '\0')
    return FALSE;
  if (!limen_cast_workspace_area (1, &wx, &wy, &ww, &wh, NULL, NULL))
    return FALSE;
  return *width > 0 && *height > 0 && *x >= wx && *y >= wy && *width <= ww && *height <= wh &&
         *x - wx <= ww - *width && *y - wy <= wh - *height;
}

/* Restore data may name region @id: it lies on the workspace now. */
gboolean
limen_cast_region_valid (const char *id)
{
  int x, y, width, height;

  return limen_cast_parse_region (id, &x, &y, &width, &height);
}

/* The picker's "region:SCREEN:X,Y,W,H" (device pixels from SCREEN's corner) as
 * "region:X,Y,W,H" in the workspace's logical coordinates; NULL if SCREEN is unknown. */
static char *
region_from_picker (const char *id)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  const char *rest = id + strlen (LIMEN_CAST_REGION ":");
  const char *colon = strrchr (rest, ':');
  g_autofree char *name = colon ? g_strndup (rest, colon - rest) : NULL;
  const LimenWlOutput *outputs;
  int x, y, width, height, n_parsed = 0;
  gsize n = 0;

  if (!w || !name || sscanf (colon + 1, "%d,%d,%d,%d%n", &x, &y, &width, &height, &n_parsed) != 4 ||
      colon[1 + n_parsed] != '\0')
    return NULL;
  outputs = w->limen_wl_outputs (w->wl, &n);
  for (gsize i = 0; i < n; i++)
    if (g_str_equal (outputs[i].name, name))
      {
        int scale = MAX (outputs[i].scale, 1);

        return g_strdup_printf (LIMEN_CAST_REGION ":%d,%d,%d,%d", outputs[i].x + x / scale,
                                outputs[i].y + y / scale, width / scale, height / scale);
      }
  return NULL;
}

/* Start the stream of region @s->id for @s of @cast (the picker's form is made the
 * workspace's first, which restore data keeps); NULL when it is not available. */
LimenWlStream *
limen_cast_stream_region (LimenCast *cast, LimenCastStream *s, const char *id, LimenWlStreamReady ready,
                          LimenWlStreamClosed closed)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  char *workspace = strchr (id + strlen (LIMEN_CAST_REGION ":"), ':') ? region_from_picker (id) : NULL;

  s->source_type = LIMEN_CAST_MONITOR;
  if (workspace)
    {
      g_free (s->id);
      s->id = workspace;
    }
  if (!w || !limen_cast_parse_region (s->id, &s->x, &s->y, &s->width, &s->height))
    return NULL;
  return w->limen_wl_stream_region (w->wl, s->x, s->y, s->width, s->height, cast->cursor_mode, ready, closed, cast);
}
