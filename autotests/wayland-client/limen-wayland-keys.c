/* Limen tests — type a key chord into a Wayland session through KWin's fake input protocol,
 * as a person on a keyboard would (the compositor's global shortcut handling sees it).
 *
 *   limen-wayland-keys HOLD_MS KEYCODE...   press the evdev KEYCODEs in order, hold, release
 *                                           them in reverse; exit 0 when the compositor saw all
 *
 * KWin offers org_kde_kwin_fake_input only to executables whose .desktop file lists it in
 * X-KDE-Wayland-Interfaces. Plain wayland-client, like limen-wayland-parent.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wayland-client.h>

#include "fake-input-client-protocol.h"

static struct org_kde_kwin_fake_input *fake_input;

static void
on_global (void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version)
{
  if (strcmp (interface, org_kde_kwin_fake_input_interface.name) == 0 && version >= 4)
    fake_input = wl_registry_bind (registry, name, &org_kde_kwin_fake_input_interface, 4);
}

static void
on_global_remove (void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { on_global, on_global_remove };

int
main (int argc, char **argv)
{
  struct wl_display *display;
  struct wl_registry *registry;
  int hold_ms;

  if (argc < 3)
    {
      fprintf (stderr, "usage: %s HOLD_MS KEYCODE...\n", argv[0]);
      return 2;
    }
  hold_ms = atoi (argv[1]);
  display = wl_display_connect (NULL);
  if (!display)
    {
      fprintf (stderr, "no Wayland display\n");
      return 1;
    }
  registry = wl_display_get_registry (display);
  wl_registry_add_listener (registry, &registry_listener, NULL);
  wl_display_roundtrip (display);
  if (!fake_input)
    {
      fprintf (stderr, "the compositor offers no org_kde_kwin_fake_input (version 4)\n");
      return 1;
    }
  org_kde_kwin_fake_input_authenticate (fake_input, "Limen tests", "typing shortcuts");
  for (int i = 2; i < argc; i++)
    org_kde_kwin_fake_input_keyboard_key (fake_input, (uint32_t) atoi (argv[i]), WL_KEYBOARD_KEY_STATE_PRESSED);
  wl_display_roundtrip (display);
  usleep ((useconds_t) hold_ms * 1000);
  for (int i = argc - 1; i >= 2; i--)
    org_kde_kwin_fake_input_keyboard_key (fake_input, (uint32_t) atoi (argv[i]), WL_KEYBOARD_KEY_STATE_RELEASED);
  wl_display_roundtrip (display);
  wl_display_disconnect (display);
  return 0;
}
