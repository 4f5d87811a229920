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
#include <dlfcn.h>
#include <glib.h>
#include <string.h>

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

static char *load_error;

/* Opens libcups once; FALSE (and load_error) when it or one of its symbols is missing. */
static gboolean
load_cups (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
    {
      void *lib = dlopen ("libcups.so.2", RTLD_LAZY | RTLD_LOCAL);

      if (!lib)
        load_error = g_strdup_printf ("Cannot load libcups: %s", dlerror ());
      else
        {
#define LIMEN_CUPS_RESOLVE(sym)                                                          \
          if (!load_error)                                                               \
            {                                                                            \
              void *p = dlsym (lib, #sym);                                               \
              if (p)                                                                     \
                memcpy (&real.sym, &p, sizeof p);                                        \
              else                                                                       \
                load_error = g_strdup_printf ("libcups.so.2 lacks %s", #sym);           \
            }
#define LIMEN_CUPS_RESOLVE_X(ret, name, params, args, fail) LIMEN_CUPS_RESOLVE (name)
          LIMEN_CUPS_FUNCTIONS (LIMEN_CUPS_RESOLVE_X)
          LIMEN_CUPS_RESOLVE (cupsFreeOptions)
          LIMEN_CUPS_RESOLVE (cupsLastErrorString)
#undef LIMEN_CUPS_RESOLVE_X
#undef LIMEN_CUPS_RESOLVE
        }
      if (load_error)
        g_warning ("%s", load_error);
      g_once_init_leave (&done, 1);
    }
  return load_error == NULL;
}

#define LIMEN_CUPS_DEFINE(ret, name, params, args, fail) \
  ret name params                                        \
  {                                                      \
    if (!load_cups ())                                   \
      return fail;                                       \
    return real.name args;                               \
  }
LIMEN_CUPS_FUNCTIONS (LIMEN_CUPS_DEFINE)
#undef LIMEN_CUPS_DEFINE

void
cupsFreeOptions (int num_options, cups_option_t *options)
{
  /* Without libcups nothing could have made @options. */
  if (load_cups ())
    real.cupsFreeOptions (num_options, options);
}

const char *
cupsLastErrorString (void)
{
  if (!load_cups ())
    return load_error;
  return real.cupsLastErrorString ();
}
