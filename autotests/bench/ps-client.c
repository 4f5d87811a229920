/* A lean PermissionStore client for bench-documents: sd-bus marshals and reads in place,
 * so the round trips it times are the bus's and the store's, not a client library's
 * (GDBus spends ~10 ms writing and ~25 ms reading an a{sas} of 20,000 apps).
 *
 *   ps-client DEST PATH N_APPS REPS
 *
 * Each rep Sets a fresh entry of N_APPS apps (table "bench", each app ["yes"]) and Looks
 * it up, reading every app and permission of the reply. The message is built and sealed
 * (with a serial of our own, above sd-bus's) before the clock starts; a Set is timed from send to reply, a Lookup from send to the last string
 * read. Prints "set_ms=MEDIAN lookup_ms=MEDIAN apps=N" (apps: what the last Lookup held).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>

#define IFACE "org.freedesktop.impl.portal.PermissionStore"

static double
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
fail (const char *what, int r, const sd_bus_error *error)
{
  fprintf (stderr, "ps-client: %s: %s\n", what, error && error->message ? error->message : strerror (-r));
  return 1;
}

/* Read the whole a{sas} of a Lookup reply; returns the number of apps or < 0. */
static int
read_apps (sd_bus_message *reply)
{
  int n = 0, r;

  if ((r = sd_bus_message_enter_container (reply, 'a', "{sas}")) < 0)
    return r;
  while ((r = sd_bus_message_enter_container (reply, 'e', "sas")) > 0)
    {
      const char *app, *perm;

      if ((r = sd_bus_message_read (reply, "s", &app)) < 0
          || (r = sd_bus_message_enter_container (reply, 'a', "s")) < 0)
        return r;
      while ((r = sd_bus_message_read (reply, "s", &perm)) > 0)
        ;
      if (r < 0 || (r = sd_bus_message_exit_container (reply)) < 0
          || (r = sd_bus_message_exit_container (reply)) < 0)
        return r;
      n++;
    }
  if (r < 0 || (r = sd_bus_message_exit_container (reply)) < 0)
    return r;
  return n;
}

int
main (int argc, char **argv)
{
  sd_bus *bus = NULL;
  int r, n_apps, reps, got = 0;
  double *sets, *lookups;

  if (argc != 5)
    {
      fprintf (stderr, "usage: ps-client DEST PATH N_APPS REPS\n");
      return 2;
    }
  n_apps = atoi (argv[3]);
  reps = atoi (argv[4]);
  if (n_apps < 0 || reps < 1)
    return 2;
  if ((r = sd_bus_open_user (&bus)) < 0)
    return fail ("connect", r, NULL);
  sets = calloc (reps, sizeof *sets);
  lookups = calloc (reps, sizeof *lookups);

  for (int i = 0; i < reps; i++)
    {
      sd_bus_message *m = NULL, *reply = NULL;
      sd_bus_error error = SD_BUS_ERROR_NULL;
      char id[32];
      double t;

      snprintf (id, sizeof id, "entry%d", i);
      if ((r = sd_bus_message_new_method_call (bus, &m, argv[1], argv[2], IFACE, "Set")) < 0
          || (r = sd_bus_message_append (m, "sbs", "bench", 1, id)) < 0
          || (r = sd_bus_message_open_container (m, 'a', "{sas}")) < 0)
        return fail ("build Set", r, NULL);
      for (int a = 0; a < n_apps; a++)
        {
          char app[64];

          snprintf (app, sizeof app, "org.example.App%d", a);
          if ((r = sd_bus_message_append (m, "{sas}", app, 1, "yes")) < 0)
            return fail ("build Set", r, NULL);
        }
      if ((r = sd_bus_message_close_container (m)) < 0
          || (r = sd_bus_message_append (m, "v", "v", "b", 1)) < 0
          || (r = sd_bus_message_seal (m, 1000 + 2 * i, 120 * 1000000ULL)) < 0)
        return fail ("build Set", r, NULL);
      t = now_ms ();
      if ((r = sd_bus_call (bus, m, 120 * 1000000ULL, &error, &reply)) < 0)
        return fail ("Set", r, &error);
      sets[i] = now_ms () - t;
      sd_bus_message_unref (reply);
      sd_bus_message_unref (m);
      reply = m = NULL;

      if ((r = sd_bus_message_new_method_call (bus, &m, argv[1], argv[2], IFACE, "Lookup")) < 0
          || (r = sd_bus_message_append (m, "ss", "bench", id)) < 0
          || (r = sd_bus_message_seal (m, 1001 + 2 * i, 120 * 1000000ULL)) < 0)
        return fail ("build Lookup", r, NULL);
      t = now_ms ();
      if ((r = sd_bus_call (bus, m, 120 * 1000000ULL, &error, &reply)) < 0)
        return fail ("Lookup", r, &error);
      if ((got = read_apps (reply)) < 0)
        return fail ("read Lookup", got, NULL);
      lookups[i] = now_ms () - t;
      sd_bus_message_unref (reply);
      sd_bus_message_unref (m);
    }
  printf ("set_ms=%.2f lookup_ms=%.2f apps=%d\n", median (sets, reps), median (lookups, reps), got);
  free (sets);
  free (lookups);
  sd_bus_flush_close_unref (bus);
  return 0;
}
