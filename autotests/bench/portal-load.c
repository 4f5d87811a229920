/* portal-load: drive a D-Bus method from N client connections and report latency
 * percentiles and throughput, so both portal frontends are measured by the same client.
 *   portal-load --clients N --calls M --dest NAME --path PATH --iface IFACE --method M [--args GVARIANT]
 * Prints one line: "calls=... errors=... p50_us=... p99_us=... throughput=... first_us=..."
 * (first_us: the slowest of the clients' first calls, which carry the caller's identification). */
#include <gio/gio.h>
#include <stdlib.h>

static int opt_clients = 1, opt_calls = 1000;
static char *opt_dest, *opt_path, *opt_iface, *opt_method, *opt_args;
static const char *address;

typedef struct {
  GThread  *thread;
  gint64   *samples;
  int       errors;
} Client;

static GVariant *
make_args (void)
{
  g_autoptr(GError) error = NULL;
  GVariant *v;

  if (opt_args == NULL)
    return NULL;
  v = g_variant_parse (NULL, opt_args, NULL, NULL, &error);
  if (v == NULL)
    g_error ("bad --args: %s", error->message);
  return v;
}

static gpointer
run_client (gpointer data)
{
  Client *c = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) conn =
    g_dbus_connection_new_for_address_sync (address,
                                            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                            G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                            NULL, NULL, &error);
  if (conn == NULL)
    g_error ("connect: %s", error->message);
  g_autoptr(GVariant) args = make_args ();
  if (args)
    g_variant_ref_sink (args);

  for (int i = 0; i < opt_calls; i++)
    {
      gint64 t0 = g_get_monotonic_time ();
      g_autoptr(GVariant) reply = g_dbus_connection_call_sync (conn, opt_dest, opt_path, opt_iface, opt_method,
                                                               args, NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL, NULL);
      c->samples[i] = g_get_monotonic_time () - t0;
      if (reply == NULL)
        c->errors++;
    }
  return NULL;
}

static int
cmp64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    { "clients", 0, 0, G_OPTION_ARG_INT, &opt_clients, "client connections", "N" },
    { "calls", 0, 0, G_OPTION_ARG_INT, &opt_calls, "calls per client", "M" },
    { "dest", 0, 0, G_OPTION_ARG_STRING, &opt_dest, "bus name", NULL },
    { "path", 0, 0, G_OPTION_ARG_STRING, &opt_path, "object path", NULL },
    { "iface", 0, 0, G_OPTION_ARG_STRING, &opt_iface, "interface", NULL },
    { "method", 0, 0, G_OPTION_ARG_STRING, &opt_method, "method", NULL },
    { "args", 0, 0, G_OPTION_ARG_STRING, &opt_args, "arguments as GVariant text", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  Client *clients;
  gint64 *all, start, elapsed, first;
  int errors = 0, total;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || !opt_dest || !opt_path || !opt_iface || !opt_method)
    {
      g_printerr ("portal-load: %s\n", error ? error->message : "--dest, --path, --iface and --method are needed");
      return 2;
    }
  address = g_getenv ("DBUS_SESSION_BUS_ADDRESS");
  if (address == NULL)
    {
      g_printerr ("portal-load: DBUS_SESSION_BUS_ADDRESS is not set\n");
      return 2;
    }
  clients = g_new0 (Client, opt_clients);
  start = g_get_monotonic_time ();
  for (int i = 0; i < opt_clients; i++)
    {
      clients[i].samples = g_new0 (gint64, opt_calls);
      clients[i].thread = g_thread_new ("client", run_client, &clients[i]);
    }
  for (int i = 0; i < opt_clients; i++)
    g_thread_join (clients[i].thread);
  elapsed = g_get_monotonic_time () - start;

  total = opt_clients * opt_calls;
  /* Each client's first call is its connection's first: the daemon identifies the caller. */
  first = 0;
  for (int i = 0; i < opt_clients; i++)
    first = MAX (first, clients[i].samples[0]);
  all = g_new (gint64, total);
  for (int i = 0; i < opt_clients; i++)
    {
      memcpy (all + (gsize) i * opt_calls, clients[i].samples, sizeof (gint64) * opt_calls);
      errors += clients[i].errors;
      g_free (clients[i].samples);
    }
  qsort (all, total, sizeof (gint64), cmp64);
  g_print ("calls=%d errors=%d p50_us=%" G_GINT64_FORMAT " p99_us=%" G_GINT64_FORMAT " throughput=%.1f"
           " first_us=%" G_GINT64_FORMAT "\n",
           total, errors, all[total / 2], all[(gsize) (total * 0.99)], total / (elapsed / 1e6), first);
  g_free (all);
  g_free (clients);
  return errors ? 1 : 0;
}
