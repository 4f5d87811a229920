/* limen-documents — D-Bus message bodies between sd-bus and GVariant (see docs-marshal.h).
 *
 * sd-bus checks a message against its signature as it is read, so a body that lies (a
 * string that is not UTF-8, a boolean that is 2, an array longer than the message, an fd
 * index past the message's fds) fails here at the value that lies, and nothing built so far
 * is kept.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "docs-marshal.h"

#include <errno.h>
#include <string.h>

/* The D-Bus specification's limit on an array. sd-bus writes longer ones, which dbus-daemon
 * answers by dropping the sender's whole connection; a byte string is the one array an
 * answer here could make that long (a path is at most PATH_MAX, so none does). */
#define ARRAY_MAX (64u * 1024 * 1024)

/* ---- GVariant → message ---------------------------------------------------------------- */

typedef struct {
  sd_bus_message *m;
  const int      *fds;
  gsize           n_fds;
} Writer;

static int append_value (Writer *w, GVariant *v);

/* Append the values in container @v to the message, one after another. */
static int
append_children (Writer *w, GVariant *v)
{
  for (gsize i = 0, n = g_variant_n_children (v); i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (v, i);
      int r = append_value (w, child);

      if (r < 0)
        return r;
    }
  return 0;
}

/* @v (a variant, an array, a tuple or a dict entry) as a container of the message. */
static int
append_container (Writer *w, GVariant *v)
{
  const char *s = g_variant_get_type_string (v);
  g_autofree char *contents = NULL;
  char kind;
  int r;

  switch (g_variant_classify (v))
    {
    case G_VARIANT_CLASS_VARIANT:
      {
        g_autoptr(GVariant) inner = g_variant_get_variant (v);

        if ((r = sd_bus_message_open_container (w->m, 'v', g_variant_get_type_string (inner))) < 0 ||
            (r = append_value (w, inner)) < 0)
          return r;
        return sd_bus_message_close_container (w->m);
      }
    case G_VARIANT_CLASS_ARRAY:
      if (strcmp (s, "ay") == 0)
        {
          gsize n;
          const void *data = g_variant_get_fixed_array (v, &n, 1);

          if (n > ARRAY_MAX)
            return -EMSGSIZE;
          return sd_bus_message_append_array (w->m, 'y', data, n);
        }
      kind = 'a';
      contents = g_strdup (s + 1);
      break;
    default:     /* a tuple or a dict entry: what is inside () or {} */
      kind = g_variant_is_of_type (v, G_VARIANT_TYPE_DICT_ENTRY) ? 'e' : 'r';
      contents = g_strndup (s + 1, strlen (s) - 2);
      break;
    }
  if ((r = sd_bus_message_open_container (w->m, kind, contents)) < 0 ||
      (r = append_children (w, v)) < 0)
    return r;
  return sd_bus_message_close_container (w->m);
}

/* Append @v to the message as D-Bus data of its own type. */
static int
append_value (Writer *w, GVariant *v)
{
  switch (g_variant_classify (v))
    {
    case G_VARIANT_CLASS_BOOLEAN:
      {
        int b = g_variant_get_boolean (v);        /* a byte in a GVariant, an int for sd-bus */
        return sd_bus_message_append_basic (w->m, 'b', &b);
      }
    case G_VARIANT_CLASS_BYTE:
    case G_VARIANT_CLASS_INT16:
    case G_VARIANT_CLASS_UINT16:
    case G_VARIANT_CLASS_INT32:
    case G_VARIANT_CLASS_UINT32:
    case G_VARIANT_CLASS_INT64:
    case G_VARIANT_CLASS_UINT64:
    case G_VARIANT_CLASS_DOUBLE:
      /* The value in host order, aligned for its type, as sd-bus reads it. */
      return sd_bus_message_append_basic (w->m, g_variant_classify (v), g_variant_get_data (v));
    case G_VARIANT_CLASS_STRING:
    case G_VARIANT_CLASS_OBJECT_PATH:
    case G_VARIANT_CLASS_SIGNATURE:
      return sd_bus_message_append_basic (w->m, g_variant_classify (v), g_variant_get_string (v, NULL));
    case G_VARIANT_CLASS_HANDLE:
      {
        gint32 handle = g_variant_get_handle (v);

        if (handle < 0 || (gsize) handle >= w->n_fds)
          return -EINVAL;
        return sd_bus_message_append_basic (w->m, 'h', &w->fds[handle]);
      }
    case G_VARIANT_CLASS_VARIANT:
    case G_VARIANT_CLASS_ARRAY:
    case G_VARIANT_CLASS_TUPLE:
    case G_VARIANT_CLASS_DICT_ENTRY:
      return append_container (w, v);
    case G_VARIANT_CLASS_MAYBE:
    default:
      return -EINVAL;
    }
}

int
limen_docs_marshal_append_body (sd_bus_message *m, GVariant *body, const int *fds, gsize n_fds)
{
  Writer w = { m, fds, n_fds };

  g_return_val_if_fail (g_variant_is_of_type (body, G_VARIANT_TYPE_TUPLE), -EINVAL);
  return append_children (&w, body);
}

/* ---- message → GVariant ---------------------------------------------------------------- */

typedef struct {
  sd_bus_message        *m;
  GArray                *fds;
  LimenDocsMarshalStatus status;
} Reader;

static GVariant *read_value (Reader *rd, char type, const char *contents);
static gboolean read_all (Reader *rd, GVariantBuilder *builder);

/* The next value, of basic type @type, as a floating GVariant; NULL when it cannot be read. */
static GVariant *
read_basic (Reader *rd, char type)
{
  union {
    guint8 y; int b; gint16 n; guint16 q; gint32 i; guint32 u; gint64 x; guint64 t; double d; const char *s; int h;
  } val;

  if (sd_bus_message_read_basic (rd->m, type, &val) < 0)
    {
      /* An index past the message's fds: the call is answered with InvalidArgument, but its
       * other arguments cannot be read after it. */
      if (type == 'h')
        rd->status = LIMEN_DOCS_MARSHAL_BAD_HANDLE;
      return NULL;
    }
  switch (type)
    {
    case 'y': return g_variant_new_byte (val.y);
    case 'b': return g_variant_new_boolean (val.b);
    case 'n': return g_variant_new_int16 (val.n);
    case 'q': return g_variant_new_uint16 (val.q);
    case 'i': return g_variant_new_int32 (val.i);
    case 'u': return g_variant_new_uint32 (val.u);
    case 'x': return g_variant_new_int64 (val.x);
    case 't': return g_variant_new_uint64 (val.t);
    case 'd': return g_variant_new_double (val.d);
    case 's': return g_variant_new_string (val.s);
    case 'o': return g_variant_new_object_path (val.s);
    case 'g': return g_variant_new_signature (val.s);
    default:
      g_array_append_val (rd->fds, val.h);
      return g_variant_new_handle ((gint32) rd->fds->len - 1);
    }
}

/* The next value, a container of kind @type ('a', 'v', 'r' or 'e') holding @contents, as a
 * floating GVariant; NULL when it cannot be read. */
static GVariant *
read_container (Reader *rd, char type, const char *contents)
{
  g_autofree char *array_type = NULL;
  GVariantBuilder builder;
  GVariant *child;

  if (type == 'a' && strcmp (contents, "y") == 0)
    {
      const void *data;
      size_t size;

      if (sd_bus_message_read_array (rd->m, 'y', &data, &size) < 0)
        return NULL;
      return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, data, size, 1);
    }
  if (sd_bus_message_enter_container (rd->m, type, contents) <= 0)
    return NULL;
  if (type == 'v')
    {
      char inner_type;
      const char *inner_contents;

      if (sd_bus_message_peek_type (rd->m, &inner_type, &inner_contents) <= 0 ||
          !(child = read_value (rd, inner_type, inner_contents)))
        return NULL;
      child = g_variant_new_variant (child);
    }
  else
    {
      if (type == 'a')
        g_variant_builder_init (&builder, G_VARIANT_TYPE (array_type = g_strconcat ("a", contents, NULL)));
      else
        g_variant_builder_init (&builder, type == 'r' ? G_VARIANT_TYPE_TUPLE : G_VARIANT_TYPE_DICT_ENTRY);
      if (!read_all (rd, &builder))
        return NULL;
      child = g_variant_builder_end (&builder);
    }
  if (sd_bus_message_exit_container (rd->m) < 0)
    {
      g_variant_unref (g_variant_ref_sink (child));
      return NULL;
    }
  return child;
}

/* The next value of the message (of type @type, @contents inside a container) as a floating
 * GVariant; an fd becomes its handle in @rd->fds. NULL when the message cannot be read. */
static GVariant *
read_value (Reader *rd, char type, const char *contents)
{
  switch (type)
    {
    case 'y': case 'b': case 'n': case 'q': case 'i': case 'u': case 'x': case 't': case 'd':
    case 's': case 'o': case 'g': case 'h':
      return read_basic (rd, type);
    case 'a': case 'v': case 'r': case 'e':
      return read_container (rd, type, contents);
    default:
      return NULL;
    }
}

/* The values left in the message's current container into @builder; FALSE (@builder
 * cleared) when one cannot be read. */
static gboolean
read_all (Reader *rd, GVariantBuilder *builder)
{
  char type;
  const char *contents;
  int r;

  while ((r = sd_bus_message_peek_type (rd->m, &type, &contents)) > 0)
    {
      GVariant *v = read_value (rd, type, contents);

      if (v == NULL)
        break;
      g_variant_builder_add_value (builder, v);
    }
  if (r != 0)
    {
      g_variant_builder_clear (builder);
      return FALSE;
    }
  return TRUE;
}

GVariant *
limen_docs_marshal_read_body (sd_bus_message *m, GArray *fds, LimenDocsMarshalStatus *status)
{
  Reader rd = { m, fds, LIMEN_DOCS_MARSHAL_OK };
  GVariantBuilder builder;
  GVariant *body = NULL;

  g_variant_builder_init (&builder, G_VARIANT_TYPE_TUPLE);
  if (read_all (&rd, &builder))
    body = g_variant_ref_sink (g_variant_builder_end (&builder));
  else if (rd.status == LIMEN_DOCS_MARSHAL_OK)
    rd.status = LIMEN_DOCS_MARSHAL_INVALID;
  if (status)
    *status = rd.status;
  return body;
}
