/* LD_PRELOAD guard for test_kde_preload.py: interposes QObject's constructors and says
 * on stderr when one runs on limen-kde's preload thread (which must create no Qt object)
 * and, once, that one ran on the main thread (proof that the interposition works).
 * Calls from other libraries reach QObject's constructors through their PLT, so a
 * library loaded while this is preloaded binds to these first. limen-kde loads QtCore
 * RTLD_LOCAL, out of RTLD_NEXT's reach: the real constructors are looked up in it by name.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static void *
real_symbol (const char *name)
{
  void *qtcore = dlopen ("libQt5Core.so.5", RTLD_LAZY | RTLD_NOLOAD);

  return qtcore ? dlsym (qtcore, name) : NULL;
}

static void
note (const char *which)
{
  static int main_seen;
  char name[32] = "";

  pthread_getname_np (pthread_self (), name, sizeof name);
  if (strcmp (name, "limen-preload") == 0)
    fprintf (stderr, "LIMEN-GUARD: QObject constructed (%s) on the preload thread\n", which);
  else if (syscall (SYS_gettid) == getpid () && !main_seen)
    {
      main_seen = 1;
      fprintf (stderr, "LIMEN-GUARD: first QObject constructed on the main thread\n");
    }
}

#define GUARD1(sym)                                                           \
  void sym (void *self, void *parent);                                        \
  void sym (void *self, void *parent)                                         \
  {                                                                           \
    static void (*real) (void *, void *);                                     \
    if (!real)                                                                \
      real = (void (*) (void *, void *)) real_symbol (#sym);             \
    note (#sym);                                                              \
    real (self, parent);                                                      \
  }
#define GUARD2(sym)                                                           \
  void sym (void *self, void *d, void *parent);                               \
  void sym (void *self, void *d, void *parent)                                \
  {                                                                           \
    static void (*real) (void *, void *, void *);                             \
    if (!real)                                                                \
      real = (void (*) (void *, void *, void *)) real_symbol (#sym);     \
    note (#sym);                                                              \
    real (self, d, parent);                                                   \
  }

/* QObject::QObject(QObject *) and QObject::QObject(QObjectPrivate &, QObject *),
 * complete and base object constructors. */
GUARD1 (_ZN7QObjectC1EPS_)
GUARD1 (_ZN7QObjectC2EPS_)
GUARD2 (_ZN7QObjectC1ER14QObjectPrivatePS_)
GUARD2 (_ZN7QObjectC2ER14QObjectPrivatePS_)
