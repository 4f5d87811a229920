/* Limen — restoring a shared window after its app restarted.
 *
 * KWin names a window by a uuid that lives as long as the window: an app that restarts
 * shows a new window with a new uuid, and restore data naming the old one would ask the
 * person again every day. So restore data also says, per window, which app showed it and
 * what its title was ("windows": a{s(ss)}, source id → (app id, title)); when the uuid is
 * gone, the window of the same app whose title is most like the old one is taken, if it is
 * alike enough and no other window of that app is as alike. A window of another app is
 * never taken, whatever its title; an app without an app id is never matched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <string.h>

/* Titles at least this alike (1 - edit distance / longer length) are the same window:
 * "Chat — Team room" and "Chat — Team room (3 unread)" are, two different documents of
 * an editor mostly are not. */
#define MIN_SIMILARITY 0.5
/* Titles are cut to this many characters before comparing: the edit distance is
 * quadratic, and what tells windows apart is at the start. */
#define MAX_TITLE_CHARS 256

static const LimenWlWindow *
find_by_uuid (const LimenWlWindow *windows, gsize n, const char *uuid)
{
  for (gsize i = 0; i < n; i++)
    if (g_str_equal (windows[i].uuid, uuid))
      return &windows[i];
  return NULL;
}

/* 1 - Levenshtein distance / longer length, over characters. */
static double
title_similarity (const char *a, const char *b)
{
  glong la = 0, lb = 0;
  g_autofree gunichar *ua = g_utf8_to_ucs4_fast (a, -1, &la);
  g_autofree gunichar *ub = g_utf8_to_ucs4_fast (b, -1, &lb);
  g_autofree guint *row = NULL;
  glong longer;

  la = MIN (la, MAX_TITLE_CHARS);
  lb = MIN (lb, MAX_TITLE_CHARS);
  longer = MAX (la, lb);
  if (longer == 0)
    return 1.0;
  row = g_new (guint, lb + 1);
  for (glong j = 0; j <= lb; j++)
    row[j] = j;
  for (glong i = 1; i <= la; i++)
    {
      guint diag = row[0];

      row[0] = i;
      for (glong j = 1; j <= lb; j++)
        {
          guint up = row[j];
          guint best = MIN (row[j] + 1, row[j - 1] + 1);

          row[j] = MIN (best, diag + (ua[i - 1] == ub[j - 1] ? 0 : 1));
          diag = up;
        }
    }
  return 1.0 - (double) row[lb] / (double) longer;
}

/* The window of @app_id most like @title; NULL if none is alike enough or two are. */
static const LimenWlWindow *
find_by_app (const LimenWlWindow *windows, gsize n, const char *app_id, const char *title)
{
  const LimenWlWindow *best = NULL;
  double best_score = -1.0;
  gboolean tie = FALSE;

  for (gsize i = 0; i < n; i++)
    {
      double score;

      if (!g_str_equal (windows[i].app_id, app_id))
        continue;
      score = title_similarity (windows[i].title, title);
      if (score > best_score)
        {
          best = &windows[i];
          best_score = score;
          tie = FALSE;
        }
      else if (score == best_score)
        tie = TRUE;
    }
  if (!best || best_score < MIN_SIMILARITY || tie)
    return NULL;
  return best;
}

/* The window to share for restored source @id ("window:UUID"): the same window if it is
 * still there, else its app's window found by title; NULL: ask the person. Without
 * window management, or for restore data that says nothing about the window (made
 * before windows were described), KWin decides at Start whether the uuid still exists. */
char *
limen_cast_restore_window (GVariant *payload, const char *id)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  g_autoptr(GVariant) described = g_variant_lookup_value (payload, "windows", G_VARIANT_TYPE ("a{s(ss)}"));
  const char *app_id = NULL, *title = NULL;
  const LimenWlWindow *windows, *found;
  gsize n = 0;

  if (!w || !(w->limen_wl_features (w->wl) & LIMEN_WL_HAS_WINDOWS))
    return g_strdup (id);
  windows = w->limen_wl_windows (w->wl, &n);
  if (find_by_uuid (windows, n, id + strlen ("window:")))
    return g_strdup (id);
  if (!described || !g_variant_lookup (described, id, "(&s&s)", &app_id, &title))
    return g_strdup (id);
  if (!*app_id)
    return NULL;
  /* The app that restarted may have shown its window a moment ago: what KWin knows now,
   * not what its last events said, before the person is asked again. */
  found = find_by_app (windows, n, app_id, title);
  if (!found && w->limen_wl_windows_settle (w->wl, 500))
    {
      windows = w->limen_wl_windows (w->wl, &n);
      found = find_by_app (windows, n, app_id, title);
    }
  if (!found)
    {
      g_debug ("ScreenCast: no window of %s like the one shared before; asking", app_id);
      return NULL;
    }
  g_debug ("ScreenCast: the shared window of %s is now %s", app_id, found->uuid);
  return g_strconcat ("window:", found->uuid, NULL);
}

/* Add "windows" to restore data @payload: app id and title of each shared window. */
void
limen_cast_restore_describe_windows (LimenCast *cast, GVariantBuilder *payload)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);
  const LimenWlWindow *windows;
  GVariantBuilder described;
  gsize n = 0;
  gboolean any = FALSE;

  if (!w || !(w->limen_wl_features (w->wl) & LIMEN_WL_HAS_WINDOWS))
    return;
  windows = w->limen_wl_windows (w->wl, &n);
  g_variant_builder_init (&described, G_VARIANT_TYPE ("a{s(ss)}"));
  for (guint i = 0; i < cast->streams->len; i++)
    {
      LimenCastStream *s = g_ptr_array_index (cast->streams, i);
      const LimenWlWindow *win;

      if (s->source_type != LIMEN_CAST_WINDOW || !g_str_has_prefix (s->id, "window:"))
        continue;
      win = find_by_uuid (windows, n, s->id + strlen ("window:"));
      if (!win || !*win->app_id)
        continue;
      g_variant_builder_add (&described, "{s(ss)}", s->id, win->app_id, win->title);
      any = TRUE;
    }
  if (any)
    g_variant_builder_add (payload, "{sv}", "windows", g_variant_builder_end (&described));
  else
    g_variant_builder_clear (&described);
}
