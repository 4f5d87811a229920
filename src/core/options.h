/* Limen — per-method option tables: (key, type, validator).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LimenOption LimenOption;

/* Return FALSE and set @error (InvalidArgument naming @key) to refuse @value; FALSE without
 * an error leaves the option out and the call goes on. */
typedef gboolean (*LimenOptionValidator) (const LimenOption *option,
                                          GVariant          *value,
                                          GError           **error);

struct _LimenOption {
  const char          *key;
  const char          *type;       /* GVariant type string */
  LimenOptionValidator validate;   /* NULL: the type check suffices */
  gsize                max;        /* validator parameter: max length/count/value, 0 = default */
};

/* Copy the keys of @options that @table knows into @builder (a{sv}), after checking each
 * one's type and validator; unknown keys are dropped. FALSE + InvalidArgument on the first
 * bad key. Several tables may be given: NULL-key entry ends each, pass NULL after the last. */
gboolean limen_options_filter (GVariant        *options,
                               GVariantBuilder *builder,
                               GError         **error,
                               const LimenOption *table,
                               ...) G_GNUC_NULL_TERMINATED;

/* Key by key: the keys of @options that @table knows and that pass its checks go to
 * @builder; a key of the wrong type or refused by its validator is left out with a message
 * naming @what, and the rest still travels. For what a backend sends (signals, results: one
 * malformed detail must not cost the app the whole event), and for the few methods whose
 * options upstream filters this way (LIMEN_DRIVER_LENIENT_OPTIONS). */
void limen_options_filter_lenient (GVariant          *options,
                                   GVariantBuilder   *builder,
                                   const char        *what,
                                   const LimenOption *table);

/* Validators. */
/* A parent_window argument, the one check of both daemons: "", "x11:XID" (hex, 32 bits) or
 * "wayland:HANDLE", valid UTF-8 of at most 256 bytes; anything else is InvalidArgument. */
gboolean limen_check_parent_window (const char *window, GError **error);

gboolean limen_validate_token (const LimenOption *o, GVariant *v, GError **e);      /* handle tokens: [A-Za-z0-9_], 1..64 */
gboolean limen_validate_string_length (const LimenOption *o, GVariant *v, GError **e); /* ≤ max bytes (default 4096), valid UTF-8 */
gboolean limen_validate_string_or_drop (const LimenOption *o, GVariant *v, GError **e); /* > max bytes: left out */
gboolean limen_validate_bool (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_uint_max (const LimenOption *o, GVariant *v, GError **e);   /* ≤ max */
gboolean limen_validate_strv_length (const LimenOption *o, GVariant *v, GError **e); /* ≤ max entries, each ≤ 4096 */
gboolean limen_validate_fd_index (const LimenOption *o, GVariant *v, GError **e);    /* ≥ 0 */
gboolean limen_validate_byte_path (const LimenOption *o, GVariant *v, GError **e);   /* ay, NUL-terminated, ≤ PATH_MAX */
/* Dialog options shared by the FileChooser frontend and backends (and Access's choices). */
gboolean limen_validate_file_filters (const LimenOption *o, GVariant *v, GError **e); /* a(sa(us)) */
gboolean limen_validate_file_filter (const LimenOption *o, GVariant *v, GError **e);  /* (sa(us)) */
gboolean limen_validate_choices (const LimenOption *o, GVariant *v, GError **e);      /* a(ssa(ss)s) */
gboolean limen_validate_file_names (const LimenOption *o, GVariant *v, GError **e);   /* aay of plain names */

/* A handle token check for places that read the token outside a table. */
gboolean limen_token_is_valid (const char *token);

/* Set InvalidArgument "Invalid value for option KEY: REASON". */
void limen_option_set_error (GError **error, const char *key, const char *reason);

G_END_DECLS
