/* A lean client of limen-documents' D-Bus API for bench-documents: sd-bus marshals and
 * reads in place and costs a few µs per call, so the round trips it times are the bus's
 * and the daemon's, not a client library's (Python's GDBus spends ~0.3 ms of CPU per Add,
 * and ~10 ms writing and ~25 ms reading an a{sas} of 20,000 apps).
 *
 *   store-client ps DEST PATH N_APPS REPS
 *   store-client add DEST PATH < FILES
 *   store-client addfull DEST PATH APP PER_CALL < FILES
 *   store-client addpipe DEST PATH WINDOW < FILES
 *   store-client addpair DEST PATH ADDR_A ADDR_B FRESH < FILES
 *   store-client ping DEST PATH N
 *
 * ps: each rep Sets a fresh entry of N_APPS apps (table "bench", each app ["yes"]) and Looks
 * it up, reading every app and permission of the reply. The message is built and sealed
 * (with a serial of our own, above sd-bus's) before the clock starts; a Set is timed from send to reply, a Lookup from send to the last string
 * read. Prints "set_ms=MEDIAN lookup_ms=MEDIAN apps=N" (apps: what the last Lookup held).
 * add: one Documents.Add (O_PATH fd, not reusing, persistent) per file named on stdin;
 * addfull: AddFull of PER_CALL files a call, granting APP "read". Both open every fd
 * before the clock starts and print "seconds=TOTAL docs=N".
 * addpipe: the same Adds as add, but up to WINDOW of them in flight at once, as a client
 * exporting many files asynchronously sends them: the figure is then the daemon's
 * throughput rather than the sum of round trips through dbus-daemon.
 * addpair: the same Adds to two stacks at once (ADDR_A and ADDR_B: bus addresses), each file
 * added to both, the two calls of a file one right after the other in alternating order, each
 * timed on its own: the load of a shared machine hits both sides of a pair alike. With FRESH
 * 1 every call comes from a new connection (connect, Hello, Add), as from `flatpak
 * document-export`. Prints the medians and p10s of each side and the median of the per-pair
 * ratios B/A.
 * ping: N org.freedesktop.DBus.Peer.Ping calls one after another (GDBus answers them on its
 * worker thread, no handler of the daemon's runs): the round-trip floor of any method call to
 * that peer through dbus-daemon. Prints "seconds=TOTAL calls=N".
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define PS_IFACE "org.freedesktop.impl.portal.PermissionStore"
#define DOCS_IFACE "org.freedesktop.portal.Documents"

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
  fprintf (stderr, "store-client: %s: %s\n", what, error && error->message ? error->message : strerror (-r));
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

/* Every line of stdin opened O_PATH; returns the count, fds in *out. */
static int
open_files (int **out)
{
  char line[4096];
  int n = 0, cap = 1024, *fds = malloc (cap * sizeof *fds);

  while (fgets (line, sizeof line, stdin))
    {
      line[strcspn (line, "\n")] = 0;
      if (n == cap)
        fds = realloc (fds, (cap *= 2) * sizeof *fds);
      if ((fds[n] = open (line, O_PATH | O_CLOEXEC)) < 0)
        {
          perror (line);
          exit (1);
        }
      n++;
    }
  *out = fds;
  return n;
}

static int
run_add (sd_bus *bus, const char *dest, const char *path, const char *app, int per_call)
{
  int *fds, n = open_files (&fds), docs = 0, r, calls = 0;
  double t = now_ms (), first = 0, *lat = calloc (n + 1, sizeof *lat), t_call = t;

  for (int i = 0; i < n; i += per_call ? per_call : 1)
    {
      sd_bus_message *m = NULL, *reply = NULL;
      sd_bus_error error = SD_BUS_ERROR_NULL;
      const char *doc;

      if (per_call == 0)
        {
          if ((r = sd_bus_message_new_method_call (bus, &m, dest, path, DOCS_IFACE, "Add")) < 0
              || (r = sd_bus_message_append (m, "hbb", fds[i], 0, 1)) < 0)
            return fail ("build Add", r, NULL);
          if ((r = sd_bus_call (bus, m, 60 * 1000000ULL, &error, &reply)) < 0)
            return fail ("Add", r, &error);
          if ((r = sd_bus_message_read (reply, "s", &doc)) < 0)
            return fail ("read Add", r, NULL);
          docs++;
        }
      else
        {
          int k = n - i < per_call ? n - i : per_call;

          if ((r = sd_bus_message_new_method_call (bus, &m, dest, path, DOCS_IFACE, "AddFull")) < 0
              || (r = sd_bus_message_open_container (m, 'a', "h")) < 0)
            return fail ("build AddFull", r, NULL);
          for (int j = 0; j < k; j++)
            if ((r = sd_bus_message_append (m, "h", fds[i + j])) < 0)
              return fail ("build AddFull", r, NULL);
          if ((r = sd_bus_message_close_container (m)) < 0
              || (r = sd_bus_message_append (m, "usas", 0, app, 1, "read")) < 0)
            return fail ("build AddFull", r, NULL);
          if ((r = sd_bus_call (bus, m, 600 * 1000000ULL, &error, &reply)) < 0)
            return fail ("AddFull", r, &error);
          if ((r = sd_bus_message_enter_container (reply, 'a', "s")) < 0)
            return fail ("read AddFull", r, NULL);
          while ((r = sd_bus_message_read (reply, "s", &doc)) > 0)
            docs++;
          if (r < 0)
            return fail ("read AddFull", r, NULL);
        }
      sd_bus_message_unref (reply);
      sd_bus_message_unref (m);
      if (i == 0)
        first = now_ms () - t;
      else
        lat[calls++] = now_ms () - t_call;
      t_call = now_ms ();
    }
  printf ("seconds=%.4f docs=%d first_ms=%.3f", (now_ms () - t) / 1000, docs, first);
  if (calls > 0)
    {
      qsort (lat, calls, sizeof *lat, cmp_double);
      printf (" later_p10_ms=%.4f later_median_ms=%.4f", lat[calls / 10], median (lat, calls));
    }
  printf ("\n");
  free (lat);
  for (int i = 0; i < n; i++)
    close (fds[i]);
  free (fds);
  return 0;
}

static int
run_ping (sd_bus *bus, const char *dest, const char *path, int n)
{
  double t = now_ms ();
  int r;

  for (int i = 0; i < n; i++)
    {
      sd_bus_message *reply = NULL;
      sd_bus_error error = SD_BUS_ERROR_NULL;

      if ((r = sd_bus_call_method (bus, dest, path, "org.freedesktop.DBus.Peer", "Ping", &error, &reply, "")) < 0)
        return fail ("Ping", r, &error);
      sd_bus_message_unref (reply);
    }
  printf ("seconds=%.4f calls=%d\n", (now_ms () - t) / 1000, n);
  return 0;
}

static int
connect_address (const char *address, sd_bus **out)
{
  sd_bus *bus = NULL;
  int r;

  if ((r = sd_bus_new (&bus)) < 0 || (r = sd_bus_set_address (bus, address)) < 0 ||
      (r = sd_bus_set_bus_client (bus, 1)) < 0 || (r = sd_bus_start (bus)) < 0)
    {
      sd_bus_unref (bus);
      return r;
    }
  *out = bus;
  return 0;
}

/* One Add of @fd to @bus (or to a new connection to @address), timed from before the
 * connection to the reply; < 0 on failure. */
static double
timed_add (sd_bus *bus, const char *address, const char *dest, const char *path, int fd)
{
  sd_bus_message *reply = NULL;
  sd_bus_error error = SD_BUS_ERROR_NULL;
  double t = now_ms ();
  const char *doc;
  int r;

  if (bus == NULL && connect_address (address, &bus) < 0)
    return -1;
  else if (address == NULL)
    sd_bus_ref (bus);
  r = sd_bus_call_method (bus, dest, path, DOCS_IFACE, "Add", &error, &reply, "hbb", fd, 0, 1);
  if (r >= 0)
    r = sd_bus_message_read (reply, "s", &doc);
  t = now_ms () - t;
  if (r < 0)
    fprintf (stderr, "store-client: Add: %s\n", error.message ? error.message : strerror (-r));
  sd_bus_error_free (&error);
  sd_bus_message_unref (reply);
  if (address)
    sd_bus_flush_close_unref (bus);
  else
    sd_bus_unref (bus);
  return r < 0 ? -1 : t;
}

static int
run_add_pair (const char *dest, const char *path, const char *addr_a, const char *addr_b, int fresh)
{
  int *fds, n = open_files (&fds);
  sd_bus *a = NULL, *b = NULL;
  double *ta = calloc (n + 1, sizeof *ta), *tb = calloc (n + 1, sizeof *tb), *ratio = calloc (n + 1, sizeof *ratio);

  if (!fresh && (connect_address (addr_a, &a) < 0 || connect_address (addr_b, &b) < 0))
    return fail ("connect", -ECONNREFUSED, NULL);
  for (int i = 0; i < n; i++)
    {
      for (int k = 0; k < 2; k++)
        {
          /* Alternate which side goes first: the second of a pair finds the caches warmer. */
          int side = (i + k) % 2;
          double t = timed_add (side ? b : a, fresh ? (side ? addr_b : addr_a) : NULL, dest, path, fds[i]);

          if (t < 0)
            return 1;
          (side ? tb : ta)[i] = t;
        }
      ratio[i] = tb[i] / ta[i];
    }
  /* median() sorts: the p10s are read from the sorted arrays after it. */
  printf ("calls=%d ratio_median=%.3f", n, median (ratio, n));
  printf (" a_median_ms=%.4f b_median_ms=%.4f", median (ta, n), median (tb, n));
  printf (" a_p10_ms=%.4f b_p10_ms=%.4f\n", ta[n / 10], tb[n / 10]);
  sd_bus_flush_close_unref (a);
  sd_bus_flush_close_unref (b);
  for (int i = 0; i < n; i++)
    close (fds[i]);
  free (fds);
  free (ta);
  free (tb);
  free (ratio);
  return 0;
}

typedef struct {
  int done, docs, failed;
} PipeState;

static int
on_add_reply (sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
  PipeState *st = userdata;
  const char *doc;

  (void) ret_error;
  st->done++;
  if (sd_bus_message_is_method_error (reply, NULL) || sd_bus_message_read (reply, "s", &doc) < 0)
    {
      if (!st->failed)
        fprintf (stderr, "Add failed: %s\n", sd_bus_message_get_error (reply) ? sd_bus_message_get_error (reply)->message : "bad reply");
      st->failed++;
    }
  else
    st->docs++;
  return 1;
}

static int
run_add_pipelined (sd_bus *bus, const char *dest, const char *path, int window)
{
  int *fds, n = open_files (&fds), sent = 0, r;
  PipeState st = { 0 };
  double t = now_ms ();

  while (st.done < n)
    {
      while (sent < n && sent - st.done < window)
        {
          sd_bus_message *m = NULL;

          if ((r = sd_bus_message_new_method_call (bus, &m, dest, path, DOCS_IFACE, "Add")) < 0
              || (r = sd_bus_message_append (m, "hbb", fds[sent], 0, 1)) < 0)
            return fail ("build Add", r, NULL);
          if ((r = sd_bus_call_async (bus, NULL, m, on_add_reply, &st, 60 * 1000000ULL)) < 0)
            return fail ("send Add", r, NULL);
          sd_bus_message_unref (m);
          sent++;
        }
      if ((r = sd_bus_process (bus, NULL)) < 0)
        return fail ("process", r, NULL);
      if (r == 0 && (r = sd_bus_wait (bus, UINT64_MAX)) < 0)
        return fail ("wait", r, NULL);
    }
  printf ("seconds=%.4f docs=%d\n", (now_ms () - t) / 1000, st.docs);
  for (int i = 0; i < n; i++)
    close (fds[i]);
  free (fds);
  return st.failed ? 1 : 0;
}

int
main (int argc, char **argv)
{
  sd_bus *bus = NULL;
  int r, n_apps, reps, got = 0;
  double *sets, *lookups;
  const char *dest, *path;

  if (argc < 4 || (strcmp (argv[1], "ps") == 0 && argc != 6)
      || (strcmp (argv[1], "add") == 0 && argc != 4) || (strcmp (argv[1], "addfull") == 0 && argc != 6)
      || (strcmp (argv[1], "addpipe") == 0 && argc != 5) || (strcmp (argv[1], "ping") == 0 && argc != 5)
      || (strcmp (argv[1], "addpair") == 0 && argc != 7)
      || (strcmp (argv[1], "ps") && strcmp (argv[1], "add") && strcmp (argv[1], "addfull")
          && strcmp (argv[1], "addpipe") && strcmp (argv[1], "ping") && strcmp (argv[1], "addpair")))
    {
      fprintf (stderr, "usage: store-client ps DEST PATH N_APPS REPS\n"
                       "       store-client add DEST PATH < FILES\n"
                       "       store-client addfull DEST PATH APP PER_CALL < FILES\n"
                       "       store-client addpipe DEST PATH WINDOW < FILES\n"
                       "       store-client addpair DEST PATH ADDR_A ADDR_B FRESH < FILES\n"
                       "       store-client ping DEST PATH N\n");
      return 2;
    }
  dest = argv[2];
  path = argv[3];
  if (strcmp (argv[1], "addpair") == 0)
    return run_add_pair (dest, path, argv[4], argv[5], atoi (argv[6]));
  if ((r = sd_bus_open_user (&bus)) < 0)
    return fail ("connect", r, NULL);
  if (strcmp (argv[1], "add") == 0)
    return run_add (bus, dest, path, NULL, 0);
  if (strcmp (argv[1], "ping") == 0)
    return atoi (argv[4]) > 0 ? run_ping (bus, dest, path, atoi (argv[4])) : 2;
  if (strcmp (argv[1], "addpipe") == 0)
    return atoi (argv[4]) > 0 ? run_add_pipelined (bus, dest, path, atoi (argv[4])) : 2;
  if (strcmp (argv[1], "addfull") == 0)
    return atoi (argv[5]) > 0 ? run_add (bus, dest, path, argv[4], atoi (argv[5])) : 2;
  n_apps = atoi (argv[4]);
  reps = atoi (argv[5]);
  if (n_apps < 0 || reps < 1)
    return 2;
  sets = calloc (reps, sizeof *sets);
  lookups = calloc (reps, sizeof *lookups);

  for (int i = 0; i < reps; i++)
    {
      sd_bus_message *m = NULL, *reply = NULL;
      sd_bus_error error = SD_BUS_ERROR_NULL;
      char id[32];
      double t;

      snprintf (id, sizeof id, "entry%d", i);
      if ((r = sd_bus_message_new_method_call (bus, &m, dest, path, PS_IFACE, "Set")) < 0
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

      if ((r = sd_bus_message_new_method_call (bus, &m, dest, path, PS_IFACE, "Lookup")) < 0
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
