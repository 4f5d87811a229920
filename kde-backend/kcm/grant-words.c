/* Limen — a grant of the permission store, in words.
 *
 * What an entry holds is written by the portal that made it, in the reference's forms: a
 * document's data (ayttu) is its host path, device, inode and flags; a restore token's data
 * is the backend's (suv) restore data (limen-kde's payload names the sources and the input
 * devices); location keeps an accuracy; "open with" keeps the handler and a count; limen-kde's
 * global-shortcuts entry names the shortcuts with their keys, its row the refused ones.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "grant-words.h"

#include <string.h>

#define GETTEXT_PACKAGE "limen"
#include <glib/gi18n-lib.h>

#define DOC_FLAG_TRANSIENT 2
#define DOC_FLAG_DIRECTORY 4
#define DEVICE_KEYBOARD 1
#define DEVICE_POINTER 2
#define DEVICE_TOUCHSCREEN 4

static const char *
switch_words (const char *value)
{
  if (g_strcmp0 (value, "yes") == 0)
    return _("Allowed");
  if (g_strcmp0 (value, "no") == 0)
    return _("Denied");
  if (g_strcmp0 (value, "ask") == 0)
    return _("Ask each time");
  return value ? value : "";
}

static char *
describe_document (const LimenGrant *grant)
{
  g_autofree char *path = NULL;
  const char *access, *life;
  guint32 flags = 0;

  if (g_variant_is_of_type (grant->data, G_VARIANT_TYPE ("(ayttu)")))
    {
      g_autoptr(GVariant) bytes = g_variant_get_child_value (grant->data, 0);

      path = g_filename_display_name (g_variant_get_bytestring (bytes));
      g_variant_get_child (grant->data, 3, "u", &flags);
    }
  if (g_strv_contains ((const char *const *) grant->perms, "write"))
    access = _("read and write");
  else if (g_strv_contains ((const char *const *) grant->perms, "read"))
    access = _("read only");
  else
    access = _("no access");
  life = (flags & DOC_FLAG_TRANSIENT) ? _("for this session") : _("kept");
  /* TRANSLATORS: a file an app was given: its path, what it may do, and for how long */
  return g_strdup_printf (_("%s — %s, %s"), path ? path : grant->id, access, life);
}

static const char *
location_words (const char *accuracy)
{
  static const struct { const char *word; const char *text; } levels[] = {
    { "NONE", N_("Denied") }, { "COUNTRY", N_("Allowed, accuracy: country") },
    { "CITY", N_("Allowed, accuracy: city") }, { "NEIGHBORHOOD", N_("Allowed, accuracy: neighbourhood") },
    { "STREET", N_("Allowed, accuracy: street") }, { "EXACT", N_("Allowed, accuracy: exact") },
  };

  for (guint i = 0; i < G_N_ELEMENTS (levels); i++)
    if (g_strcmp0 (accuracy, levels[i].word) == 0)
      return _(levels[i].text);
  return accuracy ? accuracy : "";
}

/* One source of a limen-kde restore payload in words, or NULL for a window without a title
 * (those are counted). */
static char *
source_words (const char *source, GVariant *windows)
{
  const char *title = NULL;

  if (g_str_has_prefix (source, "screen:"))
    /* TRANSLATORS: a screen shared, by its connector's name (DP-1) */
    return g_strdup_printf (_("screen %s"), source + strlen ("screen:"));
  if (g_str_equal (source, "all-screens"))
    return g_strdup (_("all screens"));
  if (g_str_has_prefix (source, "region:"))
    return g_strdup (_("an area of the screen"));
  if (g_str_equal (source, "virtual"))
    return g_strdup (_("a virtual screen"));
  if (g_str_has_prefix (source, "window:"))
    {
      if (windows && g_variant_lookup (windows, source, "(&s&s)", NULL, &title) && *title)
        /* TRANSLATORS: a window shared, by its title */
        return g_strdup_printf (_("window “%s”"), title);
      return NULL;
    }
  return g_strdup (_("a screen"));
}

/* What a restore payload of limen-kde lets the app share again: its sources, by name. */
static void
describe_sources (GString *out, GVariant *payload)
{
  g_autofree const char **sources = NULL;
  g_autoptr(GVariant) windows = g_variant_lookup_value (payload, "windows", G_VARIANT_TYPE ("a{s(ss)}"));
  guint unnamed = 0;

  if (!g_variant_lookup (payload, "sources", "^a&s", &sources))
    return;
  for (guint i = 0; sources[i]; i++)
    {
      g_autofree char *words = source_words (sources[i], windows);

      if (words)
        g_string_append_printf (out, ", %s", words);
      else
        unnamed++;
    }
  if (unnamed)
    {
      g_string_append (out, ", ");
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%u window", "%u windows", unnamed), unnamed);
    }
}

/* The input devices a token lets the app use: limen-kde's payload says for remote control;
 * the frontend's row words ("keyboard", "pointer", "touchscreen" after "yes") say for any
 * backend, input capture included. */
static void
describe_devices (GString *out, const LimenGrant *grant, GVariant *payload)
{
  static const struct { guint32 bit; const char *word; const char *text; } names[] = {
    { DEVICE_KEYBOARD, "keyboard", N_("keyboard") }, { DEVICE_POINTER, "pointer", N_("pointer") },
    { DEVICE_TOUCHSCREEN, "touchscreen", N_("touchscreen") },
  };
  guint32 devices = 0;

  if (payload)
    g_variant_lookup (payload, "devices", "u", &devices);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (grant->perms[0] && g_strv_contains ((const char *const *) grant->perms + 1, names[i].word))
      devices |= names[i].bit;
  if (devices == 0)
    return;
  g_string_append_printf (out, ", %s", g_str_equal (grant->table, "input-capture") ? _("may capture:")
                                                                                   : _("control of:"));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (devices & names[i].bit)
      g_string_append_printf (out, " %s", _(names[i].text));
}

/* ", since 12/06/25": the time the frontend wrote in the row ("since:SECONDS"). */
static void
describe_since (GString *out, const LimenGrant *grant)
{
  for (guint i = 0; grant->perms[0] && grant->perms[i]; i++)
    {
      g_autoptr(GDateTime) when = NULL;
      g_autofree char *date = NULL;
      guint64 seconds;

      if (!g_str_has_prefix (grant->perms[i], "since:")
          || !g_ascii_string_to_unsigned (grant->perms[i] + 6, 10, 0, G_MAXINT64, &seconds, NULL)
          || !(when = g_date_time_new_from_unix_local ((gint64) seconds))
          || !(date = g_date_time_format (when, "%x")))
        continue;
      g_string_append (out, ", ");
      /* TRANSLATORS: when the person allowed it, a date */
      g_string_append_printf (out, _("since %s"), date);
      return;
    }
}

static char *
describe_token (const LimenGrant *grant)
{
  GString *out = g_string_new (NULL);
  const char *vendor = NULL;
  g_autoptr(GVariant) payload = NULL;
  guint32 version;

  /* TRANSLATORS: %s is the first characters of a restore token */
  g_string_printf (out, _("token %.8s…"), grant->id);
  if (g_variant_is_of_type (grant->data, G_VARIANT_TYPE ("(suv)")))
    g_variant_get (grant->data, "(&suv)", &vendor, &version, &payload);
  if (payload && !g_variant_is_of_type (payload, G_VARIANT_TYPE_VARDICT))
    g_clear_pointer (&payload, g_variant_unref);
  if (payload)
    describe_sources (out, payload);
  describe_devices (out, grant, payload);
  describe_since (out, grant);
  return g_string_free (out, FALSE);
}

static char *
describe_words (const LimenGrant *grant)
{
  g_autofree char *joined = g_strjoinv (", ", grant->perms);

  if (g_str_equal (grant->table, "inhibit"))
    {
      if (grant->perms[0] == NULL)
        return g_strdup (_("Nothing"));
      /* TRANSLATORS: followed by words of: logout, switch, suspend, idle */
      return g_strdup_printf (_("May prevent: %s"), joined);
    }
  return g_strdup (joined);
}

GVariant *
limen_grant_shortcuts (const LimenGrant *grant)
{
  if (grant->desc->kind != LIMEN_GRANT_SHORTCUTS || !g_variant_is_of_type (grant->data, G_VARIANT_TYPE_VARDICT))
    return NULL;
  return g_variant_lookup_value (grant->data, "shortcuts", G_VARIANT_TYPE ("a(sss)"));
}

/* "Push to talk (Ctrl+Alt+T); refused: mute". The row's empty word only keeps the row. */
static char *
describe_shortcuts (const LimenGrant *grant)
{
  g_autoptr(GVariant) held = limen_grant_shortcuts (grant);
  g_autoptr(GPtrArray) refused = g_ptr_array_new ();
  g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);
  const char *id, *description, *keys;
  GVariantIter iter;

  if (held)
    {
      g_variant_iter_init (&iter, held);
      while (g_variant_iter_next (&iter, "(&s&s&s)", &id, &description, &keys))
        /* TRANSLATORS: a global shortcut: what it does, (its keys) */
        g_ptr_array_add (parts, g_strdup_printf (_("%s (%s)"), *description ? description : id,
                                                 *keys ? keys : _("no keys")));
    }
  for (guint i = 0; grant->perms[i]; i++)
    if (*grant->perms[i])
      g_ptr_array_add (refused, grant->perms[i]);
  if (refused->len)
    {
      g_autofree char *joined = NULL;

      g_ptr_array_add (refused, NULL);
      joined = g_strjoinv (", ", (char **) refused->pdata);
      /* TRANSLATORS: followed by the ids of shortcuts the person said no to */
      g_ptr_array_add (parts, g_strdup_printf (_("refused: %s"), joined));
    }
  if (parts->len == 0)
    return g_strdup (_("None"));
  g_ptr_array_add (parts, NULL);
  return g_strjoinv ("; ", (char **) parts->pdata);
}

static char *
describe_choice (const LimenGrant *grant)
{
  const char *handler = grant->perms[0] ? grant->perms[0] : "";
  guint64 count = grant->perms[0] && grant->perms[1] ? g_ascii_strtoull (grant->perms[1], NULL, 10) : 0;

  /* TRANSLATORS: "text/plain: org.kde.kate (chosen 3 times)" */
  return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s: %s (chosen %u time)", "%s: %s (chosen %u times)",
                                       (gulong) count),
                          grant->id, handler, (guint) count);
}

void
limen_grant_describe (LimenGrant *grant)
{
  const char *first = grant->perms[0];

  grant->title = g_strdup (_(grant->desc->title));
  switch (grant->desc->kind)
    {
    case LIMEN_GRANT_DOCUMENT:
      grant->detail = describe_document (grant);
      break;
    case LIMEN_GRANT_LOCATION:
      grant->detail = g_strdup (location_words (first));
      break;
    case LIMEN_GRANT_TOKEN:
      grant->detail = describe_token (grant);
      break;
    case LIMEN_GRANT_WORDS:
      grant->detail = describe_words (grant);
      break;
    case LIMEN_GRANT_SHORTCUTS:
      grant->detail = describe_shortcuts (grant);
      break;
    case LIMEN_GRANT_CHOICE:
      grant->detail = describe_choice (grant);
      break;
    case LIMEN_GRANT_SWITCH:
    default:
      if (g_str_has_prefix (grant->id, "device:"))
        /* TRANSLATORS: a USB device "VENDOR/PRODUCT/SERIAL" and the person's answer */
        grant->detail = g_strdup_printf (_("%s — %s"), grant->id + strlen ("device:"), switch_words (first));
      else
        grant->detail = g_strdup (switch_words (first));
      break;
    }
}
