/* Limen — remote input through KWin's org_kde_kwin_fake_input.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "wl-private.h"

static gboolean
usable (LimenWl *wl, guint32 since)
{
  return wl->fake_input && !wl->broken && wl->fake_input_version >= since;
}

gboolean
limen_wl_input_motion (LimenWl *wl, double dx, double dy)
{
  if (!usable (wl, 1))
    return FALSE;
  org_kde_kwin_fake_input_pointer_motion (wl->fake_input, wl_fixed_from_double (dx), wl_fixed_from_double (dy));
  limen_wl_flush (wl);
  return TRUE;
}

gboolean
limen_wl_input_motion_absolute (LimenWl *wl, double x, double y)
{
  if (!usable (wl, 3))
    return FALSE;
  org_kde_kwin_fake_input_pointer_motion_absolute (wl->fake_input, wl_fixed_from_double (x), wl_fixed_from_double (y));
  limen_wl_flush (wl);
  return TRUE;
}

gboolean
limen_wl_input_button (LimenWl *wl, guint32 button, guint32 state)
{
  if (!usable (wl, 1))
    return FALSE;
  org_kde_kwin_fake_input_button (wl->fake_input, button, state);
  limen_wl_flush (wl);
  return TRUE;
}

gboolean
limen_wl_input_axis (LimenWl *wl, guint32 axis, double value)
{
  if (!usable (wl, 1))
    return FALSE;
  org_kde_kwin_fake_input_axis (wl->fake_input, axis, wl_fixed_from_double (value));
  limen_wl_flush (wl);
  return TRUE;
}

gboolean
limen_wl_input_key (LimenWl *wl, guint32 key, guint32 state)
{
  if (!usable (wl, 4))
    return FALSE;
  org_kde_kwin_fake_input_keyboard_key (wl->fake_input, key, state);
  limen_wl_flush (wl);
  return TRUE;
}

gboolean
limen_wl_input_touch (LimenWl *wl, int kind, guint32 slot, double x, double y)
{
  if (!usable (wl, 2))
    return FALSE;
  switch (kind)
    {
    case LIMEN_WL_TOUCH_DOWN:
      org_kde_kwin_fake_input_touch_down (wl->fake_input, slot, wl_fixed_from_double (x), wl_fixed_from_double (y));
      break;
    case LIMEN_WL_TOUCH_MOTION:
      org_kde_kwin_fake_input_touch_motion (wl->fake_input, slot, wl_fixed_from_double (x), wl_fixed_from_double (y));
      break;
    case LIMEN_WL_TOUCH_UP:
      org_kde_kwin_fake_input_touch_up (wl->fake_input, slot);
      break;
    default:
      return FALSE;
    }
  org_kde_kwin_fake_input_touch_frame (wl->fake_input);
  limen_wl_flush (wl);
  return TRUE;
}
