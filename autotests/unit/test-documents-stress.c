/* Stress the document filesystem: worker threads read, write, stat and list through an
 * app's view while another thread grants and revokes that app's rights over D-Bus.
 * Fails on an unexpected errno, a wrong byte read, or a thread that stops making
 * progress (deadlock). Run by test_documents_stress.py against a live limen-documents.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_WORKERS 6

static char **doc_ids;
static char **names;
static guint n_docs;
static const char *mount_dir;
static const char *app_id;
static gint stop_flag;
static gint unexpected;
static gint progress[N_WORKERS + 1];   /* ms since start of the last finished operation */
static gint64 start_time;

static gint
now_ms (void)
{
  return (gint) ((g_get_monotonic_time () - start_time) / 1000);
}
static gint ops_ok, ops_denied;

static gboolean
errno_expected (int e)
{
  /* Revocation shows as EACCES on open handles and ENOENT once the entry is gone. */
  return e == EACCES || e == ENOENT || e == EPERM;
}

static void
note (const char *what, int e)
{
  if (errno_expected (e))
    g_atomic_int_inc (&ops_denied);
  else
    {
      g_printerr ("unexpected errno from %s: %s\n", what, g_strerror (e));
      g_atomic_int_inc (&unexpected);
    }
}

static gpointer
worker (gpointer data)
{
  guint me = GPOINTER_TO_UINT (data);
  GRand *rand = g_rand_new_with_seed (me * 7919);
  char buf[4096];

  while (!g_atomic_int_get (&stop_flag))
    {
      guint d = g_rand_int_range (rand, 0, n_docs);
      g_autofree char *dir = g_strdup_printf ("%s/by-app/%s/%s", mount_dir, app_id, doc_ids[d]);
      g_autofree char *path = g_strdup_printf ("%s/%s", dir, names[d]);
      g_autofree char *host = g_strdup_printf ("%s/%s/%s", mount_dir, doc_ids[d], names[d]);
      struct stat st;
      int fd;

      switch (g_rand_int_range (rand, 0, 6))
        {
        case 0:
          if (stat (path, &st) != 0)
            note ("stat", errno);
          else
            g_atomic_int_inc (&ops_ok);
          break;
        case 1:
        case 2:
          fd = open (path, O_RDONLY);
          if (fd < 0)
            note ("open", errno);
          else
            {
              /* Hold the handle across several reads: revocation must reach it. */
              for (int i = 0; i < 8; i++)
                {
                  ssize_t n = pread (fd, buf, sizeof buf, 0);

                  if (n < 0)
                    {
                      note ("read", errno);
                      break;
                    }
                  if (n > 0 && buf[0] != 'D')
                    {
                      g_printerr ("wrong data read from %s\n", path);
                      g_atomic_int_inc (&unexpected);
                      break;
                    }
                  g_atomic_int_inc (&ops_ok);
                }
              close (fd);
            }
          break;
        case 3:
          fd = open (path, O_WRONLY);
          if (fd < 0)
            note ("open for writing", errno);
          else
            {
              if (pwrite (fd, "D", 1, 0) != 1)
                note ("write", errno);
              else
                g_atomic_int_inc (&ops_ok);
              close (fd);
            }
          break;
        case 4:
          {
            DIR *dh = opendir (dir);

            if (dh == NULL)
              note ("opendir", errno);
            else
              {
                while (readdir (dh))
                  ;
                closedir (dh);
                g_atomic_int_inc (&ops_ok);
              }
          }
          break;
        case 5:
          if (stat (host, &st) != 0)
            note ("stat of the host view", errno);
          else
            g_atomic_int_inc (&ops_ok);
          break;
        }
      g_atomic_int_set (&progress[me], now_ms ());
    }
  g_rand_free (rand);
  return NULL;
}

static gboolean
set_rights (GDBusConnection *bus, guint d, gboolean grant, const char *perm)
{
  const char *perms[] = { perm, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) r =
    g_dbus_connection_call_sync (bus, "org.freedesktop.portal.Documents", "/org/freedesktop/portal/documents",
                                 "org.freedesktop.portal.Documents",
                                 grant ? "GrantPermissions" : "RevokePermissions",
                                 g_variant_new ("(ss^as)", doc_ids[d], app_id, perms), NULL,
                                 G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &error);
  if (r == NULL)
    {
      g_printerr ("%s failed: %s\n", grant ? "GrantPermissions" : "RevokePermissions", error->message);
      g_atomic_int_inc (&unexpected);
      return FALSE;
    }
  return TRUE;
}

static gpointer
granter (gpointer data)
{
  GDBusConnection *bus = data;
  GRand *rand = g_rand_new_with_seed (4242);
  static const char *perm_names[] = { "read", "write" };

  while (!g_atomic_int_get (&stop_flag))
    {
      guint d = g_rand_int_range (rand, 0, n_docs);

      set_rights (bus, d, g_rand_boolean (rand), perm_names[g_rand_int_range (rand, 0, 2)]);
      g_atomic_int_set (&progress[N_WORKERS], now_ms ());
      g_usleep (g_rand_int_range (rand, 0, 3000));
    }
  g_rand_free (rand);
  return NULL;
}

int
main (int argc, char **argv)
{
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GError) error = NULL;
  GThread *threads[N_WORKERS + 1];
  double seconds;
  gint64 end;
  int failures = 0;

  if (argc != 6)
    {
      g_printerr ("usage: %s MOUNT APP_ID DOC_IDS(,) NAMES(,) SECONDS\n", argv[0]);
      return 2;
    }
  mount_dir = argv[1];
  app_id = argv[2];
  doc_ids = g_strsplit (argv[3], ",", -1);
  names = g_strsplit (argv[4], ",", -1);
  n_docs = g_strv_length (doc_ids);
  seconds = g_ascii_strtod (argv[5], NULL);
  bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  if (bus == NULL || n_docs == 0 || n_docs != g_strv_length (names))
    {
      g_printerr ("bad setup: %s\n", error ? error->message : "documents and names differ");
      return 2;
    }

  start_time = g_get_monotonic_time ();
  for (guint i = 0; i <= N_WORKERS; i++)
    progress[i] = 0;
  for (guint i = 0; i < N_WORKERS; i++)
    threads[i] = g_thread_new ("worker", worker, GUINT_TO_POINTER (i));
  threads[N_WORKERS] = g_thread_new ("granter", granter, bus);

  end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    {
      g_usleep (200000);
      for (guint i = 0; i <= N_WORKERS; i++)
        if (now_ms () - g_atomic_int_get (&progress[i]) > 10000)
          {
            /* A thread stuck for 10 s in one operation: the filesystem hangs. */
            g_printerr ("thread %u made no progress for 10 s: deadlock\n", i);
            _exit (3);
          }
    }
  g_atomic_int_set (&stop_flag, 1);
  for (guint i = 0; i <= N_WORKERS; i++)
    g_thread_join (threads[i]);

  /* Final state must hold exactly: everything revoked → nothing readable ... */
  for (guint d = 0; d < n_docs; d++)
    {
      set_rights (bus, d, FALSE, "read");
      set_rights (bus, d, FALSE, "write");
    }
  for (guint d = 0; d < n_docs; d++)
    {
      g_autofree char *path = g_strdup_printf ("%s/by-app/%s/%s/%s", mount_dir, app_id, doc_ids[d], names[d]);
      int fd = -1;

      for (int tries = 0; tries < 50 && (fd = open (path, O_RDONLY)) >= 0; tries++)
        {
          close (fd);
          g_usleep (20000);
        }
      if (fd >= 0)
        {
          g_printerr ("%s still readable after revocation\n", path);
          failures++;
        }
    }
  /* ... and read granted → readable again. */
  for (guint d = 0; d < n_docs; d++)
    {
      g_autofree char *path = g_strdup_printf ("%s/by-app/%s/%s/%s", mount_dir, app_id, doc_ids[d], names[d]);
      int fd;

      set_rights (bus, d, TRUE, "read");
      fd = open (path, O_RDONLY);
      if (fd < 0)
        {
          g_printerr ("%s not readable after a grant: %s\n", path, g_strerror (errno));
          failures++;
        }
      else
        close (fd);
    }
  g_print ("ok operations: %d, refused (expected under revocation): %d, unexpected: %d\n",
           ops_ok, ops_denied, unexpected);
  g_strfreev (doc_ids);
  g_strfreev (names);
  return (unexpected || failures || ops_ok == 0) ? 1 : 0;
}
