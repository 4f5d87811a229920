/* The Documents connection's marshaller (document-fuse/docs-marshal.c): every signature the
 * Documents and FileTransfer interfaces carry, and the edge cases around them, go GVariant →
 * message → over a socket (fds as SCM_RIGHTS) → GVariant → message → back, and come out
 * equal. Two sd-bus peers talk over a socketpair; no bus daemon is involved.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docs-marshal.h"

#define ARRAY_MAX (64u * 1024 * 1024)   /* the D-Bus specification's limit on an array */

typedef struct {
  sd_bus         *server, *client;
  sd_bus_message *got;         /* the last message a filter caught */
} Pair;

static int
on_message (sd_bus_message *m, void *user_data, sd_bus_error *ret_error)
{
  sd_bus_message **slot = user_data;
  uint8_t type = 0;

  g_assert_cmpint (sd_bus_message_get_type (m, &type), >=, 0);
  if (type != SD_BUS_MESSAGE_METHOD_CALL && type != SD_BUS_MESSAGE_METHOD_RETURN)
    return 0;
  sd_bus_message_unref (*slot);
  *slot = sd_bus_message_ref (m);
  return 1;
}

/* Wait until either end has something to do. */
static void
pair_wait (Pair *p)
{
  struct pollfd pfd[2] = {
    { .fd = sd_bus_get_fd (p->client), .events = sd_bus_get_events (p->client) },
    { .fd = sd_bus_get_fd (p->server), .events = sd_bus_get_events (p->server) },
  };

  g_assert_cmpint (poll (pfd, 2, 10000), >, 0);
}

static void
pair_open (Pair *p)
{
  int sv[2];
  sd_id128_t id;

  memset (p, 0, sizeof *p);
  g_assert_no_errno (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
  g_assert_cmpint (sd_id128_randomize (&id), >=, 0);
  g_assert_cmpint (sd_bus_new (&p->server), >=, 0);
  g_assert_cmpint (sd_bus_set_fd (p->server, sv[0], sv[0]), >=, 0);
  g_assert_cmpint (sd_bus_set_server (p->server, 1, id), >=, 0);
  g_assert_cmpint (sd_bus_set_anonymous (p->server, 1), >=, 0);
  g_assert_cmpint (sd_bus_negotiate_fds (p->server, 1), >=, 0);
  g_assert_cmpint (sd_bus_start (p->server), >=, 0);
  g_assert_cmpint (sd_bus_new (&p->client), >=, 0);
  g_assert_cmpint (sd_bus_set_fd (p->client, sv[1], sv[1]), >=, 0);
  g_assert_cmpint (sd_bus_set_anonymous (p->client, 1), >=, 0);
  g_assert_cmpint (sd_bus_negotiate_fds (p->client, 1), >=, 0);
  g_assert_cmpint (sd_bus_start (p->client), >=, 0);
  g_assert_cmpint (sd_bus_add_filter (p->server, NULL, on_message, &p->got), >=, 0);
  g_assert_cmpint (sd_bus_add_filter (p->client, NULL, on_message, &p->got), >=, 0);
  /* fds go only once both ends agreed on them, at the end of the handshake */
  while (sd_bus_is_ready (p->client) <= 0 || sd_bus_is_ready (p->server) <= 0)
    {
      int a = sd_bus_process (p->client, NULL), b = sd_bus_process (p->server, NULL);

      g_assert_cmpint (a, >=, 0);
      g_assert_cmpint (b, >=, 0);
      if (a == 0 && b == 0)
        pair_wait (p);
    }
  g_assert_cmpint (sd_bus_can_send (p->client, SD_BUS_TYPE_UNIX_FD), >, 0);
}

static void
pair_close (Pair *p)
{
  sd_bus_message_unref (p->got);
  sd_bus_close_unref (p->client);
  sd_bus_close_unref (p->server);
}

/* Run both ends until one of them caught a message. */
static sd_bus_message *
pair_receive (Pair *p)
{
  sd_bus_message *m;

  while (p->got == NULL)
    {
      int a = sd_bus_process (p->client, NULL);
      int b = sd_bus_process (p->server, NULL);

      g_assert_cmpint (a, >=, 0);
      g_assert_cmpint (b, >=, 0);
      if (a == 0 && b == 0 && p->got == NULL)
        pair_wait (p);
    }
  m = p->got;
  p->got = NULL;
  return m;
}

/* The same file behind both fds? */
static gboolean
same_file (int a, int b)
{
  struct stat sa, sb;

  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* g_variant_equal() prints values it does not trust to compare them: not for 64 MiB. */
static gboolean
same_value (GVariant *a, GVariant *b)
{
  g_autoptr(GVariant) na = g_variant_get_normal_form (a);
  g_autoptr(GVariant) nb = g_variant_get_normal_form (b);
  gsize size = g_variant_get_size (na);

  return g_variant_is_of_type (na, g_variant_get_type (nb)) && size == g_variant_get_size (nb) &&
         (size == 0 || memcmp (g_variant_get_data (na), g_variant_get_data (nb), size) == 0);
}

/* Read @m's body and check it is @expected with fds naming the files of @fds. */
static void
check_body (sd_bus_message *m, GVariant *expected, const int *fds, guint n_fds, GArray *got_fds)
{
  LimenDocsMarshalStatus status = -1;
  g_autoptr(GVariant) body = limen_docs_marshal_read_body (m, got_fds, &status);

  g_assert_cmpint (status, ==, LIMEN_DOCS_MARSHAL_OK);
  g_assert_nonnull (body);
  g_assert_false (g_variant_is_floating (body));
  if (!same_value (body, expected))
    {
      g_autofree char *a = g_variant_print (body, TRUE), *b = g_variant_print (expected, TRUE);
      g_error ("read %.200s, sent %.200s", a, b);
    }
  g_assert_cmpuint (got_fds->len, ==, n_fds);
  for (guint i = 0; i < n_fds; i++)
    g_assert_true (same_file (g_array_index (got_fds, int, i), fds[i]));
}

/* @body (a tuple; handles 0, 1, … in order, naming @fds) as a call from the client, read by
 * the server, written again into the server's reply and read by the client. */
static void
round_trip (GVariant *body, const int *fds, guint n_fds)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (body);
  g_autoptr(GArray) server_fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GArray) client_fds = g_array_new (FALSE, FALSE, sizeof (int));
  sd_bus_message *call = NULL, *got, *reply = NULL, *back;
  const char *sig = g_variant_get_type_string (owned);
  g_autofree char *inner = g_strndup (sig + 1, strlen (sig) - 2);
  uint64_t cookie;
  Pair p;

  pair_open (&p);
  g_assert_cmpint (sd_bus_message_new_method_call (p.client, &call, NULL, "/org/freedesktop/portal/documents",
                                                   "org.freedesktop.portal.Documents", "Test"), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (call, owned, fds, n_fds), >=, 0);
  g_assert_cmpint (sd_bus_send (p.client, call, &cookie), >=, 0);
  got = pair_receive (&p);
  g_assert_cmpstr (sd_bus_message_get_signature (got, TRUE), ==, inner);
  check_body (got, owned, fds, n_fds, server_fds);

  g_assert_cmpint (sd_bus_message_new_method_return (got, &reply), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (reply, owned, (int *) server_fds->data, server_fds->len), >=, 0);
  g_assert_cmpint (sd_bus_send (p.server, reply, NULL), >=, 0);
  back = pair_receive (&p);
  check_body (back, owned, fds, n_fds, client_fds);

  sd_bus_message_unref (back);
  sd_bus_message_unref (reply);
  sd_bus_message_unref (got);
  sd_bus_message_unref (call);
  pair_close (&p);
}

static GVariant *
parse (const char *type, const char *text)
{
  g_autoptr(GError) error = NULL;
  GVariant *v = g_variant_parse (G_VARIANT_TYPE (type), text, NULL, NULL, &error);

  g_assert_no_error (error);
  return v;
}

/* Every signature of the two interfaces, in and out, with values as their callers send them. */
static void
test_interface_signatures (void)
{
  static const struct { const char *type, *text; guint n_fds; } cases[] = {
    /* Documents, in */
    { "()", "()", 0 },                                                  /* GetMountPoint */
    { "(hbb)", "(handle 0, true, false)", 1 },                          /* Add */
    { "(haybb)", "(handle 0, b'name.txt', false, true)", 1 },           /* AddNamed */
    { "(ahusas)", "([handle 0, 1, 2], 5, 'org.example.App', ['read', 'write'])", 3 },   /* AddFull */
    { "(hayusas)", "(handle 0, b'new.txt', 1, 'org.example.App', ['read'])", 1 },       /* AddNamedFull */
    { "(ssas)", "('abcdefghijklmnopqrst', 'org.example.App', ['read', 'write', 'grant-permissions'])", 0 },
    { "(s)", "('abcdefghijklmnopqrst',)", 0 },                          /* Delete, Info, List */
    { "(ay)", "(b'/home/user/file.txt',)", 0 },                         /* Lookup; GetMountPoint out */
    { "(as)", "(['abc', 'def'],)", 0 },                                 /* GetHostPaths; RetrieveFiles out */
    /* FileTransfer, in */
    { "(a{sv})", "({'writable': <true>, 'autostop': <false>},)", 0 },   /* StartTransfer */
    { "(saha{sv})", "('key', [handle 0, 1], {'x': <1>})", 2 },           /* AddFiles */
    { "(sa{sv})", "('key', @a{sv} {})", 0 },                             /* RetrieveFiles */
    /* out */
    { "(asa{sv})", "(['a', 'b'], {'mountpoint': <b'/run/user/1000/doc'>})", 0 },   /* AddFull */
    { "(sa{sv})", "('abc', {'mountpoint': <b'/run/user/1000/doc'>})", 0 },         /* AddNamedFull */
    { "(aya{sas})", "(b'/home/u/f', {'org.example.App': ['read', 'write'], 'other': @as []})", 0 },   /* Info */
    { "(a{say})", "({'abc': b'/home/u/f', 'def': b'/tmp/x'},)", 0 },   /* List, GetHostPaths */
  };
  int fds[3];

  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    g_assert_no_errno (fds[i] = open (i == 0 ? "/" : i == 1 ? "/dev/null" : "/proc/self/status", O_RDONLY | O_CLOEXEC));
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      round_trip (parse (cases[i].type, cases[i].text), fds, cases[i].n_fds);
    }
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    close (fds[i]);
}

static void
test_empty_arrays (void)
{
  round_trip (parse ("(ahusas)", "(@ah [], 0, '', @as [])"), NULL, 0);
  round_trip (parse ("(a{sv})", "(@a{sv} {},)"), NULL, 0);
  round_trip (parse ("(aya{sas})", "(b'', @a{sas} {})"), NULL, 0);
  round_trip (parse ("(a{say})", "(@a{say} {},)"), NULL, 0);
  round_trip (parse ("(saha{sv})", "('', @ah [], @a{sv} {})"), NULL, 0);
  round_trip (parse ("(aasaa{sv}a(ii))", "([@as [], []], [@a{sv} {}], @a(ii) [])"), NULL, 0);
}

/* Variants in variants, and an a{sv} in the middle of them. */
static void
test_nested_variants (void)
{
  GVariant *v = g_variant_new_int32 (42);

  for (int i = 0; i < 30; i++)
    v = g_variant_new_variant (v);
  round_trip (g_variant_new ("(v)", v), NULL, 0);
  round_trip (parse ("(a{sv})", "({'a': <<<{'b': <<[<1>, <'x'>, <@a{sv} {}>]>>}>>>},)"), NULL, 0);
}

/* An a{sv} holding each type a value can have, fds and containers included. */
static void
test_vardict_every_type (void)
{
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "limen-marshal-XXXXXX", NULL);
  int fds[2];
  GVariantBuilder b;

  g_assert_no_errno (fds[0] = g_mkstemp (path));
  g_unlink (path);
  g_assert_no_errno (fds[1] = open ("/dev/null", O_WRONLY | O_CLOEXEC));
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "y", g_variant_new_byte (0xff));
  g_variant_builder_add (&b, "{sv}", "b-true", g_variant_new_boolean (TRUE));
  g_variant_builder_add (&b, "{sv}", "b-false", g_variant_new_boolean (FALSE));
  g_variant_builder_add (&b, "{sv}", "n", g_variant_new_int16 (G_MININT16));
  g_variant_builder_add (&b, "{sv}", "q", g_variant_new_uint16 (G_MAXUINT16));
  g_variant_builder_add (&b, "{sv}", "i", g_variant_new_int32 (G_MININT32));
  g_variant_builder_add (&b, "{sv}", "u", g_variant_new_uint32 (G_MAXUINT32));
  g_variant_builder_add (&b, "{sv}", "x", g_variant_new_int64 (G_MININT64));
  g_variant_builder_add (&b, "{sv}", "t", g_variant_new_uint64 (G_MAXUINT64));
  g_variant_builder_add (&b, "{sv}", "d", g_variant_new_double (-0.0));
  g_variant_builder_add (&b, "{sv}", "d-nan", g_variant_new_double (NAN));
  g_variant_builder_add (&b, "{sv}", "d-inf", g_variant_new_double (INFINITY));
  g_variant_builder_add (&b, "{sv}", "s", g_variant_new_string ("grüße, 世界"));
  g_variant_builder_add (&b, "{sv}", "s-empty", g_variant_new_string (""));
  g_variant_builder_add (&b, "{sv}", "o", g_variant_new_object_path ("/org/freedesktop/portal/documents"));
  g_variant_builder_add (&b, "{sv}", "o-root", g_variant_new_object_path ("/"));
  g_variant_builder_add (&b, "{sv}", "g", g_variant_new_signature ("a{sv}(hayu)"));
  g_variant_builder_add (&b, "{sv}", "g-empty", g_variant_new_signature (""));
  g_variant_builder_add (&b, "{sv}", "h", g_variant_new_handle (0));
  g_variant_builder_add (&b, "{sv}", "ah", g_variant_new_parsed ("[handle 1]"));
  g_variant_builder_add (&b, "{sv}", "ay", g_variant_new_bytestring ("/x"));
  g_variant_builder_add (&b, "{sv}", "as", g_variant_new_parsed ("['a', '']"));
  g_variant_builder_add (&b, "{sv}", "ao", g_variant_new_parsed ("[objectpath '/a']"));
  g_variant_builder_add (&b, "{sv}", "ad", g_variant_new_parsed ("[1.5, -2.0]"));
  g_variant_builder_add (&b, "{sv}", "ab", g_variant_new_parsed ("[true, false]"));
  g_variant_builder_add (&b, "{sv}", "an", g_variant_new_parsed ("[int16 -1]"));
  g_variant_builder_add (&b, "{sv}", "at", g_variant_new_parsed ("[uint64 1, 2]"));
  g_variant_builder_add (&b, "{sv}", "(ii)", g_variant_new ("(ii)", -1, 1));
  g_variant_builder_add (&b, "{sv}", "(sv)", g_variant_new_parsed ("('x', <('y', <byte 1>)>)"));
  g_variant_builder_add (&b, "{sv}", "a{sv}", g_variant_new_parsed ("{'inner': <uint32 7>}"));
  g_variant_builder_add (&b, "{sv}", "a{ub}", g_variant_new_parsed ("{uint32 1: true}"));
  g_variant_builder_add (&b, "{sv}", "a{sas}", g_variant_new_parsed ("{'app': ['read']}"));
  g_variant_builder_add (&b, "{sv}", "v", g_variant_new_variant (g_variant_new_string ("in a variant")));
  round_trip (g_variant_new ("(a{sv})", &b), fds, 2);
  close (fds[0]);
  close (fds[1]);
}

/* A byte string with no NUL at the end, with one, with NULs inside, empty, and every byte. */
static void
test_bytestrings (void)
{
  guint8 all[256];

  for (guint i = 0; i < 256; i++)
    all[i] = i;
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "/a/b", 4, 1)), NULL, 0);
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "/a/b", 5, 1)), NULL, 0);
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "a\0b\0", 4, 1)), NULL, 0);
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "", 0, 1)), NULL, 0);
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "\0", 1, 1)), NULL, 0);
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, all, sizeof all, 1)), NULL, 0);
}

/* The largest array D-Bus carries goes through; a byte string one byte longer is refused
 * when written (dbus-daemon would drop the connection that sent it). */
static void
test_maximum_sizes (void)
{
  g_autofree guint8 *big = g_malloc (ARRAY_MAX + 1);
  g_autoptr(GVariant) over = NULL;
  sd_bus_message *m = NULL;
  GVariantBuilder b;
  Pair p;

  for (gsize i = 0; i < ARRAY_MAX + 1; i++)
    big[i] = i * 7;
  round_trip (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, big, ARRAY_MAX, 1)), NULL, 0);

  over = g_variant_ref_sink (g_variant_new ("(@ay)", g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, big,
                                                                                 ARRAY_MAX + 1, 1)));
  pair_open (&p);
  g_assert_cmpint (sd_bus_message_new_method_call (p.client, &m, NULL, "/", "a.b", "C"), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (m, over, NULL, 0), ==, -EMSGSIZE);
  sd_bus_message_unref (m);
  pair_close (&p);

  /* many small elements: 100,000 document ids */
  g_variant_builder_init (&b, G_VARIANT_TYPE ("as"));
  for (guint i = 0; i < 100000; i++)
    g_variant_builder_add (&b, "s", "abcdefghijklmnopqrst");
  round_trip (g_variant_new ("(as)", &b), NULL, 0);
}

/* What a message cannot carry is refused, never sent half-written: a maybe type, and a
 * handle with no fd behind it (answers and signals carry no fds). */
static void
test_refused (void)
{
  g_autoptr(GVariant) maybe = g_variant_ref_sink (parse ("(ms)", "(just 'x',)"));
  g_autoptr(GVariant) handle = g_variant_ref_sink (parse ("(h)", "(handle 0,)"));
  g_autoptr(GVariant) beyond = g_variant_ref_sink (parse ("(ah)", "([handle 0, 1],)"));
  int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  sd_bus_message *m = NULL;
  Pair p;

  g_assert_no_errno (fd);
  pair_open (&p);
  g_assert_cmpint (sd_bus_message_new_method_call (p.client, &m, NULL, "/", "a.b", "C"), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (m, maybe, NULL, 0), ==, -EINVAL);
  sd_bus_message_unref (m);
  g_assert_cmpint (sd_bus_message_new_method_call (p.client, &m, NULL, "/", "a.b", "C"), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (m, handle, NULL, 0), ==, -EINVAL);
  sd_bus_message_unref (m);
  g_assert_cmpint (sd_bus_message_new_method_call (p.client, &m, NULL, "/", "a.b", "C"), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (m, beyond, &fd, 1), ==, -EINVAL);
  sd_bus_message_unref (m);
  pair_close (&p);
  close (fd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/documents-marshal/interface-signatures", test_interface_signatures);
  g_test_add_func ("/documents-marshal/empty-arrays", test_empty_arrays);
  g_test_add_func ("/documents-marshal/nested-variants", test_nested_variants);
  g_test_add_func ("/documents-marshal/vardict-every-type", test_vardict_every_type);
  g_test_add_func ("/documents-marshal/bytestrings", test_bytestrings);
  g_test_add_func ("/documents-marshal/maximum-sizes", test_maximum_sizes);
  g_test_add_func ("/documents-marshal/refused", test_refused);
  return g_test_run ();
}
