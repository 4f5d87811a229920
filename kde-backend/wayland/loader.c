/* Limen — opening liblimen-kde-wayland on the first screen-sharing request.
 *
 * libwayland-client is small, but the idle backend maps nothing it does not use (its
 * PSS is measured): the protocol clients come with the first ScreenCast, RemoteDesktop
 * or Clipboard request, or once a global shortcut is bound in a Wayland session (for
 * the activation tokens of its key presses), and stay for the life of the process. A frontend reads the
 * Available* properties as soon as it starts (both ours and the reference do); that
 * read only looks at the compositor's globals with the module and unloads it again, so
 * an idle backend neither maps it nor follows every window of the session.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "loader.h"

#include <dlfcn.h>

#include "errors.h"
#include "uninstalled.h"

static LimenKdeWayland module;
static gboolean module_open;
static char *module_error;
static LimenWlActivation *activation;   /* its own connection, made when first bound or asked */
static gboolean loaded;
static char *load_error;
static gboolean probed;
static guint probed_features;

/* The installed module, from the private library directory (a test build: the build
 * tree's, uninstalled.h). */
static char *
find_module (void)
{
  return limen_uninstalled_path ("kde-backend/wayland/liblimen-kde-wayland.so", LIMEN_WAYLAND_MODULE_PATH);
}

/* What the compositor offers, without keeping the module: opened, asked, closed. */
static void
probe (void)
{
  g_autofree char *path = find_module ();
  g_autofree char *message = NULL;
  guint (*probe_features) (int, char **);
  void *handle;

  probed = TRUE;   /* a module that cannot be loaded is not tried again */
  handle = dlopen (path, RTLD_LAZY | RTLD_LOCAL);
  if (!handle)
    {
      g_warning ("Cannot load the Wayland clients: %s", dlerror ());
      return;
    }
  probe_features = (guint (*) (int, char **)) dlsym (handle, "limen_wl_probe_features");
  if (probe_features)
    {
      probed_features = probe_features (3000, &message);
      /* An answer offering nothing (KWin may not have read our .desktop file yet) is asked
       * again next time; a failure (no display, a silent compositor) is not. */
      probed = probed_features != 0 || message != NULL;
    }
  else
    message = g_strdup_printf ("The Wayland module %s lacks entry points", path);
  if (message)
    g_warning ("%s", message);
  dlclose (handle);
  g_debug ("The compositor offers Wayland features 0x%x (module unloaded again)", probed_features);
}

/* dlopen the module and resolve its entry points, once; a failure is remembered. */
static gboolean
open_module (void)
{
  g_autofree char *path = NULL;
  void *handle;
  gboolean ok = TRUE;

  if (module_open || module_error)
    return module_open;
  path = find_module ();
  g_debug ("Loading the Wayland clients from %s", path);
  handle = dlopen (path, RTLD_LAZY | RTLD_LOCAL);
  if (!handle)
    {
      module_error = g_strdup_printf ("Cannot load the Wayland clients: %s", dlerror ());
      return FALSE;
    }
#define LIMEN_KDE_WL_RESOLVE(name)                                 \
  module.name = (__typeof__ (name) *) dlsym (handle, #name);      \
  if (!module.name)                                                \
    ok = FALSE;
  LIMEN_WL_DLOPEN_FUNCTIONS (LIMEN_KDE_WL_RESOLVE)
#undef LIMEN_KDE_WL_RESOLVE
  if (!ok)
    {
      module_error = g_strdup_printf ("The Wayland module %s lacks entry points", path);
      return FALSE;
    }
  module_open = TRUE;
  return TRUE;
}

static void
load (void)
{
  char *message = NULL;

  if (!g_getenv ("WAYLAND_DISPLAY") || !*g_getenv ("WAYLAND_DISPLAY"))
    {
      load_error = g_strdup ("Screen sharing needs a Plasma Wayland session; on X11 KWin offers no screen-cast protocol");
      return;
    }
  if (!open_module ())
    {
      load_error = g_strdup (module_error);
      return;
    }
  module.wl = module.limen_wl_connect (3000, &message);
  if (!module.wl)
    {
      load_error = message;
      return;
    }
  loaded = TRUE;
}

const LimenKdeWayland *
limen_kde_wayland_get (GError **error)
{
  if (!loaded && !load_error)
    {
      load ();
      if (load_error)
        g_warning ("%s", load_error);
    }
  if (!loaded)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, load_error);
      return NULL;
    }
  return &module;
}

guint
limen_kde_wayland_features (void)
{
  const char *display = g_getenv ("WAYLAND_DISPLAY");

  if (loaded)
    return module.limen_wl_features (module.wl);
  if (load_error || !display || !*display)
    return 0;
  if (!probed)
    probe ();
  return probed_features;
}

/* The activation connection, made (without waiting) if there is none. */
static gboolean
ensure_activation (void)
{
  const char *display = g_getenv ("WAYLAND_DISPLAY");
  g_autofree char *message = NULL;

  if (activation)
    return TRUE;
  if (!display || !*display)
    return FALSE;
  if (!open_module ())
    {
      g_debug ("No activation tokens: %s", module_error);
      return FALSE;
    }
  activation = module.limen_wl_activation_new (&message);
  if (!activation)
    g_debug ("No activation tokens: %s", message);
  return activation != NULL;
}

void
limen_kde_wayland_activation_prepare (void)
{
  ensure_activation ();
}

gboolean
limen_kde_wayland_activation_token (const char *app_id, guint timeout_ms, LimenWlTokenReady ready,
                                    gpointer user_data)
{
  /* A connection the compositor dropped (KWin restarted) is made again, once per token. */
  for (int attempt = 0; attempt < 2; attempt++)
    {
      if (!ensure_activation ())
        return FALSE;
      if (module.limen_wl_activation_request (activation, app_id, timeout_ms, ready, user_data))
        return TRUE;
      g_debug ("The compositor closed the activation-token connection; connecting again");
      module.limen_wl_activation_free (g_steal_pointer (&activation));
    }
  return FALSE;
}
