/* Limen — loading liblimen-qt on first use.
 *
 * Linking Qt Widgets and KIO into limen-kde would map and relocate them at start and
 * cost several times the idle memory the backend may use; most sessions only ever ask
 * it for Settings. So the shim is a module, opened the first time a dialog,
 * notification or mail composer is needed, and kept for the life of the process (Qt
 * cannot be unloaded).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <dlfcn.h>
#include <glib/gstdio.h>
#include <elf.h>
#include <link.h>

#include "errors.h"
#include "limen-config.h"
#include "uninstalled.h"

static LimenKdeShim shim;
static gboolean shim_loaded;
static char *shim_error;

/* Most of the first dialog's wait for the shim is the dynamic linker binding the ~60,000
 * symbol references of the ~80 Qt and KF5 libraries it brings, and each lookup walks
 * limen-kde's own ~45 libraries (GLib, libcups and its TLS chain) before it reaches the
 * shim's. RTLD_DEEPBIND searches the shim's libraries first: the dlopen takes 25-30% less
 * CPU (median ~38 -> ~28 ms here). It is safe only where the
 * global scope holds nothing the shim's libraries must bind to instead of their own:
 *  - no interposed allocator or other LD_PRELOAD/ld.so.preload library (Qt would call
 *    libc's malloc and free memory from the preloaded one), nor AddressSanitizer, whose
 *    runtime refuses RTLD_DEEPBIND;
 *  - no copy relocation in limen-kde (e.g. of environ), which would leave Qt reading the
 *    library's stale original while everyone else uses limen-kde's copy. */
#if defined(__x86_64__)
#define LIMEN_R_COPY(info) (ELF64_R_TYPE (info) == R_X86_64_COPY)
#elif defined(__aarch64__)
#define LIMEN_R_COPY(info) (ELF64_R_TYPE (info) == R_AARCH64_COPY)
#endif
#if defined(RTLD_DEEPBIND) && defined(LIMEN_R_COPY) && !defined(__SANITIZE_ADDRESS__)
#define LIMEN_SHIM_DEEPBIND 1
#endif

#ifdef LIMEN_SHIM_DEEPBIND
static int
find_copy_relocs (struct dl_phdr_info *info, size_t size, void *data)
{
  gboolean *found = data;
  const ElfW(Dyn) *dyn = NULL;
  ElfW(Addr) rela = 0;
  size_t relasz = 0;

  /* The first object is the executable. */
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *) (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  for (; dyn && dyn->d_tag != DT_NULL; dyn++)
    if (dyn->d_tag == DT_RELA)
      rela = dyn->d_un.d_ptr;
    else if (dyn->d_tag == DT_RELASZ)
      relasz = dyn->d_un.d_val;
  /* glibc rebases the executable's dynamic section in place; other loaders may not. */
  if (rela && rela < info->dlpi_addr)
    rela += info->dlpi_addr;
  for (size_t i = 0; rela && i < relasz / sizeof (ElfW(Rela)); i++)
    if (LIMEN_R_COPY (((const ElfW(Rela) *) rela)[i].r_info))
      *found = TRUE;
  return 1;
}
#endif

static int
shim_dlopen_flags (void)
{
  int flags = RTLD_LAZY | RTLD_LOCAL;
#ifdef LIMEN_SHIM_DEEPBIND
  gboolean copy_relocs = FALSE;
  const char *preload = g_getenv ("LD_PRELOAD");
  GStatBuf st;

  dl_iterate_phdr (find_copy_relocs, &copy_relocs);
  if (!copy_relocs && !(preload && *preload) &&
      !(g_stat ("/etc/ld.so.preload", &st) == 0 && st.st_size > 0))
    flags |= RTLD_DEEPBIND;
  else
    g_debug ("Loading the Qt shim without RTLD_DEEPBIND (%s)",
             copy_relocs ? "copy relocations in limen-kde" : "preloaded libraries");
#endif
  return flags;
}

/* The installed module, from its private library directory; a test build may be pointed
 * at another (LIMEN_QT_MODULE) or at the build tree's (LIMEN_BUILD_DIR, uninstalled.h). */
static char *
find_module (void)
{
#ifdef LIMEN_TEST_HOOKS
  const char *env = g_getenv ("LIMEN_QT_MODULE");

  if (env && *env)
    return g_strdup (env);
#endif
  return limen_uninstalled_path ("kde-backend/qt/liblimen-qt.so", LIMEN_QT_MODULE_PATH);
}

/* ---- preloading in a Plasma session ----
 *
 * The first dialog of a process that has not loaded Qt waits ~30 ms for the dynamic
 * linker to map and relocate the shim's ~80 libraries. In a Plasma session KWin,
 * plasmashell and the other KDE processes map the same Qt and KF5 pages, so holding them
 * costs limen-kde little PSS there (bench-kde measures it beside KF5 processes); elsewhere
 * limen-kde would be alone in mapping them and keeps the shim unloaded until a dialog
 * needs it.
 *
 * The preload maps the libraries in a thread of its own, after start-up, and creates no Qt
 * object there: loading a library runs its static constructors, and KIOWidgets' create
 * QObjects (its default job UI delegate and handler interfaces), which would then belong
 * to that thread (and the first one would make it Qt's main thread). So the thread loads
 * only the libraries below, none of whose constructors creates a QObject or Qt thread data
 * (checked for KF5 5.103 / Qt 5.15 by loading each in a thread under gdb with breakpoints
 * on the QObject constructors and QThreadData::current; test_kde_preload.py checks it on
 * every run with an interposed QObject constructor). KIOWidgets, KIOFileWidgets and the
 * shim itself are left for the main thread, at the first dialog. A soname missing here
 * is skipped. Every library this brings in is one the first FileChooser maps anyway
 * (test_kde_preload.py checks it), so the preload's memory is the first dialog's, paid
 * early; most of what it adds beside a Plasma session is the libraries' relocated data,
 * which RTLD_NOW or RTLD_LAZY, or trimming the heap afterwards, leave the same. */
static const char *const preload_sonames[] = {
  "libQt5Core.so.5", "libQt5Gui.so.5", "libQt5Widgets.so.5", "libQt5DBus.so.5",
  "libQt5Network.so.5", "libQt5Xml.so.5", "libQt5PrintSupport.so.5", "libQt5X11Extras.so.5",
  "libKF5CoreAddons.so.5", "libKF5ConfigCore.so.5", "libKF5ConfigGui.so.5", "libKF5ConfigWidgets.so.5",
  "libKF5I18n.so.5", "libKF5WidgetsAddons.so.5", "libKF5WindowSystem.so.5", "libKF5Service.so.5",
  "libKF5KIOCore.so.5", "libKF5KIOGui.so.5", "libKF5Notifications.so.5", "libKF5IconThemes.so.5",
  "libKF5Completion.so.5", "libKF5JobWidgets.so.5", "libKF5XmlGui.so.5", "libKF5Bookmarks.so.5",
  "libKF5Solid.so.5", "libKF5ItemViews.so.5",
};

static GThread *preload_thread;
static guint preload_source;

typedef struct {
  int flags;
} Preload;

static gboolean
join_preload (gpointer data)
{
  if (preload_thread)
    g_thread_join (g_steal_pointer (&preload_thread));
  return G_SOURCE_REMOVE;
}

static gpointer
preload_run (gpointer data)
{
  Preload *p = data;
  gint64 start = g_get_monotonic_time ();
  guint loaded = 0;

  /* The handles are not kept: loaded libraries stay, as a loaded shim's always do. */
  for (gsize i = 0; i < G_N_ELEMENTS (preload_sonames); i++)
    if (dlopen (preload_sonames[i], p->flags))
      loaded++;
    else
      g_debug ("Not preloading %s: %s", preload_sonames[i], dlerror ());
  g_debug ("Qt shim preloaded in %.1f ms (%u libraries)", (g_get_monotonic_time () - start) / 1000.0, loaded);
  g_free (p);
  g_idle_add (join_preload, NULL);
  return NULL;
}

static gboolean
start_preload (gpointer data)
{
  Preload *p;

  preload_source = 0;
  if (shim_loaded || shim_error || preload_thread)
    return G_SOURCE_REMOVE;
  p = g_new0 (Preload, 1);
  p->flags = shim_dlopen_flags ();
  preload_thread = g_thread_new ("limen-preload", preload_run, p);
  return G_SOURCE_REMOVE;
}

static gboolean
in_kde_session (void)
{
  const char *desktops = g_getenv ("XDG_CURRENT_DESKTOP");
  g_auto(GStrv) names = g_strsplit (desktops ? desktops : "", ":", -1);

  for (char **n = names; *n; n++)
    if (g_ascii_strcasecmp (*n, "KDE") == 0)
      return TRUE;
  return FALSE;
}

void
limen_kde_shim_preload_later (void)
{
  /* LIMEN_KDE_PRELOAD=0 never preloads, =1 preloads in any session (for measuring). */
  const char *force = g_getenv ("LIMEN_KDE_PRELOAD");
  gboolean display = (g_getenv ("DISPLAY") && *g_getenv ("DISPLAY")) ||
                     (g_getenv ("WAYLAND_DISPLAY") && *g_getenv ("WAYLAND_DISPLAY"));

  if (force && g_str_equal (force, "0"))
    return;
  if (!(force && g_str_equal (force, "1")) && !(in_kde_session () && display))
    return;
  /* After start-up: the bus names and the frontend's first calls go first. */
  if (!preload_source)
    preload_source = g_timeout_add_full (G_PRIORITY_LOW, 200, start_preload, NULL, NULL);
}

const LimenKdeShim *
limen_kde_shim_get (GError **error)
{
  /* A preload under way: wait for it rather than load the same libraries beside it. */
  join_preload (NULL);
  g_clear_handle_id (&preload_source, g_source_remove);
  if (!shim_loaded && !shim_error)
    {
      g_autofree char *path = find_module ();
      void *module;
      gboolean ok = TRUE;

      g_debug ("Loading the Qt shim from %s", path);
      module = dlopen (path, shim_dlopen_flags ());
      if (!module)
        shim_error = g_strdup_printf ("Cannot load the Qt shim: %s", dlerror ());
      else
        {
#define LIMEN_KDE_SHIM_RESOLVE(name)                                      \
          shim.name = (__typeof__ (name) *) dlsym (module, #name);        \
          if (!shim.name)                                                 \
            ok = FALSE;
          LIMEN_QT_DLOPEN_FUNCTIONS (LIMEN_KDE_SHIM_RESOLVE)
#undef LIMEN_KDE_SHIM_RESOLVE
          if (!ok)
            shim_error = g_strdup_printf ("The Qt shim %s lacks entry points", path);
          else
            shim_loaded = TRUE;
        }
      if (shim_error)
        g_warning ("%s", shim_error);
    }
  if (!shim_loaded)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, shim_error);
      return NULL;
    }
  return &shim;
}

const LimenKdeShim *
limen_kde_shim_get_for_dialog (GError **error)
{
  const LimenKdeShim *s = limen_kde_shim_get (error);
  const char *reason;

  if (!s)
    return NULL;
  reason = s->limen_qt_unavailable_reason ();
  if (reason)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot show a dialog: %s", reason);
      return NULL;
    }
  return s;
}
