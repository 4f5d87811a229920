/* Limen — keysyms to key codes for RemoteDesktop.NotifyKeyboardKeysym.
 *
 * KWin's fake input takes evdev key codes only. Clients such as VNC servers send X
 * keysyms, so we look them up in the keymap KWin itself uses (sent to every wl_keyboard)
 * and press Shift around keys that need it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xkbcommon/xkbcommon.h>

#include "wl-private.h"

#define KEY_LEFTSHIFT 42

static void
keyboard_keymap (void *data, struct wl_keyboard *keyboard, uint32_t format, int32_t fd, uint32_t size)
{
  LimenWl *wl = data;
  char *map;

  if (format != WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1 || size == 0 || size > 16 * 1024 * 1024)
    {
      close (fd);
      return;
    }
  map = mmap (NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close (fd);
  if (map == MAP_FAILED)
    return;
  if (!wl->xkb)
    wl->xkb = xkb_context_new (XKB_CONTEXT_NO_DEFAULT_INCLUDES | XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
  if (wl->keymap)
    xkb_keymap_unref (wl->keymap);
  /* The map is NUL-terminated within @size. */
  wl->keymap = wl->xkb ? xkb_keymap_new_from_buffer (wl->xkb, map, strnlen (map, size), XKB_KEYMAP_FORMAT_TEXT_V1,
                                                     XKB_KEYMAP_COMPILE_NO_FLAGS) : NULL;
  munmap (map, size);
}

static void keyboard_enter (void *d, struct wl_keyboard *k, uint32_t s, struct wl_surface *su, struct wl_array *a) {}
static void keyboard_leave (void *d, struct wl_keyboard *k, uint32_t s, struct wl_surface *su) {}
static void keyboard_key (void *d, struct wl_keyboard *k, uint32_t s, uint32_t t, uint32_t key, uint32_t st) {}
static void keyboard_modifiers (void *d, struct wl_keyboard *k, uint32_t s, uint32_t a, uint32_t b, uint32_t c,
                                uint32_t g) {}
static void keyboard_repeat_info (void *d, struct wl_keyboard *k, int32_t rate, int32_t delay) {}

static const struct wl_keyboard_listener keyboard_listener = {
  keyboard_keymap, keyboard_enter, keyboard_leave, keyboard_key, keyboard_modifiers, keyboard_repeat_info
};

void
limen_wl_keymap_start (LimenWl *wl)
{
  wl->keyboard = wl_seat_get_keyboard (wl->seat);
  wl_keyboard_add_listener (wl->keyboard, &keyboard_listener, wl);
}

/* The evdev code typing @keysym on the first layout, and whether Shift is needed. */
static gboolean
lookup (struct xkb_keymap *keymap, guint32 keysym, guint32 *code, gboolean *shift)
{
  xkb_keycode_t min = xkb_keymap_min_keycode (keymap), max = xkb_keymap_max_keycode (keymap);

  for (xkb_level_index_t level = 0; level < 2; level++)
    for (xkb_keycode_t kc = min; kc <= max && kc < 0x300; kc++)
      {
        const xkb_keysym_t *syms;
        int n = xkb_keymap_key_get_syms_by_level (keymap, kc, 0, level, &syms);

        for (int i = 0; i < n; i++)
          if (syms[i] == keysym && kc >= 8)
            {
              *code = kc - 8;
              *shift = level == 1;
              return TRUE;
            }
      }
  return FALSE;
}

gboolean
limen_wl_input_keysym (LimenWl *wl, guint32 keysym, guint32 state)
{
  guint32 code;
  gboolean shift;

  if (!wl->keymap || !lookup (wl->keymap, keysym, &code, &shift) || !wl->fake_input ||
      wl->fake_input_version < 4 || wl->broken)
    return FALSE;
  if (shift && state)
    org_kde_kwin_fake_input_keyboard_key (wl->fake_input, KEY_LEFTSHIFT, 1);
  org_kde_kwin_fake_input_keyboard_key (wl->fake_input, code, state);
  if (shift && !state)
    org_kde_kwin_fake_input_keyboard_key (wl->fake_input, KEY_LEFTSHIFT, 0);
  limen_wl_flush (wl);
  return TRUE;
}
