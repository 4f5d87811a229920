/* limen-documents — D-Bus message bodies between sd-bus and GVariant, for the Documents
 * connection (docs-bus.c): a call's arguments are read into a GVariant tuple, an answer's or a
 * signal's tuple is written into the message. Every type D-Bus has is read and written but
 * maybe types (GVariant's own, not D-Bus's); an fd ('h') is a handle, its index in an fd array.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include <systemd/sd-bus.h>

G_BEGIN_DECLS

/* Append the members of tuple @body to @m, one after another. A handle i is appended as
 * @fds[i] (sd-bus keeps a copy); with @n_fds 0 every handle, like a maybe type or a handle
 * out of range, is -EINVAL; a byte string over 64 MiB (D-Bus's limit) is -EMSGSIZE. 0 or a
 * negative errno (@m is then unusable). */
int limen_docs_marshal_append_body (sd_bus_message *m, GVariant *body, const int *fds, gsize n_fds);

/* What limen_docs_marshal_read_body() found wrong. */
typedef enum {
  LIMEN_DOCS_MARSHAL_OK,
  LIMEN_DOCS_MARSHAL_INVALID,       /* the body is not what its signature says */
  LIMEN_DOCS_MARSHAL_BAD_HANDLE,    /* a handle names no fd of the message */
} LimenDocsMarshalStatus;

/* The rest of @m's body (from where reading stands; all of it on a message not read yet) as
 * a tuple, a new reference (not floating). Each fd becomes a handle: its index in @fds, to
 * which the fd is appended, borrowed (open as long as @m is). NULL, and *@status saying why,
 * when the body cannot be read; @fds may then hold some of its fds. */
GVariant *limen_docs_marshal_read_body (sd_bus_message *m, GArray *fds, LimenDocsMarshalStatus *status);

G_END_DECLS
