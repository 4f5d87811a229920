/* Fuzz target for the decoding side of the Documents connection's marshaller
 * (document-fuse/docs-marshal.c): a method call with any signature and any body, read from a
 * socket by sd-bus as limen-documents reads its calls (fds passed alongside), must be read
 * into a GVariant of that signature or refused (InvalidArgs, or InvalidArgument for a handle
 * naming no fd), never crash, and what was read must be written back and read again equal.
 * An input is one byte (how many fds go with the message, 0-3), the signature up to a NUL,
 * then the body; the seeds are bodies of every signature the Documents and FileTransfer
 * interfaces carry. See fuzz.h for how it runs.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "docs-marshal.h"
#include "fuzz.h"

#define MAX_FDS 3

/* The wire form's header (little endian, a method call to the Documents object) followed
 * by @body. See the D-Bus specification's "Message Format". */
static GByteArray *
frame (const char *signature, const guint8 *body, gsize body_len, guint n_fds)
{
  GByteArray *out = g_byte_array_new ();
  guint32 fields_at, fields_len;
  static const guint8 start[] = { 'l', 1, 0, 1 };
  guint32 len = GUINT32_TO_LE (body_len), serial = GUINT32_TO_LE (1), zero = 0;

  g_byte_array_append (out, start, 4);
  g_byte_array_append (out, (guint8 *) &len, 4);
  g_byte_array_append (out, (guint8 *) &serial, 4);
  g_byte_array_append (out, (guint8 *) &zero, 4);     /* fields' length, set below */
  fields_at = out->len;
  for (guint code = 1; code <= 9; code++)
    {
      const char *text = code == 1 ? "/org/freedesktop/portal/documents" : code == 2 ? "org.freedesktop.portal.Documents"
                       : code == 3 ? "Add" : code == 8 ? signature : NULL;
      char type = code == 1 ? 'o' : code == 8 ? 'g' : code == 9 ? 'u' : 's';
      guint8 head[4] = { code, 1, type, 0 };

      if ((text == NULL && code != 9) || (code == 8 && *signature == '\0') || (code == 9 && n_fds == 0))
        continue;
      while (out->len % 8)
        g_byte_array_append (out, (guint8 *) &zero, 1);
      g_byte_array_append (out, head, 4);
      if (type == 'g')
        {
          guint8 n = strlen (text);

          g_byte_array_append (out, &n, 1);
          g_byte_array_append (out, (const guint8 *) text, n + 1);
        }
      else
        {
          guint32 v = GUINT32_TO_LE (code == 9 ? n_fds : strlen (text));

          g_byte_array_append (out, (guint8 *) &v, 4);   /* at 4 mod 8: aligned */
          if (code != 9)
            g_byte_array_append (out, (const guint8 *) text, strlen (text) + 1);
        }
    }
  fields_len = GUINT32_TO_LE (out->len - fields_at);
  memcpy (out->data + 12, &fields_len, 4);
  while (out->len % 8)
    g_byte_array_append (out, (guint8 *) &zero, 1);
  g_byte_array_append (out, body, body_len);
  return out;
}

/* g_variant_equal() of untrusted values compares their printed forms; this compares bytes. */
static gboolean
same_value (GVariant *a, GVariant *b)
{
  g_autoptr(GVariant) na = g_variant_get_normal_form (a);
  g_autoptr(GVariant) nb = g_variant_get_normal_form (b);
  gsize size = g_variant_get_size (na);

  return g_variant_is_of_type (na, g_variant_get_type (nb)) && size == g_variant_get_size (nb) &&
         (size == 0 || memcmp (g_variant_get_data (na), g_variant_get_data (nb), size) == 0);
}

typedef struct {
  guint     seen;
  GVariant *oracle;   /* GDBus's reading of the same message, when it reads one */
} Check;

/* @v with every handle 0 and every boolean false, for comparing: the wire's handles index
 * the message's fds where ours count the fds as they come, and a boolean on the wire that is
 * neither 0 nor 1 (dbus-daemon passes none on) is true for sd-bus while GDBus keeps its lowest
 * byte. */
static GVariant *
blank (GVariant *v)
{
  GVariantBuilder b;

  switch (g_variant_classify (v))
    {
    case G_VARIANT_CLASS_HANDLE:
      return g_variant_new_handle (0);
    case G_VARIANT_CLASS_BOOLEAN:
      return g_variant_new_boolean (FALSE);
    case G_VARIANT_CLASS_VARIANT:
      {
        g_autoptr(GVariant) inner = g_variant_get_variant (v);
        return g_variant_new_variant (blank (inner));
      }
    case G_VARIANT_CLASS_ARRAY:
    case G_VARIANT_CLASS_TUPLE:
    case G_VARIANT_CLASS_DICT_ENTRY:
      if (g_variant_n_children (v) == 0)
        return g_variant_ref (v);
      g_variant_builder_init (&b, g_variant_get_type (v));
      for (gsize i = 0, n = g_variant_n_children (v); i < n; i++)
        {
          g_autoptr(GVariant) child = g_variant_get_child_value (v, i);
          g_variant_builder_add_value (&b, blank (child));
        }
      return g_variant_builder_end (&b);
    default:
      return g_variant_ref (v);
    }
}

/* The call as limen-documents' dispatch reads it, checked against GDBus's reading; then
 * written into a reply and read again. */
static int
on_message (sd_bus_message *m, void *user_data, sd_bus_error *ret_error)
{
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GArray) fds2 = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GVariant) body = NULL, again = NULL;
  g_autofree char *type = NULL;
  LimenDocsMarshalStatus status, status2;
  sd_bus_message *reply = NULL;
  const char *signature;
  Check *check = user_data;

  if (!sd_bus_message_is_method_call (m, NULL, NULL))
    return 0;
  check = user_data;

  check->seen++;
  signature = sd_bus_message_get_signature (m, TRUE);
  body = limen_docs_marshal_read_body (m, fds, &status);
  if (body == NULL)
    {
      g_assert_true (status == LIMEN_DOCS_MARSHAL_INVALID ||
                     (status == LIMEN_DOCS_MARSHAL_BAD_HANDLE && strpbrk (signature, "hv")));
      return 1;
    }
  g_assert_cmpint (status, ==, LIMEN_DOCS_MARSHAL_OK);
  g_assert_false (g_variant_is_floating (body));
  type = g_strdup_printf ("(%s)", signature);
  g_assert_cmpstr (g_variant_get_type_string (body), ==, type);
  g_assert_true (g_variant_is_normal_form (body));
  if (check->oracle)
    {
      g_autoptr(GVariant) ours = g_variant_ref_sink (blank (body));
      g_autoptr(GVariant) theirs = g_variant_ref_sink (blank (check->oracle));

      if (!same_value (ours, theirs))
        {
          g_autofree char *a = g_variant_print (ours, TRUE), *b = g_variant_print (theirs, TRUE);
          g_error ("read %.300s where GDBus reads %.300s", a, b);
        }
    }

  g_assert_cmpint (sd_bus_message_new_method_return (m, &reply), >=, 0);
  g_assert_cmpint (limen_docs_marshal_append_body (reply, body, (int *) fds->data, fds->len), >=, 0);
  g_assert_cmpint (sd_bus_message_seal (reply, 2, 0), >=, 0);
  g_assert_cmpint (sd_bus_message_rewind (reply, TRUE), >=, 0);
  again = limen_docs_marshal_read_body (reply, fds2, &status2);
  g_assert_cmpint (status2, ==, LIMEN_DOCS_MARSHAL_OK);
  g_assert_true (again != NULL && same_value (body, again));
  g_assert_cmpuint (fds2->len, ==, fds->len);
  sd_bus_message_unref (reply);
  return 1;
}

/* Send @msg with @n_fds fds over a socket to an sd-bus server, after the handshake, and let
 * the server read it. */
static void
deliver (const GByteArray *msg, guint n_fds, Check *check)
{
  g_autofree char *auth = NULL;
  g_autoptr(GString) uid = g_string_new (NULL);
  char text[32];
  int sv[2], fds[MAX_FDS];
  sd_bus *server = NULL;
  sd_id128_t id = SD_ID128_MAKE (6c, 69, 6d, 65, 6e, 2d, 64, 6f, 63, 73, 2d, 66, 75, 7a, 7a, 21);
  char cbuf[CMSG_SPACE (sizeof fds)];
  struct iovec iov = { msg->data, msg->len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  int r;

  g_snprintf (text, sizeof text, "%u", (unsigned) getuid ());
  for (const char *p = text; *p; p++)
    g_string_append_printf (uid, "%02x", *p);
  auth = g_strdup_printf ("AUTH EXTERNAL %s\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n", uid->str);
  g_assert_no_errno (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
  g_assert_cmpint (sd_bus_new (&server), >=, 0);
  g_assert_cmpint (sd_bus_set_fd (server, sv[0], sv[0]), >=, 0);
  g_assert_cmpint (sd_bus_set_server (server, 1, id), >=, 0);
  g_assert_cmpint (sd_bus_negotiate_fds (server, 1), >=, 0);
  g_assert_cmpint (sd_bus_add_filter (server, NULL, on_message, check), >=, 0);
  g_assert_cmpint (sd_bus_start (server), >=, 0);
  g_assert_cmpint (write (sv[1], "", 1), ==, 1);    /* the credentials byte */
  g_assert_cmpint (write (sv[1], auth, strlen (auth)), ==, (gssize) strlen (auth));
  /* the handshake first: fds that come during it end the connection */
  while ((r = sd_bus_is_ready (server)) == 0)
    if (sd_bus_process (server, NULL) == 0)
      g_assert_cmpint (sd_bus_wait (server, 5000000), >, 0);
  g_assert_cmpint (r, >, 0);

  for (guint i = 0; i < n_fds; i++)
    g_assert_no_errno (fds[i] = open (i == 0 ? "/dev/null" : "/", O_RDONLY | O_CLOEXEC));
  if (n_fds)
    {
      struct cmsghdr *c;

      mh.msg_control = cbuf;
      mh.msg_controllen = CMSG_SPACE (n_fds * sizeof (int));
      c = CMSG_FIRSTHDR (&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (n_fds * sizeof (int));
      memcpy (CMSG_DATA (c), fds, n_fds * sizeof (int));
    }
  g_assert_cmpint (sendmsg (sv[1], &mh, MSG_NOSIGNAL), ==, (gssize) msg->len);
  shutdown (sv[1], SHUT_WR);
  for (guint i = 0; i < n_fds; i++)
    close (fds[i]);
  /* until the message was read, or the connection refused it */
  while (check->seen == 0 && (r = sd_bus_process (server, NULL)) >= 0)
    if (r == 0 && sd_bus_wait (server, 5000000) <= 0)
      break;
  sd_bus_close_unref (server);
  close (sv[1]);
}

/* The fds this process has open. */
static GHashTable *
open_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  GHashTable *fds = g_hash_table_new (NULL, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)))
    g_hash_table_add (fds, GINT_TO_POINTER (atoi (name)));
  return fds;
}

/* No fd may stay open after a message that was read. libsystemd (252) leaks the fds that
 * came with a message it refuses before anyone reads it (dbus-daemon passes no such message
 * on, and sd-bus then drops the connection): those are closed here. */
static void
check_fds (GHashTable *before, gboolean read)
{
  g_autoptr(GHashTable) after = open_fds ();
  GHashTableIter iter;
  gpointer fd;

  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &fd, NULL))
    if (!g_hash_table_contains (before, fd))
      {
        if (read)
          g_error ("fd %d left open after a message was read", GPOINTER_TO_INT (fd));
        close (GPOINTER_TO_INT (fd));
      }
}

/* LeakSanitizer's suppressions, when built with it: the array in which libsystemd keeps the
 * fds of a message it refuses unread (see check_fds) is leaked with them. */
const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
  return "leak:libsystemd.so.0\n";
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const guint8 *nul;
  g_autofree char *signature = NULL;
  g_autoptr(GByteArray) msg = NULL;
  g_autoptr(GDBusMessage) gmsg = NULL;
  g_autoptr(GHashTable) fds_before = NULL;
  Check check = { 0 };
  guint n_fds;

  if (size < 2 || size > 1 << 20 || !(nul = memchr (data + 1, '\0', MIN (size - 1, 256))))
    return 0;
  n_fds = data[0] % (MAX_FDS + 1);
  signature = g_strndup ((const char *) data + 1, nul - (data + 1));
  msg = frame (signature, nul + 1, size - (nul + 1 - data), n_fds);
  gmsg = g_dbus_message_new_from_blob (msg->data, msg->len, G_DBUS_CAPABILITY_FLAGS_UNIX_FD_PASSING, NULL);
  if (gmsg)
    check.oracle = g_dbus_message_get_body (gmsg) ? g_dbus_message_get_body (gmsg)
                                                   : g_variant_new_tuple (NULL, 0);
  if (check.oracle)
    g_variant_ref_sink (check.oracle);
  fds_before = open_fds ();
  deliver (msg, n_fds, &check);
  check_fds (fds_before, check.seen > 0);
  g_clear_pointer (&check.oracle, g_variant_unref);
  return 0;
}

const char *const limen_fuzz_tokens[] = { "h", "ay", "a{sv}", "v", "as", "(", ")", "{", "}", "\1\0\0\0", "\0\0\0\0",
                                          "\377\377\377\377", "\0\0\0\4", "/", NULL };

/* A seed: @text of @type as GDBus writes the body, after its fd count and signature. */
static GBytes *
seed (guint n_fds, const char *type, const char *text)
{
  g_autoptr(GVariant) body = g_variant_ref_sink (g_variant_new_parsed (text));
  g_autoptr(GDBusMessage) m = g_dbus_message_new_method_call (NULL, "/o", "a.b", "C");
  g_autoptr(GError) error = NULL;
  g_autofree guchar *blob = NULL;
  gsize blob_len, body_len;
  GByteArray *out = g_byte_array_new ();
  guint8 n = n_fds;
  guint32 le;

  g_assert_true (g_variant_is_of_type (body, G_VARIANT_TYPE (type)));
  g_dbus_message_set_byte_order (m, G_DBUS_MESSAGE_BYTE_ORDER_LITTLE_ENDIAN);
  g_dbus_message_set_body (m, body);
  blob = g_dbus_message_to_blob (m, &blob_len, G_DBUS_CAPABILITY_FLAGS_UNIX_FD_PASSING, &error);
  g_assert_no_error (error);
  memcpy (&le, blob + 4, 4);
  body_len = GUINT32_FROM_LE (le);
  g_byte_array_append (out, &n, 1);
  g_byte_array_append (out, (const guint8 *) type + 1, strlen (type) - 2);
  g_byte_array_append (out, (const guint8 *) "", 1);
  g_byte_array_append (out, blob + blob_len - body_len, body_len);
  return g_byte_array_free_to_bytes (out);
}

void
limen_fuzz_seeds (GPtrArray *seeds)
{
  static const struct { guint n_fds; const char *type, *text; } s[] = {
    { 0, "()", "()" },
    { 1, "(hbb)", "(handle 0, true, false)" },
    { 1, "(haybb)", "(handle 0, b'name.txt', false, true)" },
    { 3, "(ahusas)", "([handle 0, 1, 2], uint32 5, 'org.example.App', ['read', 'write'])" },
    { 1, "(hayusas)", "(handle 0, b'new.txt', uint32 1, 'org.example.App', ['read'])" },
    { 0, "(ssas)", "('abcdefghijklmnopqrst', 'org.example.App', ['read', 'grant-permissions'])" },
    { 0, "(s)", "('abcdefghijklmnopqrst',)" },
    { 0, "(ay)", "(b'/home/user/file.txt',)" },
    { 0, "(as)", "(['abc', 'def'],)" },
    { 0, "(a{sv})", "({'writable': <true>, 'autostop': <false>},)" },
    { 2, "(saha{sv})", "('key', [handle 0, 1], {'x': <int32 1>})" },
    { 0, "(sa{sv})", "('key', {'mountpoint': <b'/run/user/1000/doc'>})" },
    { 0, "(asa{sv})", "(['a', 'b'], {'mountpoint': <b'/run/user/1000/doc'>})" },
    { 0, "(aya{sas})", "(b'/home/u/f', {'org.example.App': ['read', 'write'], 'other': @as []})" },
    { 0, "(a{say})", "({'abc': b'/home/u/f', 'def': b'/tmp/x'},)" },
    { 1, "(a{sv})", "({'y': <byte 1>, 'b': <true>, 'n': <int16 -1>, 'q': <uint16 2>, 'i': <-3>, 'u': <uint32 4>, "
                    "'x': <int64 -5>, 't': <uint64 6>, 'd': <1.5>, 's': <'s'>, 'o': <objectpath '/o'>, "
                    "'g': <signature 'a{sv}'>, 'h': <handle 0>, 'v': <<<'deep'>>>, 'r': <(1, 'x')>},)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (s); i++)
    g_ptr_array_add (seeds, seed (s[i].n_fds, s[i].type, s[i].text));
}
