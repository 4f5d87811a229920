/* Limen — libpipewire, opened on the first camera or screen-cast use instead of at start.
 *
 * limen-portal needs PipeWire only once an app uses the Camera portal or asks for a
 * PipeWire remote. Linked normally, libpipewire would be mapped and relocated before main
 * at every start, and its symbols would lengthen every lookup the dynamic linker makes;
 * page faults are most of a cold start's cost. So the frontend calls these definitions,
 * which open libpipewire-0.3.so.0 on first use and forward to it; the prototypes are
 * libpipewire's own (its headers are included, so a mismatch does not compile).
 *
 * Should libpipewire be missing at run time, each call fails the way libpipewire reports a
 * failure (NULL or a negative errno, errno set), once logged, and the callers' own
 * "PipeWire is not available" paths take over.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>
#include <stdarg.h>

#include <pipewire/pipewire.h>

#include "lazy-library.h"

#define LIMEN_PW_SONAME "libpipewire-0.3.so.0"

/* Functions with a return value: (return type, name, parameters, arguments, failure value). */
#define LIMEN_PW_FUNCTIONS(X)                                                                      \
  X (struct pw_context *, pw_context_new, (struct pw_loop *main_loop, struct pw_properties *props,  \
                                           size_t user_data_size), (main_loop, props, user_data_size), NULL) \
  X (struct pw_core *, pw_context_connect, (struct pw_context *context, struct pw_properties *properties, \
                                            size_t user_data_size), (context, properties, user_data_size), NULL) \
  X (int, pw_core_disconnect, (struct pw_core *core), (core), -ENOSYS)                              \
  X (struct pw_client *, pw_core_get_client, (struct pw_core *core), (core), NULL)                  \
  X (int, pw_core_steal_fd, (struct pw_core *core), (core), -ENOSYS)                                \
  X (struct pw_loop *, pw_loop_new, (const struct spa_dict *props), (props), NULL)                  \
  X (struct pw_thread_loop *, pw_thread_loop_new, (const char *name, const struct spa_dict *props), \
     (name, props), NULL)                                                                           \
  X (struct pw_loop *, pw_thread_loop_get_loop, (struct pw_thread_loop *loop), (loop), NULL)        \
  X (int, pw_thread_loop_start, (struct pw_thread_loop *loop), (loop), -ENOSYS)                     \
  X (int, pw_properties_set, (struct pw_properties *properties, const char *key, const char *value), \
     (properties, key, value), -ENOSYS)                                                             \
  X (int, pw_properties_setva, (struct pw_properties *properties, const char *key, const char *format, \
                                va_list args), (properties, key, format, args), -ENOSYS)

/* Functions without one: (name, parameters, arguments). Without libpipewire nothing could
 * have made their objects, so there is nothing to do. */
#define LIMEN_PW_PROCEDURES(X)                                                                     \
  X (pw_init, (int *argc, char **argv[]), (argc, argv))                                             \
  X (pw_context_destroy, (struct pw_context *context), (context))                                   \
  X (pw_loop_destroy, (struct pw_loop *loop), (loop))                                               \
  X (pw_proxy_destroy, (struct pw_proxy *proxy), (proxy))                                           \
  X (pw_thread_loop_lock, (struct pw_thread_loop *loop), (loop))                                    \
  X (pw_thread_loop_unlock, (struct pw_thread_loop *loop), (loop))                                  \
  X (pw_properties_free, (struct pw_properties *properties), (properties))

static struct {
#define LIMEN_PW_FIELD(ret, name, params, args, fail) ret (*name) params;
#define LIMEN_PW_PROC_FIELD(name, params, args) void (*name) params;
  LIMEN_PW_FUNCTIONS (LIMEN_PW_FIELD)
  LIMEN_PW_PROCEDURES (LIMEN_PW_PROC_FIELD)
  struct pw_properties *(*pw_properties_new) (const char *key, ...);
#undef LIMEN_PW_PROC_FIELD
#undef LIMEN_PW_FIELD
} real;

#define LIMEN_PW_NAME(ret, name, params, args, fail) #name,
#define LIMEN_PW_PROC_NAME(name, params, args) #name,
static const char *const symbols[] = {
  LIMEN_PW_FUNCTIONS (LIMEN_PW_NAME)
  LIMEN_PW_PROCEDURES (LIMEN_PW_PROC_NAME)
  "pw_properties_new",
};
#undef LIMEN_PW_PROC_NAME
#undef LIMEN_PW_NAME
G_STATIC_ASSERT (sizeof real == G_N_ELEMENTS (symbols) * sizeof (LimenLazySlot));

/* Opened once, by the first call; logged once when it or one of its symbols is missing. */
static LimenLazyLibrary pipewire = {
  .soname = LIMEN_PW_SONAME, .symbols = symbols, .n_symbols = G_N_ELEMENTS (symbols),
  .slots = &real, .failure = "PipeWire is not available",
};

/* Opens libpipewire once; FALSE (errno ENOSYS) when it or a symbol is missing. */
static gboolean
load_pipewire (void)
{
  if (limen_lazy_load (&pipewire))
    return TRUE;
  errno = ENOSYS;
  return FALSE;
}

#define LIMEN_PW_DEFINE(ret, name, params, args, fail) \
  ret name params                                      \
  {                                                    \
    if (!load_pipewire ())                             \
      return fail;                                     \
    return real.name args;                             \
  }
LIMEN_PW_FUNCTIONS (LIMEN_PW_DEFINE)
#undef LIMEN_PW_DEFINE

#define LIMEN_PW_DEFINE_PROC(name, params, args) \
  void name params                               \
  {                                              \
    if (load_pipewire ())                        \
      real.name args;                            \
  }
LIMEN_PW_PROCEDURES (LIMEN_PW_DEFINE_PROC)
#undef LIMEN_PW_DEFINE_PROC

/* A va_list cannot be handed on to a variadic function: the pairs are set one by one,
 * skipping what libpipewire's own pw_properties_new() skips (a NULL value, an empty key). */
struct pw_properties *
pw_properties_new (const char *key, ...)
{
  struct pw_properties *properties;
  va_list args;

  if (!load_pipewire ())
    return NULL;
  properties = real.pw_properties_new (NULL);
  if (properties == NULL)
    return NULL;
  va_start (args, key);
  for (; key != NULL; key = va_arg (args, const char *))
    {
      const char *value = va_arg (args, const char *);

      if (value != NULL && key[0] != '\0')
        real.pw_properties_set (properties, key, value);
    }
  va_end (args);
  return properties;
}

int
pw_properties_setf (struct pw_properties *properties, const char *key, const char *format, ...)
{
  va_list args;
  int res;

  if (!load_pipewire ())
    return -ENOSYS;
  va_start (args, format);
  res = real.pw_properties_setva (properties, key, format, args);
  va_end (args);
  return res;
}
