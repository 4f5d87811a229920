/* Limen — which USB devices an app may see: Flatpak's enumerable and hidden queries.
 *
 * Flatpak writes an app's --usb and --nousb queries into /.flatpak-info as
 *   [USB Devices]
 *   enumerable-devices=all;cls:03:*;vnd:0fd9+dev:0063;
 *   hidden-devices=vnd:1234;
 * A query is one or more parts joined by '+', and matches when every part does. A device is
 * visible when an enumerable query matches it and no hidden one does: hiding always wins,
 * even over "all". --device=usb or --device=all change nothing here (they are about the
 * sandbox's /dev, not the portal). The same keys in [Policy org.freedesktop.portal.Usb.Devices]
 * (what `flatpak --add-policy=org.freedesktop.portal.Usb.Devices.KEY=...` writes, the
 * specification's entitlement data) are merged in.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "usb.h"

#include <string.h>

#define MAX_QUERIES 1024
#define MAX_PARTS 8

typedef enum { PART_ALL, PART_CLASS, PART_VENDOR, PART_PRODUCT } PartKind;

typedef struct {
  PartKind kind;
  guint16  value;
  gint     subclass;   /* PART_CLASS: -1 for any */
} Part;

typedef struct {
  guint n_parts;
  Part  parts[MAX_PARTS];
} Query;

struct _LimenUsbRules {
  GArray *enumerable;   /* Query */
  GArray *hidden;
};

/* Exactly @digits hex digits. */
static gboolean
parse_hex (const char *s, guint digits, guint16 *out)
{
  guint value = 0;

  if (strlen (s) != digits)
    return FALSE;
  for (guint i = 0; i < digits; i++)
    {
      int d = g_ascii_xdigit_value (s[i]);

      if (d < 0)
        return FALSE;
      value = value * 16 + (guint) d;
    }
  *out = (guint16) value;
  return TRUE;
}

static gboolean
parse_part (const char *text, Part *part)
{
  guint16 sub;

  if (g_str_equal (text, "all"))
    {
      part->kind = PART_ALL;
      return TRUE;
    }
  if (g_str_has_prefix (text, "cls:") && strlen (text) >= 8 && text[6] == ':')
    {
      g_autofree char *cls = g_strndup (text + 4, 2);

      part->kind = PART_CLASS;
      if (!parse_hex (cls, 2, &part->value))
        return FALSE;
      if (g_str_equal (text + 7, "*"))
        part->subclass = -1;
      else if (parse_hex (text + 7, 2, &sub))
        part->subclass = sub;
      else
        return FALSE;
      return TRUE;
    }
  if (g_str_has_prefix (text, "vnd:"))
    {
      part->kind = PART_VENDOR;
      return parse_hex (text + 4, 4, &part->value);
    }
  if (g_str_has_prefix (text, "dev:"))
    {
      part->kind = PART_PRODUCT;
      return parse_hex (text + 4, 4, &part->value);
    }
  return FALSE;
}

/* One query; FALSE for a malformed one (a product id means nothing without its vendor). */
static gboolean
parse_query (const char *text, Query *query)
{
  g_auto(GStrv) parts = g_strsplit (text, "+", MAX_PARTS + 1);
  gboolean vendor = FALSE, product = FALSE;

  query->n_parts = g_strv_length (parts);
  if (query->n_parts == 0 || query->n_parts > MAX_PARTS)
    return FALSE;
  for (guint i = 0; i < query->n_parts; i++)
    {
      if (!parse_part (parts[i], &query->parts[i]))
        return FALSE;
      vendor |= query->parts[i].kind == PART_VENDOR;
      product |= query->parts[i].kind == PART_PRODUCT;
    }
  return vendor || !product;
}

static GArray *
parse_list (const char * const *list)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (Query));

  for (guint i = 0; list && list[i] && out->len < MAX_QUERIES; i++)
    {
      Query q = { 0 };

      if (!*list[i])
        continue;
      if (parse_query (list[i], &q))
        g_array_append_val (out, q);
      else
        g_debug ("USB query \"%s\" is malformed: left out", list[i]);
    }
  return out;
}

LimenUsbRules *
limen_usb_rules_new (const char * const *enumerable, const char * const *hidden)
{
  LimenUsbRules *rules = g_new0 (LimenUsbRules, 1);

  rules->enumerable = parse_list (enumerable);
  rules->hidden = parse_list (hidden);
  return rules;
}

/* @key of the app's USB queries: the [USB Devices] group and the entitlement data group
 * [Policy org.freedesktop.portal.Usb.Devices] (flatpak --add-policy), merged. */
static GStrv
metadata_queries (GKeyFile *metadata, const char *key)
{
  static const char * const groups[] = { "USB Devices", "Policy org.freedesktop.portal.Usb.Devices" };
  GPtrArray *all = g_ptr_array_new ();

  for (guint g = 0; g < G_N_ELEMENTS (groups); g++)
    {
      g_auto(GStrv) list = g_key_file_get_string_list (metadata, groups[g], key, NULL, NULL);

      for (guint i = 0; list && list[i]; i++)
        g_ptr_array_add (all, g_strdup (list[i]));
    }
  if (all->len == 0)
    {
      g_ptr_array_free (all, TRUE);
      return NULL;
    }
  g_ptr_array_add (all, NULL);
  return (GStrv) g_ptr_array_free (all, FALSE);
}

LimenUsbRules *
limen_usb_rules_new_for_app (LimenAppInfo *info)
{
  static const char * const all[] = { "all", NULL };
  g_auto(GStrv) enumerable = NULL;
  g_auto(GStrv) hidden = NULL;
  GKeyFile *metadata;

  if (limen_app_info_is_host (info))
    return limen_usb_rules_new (all, NULL);
  metadata = limen_app_info_get_metadata (info);
  if (limen_app_info_get_kind (info) != LIMEN_APP_KIND_FLATPAK || metadata == NULL)
    return limen_usb_rules_new (NULL, NULL);
  enumerable = metadata_queries (metadata, "enumerable-devices");
  hidden = metadata_queries (metadata, "hidden-devices");
  return limen_usb_rules_new ((const char * const *) enumerable, (const char * const *) hidden);
}

static gboolean
part_matches (const Part *p, const LimenUsbNumbers *n)
{
  switch (p->kind)
    {
    case PART_ALL:
      return TRUE;
    case PART_CLASS:
      return n->has_class && n->device_class == p->value &&
             (p->subclass < 0 || (n->has_subclass && n->device_subclass == p->subclass));
    case PART_VENDOR:
      return n->has_vendor && n->vendor == p->value;
    case PART_PRODUCT:
      return n->has_product && n->product == p->value;
    }
  return FALSE;
}

static gboolean
any_matches (GArray *queries, const LimenUsbNumbers *n)
{
  for (guint i = 0; i < queries->len; i++)
    {
      const Query *q = &g_array_index (queries, Query, i);
      gboolean all = TRUE;

      for (guint j = 0; j < q->n_parts && all; j++)
        all = part_matches (&q->parts[j], n);
      if (all)
        return TRUE;
    }
  return FALSE;
}

gboolean
limen_usb_rules_match (const LimenUsbRules *rules, const LimenUsbNumbers *numbers)
{
  return any_matches (rules->enumerable, numbers) && !any_matches (rules->hidden, numbers);
}

void
limen_usb_rules_free (LimenUsbRules *rules)
{
  if (rules == NULL)
    return;
  g_array_unref (rules->enumerable);
  g_array_unref (rules->hidden);
  g_free (rules);
}
