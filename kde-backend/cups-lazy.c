/* Limen — libcups, opened on the first print instead of at start.
 *
 * Linking libcups maps it and its TLS, Kerberos and Avahi chain (~20 libraries) into
 * every limen-kde at start, for a portal most sessions never use. Worse, those libraries
 * stand in the dynamic linker's global scope, which every later symbol lookup walks
 * first: the Qt shim's, and those of the plugins Qt loads for the first dialog (platform,
 * platform theme, style, icon engine). So print.c calls these definitions, which open
 * libcups.so.2 on first use and forward to it; the prototypes are libcups' own.
 *
 * Should libcups be missing at run time, every call fails the way libcups reports a
 * failure, and cupsLastErrorString() says why.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cups/cups.h>
#include <glib.h>

#include "lazy-library.h"

#define LIMEN_CUPS_FUNCTIONS(X)                                                                  \
  X (int, cupsAddOption, (const char *name, const char *value, int num_options,                  \
                          cups_option_t **options), (name, value, num_options, options), num_options) \
  X (int, cupsCreateJob, (http_t *http, const char *name, const char *title, int num_options,    \
                          cups_option_t *options), (http, name, title, num_options, options), 0) \
  X (http_status_t, cupsStartDocument, (http_t *http, const char *name, int job_id,              \
                                        const char *docname, const char *format, int last_document), \
     (http, name, job_id, docname, format, last_document), HTTP_STATUS_ERROR)                    \
  X (http_status_t, cupsWriteRequestData, (http_t *http, const char *buffer, size_t length),     \
     (http, buffer, length), HTTP_STATUS_ERROR)                                                  \
  X (ipp_status_t, cupsFinishDocument, (http_t *http, const char *name), (http, name),           \
     IPP_STATUS_ERROR_INTERNAL)                                                                  \
  X (ipp_status_t, cupsCancelJob2, (http_t *http, const char *name, int job_id, int purge),      \
     (http, name, job_id, purge), IPP_STATUS_ERROR_INTERNAL)                                     \
  X (const char *, cupsGetDefault, (void), (), NULL)

static struct {
#define LIMEN_CUPS_FIELD(ret, name, params, args, fail) ret (*name) params;
  LIMEN_CUPS_FUNCTIONS (LIMEN_CUPS_FIELD)
#undef LIMEN_CUPS_FIELD
  void (*cupsFreeOptions) (int num_options, cups_option_t *options);
  const char *(*cupsLastErrorString) (void);
} real;

#define LIMEN_CUPS_NAME(ret, name, params, args, fail) #name,
static const char *const symbols[] = {
  LIMEN_CUPS_FUNCTIONS (LIMEN_CUPS_NAME)
  "cupsFreeOptions",
  "cupsLastErrorString",
};
#undef LIMEN_CUPS_NAME
G_STATIC_ASSERT (sizeof real == G_N_ELEMENTS (symbols) * sizeof (LimenLazySlot));

/* Opened once, by the first call; when it or one of its symbols is missing, logged once
 * and the reason kept for cupsLastErrorString(). */
static LimenLazyLibrary cups = {
  .soname = "libcups.so.2", .symbols = symbols, .n_symbols = G_N_ELEMENTS (symbols),
  .slots = &real, .failure = "Cannot load libcups",
};

#define LIMEN_CUPS_DEFINE(ret, name, params, args, fail) \
  ret name params                                        \
  {                                                      \
    if (!limen_lazy_load (&cups))                       \
      return fail;                                       \
    return real.name args;                               \
  }
LIMEN_CUPS_FUNCTIONS (LIMEN_CUPS_DEFINE)
#undef LIMEN_CUPS_DEFINE

void
cupsFreeOptions (int num_options, cups_option_t *options)
{
  /* Without libcups nothing could have made @options. */
  if (limen_lazy_load (&cups))
    real.cupsFreeOptions (num_options, options);
}

const char *
cupsLastErrorString (void)
{
  if (!limen_lazy_load (&cups))
    return cups.error;
  return real.cupsLastErrorString ();
}
