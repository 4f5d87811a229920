/* Limen — a library opened on first use instead of linked: dlopen and a table of symbols.
 *
 * The daemons keep rarely needed libraries (libpipewire, libgudev, libcups) out of every
 * start by defining the few functions they call themselves and forwarding them, on first
 * use, to the real library. Each such file keeps its prototypes in an X-macro table; this
 * is the one loader they share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* One slot of a table limen_lazy_open() fills: a function pointer of any type. A table is
 * a struct of n function pointers (every one this size, so no padding), in @symbols' order. */
typedef void (*LimenLazySlot) (void);

/* Open @soname (RTLD_LAZY | RTLD_LOCAL) and resolve @symbols[0..@n_symbols) into @slots,
 * a struct or array of @n_symbols function pointers. On failure (G_IO_ERROR_NOT_FOUND,
 * the message names the library and, for a missing symbol, the symbol) nothing stays
 * loaded and every slot is NULL. Thread-safe; it does not remember anything. */
gboolean limen_lazy_open (const char         *soname,
                          const char * const *symbols,
                          gsize               n_symbols,
                          void               *slots,
                          GError            **error);

/* A library to load once, by whichever thread first needs it. Static storage, filled with
 * the first five fields; the others are limen_lazy_load()'s. */
typedef struct {
  const char         *soname;
  const char * const *symbols;
  gsize               n_symbols;
  void               *slots;
  /* Start of the line logged (g_warning) and kept in @error when loading fails:
   * "PipeWire is not available" gives "PipeWire is not available: <reason>". */
  const char         *failure;

  gsize               once;
  gboolean            loaded;
  char               *error;
} LimenLazyLibrary;

/* Load @library on the first call (limen_lazy_open, under GOnce) and answer whether it
 * is usable; a failure is logged once and its message stays in @library->error. */
gboolean limen_lazy_load (LimenLazyLibrary *library);

G_END_DECLS
